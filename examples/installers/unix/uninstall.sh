#!/bin/sh
# @PRODUCT@: removes the license agent of this user, on Linux and macOS.
#
#   ~/.local/lib/@VENDOR_DIR@/uninstall.sh [--release] [--purge]                     (Linux)
#   ~/Library/Application\ Support/@VENDOR_DIR@/uninstall.sh [--release] [--purge]   (macOS)
#
#   --release  first give this computer's activations back (through the agent, so each is
#              recorded before the service is asked), freeing them for another computer
#   --purge    also remove the license data and settings (kept by default: a reinstall finds
#              its licenses again)
#
# RELEASE=1 and PURGE=1 in the environment do the same.
set -eu

NAME='@NAME@'
APP='@APP@'
PRODUCT='@PRODUCT@'
VENDOR_DIR='@VENDOR_DIR@'
RELEASE=${RELEASE:-0}
PURGE=${PURGE:-0}

say() { printf '%s\n' "$*"; }
fail() {
  printf '%s: %s\n' "$PRODUCT" "$*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --release) RELEASE=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown option '$1' (see $0 --help)" ;;
  esac
done

# The installed copy of this script acts on the program beside it, in one of the two places the
# installers use; a copy elsewhere (a download) would act on the wrong one.
LIB=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
case "$LIB" in
  "$HOME/.local/lib/$VENDOR_DIR" | "$HOME/Library/Application Support/$VENDOR_DIR") ;;
  *) fail "run the uninstall.sh installed with $PRODUCT: $HOME/.local/lib/$VENDOR_DIR/uninstall.sh (Linux) or $HOME/Library/Application Support/$VENDOR_DIR/uninstall.sh (macOS)" ;;
esac
BIN="$HOME/.local/bin"
EXE="$LIB/$NAME"
set -- ${APP:+--app "$APP"}
[ -x "$EXE" ] || fail "$PRODUCT is not installed for this user ($EXE is missing)."

# 1. Give the activations back first, while everything is still in place: a failure stops here.
if [ "$RELEASE" = 1 ]; then
  if ! out=$("$EXE" "$@" deactivate --all 2>&1); then
    fail "could not give back every activation: $out. Nothing was removed; connect to the internet and try again, or uninstall without --release."
  fi
  [ -n "$out" ] && say "$out"
fi

# 2. Where the settings and data are, asked before the program goes.
if [ "$PURGE" = 1 ]; then
  folders=""
  for f in config data cache log; do folders="$folders $("$EXE" "$@" config path --folder "$f")"; done
fi

# 3. The service, then the files.
"$EXE" "$@" agent uninstall >/dev/null 2>&1 || say "(the user service manager was not reachable; the unit file is removed all the same)"
[ "$(readlink "$BIN/$NAME" 2>/dev/null)" = "$EXE" ] && rm -f "$BIN/$NAME"
rm -f "$EXE" "$LIB/uninstall.sh"
rmdir "$LIB" 2>/dev/null || true
if [ "$PURGE" = 1 ]; then
  for f in $folders; do rm -rf "$f"; done
  say "$PRODUCT is removed, with its license data and settings."
else
  say "$PRODUCT is removed. Its license data is kept, so a reinstall finds your licenses again."
fi
