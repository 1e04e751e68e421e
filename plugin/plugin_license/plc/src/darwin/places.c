/*
 * Part of plc.c (compiled through it, never alone): where things are on macOS: the agent's socket
 * and the data folder under ~/Library/Application Support, or in an app group's container for a
 * sandboxed plugin (~/Library/Group Containers/GROUP, under the real home: in a sandbox HOME is the
 * container's), the vendor's executable. The other POSIX systems have unix/places.c.
 */

#ifndef PLC_NO_AGENT_CLIENT

/* ~/Library/Application Support/APP/agent.sock; with PLUGIN_LICENSE_APP_GROUP, the app-group form. */
static plc_status socket_place(const char *app, char *out, size_t out_size) {
  char pwbuf[1024];
  const char *home;
  const char *group = getenv("PLUGIN_LICENSE_APP_GROUP");
  if (group != NULL && group[0] != '\0') return plc_app_group_socket_path(group, app, out, out_size);
  home = home_folder(pwbuf, sizeof pwbuf);
  if (home == NULL) return PLC_ERR_NO_PATH;
  {
    const char *const parts[] = {home, "/Library/Application Support/", app, "/agent.sock"};
    return socket_path_of(parts, 4, out, out_size);
  }
}

/* ~/Library/Group Containers/GROUP/APP/agent.sock, from the real home. */
static plc_status group_socket_place(const char *group, const char *app, char *out, size_t out_size) {
  char pwbuf[1024];
  const char *home = account_home(pwbuf, sizeof pwbuf);
  const char *const parts[] = {home, "/Library/Group Containers/", group, "/", app, "/agent.sock"};
  if (home == NULL) return PLC_ERR_NO_PATH;
  return socket_path_of(parts, 6, out, out_size);
}

#endif

#ifndef PLC_NO_TICKET

/* With an app group (the argument, else PLUGIN_LICENSE_APP_GROUP) the real home's
 * Library/Group Containers/GROUP/APP, else HOME/Library/Application Support/APP. */
static plc_status data_place(const char *app, const char *group, char *path, size_t cap) {
  char pwbuf[1024];
  const char *home;
  if (group == NULL || group[0] == '\0') group = getenv("PLUGIN_LICENSE_APP_GROUP");
  if (group != NULL && group[0] != '\0') {
    const char *parts[] = {"", "/Library/Group Containers/", group, "/", app};
    if (!valid_group(group)) return PLC_ERR_INVALID_ARGUMENT;
    parts[0] = account_home(pwbuf, sizeof pwbuf);
    if (parts[0] == NULL) return PLC_ERR_NO_PATH;
    return join_parts(path, cap, parts, 5) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
  home = home_folder(pwbuf, sizeof pwbuf);
  if (home == NULL) return PLC_ERR_NO_PATH;
  {
    const char *const parts[] = {home, "/Library/Application Support/", app};
    return join_parts(path, cap, parts, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
}

#endif

#ifndef PLC_NO_AGENT_START

/* ~/Library/Application Support/VENDOR/NAME (a vendor is needed). */
static plc_status executable_place(const char *vendor, const char *name, char *path, size_t cap) {
  char pwbuf[1024];
  const char *home = home_folder(pwbuf, sizeof pwbuf);
  const char *const parts[] = {home, "/Library/Application Support/", vendor, "/", name};
  if (home == NULL) return PLC_ERR_NO_PATH;
  if (vendor == NULL || vendor[0] == '\0') return PLC_ERR_INVALID_ARGUMENT;
  return join_parts(path, cap, parts, 5) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
}

#endif
