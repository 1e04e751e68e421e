/*
 * Part of plc.c (compiled through it, never alone): where things are on Linux and the BSDs (the
 * XDG base directories): the agent's socket, the data folder, the vendor's executable. macOS has
 * its own (darwin/places.c), Windows too (win/places.c).
 */

#ifndef PLC_NO_AGENT_CLIENT

/* $XDG_RUNTIME_DIR/APP/agent.sock, or /tmp/APP-UID/agent.sock without XDG_RUNTIME_DIR. */
static plc_status socket_place(const char *app, char *out, size_t out_size) {
  char path[PLC_DATA_CAP];
  size_t pos = 0;
  const char *runtime = getenv("XDG_RUNTIME_DIR");
  path[0] = '\0';
  if (runtime != NULL && runtime[0] != '\0') {
    if (append(path, sizeof path, &pos, runtime) != 0 || append(path, sizeof path, &pos, "/") != 0 ||
        append(path, sizeof path, &pos, app) != 0 || append(path, sizeof path, &pos, "/agent.sock") != 0)
      return PLC_ERR_PATH_TOO_LONG;
  } else {
    if (append(path, sizeof path, &pos, "/tmp/") != 0 || append(path, sizeof path, &pos, app) != 0 ||
        append(path, sizeof path, &pos, "-") != 0 || append_ulong(path, sizeof path, &pos, (unsigned long)getuid()) != 0 ||
        append(path, sizeof path, &pos, "/agent.sock") != 0)
      return PLC_ERR_PATH_TOO_LONG;
  }
  return fit_path(path, pos, out, out_size);
}

/* App groups are macOS's: elsewhere the default path. */
static plc_status group_socket_place(const char *group, const char *app, char *out, size_t out_size) {
  (void)group;
  return socket_place(app, out, out_size);
}

#endif

#ifndef PLC_NO_TICKET

/* $XDG_DATA_HOME/APP (any non-empty value, as env-paths), else HOME/.local/share/APP. */
static plc_status data_place(const char *app, const char *group, char *path, size_t cap) {
  char pwbuf[1024];
  const char *xdg = getenv("XDG_DATA_HOME");
  (void)group;
  if (xdg != NULL && xdg[0] != '\0') {
    const char *const parts[] = {xdg, "/", app};
    return join_parts(path, cap, parts, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
  {
    const char *home = data_home(pwbuf, sizeof pwbuf);
    const char *const parts[] = {home, "/.local/share/", app};
    if (home == NULL) return PLC_ERR_NO_PATH;
    return join_parts(path, cap, parts, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
}

#endif

#ifndef PLC_NO_AGENT_START

/* PLUGIN_LICENSE_EXECUTABLE, else ~/.local/bin/NAME. */
static plc_status executable_place(const char *vendor, const char *name, char *path, size_t cap, size_t *pos) {
  char pwbuf[1024];
  const char *env = getenv("PLUGIN_LICENSE_EXECUTABLE"), *home;
  (void)vendor;
  if (env != NULL && env[0] != '\0') return append(path, cap, pos, env) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  home = home_folder(pwbuf, sizeof pwbuf);
  if (home == NULL) return PLC_ERR_NO_PATH;
  if (append(path, cap, pos, home) != 0 || append(path, cap, pos, "/.local/bin/") != 0 || append(path, cap, pos, name) != 0)
    return PLC_ERR_PATH_TOO_LONG;
  return PLC_OK;
}

#endif
