#!/bin/sh
# Builds @PRODUCT@'s macOS installer on the vendor's Mac (Xcode's command-line tools): signs the
# executable with the hardened runtime, makes the per-user package, signs it, notarizes and
# staples it.
#
#   ./build-pkg.sh "Developer ID Application: Acme Audio GmbH (TEAMID)" \
#                  "Developer ID Installer: Acme Audio GmbH (TEAMID)" [NOTARY_PROFILE]
#
# NOTARY_PROFILE: a keychain profile made once with
#   xcrun notarytool store-credentials NOTARY_PROFILE --apple-id ID --team-id TEAMID
# Layout of this kit (made by pnpm package): payload/ (what is installed in
# ~/Library/Application Support/@VENDOR_DIR@), scripts/ (preinstall, postinstall), this script,
# distribution.xml, entitlements.plist.
set -eu
# pnpm package writes each value shell-quoted (packaging/src/installers.mjs).
NAME=@NAME@
VERSION=@VERSION@
TARGET=@TARGET@
BUNDLE_ID=@BUNDLE_ID@
# The product's package: its own receipt, so each product of the vendor installs and upgrades apart.
PKG_ID=@PKG_ID@
PRODUCT_ID=@PRODUCT_ID@
VENDOR_DIR=@VENDOR_DIR@
# The comment block at the top of this file, up to its first line that is not a comment.
usage() { awk 'NR > 1 { if ($0 !~ /^#/) exit; sub(/^# ?/, ""); print }' "$0"; }
case "${1:-}" in -h | --help) usage; exit 0 ;; esac
[ $# -ge 2 ] || { usage; exit 64; }
APP_IDENTITY=$1
INSTALLER_IDENTITY=$2
PROFILE=${3:-}
HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
TEAM_ID=$(printf '%s' "$APP_IDENTITY" | sed -n 's/.*(\([A-Z0-9]*\))$/\1/p')
[ -n "$TEAM_ID" ] || { echo "the identity must end in (TEAMID), as security find-identity -v -p codesigning lists it" >&2; exit 64; }
OUT="$HERE/$PRODUCT_ID-$VERSION-$TARGET.pkg"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# 1. The executable: hardened runtime, the entitlements V8 needs, the app group of your plugins.
sed "s/@TEAM_ID@/$TEAM_ID/g" "$HERE/entitlements.plist" >"$WORK/entitlements.plist"
codesign --force --sign "$APP_IDENTITY" --options runtime --timestamp \
  --entitlements "$WORK/entitlements.plist" --identifier "$BUNDLE_ID.agent" "$HERE/payload/$NAME"
codesign --verify --strict --verbose=2 "$HERE/payload/$NAME"

# 2. The component package: installed into the user's home, with the scripts.
pkgbuild --root "$HERE/payload" --scripts "$HERE/scripts" --identifier "$PKG_ID" \
  --version "$VERSION" --install-location "Library/Application Support/$VENDOR_DIR" "$WORK/agent.pkg"

# 3. The product archive (per user: distribution.xml enables the home folder only), signed.
productbuild --distribution "$HERE/distribution.xml" --package-path "$WORK" \
  --sign "$INSTALLER_IDENTITY" --timestamp "$OUT"
pkgutil --check-signature "$OUT"

# 4. Notarized and stapled, so Gatekeeper lets it open without a network look-up.
if [ -n "$PROFILE" ]; then
  xcrun notarytool submit "$OUT" --keychain-profile "$PROFILE" --wait
  xcrun stapler staple "$OUT"
  spctl --assess --type install --verbose "$OUT"
fi
echo "$OUT"
