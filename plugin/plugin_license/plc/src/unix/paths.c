/*
 * Part of plc.c (compiled through it, never alone): POSIX paths of the data folder, for Linux and
 * macOS alike (their places differ: unix/places.c, darwin/places.c). Node's path rules, as the
 * library makes the same paths (path.posix.normalize, path.dirname).
 */

static int is_separator(char c) { return c == '/'; }

static size_t path_root(const char *path, size_t n) { return n >= 1 && path[0] == '/' ? 1 : 0; }

/* Node's path.posix.normalize, in place: one '/' between names, '.' dropped, '..' taking the name
 * before it (kept at the start of a relative path, dropped at the root), no '/' at the end. */
static void posix_normalize(char *path) {
  char *out = path;
  const char *p = path;
  size_t kept = 0; /* names in out that a '..' may take back */
  int absolute = path[0] == '/';
  size_t len = 0;
  if (absolute) out[len++] = '/';
  while (*p != '\0') {
    const char *name;
    size_t n;
    while (*p == '/') p++;
    if (*p == '\0') break;
    name = p;
    while (*p != '\0' && *p != '/') p++;
    n = (size_t)(p - name);
    if (n == 1 && name[0] == '.') continue;
    if (n == 2 && name[0] == '.' && name[1] == '.') {
      if (kept > 0) {
        while (len > 0 && out[len - 1] != '/') len--;
        if (len > (size_t)absolute) len--; /* the '/' before the name */
        kept--;
        continue;
      }
      if (absolute) continue;
    }
    if (len > (size_t)absolute) out[len++] = '/';
    memmove(out + len, name, n);
    len += n;
    if (!(n == 2 && name[0] == '.' && name[1] == '.')) kept++;
  }
  if (len == 0) out[len++] = '.';
  out[len] = '\0';
}

/* The namespace's data folder by the library's one rule (paths.ts resolvePaths, env-paths 4), UTF-8:
 * PLUGIN_LICENSE_HOME/data (a relative one against the working folder, as path.resolve); else Linux
 * $XDG_DATA_HOME/APP (an absolute one) or HOME/.local/share/APP (HOME by home_folder), macOS
 * HOME/Library/Application Support/APP or, with an app group, the real home's
 * Library/Group Containers/GROUP/APP, Windows %LOCALAPPDATA%\APP\Data. app is resolved and valid. */
static plc_status data_folder(const char *app, const char *group, char *out, size_t cap) {
  char path[PLC_DATA_CAP];
  const char *env = getenv("PLUGIN_LICENSE_HOME");
  path[0] = '\0';
  if (env != NULL && !js_blank(env)) {
    const char *const parts[] = {"/", env, "/data"};
    if (env[0] != '/' && getcwd(path, sizeof path) == NULL) return PLC_ERR_NO_PATH;
    if (join_parts(path, sizeof path, parts, 3) != 0) return PLC_ERR_PATH_TOO_LONG;
  } else {
    /* A HOME set but empty or relative is refused whatever else is set (paths.ts resolvePaths). */
    const char *home = getenv("HOME");
    plc_status st;
    if (home != NULL && home[0] != '/') return PLC_ERR_NO_PATH;
    st = data_place(app, group, path, sizeof path);
    if (st != PLC_OK) return st;
  }
  posix_normalize(path);
  return fit_data(path, out, cap);
}
