# Shared by preinstall and postinstall (sourced). DEST: where the payload is installed, the
# installer's $2 (~/Library/Application Support/<Vendor> for a per-user install).
DEST=${2:-"$HOME/Library/Application Support/$VENDOR_DIR"}
DEST=${DEST%/}

# Runs a command as the user at the console: as is when the installer runs as that user (the
# per-user install), through launchctl asuser and sudo -u when it runs as root.
run_as_console_user() {
  if [ "$(id -u)" != 0 ]; then
    "$@"
    return
  fi
  console_user=$(stat -f%Su /dev/console)
  if [ -z "$console_user" ] || [ "$console_user" = root ] || [ "$console_user" = loginwindow ]; then
    echo "no user is logged in at the console; the agent starts at the next login" >&2
    return 0
  fi
  console_uid=$(id -u "$console_user")
  launchctl asuser "$console_uid" sudo -u "$console_user" -H "$@"
}
