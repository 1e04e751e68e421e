/*
 * Part of plc.c (compiled through it, never alone): where things are on Windows: the agent's named
 * pipe, the data folder under %LOCALAPPDATA%, the vendor's executable under %LOCALAPPDATA%\Programs
 * (the per-user installers' place).
 */

#ifndef PLC_NO_AGENT_CLIENT

/* \\.\pipe\APP-agent-USERNAME. */
static plc_status socket_place(const char *app, char *out, size_t out_size) {
  char user[256];
  DWORD n = GetEnvironmentVariableA("USERNAME", user, (DWORD)sizeof user);
  if (n == 0 || n >= sizeof user) {
    DWORD size = (DWORD)sizeof user;
    if (!GetUserNameA(user, &size)) return PLC_ERR_NO_PATH;
  }
  {
    const char *const parts[] = {"\\\\.\\pipe\\", app, "-agent-", user};
    return socket_path_of(parts, 4, out, out_size);
  }
}

/* App groups are macOS's: elsewhere the default path. */
static plc_status group_socket_place(const char *group, const char *app, char *out, size_t out_size) {
  (void)group;
  return socket_place(app, out, out_size);
}

#endif

#ifndef PLC_NO_TICKET

/* %LOCALAPPDATA%\APP\Data (without LOCALAPPDATA, %USERPROFILE%\AppData\Local), into out. */
static plc_status data_place(const char *app, const char *group, char *out, size_t cap) {
  WCHAR wide[PLC_DATA_CAP];
  DWORD n = GetEnvironmentVariableW(L"LOCALAPPDATA", wide, PLC_DATA_CAP);
  const char *const tail[] = {"\\", app, "\\Data"};
  size_t len;
  (void)group;
  if (n >= PLC_DATA_CAP) return PLC_ERR_PATH_TOO_LONG;
  if (n == 0) {
    const char *const local[] = {"\\AppData\\Local"};
    n = GetEnvironmentVariableW(L"USERPROFILE", wide, PLC_DATA_CAP);
    if (n == 0) return PLC_ERR_NO_PATH;
    if (n >= PLC_DATA_CAP || WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)cap, NULL, NULL) == 0 || join_parts(out, cap, local, 1) != 0)
      return PLC_ERR_PATH_TOO_LONG;
  } else if (WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)cap, NULL, NULL) == 0) {
    return PLC_ERR_PATH_TOO_LONG;
  }
  len = strlen(out);
  if (len > 0 && (out[len - 1] == '\\' || out[len - 1] == '/')) out[len - 1] = '\0';
  return join_parts(out, cap, tail, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
}

#endif

#ifndef PLC_NO_AGENT_START

/* %LOCALAPPDATA%\Programs\VENDOR\NAME.exe (a vendor is needed). */
static plc_status executable_place(const char *vendor, const char *name, char *path, size_t cap) {
  char local[PLC_DATA_CAP];
  const char *const parts[] = {local, "\\Programs\\", vendor, "\\", name, ".exe"};
  if (vendor == NULL || vendor[0] == '\0') return PLC_ERR_INVALID_ARGUMENT;
  if (!env_utf8(L"LOCALAPPDATA", local, sizeof local)) return PLC_ERR_NO_PATH;
  return join_parts(path, cap, parts, 6) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
}

#endif
