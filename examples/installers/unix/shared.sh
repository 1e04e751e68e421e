# Shared by install.sh and uninstall.sh: pnpm package writes it into each of them in place of
# their "# @include shared.sh" line (packaging/src/installers.mjs), so each stays one file.

say() { printf '%s\n' "$*"; }
fail() {
  printf '%s: %s\n' "$PRODUCT" "$*" >&2
  exit 1
}
# The comment block at the top of this file, up to its first line that is not a comment.
usage() { awk 'NR > 1 { if ($0 !~ /^#/) exit; sub(/^# ?/, ""); print }' "$0"; }

# Run as another user than the home's owner (sudo keeping HOME), this would write or remove
# folders in that home as the other user, which the user's own agent then cannot use: refused,
# saying why.
require_own_home() {
  if [ -z "${HOME:-}" ] || ! [ -d "$HOME" ]; then
    fail "HOME is not set to an existing folder; run this as the user who uses $PRODUCT. Nothing was changed."
  fi
  me=$(id -u)
  # Only the owner column of the one line is read, whatever the name holds.
  # shellcheck disable=SC2012
  owner=$(ls -ldnL -- "$HOME" | awk 'NR == 1 { print $3 }')
  if [ "$owner" != "$me" ]; then
    fail "this runs as user $me, but the home folder $HOME belongs to user $owner (sudo keeps HOME). $PRODUCT is installed per user: run this as that user, without sudo. Nothing was changed."
  fi
}
