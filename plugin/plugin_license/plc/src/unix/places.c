/*
 * Part of plc.c (compiled through it, never alone): where things are on Linux and the BSDs (the
 * XDG base directories): the agent's socket, the data folder, the vendor's executable. macOS has
 * its own (darwin/places.c), Windows too (win/places.c).
 */

#ifndef PLC_NO_AGENT_CLIENT

/* $XDG_RUNTIME_DIR/APP/agent.sock, or /tmp/APP-UID/agent.sock without XDG_RUNTIME_DIR (a relative one
 * is ignored, as the XDG Base Directory specification says). */
static plc_status socket_place(const char *app, char *out, size_t out_size) {
  char uid[24];
  size_t n = 0;
  const char *runtime = getenv("XDG_RUNTIME_DIR");
  if (runtime != NULL && runtime[0] == '/') {
    const char *const parts[] = {runtime, "/", app, "/agent.sock"};
    return socket_path_of(parts, 4, out, out_size);
  }
  uid[0] = '\0';
  append_ulong(uid, sizeof uid, &n, (unsigned long)getuid());
  {
    const char *const parts[] = {"/tmp/", app, "-", uid, "/agent.sock"};
    return socket_path_of(parts, 5, out, out_size);
  }
}

/* App groups are macOS's: elsewhere the default path. */
static plc_status group_socket_place(const char *group, const char *app, char *out, size_t out_size) {
  (void)group;
  return socket_place(app, out, out_size);
}

#endif

#ifndef PLC_NO_TICKET

/* $XDG_DATA_HOME/APP (an absolute one: a relative one is ignored, as the XDG Base Directory
 * specification says; paths.ts xdgDir), else HOME/.local/share/APP (HOME by home_folder). */
static plc_status data_place(const char *app, const char *group, char *path, size_t cap) {
  char pwbuf[1024];
  const char *xdg = getenv("XDG_DATA_HOME");
  (void)group;
  if (xdg != NULL && xdg[0] == '/') {
    const char *const parts[] = {xdg, "/", app};
    return join_parts(path, cap, parts, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
  {
    const char *home = home_folder(pwbuf, sizeof pwbuf);
    const char *const parts[] = {home, "/.local/share/", app};
    if (home == NULL) return PLC_ERR_NO_PATH;
    return join_parts(path, cap, parts, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
}

#endif

#ifndef PLC_NO_AGENT_START

/* ~/.local/bin/NAME. */
static plc_status executable_place(const char *vendor, const char *name, char *path, size_t cap) {
  char pwbuf[1024];
  const char *home = home_folder(pwbuf, sizeof pwbuf);
  const char *const parts[] = {home, "/.local/bin/", name};
  (void)vendor;
  if (home == NULL) return PLC_ERR_NO_PATH;
  return join_parts(path, cap, parts, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
}

#endif
