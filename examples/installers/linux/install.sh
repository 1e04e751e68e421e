#!/bin/sh
# @PRODUCT@ @VERSION@: installs the license agent for this user only (no administrator rights).
#
#   ./install.sh [--base-url URL] [--agent-at-login | --no-agent-at-login]
#
# Puts the program in ~/.local/lib/@VENDOR_DIR@/ with a link in ~/.local/bin/ and writes the service
# base URL into config.json (never a token). The plugins in this download's plugins/ folder go
# into your own plugin folders (VST3 ~/.vst3, CLAP ~/.clap; a Standalone beside the program, with
# a menu entry); an upgrade replaces them whole, and this product's uninstaller
# (~/.local/lib/@VENDOR_DIR@/uninstall-@PRODUCT_ID@.sh) removes exactly those. Other products of
# @COMPANY@ share the program: installing this one never touches their plugins. No
# agent stays resident: plugins and the program start it when they need it, and it exits when
# idle. With --agent-at-login (the default when the vendor packaged with pnpm package
# --agent-at-login) it registers a systemd --user unit that runs the agent from login instead. Run a newer one over an older one to upgrade: licenses are kept. Run
# it as the user who uses it, never with sudo.
#
# Exit 0: installed (also when --agent-at-login finds no systemd --user on this computer: the
# agent then runs on demand, as by default, and the last lines say so; nothing there for the
# musician to fix, and a wrapper must not report a working install as failed). Exit 1: a step
# failed, with words saying what to do (also when systemd --user answers but refuses the agent's
# unit: then something is wrong that can be fixed).
#
# pnpm package fills in the @…@ values of this example (packaging/src/installers.mjs); a vendor
# may change anything else.
set -eu

# pnpm package writes each value shell-quoted (packaging/src/installers.mjs).
NAME=@NAME@
APP=@APP@
BASE_URL=@BASE_URL@
PRODUCT=@PRODUCT@
PRODUCT_ID=@PRODUCT_ID@
VENDOR_DIR=@VENDOR_DIR@
AGENT_AT_LOGIN=@AGENT_AT_LOGIN@

# @include shared.sh

while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) [ $# -ge 2 ] || fail "--base-url needs a URL"; BASE_URL=$2; shift 2 ;;
    --base-url=*) BASE_URL=${1#--base-url=}; shift ;;
    --agent-at-login) AGENT_AT_LOGIN=yes; shift ;;
    --no-agent-at-login) AGENT_AT_LOGIN=no; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail "unknown option '$1' (see $0 --help)" ;;
  esac
done
require_own_home

HERE=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
LIB="$HOME/.local/lib/$VENDOR_DIR"
BIN="$HOME/.local/bin"
EXE="$LIB/$NAME"
NEW="$LIB/.$NAME.new"
# This product's own uninstaller: each product of the vendor has one, the program is shared.
UNINSTALL="$LIB/uninstall-$PRODUCT_ID.sh"
UNINSTALL_NEW="$LIB/.uninstall-$PRODUCT_ID.sh.new"
set -- ${APP:+--app "$APP"}

# 1. The new program must run on this computer before anything is changed.
"$HERE/$NAME" --version >/dev/null 2>&1 ||
  fail "this download does not run on this computer (it is for 64-bit Linux) or is damaged; download it again. Nothing was changed."

# 2. Copies beside the installed files, each checked, then one rename each: the previous install
# works until then. What an interrupted run left is cleared first.
mkdir -p -- "$LIB" "$BIN" 2>/dev/null || fail "cannot create $LIB or $BIN; check that your home folder is writable. Nothing was changed."
discard() { rm -f -- "$NEW" "$UNINSTALL_NEW"; }
discard
# A copy that is the same bytes as its source and has its mode, or nothing (a full disk).
copy_checked() { cp -- "$1" "$2" 2>/dev/null && chmod 755 -- "$2" && cmp -s -- "$1" "$2"; }
if ! copy_checked "$HERE/$NAME" "$NEW" || ! "$NEW" --version >/dev/null 2>&1 || ! copy_checked "$HERE/uninstall.sh" "$UNINSTALL_NEW"; then
  discard
  fail "could not copy the program into $LIB (is the disk full?). The previous install is unchanged."
fi

# 3. The base URL, as every tool and the agent will read it (the file is replaced whole or not at all).
if [ -n "$BASE_URL" ]; then
  if ! out=$("$NEW" "$@" config set base_url "$BASE_URL" 2>&1); then
    discard
    fail "the service address could not be saved: $out. The previous install is unchanged."
  fi
fi

NAMESPACE=$("$NEW" "$@" --json config path | sed -n 's/^ *"namespace": "\(.*\)",$/\1/p')
UNIT="$NAMESPACE-agent.service"
UPGRADE=no
[ -x "$EXE" ] && UPGRADE=yes

# 4. An upgrade stops the agent, whoever started it (the user manager, a plugin, a person), so no
# old program keeps answering; plugins see "not running" for a moment, then the same licenses.
if [ "$UPGRADE" = yes ] && command -v systemctl >/dev/null 2>&1; then
  systemctl --user stop "$UNIT" >/dev/null 2>&1 || true
fi
if ! out=$("$NEW" "$@" agent stop 2>&1); then
  discard
  fail "the running license agent did not stop: $out. Close your plugins and the license manager, then run this again. The previous install is unchanged."
fi
mv -f -- "$NEW" "$EXE" || { discard; fail "could not replace $EXE. The previous install is unchanged."; }
mv -f -- "$UNINSTALL_NEW" "$UNINSTALL" || { discard; fail "could not put $UNINSTALL in place; run this installer again."; }
ln -sf -- "$EXE" "$BIN/$NAME" || fail "could not link $BIN/$NAME to $EXE; run this installer again."

# 5. The plugins of this download, placed by the program itself (the one implementation every
# installer uses): each into its format's folder, replaced whole, recorded beside the program as
# this product's (installed-plugins/PRODUCT_ID.json; a product without plugins is recorded too:
# the program stays while one is installed). Its lines say where each went and which music
# software may need a rescan.
FROM=
[ -d "$HERE/plugins" ] && FROM=$HERE/plugins
if ! out=$("$EXE" plugins install --product-id "$PRODUCT_ID" ${FROM:+--from "$FROM"} 2>&1); then
  [ -z "$out" ] || say "$out"
  fail "your plugins could not be installed (the lines above say why). The program itself is installed; fix that and run this installer again."
fi
[ -z "$FROM" ] || [ -z "$out" ] || say "$out"
# An earlier release had one uninstaller for every product (uninstall.sh). Once the program has
# taken its plugins over (installed-plugins.json is gone) it goes; while it stays, it still
# lists another product's plugins of that release, whose uninstaller it is.
if [ -e "$LIB/uninstall.sh" ] && ! [ -e "$LIB/installed-plugins.json" ]; then
  rm -f -- "$LIB/uninstall.sh"
fi

# 6. No resident agent by default: plugins and the program start it on demand. A unit an earlier
# install registered is removed (the agent was stopped above). At login only when asked.
if [ "$AGENT_AT_LOGIN" != yes ]; then
  "$EXE" "$@" agent uninstall >/dev/null 2>&1 || true
  say "$PRODUCT is installed. Its license agent starts when a plugin or $NAME needs it, and stops when idle."
elif out=$("$EXE" "$@" agent install --json 2>&1); then
  i=0
  while [ $i -lt 50 ] && ! "$EXE" "$@" agent status >/dev/null 2>&1; do
    sleep 0.2
    i=$((i + 1))
  done
  if "$EXE" "$@" agent status >/dev/null 2>&1; then
    say "$PRODUCT is installed, and its license agent runs."
  else
    say "$PRODUCT is installed; its license agent did not answer yet. See: systemctl --user status $UNIT"
  fi
elif printf '%s\n' "$out" | grep -q '^  "problem": "no_service_manager",$'; then
  # No user service manager here (no systemd, or a session without one): nothing to fix, and
  # licensing works on demand, so this is not a failure (exit 0; see the header).
  say "$PRODUCT is installed."
  say "Its license agent will NOT start at login on this computer:"
  say "no systemd user service manager (systemd --user) runs for you here."
  say "Plugins and $NAME start the agent anyway when they need it."
else
  # The manager refused, or the unit cannot be written: the one sentence of the report or of the
  # error (JSON-unescaped), else what was printed.
  why=$(printf '%s\n' "$out" | sed -n 's/^ *"message": "\(.*\)",*$/\1/p' | head -n 1 | sed 's/\\\(.\)/\1/g')
  [ -n "$why" ] || why=$(printf '%s' "$out" | tr '\n' ' ')
  say "$PRODUCT is installed, and plugins start its license agent when they need it."
  fail "its license agent could not be set to start at login: $why"
fi
say "To activate, open the license manager (a page in your web browser): $BIN/$NAME manager"
case ":$PATH:" in
  *":$BIN:"*) ;;
  *) say "Add $BIN to your PATH to run $NAME by name." ;;
esac
exit 0
