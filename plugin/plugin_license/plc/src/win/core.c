/*
 * Part of plc.c (compiled through it, never alone): the Windows basics the other win/ files use:
 * the monotonic clock, once per process, the environment and paths in UTF-8 (the wide API
 * underneath, so any user name or folder works).
 */

PLC_SHARED int64_t now_ms(void) { return (int64_t)GetTickCount64(); }

typedef struct once_call {
  void (*fn)(void);
} once_call;

static BOOL CALLBACK once_cb(PINIT_ONCE once, PVOID param, PVOID *context) {
  (void)once, (void)context;
  ((once_call *)param)->fn();
  return TRUE;
}

PLC_SHARED void run_once(plc_once *once, void (*fn)(void)) {
  once_call call;
  call.fn = fn;
  InitOnceExecuteOnce(once, once_cb, &call, NULL);
}

/* A variable of the environment as UTF-8 (the process's wide environment, so any user name or
 * folder works); 0 when unset, empty or too long. */
PLC_SHARED int env_utf8(const WCHAR *name, char *out, size_t cap) {
  WCHAR wide[1024];
  DWORD n = GetEnvironmentVariableW(name, wide, (DWORD)(sizeof wide / sizeof wide[0]));
  if (n == 0 || n >= sizeof wide / sizeof wide[0]) return 0;
  return WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)cap, NULL, NULL) > 1;
}

PLC_SHARED int to_wide(const char *utf8, WCHAR *out, int cap) {
  return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, out, cap) != 0;
}
