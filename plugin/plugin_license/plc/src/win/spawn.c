/*
 * Part of plc.c (compiled through it, never alone): the Windows launcher, plc_start_program, the one
 * way plc and the JUCE module start a program of the vendor's (the agent, the license manager):
 * CreateProcessW with DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW, no inherited
 * handle, the working folder %USERPROFILE% (else the system drive's root), this environment, and
 * a command line made by the one quoting function.
 */

/* Where a command line stops. */
#define PLC_COMMAND_LINE_CAP 4096

/* The program starts in another folder, where a relative path means another file: only an absolute
 * one is started. From a drive's root (C:\ or C:/) or a UNC or device path (two separators first);
 * C:name (the drive's current folder) and \name (the current drive's root) are relative. */
static int absolute_path(const char *path) {
  char c = path[0];
  if (((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) && path[1] == ':') return path[2] == '\\' || path[2] == '/';
  return (c == '\\' || c == '/') && (path[1] == '\\' || path[1] == '/');
}

static int is_program(const char *path) {
  WCHAR wide[1024];
  DWORD attributes;
  if (!to_wide(path, wide, (int)(sizeof wide / sizeof wide[0]))) return 0;
  attributes = GetFileAttributesW(wide);
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

/* PLUGIN_LICENSE_EXECUTABLE into path (the wide environment, as UTF-8): 1, 0 when unset, empty or
 * too long for plc's buffers. */
static int executable_variable(char *path, size_t cap) { return env_utf8(L"PLUGIN_LICENSE_EXECUTABLE", path, cap); }

/* The one quoting of a Windows command line, by the rules the C run-time (and CommandLineToArgvW)
 * read it back with: an argument with a space, a tab, a newline or a quote (or an empty one) goes
 * in quotes; inside, each quote is preceded by a backslash, and the backslashes right before a
 * quote (or before the closing quote) are doubled; other backslashes stay as they are. The
 * program's name (argv[0]) is read by another rule, with no escape at all: it is quoted whole and
 * may not hold a quote (no Windows file name does), so one that does is refused. UTF-8 in and out:
 * the characters the rules look at are ASCII, and no byte of a multi-byte sequence is one of them.
 * Appends to out at *pos; -1 (out cut back to *pos) when the argument cannot be said or does not fit. */
static int quote_windows_arg(char *out, size_t cap, size_t *pos, const char *arg, int program) {
  size_t start = *pos, at = *pos;
  int quote = arg[0] == '\0' || strpbrk(arg, " \t\n\v\"") != NULL;
  const char *p;
#define PLC_PUT(ch)            \
  do {                         \
    if (at + 1 >= cap) goto too_long; \
    out[at++] = (char)(ch);    \
  } while (0)
  if (program) {
    if (strchr(arg, '"') != NULL || arg[0] == '\0') goto too_long;
    PLC_PUT('"');
    for (p = arg; *p != '\0'; p++) PLC_PUT(*p);
    PLC_PUT('"');
  } else {
    if (quote) PLC_PUT('"');
    for (p = arg;; p++) {
      size_t slashes = 0;
      while (*p == '\\') {
        slashes++;
        p++;
      }
      if (*p == '\0') {
        /* Before the closing quote, every backslash doubled; unquoted, they stay. */
        for (size_t i = 0; i < (quote ? slashes * 2 : slashes); i++) PLC_PUT('\\');
        break;
      }
      if (*p == '"') {
        for (size_t i = 0; i < slashes * 2 + 1; i++) PLC_PUT('\\');
      } else {
        for (size_t i = 0; i < slashes; i++) PLC_PUT('\\');
      }
      PLC_PUT(*p);
    }
    if (quote) PLC_PUT('"');
  }
#undef PLC_PUT
  out[at] = '\0';
  *pos = at;
  return 0;
too_long:
  if (cap > start) out[start] = '\0';
  *pos = start;
  return -1;
}

plc_status plc_start_program(const char *const *argv, intptr_t *output, int *os_error) {
  char line[PLC_COMMAND_LINE_CAP];
  WCHAR wide_exe[1024], wide_line[PLC_COMMAND_LINE_CAP], home[1024];
  size_t pos = 0;
  DWORD n, attributes;
  STARTUPINFOW si;
  PROCESS_INFORMATION pi;
  if (output != NULL) *output = -1;
  if (os_error != NULL) *os_error = 0;
  /* A pipe for standard output is POSIX's: on Windows the program's output is the null device. */
  if (argv == NULL || argv[0] == NULL || !absolute_path(argv[0]) || output != NULL) return PLC_ERR_INVALID_ARGUMENT;
  if (!to_wide(argv[0], wide_exe, (int)(sizeof wide_exe / sizeof wide_exe[0]))) return PLC_ERR_INVALID_ARGUMENT;
  line[0] = '\0';
  if (quote_windows_arg(line, sizeof line, &pos, argv[0], 1) != 0) return PLC_ERR_INVALID_ARGUMENT;
  for (size_t i = 1; argv[i] != NULL; i++) {
    if (append(line, sizeof line, &pos, " ") != 0 || quote_windows_arg(line, sizeof line, &pos, argv[i], 0) != 0) return PLC_ERR_INVALID_ARGUMENT;
  }
  if (!to_wide(line, wide_line, (int)(sizeof wide_line / sizeof wide_line[0]))) return PLC_ERR_INVALID_ARGUMENT;
  if (!is_program(argv[0])) {
    if (os_error != NULL) *os_error = (int)ERROR_FILE_NOT_FOUND;
    return PLC_ERR_NO_FILE;
  }
  n = GetEnvironmentVariableW(L"USERPROFILE", home, (DWORD)(sizeof home / sizeof home[0]));
  attributes = n == 0 || n >= sizeof home / sizeof home[0] ? INVALID_FILE_ATTRIBUTES : GetFileAttributesW(home);
  if (attributes == INVALID_FILE_ATTRIBUTES || (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0) {
    /* No home: the root of the system's drive ("C:\\"). */
    n = GetSystemWindowsDirectoryW(home, (UINT)(sizeof home / sizeof home[0]));
    if (n < 3 || n >= sizeof home / sizeof home[0]) home[0] = L'\0';
    else home[3] = L'\0';
  }
  memset(&si, 0, sizeof si);
  si.cb = sizeof si;
  memset(&pi, 0, sizeof pi);
  /* No handle is inherited (bInheritHandles FALSE); no console, its own process group; the
   * environment is this process's (lpEnvironment NULL). */
  if (!CreateProcessW(wide_exe, wide_line, NULL, NULL, FALSE,
                      DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP | CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT, NULL,
                      home[0] != L'\0' ? home : NULL, &si, &pi)) {
    DWORD e = GetLastError();
    if (os_error != NULL) *os_error = (int)e;
    return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? PLC_ERR_NO_FILE : PLC_ERR_CONNECT;
  }
  /* Nothing to reap on Windows: the handles closed, the program runs on by itself. */
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  return PLC_OK;
}
