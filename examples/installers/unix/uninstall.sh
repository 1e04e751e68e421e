#!/bin/sh
# @PRODUCT@: removes this product's plugins for this user, on Linux and macOS (exactly those its
# installer placed: a plugin of the same name it did not put there, one changed since, or one
# another product of @COMPANY@ also installed, stays); then, when no other product of @COMPANY@
# is installed, the license program and its agent too.
#
#   ~/.local/lib/@VENDOR_DIR@/uninstall-@PRODUCT_ID@.sh [--release] [--purge]                     (Linux)
#   ~/Library/Application\ Support/@VENDOR_DIR@/uninstall-@PRODUCT_ID@.sh [--release] [--purge]   (macOS)
#
#   --release  first give this computer's activations of this product back (through the agent,
#              so each is recorded before the service is asked), freeing them for another
#              computer; every activation when this is the last product
#   --purge    also remove the license data and settings, when this is the last product (kept
#              by default: a reinstall finds its licenses again)
#
# RELEASE=1 and PURGE=1 in the environment do the same. The copy in the download (uninstall.sh)
# does the same as the installed one: it acts on the installed program, wherever it is run from.
set -eu

# pnpm package writes each value shell-quoted (packaging/src/installers.mjs).
NAME=@NAME@
APP=@APP@
PRODUCT=@PRODUCT@
PRODUCT_ID=@PRODUCT_ID@
VENDOR_DIR=@VENDOR_DIR@
RELEASE=${RELEASE:-0}
PURGE=${PURGE:-0}
NL='
'

# @include shared.sh

while [ $# -gt 0 ]; do
  case "$1" in
    --release) RELEASE=1; shift ;;
    --purge) PURGE=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) fail "unknown option '$1' (see $0 --help)" ;;
  esac
done
require_own_home

# The installed program, in one of the two places the installers use (this script may be the
# copy in a download: it acts on the installed program all the same).
LIB=
for place in "$HOME/.local/lib/$VENDOR_DIR" "$HOME/Library/Application Support/$VENDOR_DIR"; do
  if [ -e "$place/$NAME" ] || [ -e "$place/.$NAME.new" ] || [ -e "$place/.uninstall-$PRODUCT_ID.sh.new" ]; then
    LIB=$place
    break
  fi
done
[ -n "$LIB" ] || fail "$PRODUCT is not installed for this user (nothing in $HOME/.local/lib/$VENDOR_DIR or $HOME/Library/Application Support/$VENDOR_DIR)."
BIN="$HOME/.local/bin"
EXE="$LIB/$NAME"
UNINSTALL="$LIB/uninstall-$PRODUCT_ID.sh"
set -- ${APP:+--app "$APP"}

# An install that was interrupted leaves its copies beside the program; they go in any case.
remove_leftovers() { rm -f -- "$LIB/.$NAME.new" "$LIB/.uninstall-$PRODUCT_ID.sh.new"; }
if ! [ -x "$EXE" ]; then
  remove_leftovers
  rm -f -- "$UNINSTALL"
  rmdir -- "$LIB" 2>/dev/null || true
  say "$PRODUCT was not fully installed; the leftovers of the unfinished install are removed."
  exit 0
fi

# 1. Give the activations back first, while everything is still in place: a failure stops here.
# Only this product's, while another product of the vendor is installed (the program decides).
if [ "$RELEASE" = 1 ]; then
  if ! out=$("$EXE" "$@" deactivate --all --product-id "$PRODUCT_ID" 2>&1); then
    fail "could not give back every activation: $out. Nothing was removed; connect to the internet and try again, or uninstall without --release."
  fi
  [ -n "$out" ] && say "$out"
fi

# 1b. This product's plugins, as the program's record of them says (beside it): while the
# program is here. A failure stops here, with nothing else removed.
if ! out=$("$EXE" plugins uninstall --product-id "$PRODUCT_ID" 2>&1); then
  [ -z "$out" ] || say "$out"
  fail "your plugins could not be removed (the lines above say why). Nothing else was removed; close your music software and run this again."
fi
[ -z "$out" ] || say "$out"

# 1c. Other products of the vendor still installed share the program, its agent and the license
# data: then only this product's uninstaller goes.
if ! others=$("$EXE" plugins products 2>&1); then
  fail "could not ask the program which products remain: $others. This product's plugins are removed; the program is kept."
fi
if [ -n "$others" ]; then
  rm -f -- "$UNINSTALL"
  remove_leftovers
  say "$PRODUCT is removed. The license program and your licenses stay, for:"
  say "$others"
  [ "$PURGE" != 1 ] || say "(--purge: the license data is kept, since those products use it.)"
  exit 0
fi

# 2. Where the settings and data are, asked before the program goes: each path exactly as the
# program prints it (it may hold spaces, *, quotes or newlines), never split or expanded.
FOLDER=
folder_of() {
  FOLDER=$("$EXE" ${APP:+--app "$APP"} config path --folder "$1" && printf x) || fail "could not ask the program where its $1 folder is. Nothing was removed."
  FOLDER=${FOLDER%x}
  FOLDER=${FOLDER%"$NL"}
  case "$FOLDER" in
    /?*) [ "$FOLDER" != "$HOME" ] || fail "the program names your home folder as its $1 folder; nothing was removed." ;;
    *) fail "the program named '$FOLDER' as its $1 folder, which is not an absolute path; nothing was removed." ;;
  esac
}
if [ "$PURGE" = 1 ]; then
  folder_of config; CONFIG_DIR=$FOLDER
  folder_of data; DATA_DIR=$FOLDER
  folder_of cache; CACHE_DIR=$FOLDER
  folder_of log; LOG_DIR=$FOLDER
fi

# 3. The service; the license managers (a page in the browser: one would start the agent again);
# then whatever agent still runs (started by hand or by a plugin); then the files.
"$EXE" "$@" agent uninstall >/dev/null 2>&1 || say "(the user service manager was not reachable; the unit file is removed all the same)"
if ! out=$("$EXE" "$@" manager stop 2>&1); then
  fail "the license manager did not stop: $out. Close its page in your browser, then run this again. The program is still installed."
fi
if ! out=$("$EXE" "$@" agent stop 2>&1); then
  fail "the running license agent did not stop: $out. Close your plugins and the license manager, then run this again. The program is still installed."
fi
[ "$(readlink -- "$BIN/$NAME" 2>/dev/null)" = "$EXE" ] && rm -f -- "$BIN/$NAME"
# The earlier release's uninstaller and its emptied record go with the last product.
rm -f -- "$EXE" "$UNINSTALL" "$LIB/uninstall.sh" "$LIB/installed-plugins.json"
remove_leftovers
rmdir -- "$LIB/installed-plugins" 2>/dev/null || true
rmdir -- "$LIB" 2>/dev/null || true

# 4. The folders named in step 2, each as one path.
remove_folders() {
  left=
  for f do
    rm -rf -- "$f" 2>/dev/null || true
    if [ -e "$f" ] || [ -L "$f" ]; then left="$left$NL  $f"; fi
  done
  [ -z "$left" ] || fail "the program is removed, but these folders of its license data could not be removed (check their permissions):$left"
}
if [ "$PURGE" = 1 ]; then
  remove_folders "$CONFIG_DIR" "$DATA_DIR" "$CACHE_DIR" "$LOG_DIR"
  say "$PRODUCT is removed, with its license data and settings."
else
  say "$PRODUCT is removed. Its license data is kept, so a reinstall finds your licenses again."
fi
