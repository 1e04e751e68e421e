/*
 * Part of plc.c (compiled through it, never alone): Windows paths of the data folder, by Node's
 * path.win32 rules as the library makes the same paths (path.resolve, path.dirname).
 */

static int is_separator(char c) { return c == '\\' || c == '/'; }

/* A drive stays: C:\x's folder is C:\, C:x's is C:. */
static size_t path_root(const char *path, size_t n) {
  size_t root = n >= 2 && path[1] == ':' ? 2 : 0;
  if (root == 2 && n >= 3 && is_separator(path[2])) root = 3;
  return root;
}

/* The namespace's data folder by the library's one rule (paths.ts resolvePaths, env-paths 4), UTF-8:
 * PLUGIN_LICENSE_HOME\data (resolved as path.resolve does: absolute, against the working folder
 * when relative), else %LOCALAPPDATA%\APP\Data (win/places.c). app is resolved and valid. */
static plc_status data_folder(const char *app, const char *group, char *out, size_t cap) {
  WCHAR wide[PLC_DATA_CAP], full[PLC_DATA_CAP];
  DWORD n;
  out[0] = '\0';
  n = GetEnvironmentVariableW(L"PLUGIN_LICENSE_HOME", wide, PLC_DATA_CAP);
  if (n >= PLC_DATA_CAP) return PLC_ERR_PATH_TOO_LONG;
  if (n > 0) {
    if (WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)cap, NULL, NULL) == 0) return PLC_ERR_PATH_TOO_LONG;
    if (!js_blank(out)) {
      DWORD m = GetFullPathNameW(wide, PLC_DATA_CAP, full, NULL);
      const char *const tail[] = {"\\data"};
      size_t len;
      if (m == 0 || m >= PLC_DATA_CAP) return PLC_ERR_PATH_TOO_LONG;
      if (WideCharToMultiByte(CP_UTF8, 0, full, -1, out, (int)cap, NULL, NULL) == 0) return PLC_ERR_PATH_TOO_LONG;
      len = strlen(out);
      if (len > 0 && out[len - 1] == '\\') out[len - 1] = '\0';
      return join_parts(out, cap, tail, 1) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
    }
    out[0] = '\0';
  }
  return data_place(app, group, out, cap);
}
