#!/bin/sh
# Starts a build of a project from external CI: POST {base_url}/external-builds/{project_id}/trigger.
#
#   BASE_URL=https://.../functions/v1 PROJECT_ID=... WEBHOOK_SECRET=... ./trigger.sh [--send-secret] REF COMMIT_SHA [RELEASE_TYPE]
#
# By default the body is signed: X-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes,
# keyed by the webhook secret>, so the secret never travels. With --send-secret the secret is sent
# as X-Webhook-Secret instead. Prints the answer ({"build_id": ..., "status": "queued"}); exits 0
# on 201, 1 otherwise. A 429 (10 triggers a minute per project) is waited out once.
set -eu

mode=sign
if [ "${1:-}" = "--send-secret" ]; then mode=secret; shift; fi
if [ $# -lt 2 ]; then
  echo "usage: trigger.sh [--send-secret] REF COMMIT_SHA [RELEASE_TYPE]" >&2
  exit 2
fi
: "${BASE_URL:?set BASE_URL to the service base URL (ending in /functions/v1)}"
: "${PROJECT_ID:?set PROJECT_ID}"
: "${WEBHOOK_SECRET:?set WEBHOOK_SECRET (a CI secret, never a literal in the workflow)}"

ref=$1
sha=$2
release=${3:-}
body=$(printf '{"ref":"%s","commit_sha":"%s"%s}' "$ref" "$sha" "${release:+,\"release_type\":\"$release\"}")

if [ "$mode" = sign ]; then
  # The signature covers exactly the bytes sent: --data-binary sends $body unchanged.
  sig=$(printf '%s' "$body" | openssl dgst -sha256 -hmac "$WEBHOOK_SECRET" -r | cut -d' ' -f1)
  auth="X-Signature: sha256=$sig"
else
  auth="X-Webhook-Secret: $WEBHOOK_SECRET"
fi

answer=$(mktemp)
trap 'rm -f "$answer"' EXIT
for attempt in 1 2; do
  status=$(curl -sS -o "$answer" -w '%{http_code}' -D "$answer.headers" -X POST \
    "$BASE_URL/external-builds/$PROJECT_ID/trigger" \
    -H 'Content-Type: application/json' -H "$auth" --data-binary "$body")
  if [ "$status" = 429 ] && [ "$attempt" = 1 ]; then
    wait=$(sed -n 's/^[Rr]etry-[Aa]fter: *\([0-9]*\).*/\1/p' "$answer.headers")
    rm -f "$answer.headers"
    wait=${wait:-60}; [ "$wait" -gt 60 ] && wait=60
    echo "trigger: rate-limited; retrying in ${wait}s" >&2
    sleep "$wait"
    continue
  fi
  rm -f "$answer.headers"
  break
done
cat "$answer"; echo
[ "$status" = 201 ] || { echo "trigger: the service answered $status" >&2; exit 1; }
