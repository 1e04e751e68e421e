/*
 * argv-probe: plc's agent start on Windows, for `pnpm test:windows` (built with mingw, run under
 * Wine). It includes plc.c itself, so it reaches the one quoting function (quote_windows_arg, static).
 *
 *   argv-probe table
 *       Each row of a table of hostile arguments quoted into one command line by quote_windows_arg,
 *       this program started with it (CreateProcessW) and its argv as the C run-time read it back;
 *       one JSON line per row, {"row":N,"line":...,"want":[...],"echo":{"argv":[...],...}}, then {"rows":N}.
 *   argv-probe start EXECUTABLE APP
 *       plc_start_agent(EXECUTABLE, APP): {"status":N,"words":"..."}.
 *   argv-probe (any arguments) with PLC_ARGV_PROBE_OUT set
 *       Writes {"argv":[...],"cwd":"..."} (UTF-8) to that file and exits: what a started program
 *       received (stdout is the null device then).
 */
#include "plc.c"

#include <stdio.h>

/* No wildcard expansion of the arguments, as Node's run-time (MSVC) does not expand them. */
int _dowildcard = 0;

static void put_json(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
    else fputc(*p, f);
  }
  fputc('"', f);
}

static void put_wide_json(FILE *f, const WCHAR *w) {
  char utf8[4096];
  if (WideCharToMultiByte(CP_UTF8, 0, w, -1, utf8, (int)sizeof utf8, NULL, NULL) == 0) strcpy(utf8, "(not UTF-16)");
  put_json(f, utf8);
}

static int echo(int argc, WCHAR **argv, const WCHAR *out) {
  WCHAR cwd[1024];
  FILE *f = _wfopen(out, L"wb");
  if (f == NULL) return 3;
  fputs("{\"argv\":[", f);
  for (int i = 0; i < argc; i++) {
    if (i > 0) fputc(',', f);
    put_wide_json(f, argv[i]);
  }
  fputs("],\"cwd\":", f);
  if (GetCurrentDirectoryW(1024, cwd) == 0) cwd[0] = L'\0';
  put_wide_json(f, cwd);
  fputs("}\n", f);
  fclose(f);
  return 0;
}

/* The rows: what a program is to receive after its name. Every character the rules look at (space,
 * tab, newline, quote, backslash before a quote or at the end), and what they must leave alone. */
static const char *const rows[][5] = {
    {"plain", NULL},
    {"with space", "two  spaces", NULL},
    {"", "empty before", NULL},
    {"say \"hi\"", "\"", "\"\"", NULL},
    {"trailing\\", "with space\\", "two\\\\", NULL},
    {"a\\\"b", "a\\\\\"b", "\\\"", NULL},
    {"a\\b\\\\c", "\\\\server\\share\\", "C:\\Program Files\\", NULL},
    {"tab\there", "new\nline", "v\vt", NULL},
    {"*", "?.txt", "$HOME", "%PATH%", NULL},
    {"'single'", "it's", "back`tick", NULL},
    {"\xc3\xbc\xe2\x82\xac \xe6\x97\xa5\xe6\x9c\xac", "caf\xc3\xa9\\", NULL},
    {"--app", "acme-audio", NULL},
};

static int table(const WCHAR *self) {
  char exe[1024], line[4096];
  WCHAR wline[4096], dir[1024], out[1100];
  int n = 0;
  if (WideCharToMultiByte(CP_UTF8, 0, self, -1, exe, (int)sizeof exe, NULL, NULL) == 0) return 3;
  if (GetTempPathW(1024, dir) == 0) return 3;
  swprintf(out, 1100, L"%lsargv-probe-%lu.json", dir, (unsigned long)GetCurrentProcessId());
  SetEnvironmentVariableW(L"PLC_ARGV_PROBE_OUT", out);
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++, n++) {
    size_t pos = 0;
    char got[8192];
    STARTUPINFOW si;
    PROCESS_INFORMATION pi;
    FILE *f;
    size_t len = 0;
    line[0] = '\0';
    if (quote_windows_arg(line, sizeof line, &pos, exe, 1) != 0) return 3;
    for (size_t i = 0; i < 5 && rows[r][i] != NULL; i++)
      if (append(line, sizeof line, &pos, " ") != 0 || quote_windows_arg(line, sizeof line, &pos, rows[r][i], 0) != 0) return 3;
    if (!to_wide(line, wline, 4096)) return 3;
    DeleteFileW(out);
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    if (!CreateProcessW(self, wline, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi)) return 3;
    WaitForSingleObject(pi.hProcess, 30000);
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    f = _wfopen(out, L"rb");
    if (f != NULL) {
      len = fread(got, 1, sizeof got - 1, f);
      fclose(f);
    }
    got[len] = '\0';
    if (len > 0 && got[len - 1] == '\n') got[--len] = '\0';
    /* What was meant (the program's name, then the row) beside what arrived; the test compares. */
    printf("{\"row\":%d,\"line\":", (int)r);
    put_json(stdout, line);
    printf(",\"want\":[");
    put_json(stdout, exe);
    for (size_t i = 0; i < 5 && rows[r][i] != NULL; i++) {
      putchar(',');
      put_json(stdout, rows[r][i]);
    }
    printf("],\"echo\":%s}\n", len > 0 ? got : "null");
  }
  printf("{\"rows\":%d}\n", n);
  return 0;
}

int wmain(int argc, WCHAR **argv) {
  WCHAR out[1024];
  DWORD n = GetEnvironmentVariableW(L"PLC_ARGV_PROBE_OUT", out, 1024);
  if (argc == 2 && wcscmp(argv[1], L"table") == 0) {
    WCHAR self[1024];
    if (GetModuleFileNameW(NULL, self, 1024) == 0) return 3;
    return table(self);
  }
  if (argc == 4 && wcscmp(argv[1], L"start") == 0) {
    char exe[1024], app[256];
    plc_status st;
    if (WideCharToMultiByte(CP_UTF8, 0, argv[2], -1, exe, (int)sizeof exe, NULL, NULL) == 0 ||
        WideCharToMultiByte(CP_UTF8, 0, argv[3], -1, app, (int)sizeof app, NULL, NULL) == 0)
      return 3;
    st = plc_start_agent(exe, app);
    printf("{\"status\":%d,\"words\":", (int)st);
    put_json(stdout, plc_strerror(st));
    printf("}\n");
    return st == PLC_OK ? 0 : 1;
  }
  if (n > 0 && n < 1024) return echo(argc, argv, out);
  fputs("usage: argv-probe table | start EXECUTABLE APP (or any arguments with PLC_ARGV_PROBE_OUT set)\n", stderr);
  return 2;
}
