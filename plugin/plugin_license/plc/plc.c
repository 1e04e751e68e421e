/*
 * plc: C client of the plugin-license agent. See plc.h for the contract.
 * No heap: requests are streamed through a small buffer on the stack, answers land in plc_client.buf.
 */
#if !defined(_WIN32) && !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* SOCK_CLOEXEC, SOCK_NONBLOCK, MSG_NOSIGNAL with -std=c11 */
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE /* SO_NOSIGPIPE */
#endif

#include "plc.h"

#include <string.h>
#include <stdlib.h>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0600 /* GetNamedPipeServerProcessId */
#endif
#include <windows.h>
#else
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#endif

#define PLC_MAX_DEPTH 32

/* ---------------------------------------------------------------- small string helpers */

static int append(char *dst, size_t cap, size_t *pos, const char *src) {
  size_t n = strlen(src);
  if (*pos + n >= cap) return -1;
  memcpy(dst + *pos, src, n);
  *pos += n;
  dst[*pos] = '\0';
  return 0;
}

static int append_ulong(char *dst, size_t cap, size_t *pos, unsigned long v) {
  char tmp[24];
  size_t i = sizeof tmp;
  tmp[--i] = '\0';
  do {
    tmp[--i] = (char)('0' + (v % 10));
    v /= 10;
  } while (v != 0 && i > 0);
  return append(dst, cap, pos, tmp + i);
}

/* ---------------------------------------------------------------- clock */

static int64_t now_ms(void) {
#ifdef _WIN32
  return (int64_t)GetTickCount64();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
#endif
}

static int remaining_ms(int64_t deadline) {
  int64_t left = deadline - now_ms();
  if (left <= 0) return 0;
  return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

static plc_status still_waiting(const plc_client *c, int64_t deadline, int enforce_deadline);

#ifndef _WIN32
/* The folder of a socket path ("." for a bare name); dir holds PLC_PATH_CAP bytes. */
static void socket_folder(const char *path, char *dir) {
  const char *slash = strrchr(path, '/');
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (n == 0) {
    memcpy(dir, ".", 2);
    return;
  }
  memcpy(dir, path, n);
  dir[n] = '\0';
}
#endif

/* ---------------------------------------------------------------- default socket path */

#ifndef _WIN32
#define PLC_SUN_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
#endif

#ifndef _WIN32
/* The user's home, by the library's one rule (paths.ts userHome): HOME when set, else the password
 * database's; NULL when it is empty or not absolute (a folder relative to the working one is no
 * home: an agent started in / would write /.local/share/APP) or there is none. */
static const char *home_folder(char *pwbuf, size_t cap) {
  const char *home = getenv("HOME");
  struct passwd pw, *found = NULL;
  if (home != NULL) return home[0] == '/' ? home : NULL;
  if (getpwuid_r(getuid(), &pw, pwbuf, cap, &found) != 0 || found == NULL || found->pw_dir == NULL || found->pw_dir[0] != '/') return NULL;
  return found->pw_dir;
}
#endif

static plc_status fit_path(const char *path, size_t len, char *out, size_t out_size) {
#ifndef _WIN32
  if (len > PLC_SUN_PATH_MAX) return PLC_ERR_PATH_TOO_LONG;
#endif
  if (len + 1 > out_size) return PLC_ERR_PATH_TOO_LONG;
  memcpy(out, path, len + 1);
  return PLC_OK;
}

plc_status plc_default_socket_path(const char *app, char *out, size_t out_size) {
  char path[1024];
  size_t pos = 0;
  const char *env;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';

  env = getenv("PLUGIN_LICENSE_SOCKET");
  if (env != NULL && env[0] != '\0') return fit_path(env, strlen(env), out, out_size);

  if (app == NULL || app[0] == '\0') app = getenv("PLUGIN_LICENSE_APP");
  if (app == NULL || app[0] == '\0') app = PLC_DEFAULT_APP;
  path[0] = '\0';

#if defined(_WIN32)
  {
    char user[256];
    DWORD n = GetEnvironmentVariableA("USERNAME", user, (DWORD)sizeof user);
    if (n == 0 || n >= sizeof user) {
      DWORD size = (DWORD)sizeof user;
      if (!GetUserNameA(user, &size)) return PLC_ERR_NO_PATH;
    }
    if (append(path, sizeof path, &pos, "\\\\.\\pipe\\") != 0 || append(path, sizeof path, &pos, app) != 0 ||
        append(path, sizeof path, &pos, "-agent-") != 0 || append(path, sizeof path, &pos, user) != 0)
      return PLC_ERR_PATH_TOO_LONG;
  }
#elif defined(__APPLE__)
  {
    const char *group = getenv("PLUGIN_LICENSE_APP_GROUP");
    char pwbuf[1024];
    const char *home;
    if (group != NULL && group[0] != '\0') return plc_app_group_socket_path(group, app, out, out_size);
    home = home_folder(pwbuf, sizeof pwbuf);
    if (home == NULL) return PLC_ERR_NO_PATH;
    if (append(path, sizeof path, &pos, home) != 0 ||
        append(path, sizeof path, &pos, "/Library/Application Support/") != 0 ||
        append(path, sizeof path, &pos, app) != 0 || append(path, sizeof path, &pos, "/agent.sock") != 0)
      return PLC_ERR_PATH_TOO_LONG;
  }
#else
  {
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    /* A relative XDG_RUNTIME_DIR is ignored, as the XDG Base Directory specification says. */
    if (runtime != NULL && runtime[0] == '/') {
      if (append(path, sizeof path, &pos, runtime) != 0 || append(path, sizeof path, &pos, "/") != 0 ||
          append(path, sizeof path, &pos, app) != 0 || append(path, sizeof path, &pos, "/agent.sock") != 0)
        return PLC_ERR_PATH_TOO_LONG;
    } else {
      if (append(path, sizeof path, &pos, "/tmp/") != 0 || append(path, sizeof path, &pos, app) != 0 ||
          append(path, sizeof path, &pos, "-") != 0 ||
          append_ulong(path, sizeof path, &pos, (unsigned long)getuid()) != 0 ||
          append(path, sizeof path, &pos, "/agent.sock") != 0)
        return PLC_ERR_PATH_TOO_LONG;
    }
  }
#endif
  return fit_path(path, pos, out, out_size);
}

static int valid_group(const char *group) {
  size_t n = 0;
  if (group == NULL) return 0;
  for (const char *p = group; *p != '\0'; p++, n++) {
    char ch = *p;
    int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (!alnum && (n == 0 || (ch != '.' && ch != '-'))) return 0;
  }
  return n >= 3 && n <= 128;
}

plc_status plc_app_group_socket_path(const char *group, const char *app, char *out, size_t out_size) {
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  if (!valid_group(group)) return PLC_ERR_INVALID_ARGUMENT;
#if defined(__APPLE__)
  {
    char path[1024];
    size_t pos = 0;
    char pwbuf[1024];
    struct passwd pw, *found = NULL;
    const char *env = getenv("PLUGIN_LICENSE_SOCKET");
    if (env != NULL && env[0] != '\0') return fit_path(env, strlen(env), out, out_size);
    if (app == NULL || app[0] == '\0') app = getenv("PLUGIN_LICENSE_APP");
    if (app == NULL || app[0] == '\0') app = PLC_DEFAULT_APP;
    /* In a sandbox HOME is the container's; the group container is under the real home. */
    if (getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &found) != 0 || found == NULL) return PLC_ERR_NO_PATH;
    path[0] = '\0';
    if (append(path, sizeof path, &pos, found->pw_dir) != 0 || append(path, sizeof path, &pos, "/Library/Group Containers/") != 0 ||
        append(path, sizeof path, &pos, group) != 0 || append(path, sizeof path, &pos, "/") != 0 ||
        append(path, sizeof path, &pos, app) != 0 || append(path, sizeof path, &pos, "/agent.sock") != 0)
      return PLC_ERR_PATH_TOO_LONG;
    return fit_path(path, pos, out, out_size);
  }
#else
  return plc_default_socket_path(app, out, out_size);
#endif
}

/* ---------------------------------------------------------------- names */

const char *plc_strerror(plc_status status) {
  switch (status) {
    case PLC_OK: return "ok";
    case PLC_ERR_INVALID_ARGUMENT: return "invalid argument (NULL, empty or too long)";
    /* One status for every path a call makes (the socket's, the executable's, the ticket's): the
     * words fit each; plc_describe and the calls' callers say which it was. */
    case PLC_ERR_PATH_TOO_LONG:
      return "a path is longer than the platform or the buffer allows, never cut (the agent's socket: set a shorter PLUGIN_LICENSE_SOCKET; "
             "the data folder: PLUGIN_LICENSE_HOME; the executable: PLUGIN_LICENSE_EXECUTABLE)";
    case PLC_ERR_NO_PATH: return "no default path: no home folder or user name to make it from (set HOME, or PLUGIN_LICENSE_SOCKET for the agent's socket)";
    case PLC_ERR_NOT_RUNNING: return "the agent is not running; treat the license as unknown and retry later";
    case PLC_ERR_CONNECT: return "could not connect to the agent socket (permission, or not a socket)";
    case PLC_ERR_TIMEOUT: return "the agent did not answer in time";
    case PLC_ERR_IO: return "a socket read or write failed";
    case PLC_ERR_CLOSED: return "the agent closed the connection before answering";
    case PLC_ERR_TOO_LARGE: return "the agent's answer is larger than the client buffer (PLC_BUFFER_SIZE)";
    case PLC_ERR_PROTOCOL: return "the agent's answer is not a valid protocol message";
    case PLC_ERR_AGENT: return "the agent answered with an error";
    case PLC_ERR_FOREIGN_AGENT: return "another user's program answers on the agent's socket or pipe; nothing was sent to it (start your own agent, or ask your administrator)";
    case PLC_ERR_INTERRUPTED: return "the call was interrupted";
    case PLC_ERR_AGENT_OUTDATED: return "the license agent needs an update: it does not know this request";
    case PLC_ERR_FOREIGN_FOLDER: return "the agent's socket folder belongs to another user, is writable by others or is a link; nothing was sent (remove that folder, or set PLUGIN_LICENSE_SOCKET to a path in a private folder of yours)";
    case PLC_ERR_NOT_A_FILE: return "this is not a regular file (a pipe, a device or a folder); nothing was read: choose the file itself";
    case PLC_ERR_FILE_TOO_LARGE: return "the file is far larger than the document it should be; nothing was read: choose the right file";
    case PLC_ERR_NO_FILE: return "no such file";
    case PLC_ERR_FILE_UNREADABLE: return "the file cannot be read (permission or a read error)";
  }
  return "unknown status";
}

static const char *const reason_names[] = {
    "", "not_activated", "code_revoked", "code_not_found", "deactivated",
    "grace_expired", "clock_tampered", "cache_invalid",
};

const char *plc_reason_name(plc_reason reason) {
  if ((int)reason >= 0 && (size_t)reason < sizeof reason_names / sizeof reason_names[0]) return reason_names[reason];
  return "other";
}

static plc_reason reason_from_text(const char *text) {
  if (text[0] == '\0') return PLC_REASON_NONE;
  for (size_t i = 1; i < sizeof reason_names / sizeof reason_names[0]; i++)
    if (strcmp(text, reason_names[i]) == 0) return (plc_reason)i;
  return PLC_REASON_OTHER;
}

/* ---------------------------------------------------------------- time parsing */

static int digits(const char *p, int n, int *value) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    v = v * 10 + (p[i] - '0');
  }
  *value = v;
  return 0;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int plc_parse_time(const char *text, int64_t *seconds) {
  int y, mo, d, h, mi, s, oh = 0, om = 0, sign = 0;
  const char *p = text;
  if (text == NULL || seconds == NULL) return -1;
  if (strlen(text) < 20) return -1;
  if (digits(p, 4, &y) || p[4] != '-' || digits(p + 5, 2, &mo) || p[7] != '-' || digits(p + 8, 2, &d)) return -1;
  if (p[10] != 'T' && p[10] != 't' && p[10] != ' ') return -1;
  if (digits(p + 11, 2, &h) || p[13] != ':' || digits(p + 14, 2, &mi) || p[16] != ':' || digits(p + 17, 2, &s))
    return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return -1;
  p += 19;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    sign = *p == '-' ? -1 : 1;
    if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59) return -1;
    p += 6;
  } else {
    return -1;
  }
  if (*p != '\0') return -1;
  *seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - sign * (oh * 3600 + om * 60);
  return 0;
}

/* ---------------------------------------------------------------- bounded JSON scanner */

typedef struct scan {
  const char *p;
  const char *end;
} scan;

static void skip_ws(scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static int peek(scan *s) {
  skip_ws(s);
  return s->p < s->end ? (unsigned char)*s->p : -1;
}

static int expect(scan *s, char ch) {
  if (peek(s) != (unsigned char)ch) return -1;
  s->p++;
  return 0;
}

static int literal(scan *s, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return -1;
  s->p += n;
  return 0;
}

static int hex4(const char *p, unsigned *v) {
  unsigned r = 0;
  for (int i = 0; i < 4; i++) {
    char c = p[i];
    r <<= 4;
    if (c >= '0' && c <= '9') r |= (unsigned)(c - '0');
    else if (c >= 'a' && c <= 'f') r |= (unsigned)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') r |= (unsigned)(c - 'A' + 10);
    else return -1;
  }
  *v = r;
  return 0;
}

/* Writes one byte when it fits (room kept for the NUL); remembers truncation. */
static void put(char *out, size_t cap, size_t *pos, int *cut, unsigned char byte) {
  if (out == NULL) return;
  if (*pos + 1 < cap) out[(*pos)++] = (char)byte;
  else *cut = 1;
}

static void put_utf8(char *out, size_t cap, size_t *pos, int *cut, unsigned cp) {
  if (cp < 0x80) {
    put(out, cap, pos, cut, (unsigned char)cp);
  } else if (cp < 0x800) {
    put(out, cap, pos, cut, (unsigned char)(0xC0 | (cp >> 6)));
    put(out, cap, pos, cut, (unsigned char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    put(out, cap, pos, cut, (unsigned char)(0xE0 | (cp >> 12)));
    put(out, cap, pos, cut, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
    put(out, cap, pos, cut, (unsigned char)(0x80 | (cp & 0x3F)));
  } else {
    put(out, cap, pos, cut, (unsigned char)(0xF0 | (cp >> 18)));
    put(out, cap, pos, cut, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
    put(out, cap, pos, cut, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
    put(out, cap, pos, cut, (unsigned char)(0x80 | (cp & 0x3F)));
  }
}

/* A cut text must not end inside a UTF-8 sequence. */
static void trim_utf8(char *out, size_t *pos) {
  size_t i = *pos;
  while (i > 0 && ((unsigned char)out[i - 1] & 0xC0) == 0x80) i--;
  if (i == 0) return;
  unsigned char lead = (unsigned char)out[i - 1];
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (*pos - (i - 1) < need) *pos = i - 1;
}

/* Reads a JSON string, decoding it into out (cap bytes with the NUL) when out is not NULL.
 * Returns 0, 1 when the text was cut to fit, -1 when malformed. */
static int scan_string(scan *s, char *out, size_t cap, size_t *out_len) {
  size_t pos = 0;
  int cut = 0;
  if (expect(s, '"') != 0) return -1;
  for (;;) {
    if (s->p >= s->end) return -1;
    unsigned char c = (unsigned char)*s->p++;
    if (c == '"') break;
    if (c < 0x20) return -1;
    if (c != '\\') {
      put(out, cap, &pos, &cut, c);
      continue;
    }
    if (s->p >= s->end) return -1;
    c = (unsigned char)*s->p++;
    switch (c) {
      case '"': case '\\': case '/': put(out, cap, &pos, &cut, c); break;
      case 'b': put(out, cap, &pos, &cut, '\b'); break;
      case 'f': put(out, cap, &pos, &cut, '\f'); break;
      case 'n': put(out, cap, &pos, &cut, '\n'); break;
      case 'r': put(out, cap, &pos, &cut, '\r'); break;
      case 't': put(out, cap, &pos, &cut, '\t'); break;
      case 'u': {
        unsigned cp, lo;
        if (s->end - s->p < 4 || hex4(s->p, &cp) != 0) return -1;
        s->p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' && hex4(s->p + 2, &lo) == 0 && lo >= 0xDC00 &&
              lo <= 0xDFFF) {
            s->p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        put_utf8(out, cap, &pos, &cut, cp);
        break;
      }
      default: return -1;
    }
  }
  if (out != NULL) {
    if (cut) trim_utf8(out, &pos);
    out[pos] = '\0';
  }
  if (out_len != NULL) *out_len = pos;
  return cut;
}

/* Reads a JSON number; *value gets its integer part, clamped. */
static int scan_number(scan *s, long long *value) {
  long long v = 0;
  int neg = 0, any = 0;
  skip_ws(s);
  if (s->p < s->end && *s->p == '-') {
    neg = 1;
    s->p++;
  }
  /* JSON has no leading zeros: 01 is not a number. */
  if (s->end - s->p >= 2 && s->p[0] == '0' && s->p[1] >= '0' && s->p[1] <= '9') return -1;
  while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
    int dgt = *s->p++ - '0';
    v = v > (0x7fffffffffffffffLL - dgt) / 10 ? 0x7fffffffffffffffLL : v * 10 + dgt;
    any = 1;
  }
  if (!any) return -1;
  if (s->p < s->end && *s->p == '.') {
    s->p++;
    any = 0;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++, any = 1;
    if (!any) return -1;
  }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
    s->p++;
    if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
    any = 0;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++, any = 1;
    if (!any) return -1;
  }
  if (value != NULL) *value = neg ? -v : v;
  return 0;
}

static int skip_value(scan *s, int depth);

/* Member iteration: call with *first = 1 right after '{'. Returns 1 with the key read and the
 * ':' consumed, 0 at the closing '}', -1 when malformed. A key cut to fit reads as "". */
static int next_member(scan *s, int *first, char *key, size_t cap) {
  int ch = peek(s);
  if (*first) {
    *first = 0;
    if (ch == '}') {
      s->p++;
      return 0;
    }
  } else {
    if (ch == '}') {
      s->p++;
      return 0;
    }
    if (ch != ',') return -1;
    s->p++;
  }
  int r = scan_string(s, key, cap, NULL);
  if (r < 0) return -1;
  if (r == 1) key[0] = '\0';
  return expect(s, ':') == 0 ? 1 : -1;
}

static int skip_value(scan *s, int depth) {
  char key[8];
  int first = 1, r;
  if (depth > PLC_MAX_DEPTH) return -1;
  switch (peek(s)) {
    case '"': return scan_string(s, NULL, 0, NULL) < 0 ? -1 : 0;
    case '{':
      s->p++;
      while ((r = next_member(s, &first, key, sizeof key)) == 1)
        if (skip_value(s, depth + 1) != 0) return -1;
      return r;
    case '[':
      s->p++;
      if (peek(s) == ']') {
        s->p++;
        return 0;
      }
      for (;;) {
        if (skip_value(s, depth + 1) != 0) return -1;
        r = peek(s);
        s->p++;
        if (r == ']') return 0;
        if (r != ',') return -1;
      }
    case 't': return literal(s, "true");
    case 'f': return literal(s, "false");
    case 'n': return literal(s, "null");
    default: return scan_number(s, NULL);
  }
}

/* null -> "", a string -> its text. Returns like scan_string. */
static int scan_text_or_null(scan *s, char *out, size_t cap) {
  if (peek(s) == 'n') {
    out[0] = '\0';
    return literal(s, "null");
  }
  return scan_string(s, out, cap, NULL);
}

static int scan_long_or_null(scan *s, long *out) {
  long long v;
  if (peek(s) == 'n') {
    *out = -1;
    return literal(s, "null");
  }
  if (scan_number(s, &v) != 0) return -1;
  *out = v > 0x7fffffffL ? 0x7fffffffL : v < -0x7fffffffL ? -0x7fffffffL : (long)v;
  return 0;
}

static int scan_time(scan *s, char *text, size_t cap, int64_t *seconds) {
  if (scan_text_or_null(s, text, cap) != 0) return -1;
  if (text[0] == '\0' || plc_parse_time(text, seconds) != 0) *seconds = 0;
  return 0;
}

static int parse_license(scan *s, plc_license *out) {
  char key[24];
  int first = 1, r, have_valid = 0;
  if (expect(s, '{') != 0) return -1;
  while ((r = next_member(s, &first, key, sizeof key)) == 1) {
    int bad = 0;
    if (strcmp(key, "valid") == 0) {
      int ch = peek(s);
      if (ch == 't') bad = literal(s, "true"), out->valid = 1;
      else if (ch == 'f') bad = literal(s, "false"), out->valid = 0;
      else bad = 1;
      have_valid = !bad;
    } else if (strcmp(key, "reason") == 0) {
      bad = scan_text_or_null(s, out->reason_text, sizeof out->reason_text) < 0;
      out->reason = bad ? PLC_REASON_NONE : reason_from_text(out->reason_text);
    } else if (strcmp(key, "source") == 0) {
      char source[16] = "";
      bad = scan_text_or_null(s, source, sizeof source) < 0;
      out->source = strcmp(source, "online") == 0 ? PLC_SOURCE_ONLINE
                    : strcmp(source, "cache") == 0 ? PLC_SOURCE_CACHE
                    : strcmp(source, "offline") == 0 ? PLC_SOURCE_OFFLINE
                                                     : PLC_SOURCE_UNKNOWN;
    } else if (strcmp(key, "project_id") == 0) {
      bad = scan_text_or_null(s, out->project_id, sizeof out->project_id) != 0;
    } else if (strcmp(key, "code_hint") == 0) {
      bad = scan_text_or_null(s, out->code_hint, sizeof out->code_hint) != 0;
    } else if (strcmp(key, "activations") == 0) {
      bad = scan_long_or_null(s, &out->activations);
    } else if (strcmp(key, "max_activations") == 0) {
      bad = scan_long_or_null(s, &out->max_activations);
    } else if (strcmp(key, "validated_at") == 0) {
      bad = scan_time(s, out->validated_at, sizeof out->validated_at, &out->validated_at_s);
    } else if (strcmp(key, "grace_until") == 0) {
      bad = scan_time(s, out->grace_until, sizeof out->grace_until, &out->grace_until_s);
    } else if (strcmp(key, "next_check_at") == 0) {
      bad = scan_time(s, out->next_check_at, sizeof out->next_check_at, &out->next_check_at_s);
    } else {
      bad = skip_value(s, 1);
    }
    if (bad) return -1;
  }
  return r == 0 && have_valid ? 0 : -1;
}

static int parse_error(scan *s, plc_license *out) {
  char key[16];
  int first = 1, r, have_code = 0;
  if (expect(s, '{') != 0) return -1;
  while ((r = next_member(s, &first, key, sizeof key)) == 1) {
    int bad;
    if (strcmp(key, "code") == 0) {
      bad = scan_long_or_null(s, &out->error_code);
      have_code = !bad;
    } else if (strcmp(key, "message") == 0) {
      bad = scan_text_or_null(s, out->error_message, sizeof out->error_message) < 0;
    } else if (strcmp(key, "data") == 0 && peek(s) == '{') {
      int dfirst = 1, dr;
      s->p++;
      while ((dr = next_member(s, &dfirst, key, sizeof key)) == 1) {
        if (strcmp(key, "code") == 0 && peek(s) == '"') dr = scan_string(s, out->error_detail, sizeof out->error_detail, NULL) < 0;
        else dr = skip_value(s, 2);
        if (dr != 0) return -1;
      }
      bad = dr != 0;
    } else {
      bad = skip_value(s, 1);
    }
    if (bad) return -1;
  }
  return r == 0 && have_code ? 0 : -1;
}

/* Parses an answer's `result` into `out`: 0, -1 when malformed, 1 when it does not fit. */
typedef int (*result_parser)(scan *s, void *out);

static int parse_license_result(scan *s, void *out) { return parse_license(s, (plc_license *)out); }

static int parse_subscribed(scan *s, void *out) {
  (void)out;
  return peek(s) == '{' ? skip_value(s, 1) : -1;
}

static int parse_document(scan *s, void *out) {
  plc_document *doc = (plc_document *)out;
  char key[16];
  int first = 1, r, cut = 0, have_text = 0;
  if (expect(s, '{') != 0) return -1;
  while ((r = next_member(s, &first, key, sizeof key)) == 1) {
    int got;
    if (strcmp(key, "document") == 0) {
      got = scan_string(s, doc->text, sizeof doc->text, NULL);
      have_text = got >= 0;
    } else if (strcmp(key, "file_name") == 0) {
      got = scan_text_or_null(s, doc->file_name, sizeof doc->file_name);
    } else {
      got = skip_value(s, 1);
    }
    if (got < 0) return -1;
    if (got == 1) cut = 1;
  }
  if (r != 0 || !have_text || doc->text[0] == '\0') return -1;
  return cut;
}

/* Ids are exact integers: we send the decimal digits of an unsigned long, so only that same token is
 * the answer's id. 1.0, 1e0, 01, -1, +1 or "1" (a string) are other ids, never ours. */
static int same_id(const char *token, size_t n, unsigned long id) {
  char ours[24];
  size_t pos = 0;
  ours[0] = '\0';
  append_ulong(ours, sizeof ours, &pos, id);
  return n == pos && memcmp(token, ours, n) == 0;
}

typedef enum line_kind { LINE_SKIP, LINE_RESULT, LINE_ERROR, LINE_CHANGED, LINE_BAD } line_kind;

/* Classifies one line: the answer to request `id` (its result or error), a `changed`
 * notification, something else to skip, or not a JSON-RPC 2.0 message. `*at` points at the
 * result, error or params value. */
static line_kind classify(const char *line, size_t len, unsigned long id, const char **at) {
  scan s = {line, line + len};
  char key[16], text[16];
  int first = 1, r, is_ours = 0, id_null = 0, is_notification = 0, is_changed = 0, have_version = 0;
  const char *result_at = NULL, *error_at = NULL, *params_at = NULL;
  if (expect(&s, '{') != 0) return LINE_BAD;
  while ((r = next_member(&s, &first, key, sizeof key)) == 1) {
    int bad;
    if (strcmp(key, "jsonrpc") == 0) {
      bad = scan_string(&s, text, sizeof text, NULL) != 0 || strcmp(text, "2.0") != 0;
      have_version = !bad;
    } else if (strcmp(key, "id") == 0) {
      int ch = peek(&s);
      if (ch == 'n') {
        bad = literal(&s, "null");
        id_null = 1;
      } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        const char *token = s.p;
        bad = scan_number(&s, NULL);
        is_ours = !bad && same_id(token, (size_t)(s.p - token), id);
      } else {
        bad = skip_value(&s, 1);
      }
    } else if (strcmp(key, "method") == 0) {
      int got = scan_string(&s, text, sizeof text, NULL);
      is_notification = 1;
      is_changed = got == 0 && strcmp(text, "changed") == 0;
      bad = got < 0;
    } else if (strcmp(key, "params") == 0) {
      params_at = s.p;
      bad = skip_value(&s, 1);
    } else if (strcmp(key, "result") == 0) {
      result_at = s.p;
      bad = skip_value(&s, 1);
    } else if (strcmp(key, "error") == 0) {
      error_at = s.p;
      bad = skip_value(&s, 1);
    } else {
      bad = skip_value(&s, 1);
    }
    if (bad) return LINE_BAD;
  }
  if (r != 0 || peek(&s) != -1 || !have_version) return LINE_BAD;
  if (is_notification) {
    if (!is_changed) return LINE_SKIP;
    if (params_at == NULL) return LINE_BAD;
    *at = params_at;
    return LINE_CHANGED;
  }
  /* An error with a null id answers a line the agent could not parse: with one request in
   * flight, that line was ours. */
  if (!is_ours && !(id_null && error_at != NULL)) return LINE_SKIP;
  if (error_at != NULL) {
    *at = error_at;
    return LINE_ERROR;
  }
  if (result_at != NULL) {
    *at = result_at;
    return LINE_RESULT;
  }
  return LINE_BAD;
}

/* ---------------------------------------------------------------- transport */

#ifdef _WIN32

static int is_open(const plc_client *c) { return c->pipe != INVALID_HANDLE_VALUE && c->pipe != NULL; }

static int interrupt_signalled(const plc_client *c) {
  return c->interrupt != PLC_NO_INTERRUPT && WaitForSingleObject((HANDLE)c->interrupt, 0) == WAIT_OBJECT_0;
}

static void transport_close(plc_client *c) {
  if (is_open(c)) CloseHandle((HANDLE)c->pipe);
  if (c->event != NULL) CloseHandle((HANDLE)c->event);
  c->pipe = INVALID_HANDLE_VALUE;
  c->event = NULL;
}

/* The user SID of a process's token, copied into `out` (a TOKEN_USER buffer). */
static int token_user_of(HANDLE process, unsigned char *out, DWORD size) {
  HANDLE token = NULL;
  DWORD needed = 0;
  int ok;
  if (!OpenProcessToken(process, TOKEN_QUERY, &token)) return 0;
  ok = GetTokenInformation(token, TokenUser, out, size, &needed) != 0;
  CloseHandle(token);
  return ok;
}

/*
 * Who holds the path, checked on every connection before a single byte is sent (an activate
 * carries a code). Anyone can create a pipe of a well-known name first: the process serving the
 * pipe must run as this user, its token's user SID equal to ours. A process we may not even query
 * belongs to someone else.
 */
static plc_status check_holder(plc_client *c, HANDLE pipe) {
  ULONG server_pid = 0;
  unsigned char ours[256], theirs[256];
  HANDLE server;
  int same;
  c->holder = -1;
  if (!GetNamedPipeServerProcessId(pipe, &server_pid)) return PLC_ERR_FOREIGN_AGENT;
  c->holder = (long)server_pid;
  if (server_pid == GetCurrentProcessId()) return PLC_OK;
  if (!token_user_of(GetCurrentProcess(), ours, (DWORD)sizeof ours)) return PLC_ERR_IO;
  server = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, server_pid);
  if (server == NULL) return PLC_ERR_FOREIGN_AGENT;
  same = token_user_of(server, theirs, (DWORD)sizeof theirs) && EqualSid(((TOKEN_USER *)ours)->User.Sid, ((TOKEN_USER *)theirs)->User.Sid);
  CloseHandle(server);
  return same ? PLC_OK : PLC_ERR_FOREIGN_AGENT;
}

static plc_status transport_connect(plc_client *c, int64_t deadline) {
  HANDLE h;
  plc_status owner;
  for (;;) {
    /* Handles are not inheritable unless asked for: the Windows form of close-on-exec. */
    h = CreateFileA(c->path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, FILE_FLAG_OVERLAPPED, NULL);
    if (h != INVALID_HANDLE_VALUE) break;
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return PLC_ERR_NOT_RUNNING;
    if (e != ERROR_PIPE_BUSY) return PLC_ERR_CONNECT;
    plc_status st = still_waiting(c, deadline, 1);
    if (st != PLC_OK) return st;
    /* WaitNamedPipe cannot be interrupted: wait in slices, each turn checking the interrupt. */
    int left = remaining_ms(deadline);
    if (left > 0) WaitNamedPipeA(c->path, (DWORD)(left < 50 ? left : 50)); /* never 0: that is the pipe's default wait */
  }
  owner = check_holder(c, h);
  if (owner != PLC_OK) {
    CloseHandle(h);
    return owner;
  }
  c->event = CreateEventA(NULL, TRUE, FALSE, NULL);
  if (c->event == NULL) {
    CloseHandle(h);
    return PLC_ERR_IO;
  }
  c->pipe = h;
  return PLC_OK;
}

static plc_status map_pipe_error(DWORD e) {
  return e == ERROR_BROKEN_PIPE || e == ERROR_NO_DATA || e == ERROR_PIPE_NOT_CONNECTED ? PLC_ERR_CLOSED : PLC_ERR_IO;
}

/* One overlapped ReadFile or WriteFile, bounded by the deadline; cancelled on time-out. */
static plc_status overlapped_io(plc_client *c, int writing, void *data, DWORD n, DWORD *done, int64_t deadline) {
  HANDLE h = (HANDLE)c->pipe;
  OVERLAPPED ov;
  BOOL ok;
  memset(&ov, 0, sizeof ov);
  ov.hEvent = (HANDLE)c->event;
  ResetEvent(ov.hEvent);
  *done = 0;
  ok = writing ? WriteFile(h, data, n, NULL, &ov) : ReadFile(h, data, n, NULL, &ov);
  if (!ok) {
    DWORD e = GetLastError();
    HANDLE events[2];
    DWORD count = 1, w;
    if (e != ERROR_IO_PENDING) return map_pipe_error(e);
    events[0] = ov.hEvent;
    if (c->interrupt != PLC_NO_INTERRUPT) events[count++] = (HANDLE)c->interrupt;
    w = WaitForMultipleObjects(count, events, FALSE, (DWORD)remaining_ms(deadline));
    if (w != WAIT_OBJECT_0) {
      CancelIoEx(h, &ov);
      /* The OVERLAPPED lives on this stack: wait for the cancel. A read that completed in the
       * meantime keeps its bytes (a waiting plc_wait_change must not lose a line). */
      if (GetOverlappedResult(h, &ov, done, TRUE) && *done > 0 && !writing) return PLC_OK;
      return w == WAIT_TIMEOUT ? PLC_ERR_TIMEOUT : w == WAIT_OBJECT_0 + 1 ? PLC_ERR_INTERRUPTED : PLC_ERR_IO;
    }
  }
  if (!GetOverlappedResult(h, &ov, done, FALSE)) return map_pipe_error(GetLastError());
  return PLC_OK;
}

static plc_status transport_send_all(plc_client *c, const char *data, size_t n, int64_t deadline) {
  while (n > 0) {
    DWORD done;
    plc_status st = still_waiting(c, deadline, 1);
    if (st == PLC_OK) st = overlapped_io(c, 1, (void *)data, (DWORD)n, &done, deadline);
    if (st != PLC_OK) return st;
    data += done;
    n -= done;
  }
  return PLC_OK;
}

static plc_status transport_recv(plc_client *c, char *dst, size_t cap, size_t *got, int64_t deadline) {
  DWORD done;
  plc_status st = overlapped_io(c, 0, dst, (DWORD)cap, &done, deadline);
  if (st != PLC_OK) return st;
  if (done == 0) return PLC_ERR_CLOSED;
  *got = done;
  return PLC_OK;
}

#else /* POSIX */

#if defined(MSG_NOSIGNAL)
#define PLC_SEND_FLAGS MSG_NOSIGNAL
#else
#define PLC_SEND_FLAGS 0 /* SO_NOSIGPIPE is set on the socket instead */
#endif

static int is_open(const plc_client *c) { return c->fd >= 0; }

static void transport_close(plc_client *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

static int interrupt_signalled(const plc_client *c) {
  struct pollfd pfd;
  if (c->interrupt == PLC_NO_INTERRUPT) return 0;
  pfd.fd = (int)c->interrupt;
  pfd.events = POLLIN;
  pfd.revents = 0;
  return poll(&pfd, 1, 0) > 0 && pfd.revents != 0;
}

/* Waits until fd is ready for events, the client's interrupt descriptor is readable, or the
 * deadline passes. */
static plc_status wait_fd(const plc_client *c, int fd, short events, int64_t deadline) {
  for (;;) {
    struct pollfd pfd[2];
    nfds_t n = 1;
    pfd[0].fd = fd;
    pfd[0].events = events;
    pfd[0].revents = 0;
    if (c->interrupt != PLC_NO_INTERRUPT) {
      pfd[1].fd = (int)c->interrupt;
      pfd[1].events = POLLIN;
      pfd[1].revents = 0;
      n = 2;
    }
    int r = poll(pfd, n, remaining_ms(deadline));
    if (r > 0 && n == 2 && pfd[1].revents != 0) return PLC_ERR_INTERRUPTED;
    if (r > 0) return PLC_OK; /* errors and hang-ups surface in the following call */
    if (r == 0) return PLC_ERR_TIMEOUT;
    if (errno != EINTR) return PLC_ERR_IO;
  }
}

#if defined(__APPLE__)
int getpeereid(int, uid_t *, gid_t *); /* <unistd.h> has it; declared again for a syntax check elsewhere */
#endif

/*
 * The one rule of what is the user's own (architecture.md, "Only the user's own agent" and "Only
 * the user's own files"): owned by this user and writable by nobody else. The socket's folder
 * obeys it (check_holder), and so do the data folder, tickets/ and the ticket a plugin trusts
 * (ticket_read).
 */
static int own_entry(const struct stat *st) { return st->st_uid == geteuid() && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0; }

/*
 * Who holds the path, checked on every connection before a single byte is sent (an activate
 * carries a code), as the agent checks its own folder (agent/src/socket-dir.ts): without
 * XDG_RUNTIME_DIR the socket sits in /tmp/APP-UID, a folder another user can create first. The
 * socket's folder must be a real folder (not a link), owned by this user and writable by nobody
 * else; the program on the other end must run as this user (peer credentials).
 */
static plc_status check_holder(plc_client *c, int fd) {
  char dir[PLC_PATH_CAP];
  struct stat st;
  uid_t me = geteuid();
  uid_t peer;
  c->holder = -1;
  c->holder_mode = 0;
  socket_folder(c->path, dir);
  if (lstat(dir, &st) != 0) return PLC_ERR_CONNECT;
  c->holder = (long)st.st_uid;
  c->holder_mode = (unsigned long)st.st_mode;
  if (!S_ISDIR(st.st_mode) || !own_entry(&st)) return PLC_ERR_FOREIGN_FOLDER;
#if !defined(__APPLE__) && defined(SO_PEERCRED)
  {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
      c->holder = -1;
      return PLC_ERR_FOREIGN_AGENT;
    }
    peer = cred.uid;
  }
#else
  {
    gid_t group;
    if (getpeereid(fd, &peer, &group) != 0) {
      c->holder = -1;
      return PLC_ERR_FOREIGN_AGENT;
    }
  }
#endif
  c->holder = (long)peer;
  return peer == me ? PLC_OK : PLC_ERR_FOREIGN_AGENT;
}

static plc_status map_connect_error(int e) {
  if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR) return PLC_ERR_NOT_RUNNING;
  if (e == ETIMEDOUT) return PLC_ERR_TIMEOUT;
  return PLC_ERR_CONNECT;
}

static plc_status transport_connect(plc_client *c, int64_t deadline) {
  struct sockaddr_un addr;
  size_t n = strlen(c->path);
  int fd;
  if (n > PLC_SUN_PATH_MAX) return PLC_ERR_PATH_TOO_LONG;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, c->path, n);

#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK)
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return PLC_ERR_IO;
#else
  fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return PLC_ERR_IO;
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
    close(fd);
    return PLC_ERR_IO;
  }
#endif
#if defined(SO_NOSIGPIPE)
  {
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one) != 0) {
      close(fd);
      return PLC_ERR_IO;
    }
  }
#endif

  for (;;) {
    if (connect(fd, (struct sockaddr *)&addr, (socklen_t)sizeof addr) == 0) break;
    int e = errno;
    if (e == EINPROGRESS || e == EINTR) {
      int err = 0;
      socklen_t len = sizeof err;
      plc_status st = wait_fd(c, fd, POLLOUT, deadline);
      if (st == PLC_OK && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (st == PLC_OK && err != 0) st = map_connect_error(err);
      if (st != PLC_OK) {
        close(fd);
        return st;
      }
      break;
    }
    if (e == EAGAIN) {
      /* Linux: the listener's backlog is full (a DAW opening many plugins at once); try again. */
      struct timespec pause = {0, 1000000};
      plc_status st = still_waiting(c, deadline, 1);
      if (st != PLC_OK) {
        close(fd);
        return st;
      }
      nanosleep(&pause, NULL);
      continue;
    }
    close(fd);
    return map_connect_error(e);
  }
  plc_status holder = check_holder(c, fd);
  if (holder != PLC_OK) {
    close(fd);
    return holder;
  }
  c->fd = fd;
  return PLC_OK;
}

static plc_status transport_send_all(plc_client *c, const char *data, size_t n, int64_t deadline) {
  while (n > 0) {
    plc_status turn = still_waiting(c, deadline, 1);
    if (turn != PLC_OK) return turn;
    ssize_t w = send(c->fd, data, n, PLC_SEND_FLAGS);
    if (w > 0) {
      data += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      plc_status st = wait_fd(c, c->fd, POLLOUT, deadline);
      if (st != PLC_OK) return st;
      continue;
    }
    return w < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) ? PLC_ERR_CLOSED : PLC_ERR_IO;
  }
  return PLC_OK;
}

static plc_status transport_recv(plc_client *c, char *dst, size_t cap, size_t *got, int64_t deadline) {
  for (;;) {
    ssize_t r = recv(c->fd, dst, cap, 0);
    if (r > 0) {
      *got = (size_t)r;
      return PLC_OK;
    }
    if (r == 0) return PLC_ERR_CLOSED;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      plc_status st = wait_fd(c, c->fd, POLLIN, deadline);
      if (st != PLC_OK) return st;
      continue;
    }
    return errno == ECONNRESET ? PLC_ERR_CLOSED : PLC_ERR_IO;
  }
}

#endif

/* ---------------------------------------------------------------- waiting */

/*
 * The one check every waiting loop makes on each turn (connect, send, each read of an answer or a
 * change, each line skipped), whatever arrived meanwhile: the interrupt, then the call's one
 * deadline, computed once when the call began. A read that finds bytes waiting never blocks, so
 * without this a peer streaming lines would hold a call past both. `enforce_deadline` is 0 only
 * for a call's first read and the lines it brought (at most PLC_BUFFER_SIZE bytes): a 0 time-out
 * still takes what has arrived.
 */
static plc_status still_waiting(const plc_client *c, int64_t deadline, int enforce_deadline) {
  if (interrupt_signalled(c)) return PLC_ERR_INTERRUPTED;
  if (enforce_deadline && remaining_ms(deadline) == 0) return PLC_ERR_TIMEOUT;
  return PLC_OK;
}

/* ---------------------------------------------------------------- client */

void plc_init(plc_client *client, const char *socket_path) {
  if (client == NULL) return;
  memset(client, 0, sizeof *client);
#ifdef _WIN32
  client->pipe = INVALID_HANDLE_VALUE;
  client->event = NULL;
#else
  client->fd = -1;
#endif
  client->interrupt = PLC_NO_INTERRUPT;
  client->holder = -1;
  if (socket_path != NULL && socket_path[0] != '\0') {
    size_t n = strlen(socket_path);
    client->path_status = fit_path(socket_path, n, client->path, sizeof client->path);
  } else {
    client->path_status = plc_default_socket_path(NULL, client->path, sizeof client->path);
  }
  if (client->path_status != PLC_OK) client->path[0] = '\0';
}

void plc_set_interrupt(plc_client *client, intptr_t handle) {
  if (client != NULL) client->interrupt = handle;
}

void plc_close(plc_client *client) {
  if (client == NULL) return;
  transport_close(client);
  client->len = 0;
}

static plc_status connect_until(plc_client *client, int64_t deadline) {
  if (client->path_status != PLC_OK) return client->path_status;
  if (client->path[0] == '\0') return PLC_ERR_NO_PATH;
  client->len = 0;
  return transport_connect(client, deadline);
}

plc_status plc_connect(plc_client *client, int timeout_ms) {
  if (client == NULL) return PLC_ERR_INVALID_ARGUMENT;
  if (is_open(client)) return PLC_OK;
  if (timeout_ms <= 0) timeout_ms = PLC_DEFAULT_TIMEOUT_MS;
  return connect_until(client, now_ms() + timeout_ms);
}

/* Finds the next complete line in the buffer, reading more when needed. `reads` counts the reads
 * of the whole call: every read but its first is a turn of a waiting loop (still_waiting). */
static plc_status next_line(plc_client *c, size_t *line_len, int64_t deadline, unsigned *reads) {
  size_t scanned = 0;
  for (;;) {
    const char *nl = memchr(c->buf + scanned, '\n', c->len - scanned);
    if (nl != NULL) {
      *line_len = (size_t)(nl - c->buf);
      return PLC_OK;
    }
    scanned = c->len;
    if (c->len == sizeof c->buf) return PLC_ERR_TOO_LARGE;
    plc_status st = still_waiting(c, deadline, *reads > 0);
    if (st != PLC_OK) return st;
    ++*reads;
    size_t got = 0;
    st = transport_recv(c, c->buf + c->len, sizeof c->buf - c->len, &got, deadline);
    if (st != PLC_OK) return st;
    c->len += got;
  }
}

static void drop_line(plc_client *c, size_t line_len) {
  size_t used = line_len + 1;
  memmove(c->buf, c->buf + used, c->len - used);
  c->len -= used;
}

static void reset_license(plc_license *out) {
  memset(out, 0, sizeof *out);
  out->activations = -1;
  out->max_activations = -1;
}

/* ---------------------------------------------------------------- requests */

/* One request's params: string members, in order; a NULL value is left out. */
typedef struct field {
  const char *key;
  const char *value;
} field;

/* Streams a request line through a small buffer: a document of any size is sent without a copy
 * of it, and the check path makes one send() as before. */
typedef struct writer {
  plc_client *c;
  int64_t deadline;
  plc_status st;
  size_t len;
  char buf[512];
} writer;

static void w_flush(writer *w) {
  if (w->st == PLC_OK && w->len > 0) w->st = transport_send_all(w->c, w->buf, w->len, w->deadline);
  w->len = 0;
}

static void w_bytes(writer *w, const char *p, size_t n) {
  while (n > 0 && w->st == PLC_OK) {
    size_t room = sizeof w->buf - w->len;
    size_t k = n < room ? n : room;
    memcpy(w->buf + w->len, p, k);
    w->len += k;
    p += k;
    n -= k;
    if (w->len == sizeof w->buf) w_flush(w);
  }
}

static void w_text(writer *w, const char *text) { w_bytes(w, text, strlen(text)); }

/* Bytes of `text` as a JSON string's contents (quotes, backslashes and control bytes escaped). */
static size_t json_escaped_size(const char *text) {
  size_t n = 0;
  for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) n += *p == '"' || *p == '\\' ? 2 : *p < 0x20 ? 6 : 1;
  return n;
}

static void w_json_string(writer *w, const char *text) {
  static const char hex[] = "0123456789abcdef";
  const char *run = text;
  w_bytes(w, "\"", 1);
  for (const char *p = text; *p != '\0'; p++) {
    unsigned char ch = (unsigned char)*p;
    char esc[6];
    size_t n;
    if (ch == '"' || ch == '\\') {
      esc[0] = '\\';
      esc[1] = (char)ch;
      n = 2;
    } else if (ch < 0x20) {
      memcpy(esc, "\\u00", 4);
      esc[4] = hex[ch >> 4];
      esc[5] = hex[ch & 15];
      n = 6;
    } else {
      continue;
    }
    w_bytes(w, run, (size_t)(p - run));
    w_bytes(w, esc, n);
    run = p + 1;
  }
  w_bytes(w, run, strlen(run));
  w_bytes(w, "\"", 1);
}

static plc_status send_request(plc_client *c, unsigned long id, const char *method, const field *fields, size_t count,
                               int64_t deadline) {
  writer w;
  char number[24];
  size_t pos = 0;
  int first = 1;
  w.c = c;
  w.deadline = deadline;
  w.st = PLC_OK;
  w.len = 0;
  number[0] = '\0';
  append_ulong(number, sizeof number, &pos, id);
  w_text(&w, "{\"jsonrpc\":\"2.0\",\"id\":");
  w_text(&w, number);
  w_text(&w, ",\"method\":\"");
  w_text(&w, method);
  w_text(&w, "\",\"params\":{");
  for (size_t i = 0; i < count; i++) {
    if (fields[i].value == NULL) continue;
    if (!first) w_bytes(&w, ",", 1);
    first = 0;
    w_json_string(&w, fields[i].key);
    w_bytes(&w, ":", 1);
    w_json_string(&w, fields[i].value);
  }
  w_text(&w, "}}\n");
  w_flush(&w);
  return w.st;
}

/* Reads lines until the answer to `id`: its result parsed by `parse` into `out`, or its error
 * into `err`. Notifications and answers to other ids are skipped. */
static plc_status await_answer(plc_client *c, unsigned long id, result_parser parse, void *out, plc_license *err,
                               int64_t deadline, int *answered_bytes) {
  unsigned reads = 0;
  for (;;) {
    size_t line_len = 0;
    const char *at = NULL;
    plc_status st = next_line(c, &line_len, deadline, &reads);
    if (c->len > 0) *answered_bytes = 1;
    if (st != PLC_OK) return st;
    line_kind kind = classify(c->buf, line_len, id, &at);
    if (kind == LINE_RESULT || kind == LINE_ERROR) {
      scan s;
      int r;
      s.p = at;
      s.end = c->buf + line_len;
      if (kind == LINE_ERROR) {
        reset_license(err);
        r = parse_error(&s, err);
        st = r != 0 ? PLC_ERR_PROTOCOL : err->error_code == -32601 ? PLC_ERR_AGENT_OUTDATED : PLC_ERR_AGENT;
      } else {
        r = parse(&s, out);
        st = r == 0 ? PLC_OK : r == 1 ? PLC_ERR_TOO_LARGE : PLC_ERR_PROTOCOL;
      }
      drop_line(c, line_len);
      return st;
    }
    drop_line(c, line_len);
    if (kind == LINE_BAD) return PLC_ERR_PROTOCOL;
    st = still_waiting(c, deadline, reads > 1); /* a flood of notifications */
    if (st != PLC_OK) return st;
  }
}

/* One request and its answer over the client's connection, bounded by one time-out. */
static plc_status call(plc_client *client, const char *method, const field *fields, size_t count, result_parser parse,
                       void *out, plc_license *err, int timeout_ms, int default_timeout_ms) {
  int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : default_timeout_ms);
  int reused = is_open(client);
  if (++client->next_id == 0) client->next_id = 1;
  for (int attempt = 0; attempt < 2; attempt++) {
    int answered = 0;
    plc_status st = PLC_OK;
    if (!is_open(client)) st = connect_until(client, deadline);
    if (st == PLC_OK) st = send_request(client, client->next_id, method, fields, count, deadline);
    if (st == PLC_OK) st = await_answer(client, client->next_id, parse, out, err, deadline, &answered);
    if (st == PLC_OK || st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) return st;
    plc_close(client);
    /* The agent closes idle connections: a kept connection found closed before any answer
     * byte is reopened once, within the same deadline. */
    if (!(reused && attempt == 0 && st == PLC_ERR_CLOSED && !answered)) return st;
  }
  return PLC_ERR_CLOSED;
}

static int valid_text(const char *text, size_t cap) { return text != NULL && text[0] != '\0' && strlen(text) < cap; }

/* The project-and-code calls: check, activate, deactivate, refresh. */
static plc_status license_call(plc_client *client, const char *method, const char *project_id, const char *code, int need_code,
                               plc_license *out, int timeout_ms, int default_timeout_ms) {
  field fields[2];
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  reset_license(out);
  if (!valid_text(project_id, sizeof out->project_id)) return PLC_ERR_INVALID_ARGUMENT;
  if (need_code && !valid_text(code, PLC_CODE_MAX + 1)) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "project_id";
  fields[0].value = project_id;
  fields[1].key = "code";
  fields[1].value = need_code ? code : NULL;
  return call(client, method, fields, 2, parse_license_result, out, out, timeout_ms, default_timeout_ms);
}

plc_status plc_check(plc_client *client, const char *project_id, plc_license *out, int timeout_ms) {
  return license_call(client, "check", project_id, NULL, 0, out, timeout_ms, PLC_DEFAULT_TIMEOUT_MS);
}

plc_status plc_activate(plc_client *client, const char *project_id, const char *code, plc_license *out, int timeout_ms) {
  return license_call(client, "activate", project_id, code, 1, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_deactivate(plc_client *client, const char *project_id, plc_license *out, int timeout_ms) {
  return license_call(client, "deactivate", project_id, NULL, 0, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_refresh(plc_client *client, const char *project_id, plc_license *out, int timeout_ms) {
  return license_call(client, "refresh", project_id, NULL, 0, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_offline_request(plc_client *client, const char *project_id, const char *code, plc_document *out, int timeout_ms) {
  field fields[2];
  plc_license err;
  plc_status st;
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  if (!valid_text(project_id, sizeof err.project_id)) return PLC_ERR_INVALID_ARGUMENT;
  if (code != NULL && !valid_text(code, PLC_CODE_MAX + 1)) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "project_id";
  fields[0].value = project_id;
  fields[1].key = "code";
  fields[1].value = code;
  st = call(client, "offline_request", fields, 2, parse_document, out, &err, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
  if (st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) {
    out->error_code = err.error_code;
    memcpy(out->error_message, err.error_message, sizeof out->error_message);
    memcpy(out->error_detail, err.error_detail, sizeof out->error_detail);
  } else if (st != PLC_OK) {
    out->text[0] = '\0';
    out->file_name[0] = '\0';
  }
  return st;
}

plc_status plc_offline_import(plc_client *client, const char *document, plc_license *out, int timeout_ms) {
  field fields[1];
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  reset_license(out);
  if (document == NULL || document[0] == '\0' || json_escaped_size(document) > PLC_IMPORT_MAX_BYTES) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "document";
  fields[0].value = document;
  return call(client, "offline_import", fields, 1, parse_license_result, out, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_subscribe(plc_client *client, const char *project_id, plc_license *error_out, int timeout_ms) {
  field fields[1];
  plc_license ignored;
  plc_license *err = error_out != NULL ? error_out : &ignored;
  if (client == NULL) return PLC_ERR_INVALID_ARGUMENT;
  reset_license(err);
  if (project_id != NULL && !valid_text(project_id, sizeof err->project_id)) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "project_id";
  fields[0].value = project_id;
  return call(client, "subscribe", fields, 1, parse_subscribed, NULL, err, timeout_ms, PLC_DEFAULT_TIMEOUT_MS);
}

plc_status plc_wait_change(plc_client *client, plc_license *out, int timeout_ms) {
  int64_t deadline;
  unsigned reads = 0;
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  if (!is_open(client)) return PLC_ERR_CLOSED;
  deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
  for (;;) {
    size_t line_len = 0;
    const char *at = NULL;
    plc_status st = next_line(client, &line_len, deadline, &reads);
    if (st == PLC_ERR_TIMEOUT || st == PLC_ERR_INTERRUPTED) return st;
    if (st != PLC_OK) {
      plc_close(client);
      return st;
    }
    /* No request is waiting: id 0 is never one (ids start at 1). */
    line_kind kind = classify(client->buf, line_len, 0, &at);
    if (kind == LINE_CHANGED) {
      scan s;
      s.p = at;
      s.end = client->buf + line_len;
      reset_license(out);
      int r = parse_license(&s, out);
      drop_line(client, line_len);
      if (r == 0) return PLC_OK;
      reset_license(out);
      plc_close(client);
      return PLC_ERR_PROTOCOL;
    }
    drop_line(client, line_len);
    if (kind == LINE_BAD) {
      plc_close(client);
      return PLC_ERR_PROTOCOL;
    }
    /* Lines that are not a change (a flood of them) end the wait at its deadline all the same. */
    st = still_waiting(client, deadline, reads > 1);
    if (st != PLC_OK) return st;
  }
}

/* ---------------------------------------------------------------- words with context */

/* Appends as much of src as fits (cut at a UTF-8 boundary); never fails. */
static void add(char *out, size_t cap, size_t *pos, const char *src) {
  size_t n = strlen(src);
  if (*pos + 1 >= cap) return;
  if (*pos + n >= cap) {
    n = cap - 1 - *pos;
    while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80) n--;
  }
  memcpy(out + *pos, src, n);
  *pos += n;
  out[*pos] = '\0';
}

static void add_number(char *out, size_t cap, size_t *pos, unsigned long v) {
  char tmp[24];
  size_t n = 0;
  tmp[0] = '\0';
  append_ulong(tmp, sizeof tmp, &n, v);
  add(out, cap, pos, tmp);
}

#ifndef _WIN32
/* "user 65534 (nobody)", or "user 65534" when the name is not found. */
static void add_user(char *out, size_t cap, size_t *pos, unsigned long uid) {
  char pwbuf[1024];
  struct passwd pw, *found = NULL;
  add(out, cap, pos, "user ");
  add_number(out, cap, pos, uid);
  if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof pwbuf, &found) == 0 && found != NULL && found->pw_name != NULL) {
    add(out, cap, pos, " (");
    add(out, cap, pos, found->pw_name);
    add(out, cap, pos, ")");
  }
}
#endif

const char *plc_describe(const plc_client *client, plc_status status, char *out, size_t out_size) {
  size_t pos = 0;
  if (out == NULL || out_size == 0) return "";
  out[0] = '\0';
  /* A client's paths are its socket's: say so, and what to set. */
  if (client != NULL && status == PLC_ERR_PATH_TOO_LONG) {
#ifdef _WIN32
    add(out, out_size, &pos, "the agent's pipe name is longer than plc allows (PLC_PATH_CAP); set a shorter PLUGIN_LICENSE_SOCKET");
#else
    add(out, out_size, &pos, "the agent's socket path is longer than this platform allows (");
    add_number(out, out_size, &pos, (unsigned long)PLC_SUN_PATH_MAX);
    add(out, out_size, &pos, " bytes); set a shorter PLUGIN_LICENSE_SOCKET (or XDG_RUNTIME_DIR)");
#endif
    return out;
  }
  if (client != NULL && status == PLC_ERR_NO_PATH) {
    add(out, out_size, &pos, "no default path for the agent's socket: no home folder or user name to make it from; set PLUGIN_LICENSE_SOCKET");
    return out;
  }
  if (client == NULL || client->holder < 0 || (status != PLC_ERR_FOREIGN_FOLDER && status != PLC_ERR_FOREIGN_AGENT)) {
    add(out, out_size, &pos, plc_strerror(status));
    return out;
  }
#ifdef _WIN32
  add(out, out_size, &pos, "the agent's pipe ");
  add(out, out_size, &pos, client->path);
  add(out, out_size, &pos, " is served by process ");
  add_number(out, out_size, &pos, (unsigned long)client->holder);
  add(out, out_size, &pos, ", which runs as another user; nothing was sent to it (start your own agent, or ask your administrator)");
#else
  if (status == PLC_ERR_FOREIGN_AGENT) {
    add(out, out_size, &pos, "the program on the agent's socket ");
    add(out, out_size, &pos, client->path);
    add(out, out_size, &pos, " runs as ");
    add_user(out, out_size, &pos, (unsigned long)client->holder);
    add(out, out_size, &pos, ", not as you (");
    add_number(out, out_size, &pos, (unsigned long)geteuid());
    add(out, out_size, &pos, "); nothing was sent to it (start your own agent, or ask your administrator)");
    return out;
  }
  {
    char dir[PLC_PATH_CAP];
    socket_folder(client->path, dir);
    add(out, out_size, &pos, "the agent's socket folder ");
    add(out, out_size, &pos, dir);
    if (!S_ISDIR((mode_t)client->holder_mode)) {
      add(out, out_size, &pos, S_ISLNK((mode_t)client->holder_mode) ? " is a symbolic link" : " is not a folder");
      add(out, out_size, &pos, " (owned by ");
      add_user(out, out_size, &pos, (unsigned long)client->holder);
      add(out, out_size, &pos, "); nothing was sent: remove it");
    } else if ((uid_t)client->holder != geteuid()) {
      add(out, out_size, &pos, " belongs to ");
      add_user(out, out_size, &pos, (unsigned long)client->holder);
      add(out, out_size, &pos, ", not to you (");
      add_number(out, out_size, &pos, (unsigned long)geteuid());
      add(out, out_size, &pos, "), who may have made it to receive your activation code; nothing was sent: have it removed");
    } else {
      char mode[8];
      mode[0] = (char)('0' + ((client->holder_mode >> 6) & 7));
      mode[1] = (char)('0' + ((client->holder_mode >> 3) & 7));
      mode[2] = (char)('0' + (client->holder_mode & 7));
      mode[3] = '\0';
      add(out, out_size, &pos, " is writable by other users (mode ");
      add(out, out_size, &pos, mode);
      add(out, out_size, &pos, "); nothing was sent: make it private to you (mode 700)");
    }
    add(out, out_size, &pos, ", or set PLUGIN_LICENSE_SOCKET to a path in a private folder of yours");
  }
#endif
  return out;
}

/* ---------------------------------------------------------------- a file the user picked */

/* What read_small_file found at a path that is not a regular file (for the words of a problem), or
 * a file that is not the user's own (FOUND_NOT_OWN: another user's; FOUND_SHARED: writable by group or others). */
typedef enum found_kind { FOUND_FILE = 0, FOUND_LINK, FOUND_FIFO, FOUND_DEVICE, FOUND_FOLDER, FOUND_SOCKET, FOUND_OTHER, FOUND_NOT_OWN, FOUND_SHARED } found_kind;

/* read_small_file's flags: follow a link to a regular file; take only a file of the user's own
 * (own_entry: owned by this user, writable by nobody else; POSIX), else PLC_ERR_FOREIGN_FOLDER. */
#define READ_FOLLOW_LINKS 1
#define READ_OWN_ONLY 2

/* The one bounded reader of small files (a document the user picked, a ticket, machine ids): only a
 * regular file of at most cap - 1 bytes, NUL-terminated in buf; opening never waits for a writer
 * or acts on a device, and at most cap bytes are read (a file that grew is PLC_ERR_FILE_TOO_LARGE).
 * Without READ_FOLLOW_LINKS a link is PLC_ERR_NOT_A_FILE (O_NOFOLLOW; Windows: a reparse point). *found says
 * what was there when PLC_ERR_NOT_A_FILE. */
#ifdef _WIN32

static plc_status read_small_file(const char *path, int flags, char *buf, size_t cap, size_t *len, found_kind *found) {
  const int follow_links = (flags & READ_FOLLOW_LINKS) != 0;
  WCHAR wide[1024];
  HANDLE h;
  DWORD attributes, type;
  BY_HANDLE_FILE_INFORMATION info;
  unsigned long long size;
  size_t got = 0;
  plc_status st = PLC_OK;
  *found = FOUND_FILE;
  *len = 0;
  buf[0] = '\0';
  if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide, (int)(sizeof wide / sizeof wide[0])) == 0) return PLC_ERR_INVALID_ARGUMENT;
  /* A folder or a link, before opening anything: CreateFile opens devices and pipes as well as files. */
  attributes = GetFileAttributesW(wide);
  if (attributes != INVALID_FILE_ATTRIBUTES && !follow_links && (attributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0) {
    *found = FOUND_LINK;
    return PLC_ERR_NOT_A_FILE;
  }
  if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) {
    *found = FOUND_FOLDER;
    return PLC_ERR_NOT_A_FILE;
  }
  h = CreateFileW(wide, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
                  FILE_ATTRIBUTE_NORMAL | (follow_links ? 0 : FILE_FLAG_OPEN_REPARSE_POINT), NULL);
  if (h == INVALID_HANDLE_VALUE) {
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return PLC_ERR_NO_FILE;
    if (e == ERROR_PIPE_BUSY || e == ERROR_BAD_PIPE || e == ERROR_INVALID_NAME) {
      *found = FOUND_FIFO;
      return PLC_ERR_NOT_A_FILE;
    }
    return PLC_ERR_FILE_UNREADABLE;
  }
  type = GetFileType(h);
  if (type != FILE_TYPE_DISK || !GetFileInformationByHandle(h, &info) || (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0 ||
      (!follow_links && (info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) != 0)) {
    *found = type == FILE_TYPE_PIPE ? FOUND_FIFO : type == FILE_TYPE_CHAR ? FOUND_DEVICE : type != FILE_TYPE_DISK ? FOUND_OTHER
             : (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0 ? FOUND_FOLDER : FOUND_LINK;
    CloseHandle(h);
    return PLC_ERR_NOT_A_FILE;
  }
  size = ((unsigned long long)info.nFileSizeHigh << 32) | info.nFileSizeLow;
  if (size > (unsigned long long)(cap - 1)) {
    CloseHandle(h);
    return PLC_ERR_FILE_TOO_LARGE;
  }
  /* Bounded by cap; one byte more is asked for, to see a file that grew since. */
  for (;;) {
    DWORD want = (DWORD)(got < cap - 1 ? (cap - 1 - got > 65536 ? 65536 : cap - 1 - got) : 1), done = 0;
    char extra;
    if (!ReadFile(h, got < cap - 1 ? buf + got : &extra, want, &done, NULL)) {
      st = PLC_ERR_FILE_UNREADABLE;
      break;
    }
    if (done == 0) break;
    if (got == cap - 1) {
      st = PLC_ERR_FILE_TOO_LARGE;
      break;
    }
    got += done;
  }
  CloseHandle(h);
  if (st != PLC_OK) got = 0;
  buf[got] = '\0';
  *len = got;
  return st;
}

#else

static found_kind found_of(mode_t mode) {
  if (S_ISLNK(mode)) return FOUND_LINK;
  if (S_ISFIFO(mode)) return FOUND_FIFO;
  if (S_ISCHR(mode) || S_ISBLK(mode)) return FOUND_DEVICE;
  if (S_ISDIR(mode)) return FOUND_FOLDER;
  if (S_ISSOCK(mode)) return FOUND_SOCKET;
  return S_ISREG(mode) ? FOUND_FILE : FOUND_OTHER;
}

static plc_status read_small_file(const char *path, int flags, char *buf, size_t cap, size_t *len, found_kind *found) {
  const int follow_links = (flags & READ_FOLLOW_LINKS) != 0;
  struct stat st;
  size_t got = 0;
  plc_status result = PLC_OK;
  int fd;
  *found = FOUND_FILE;
  *len = 0;
  buf[0] = '\0';
  /* What the path names (a link followed or not), before opening it: opening a device can act on it. */
  if ((follow_links ? stat(path, &st) : lstat(path, &st)) != 0)
    return errno == ENOENT || errno == ENOTDIR ? PLC_ERR_NO_FILE : PLC_ERR_FILE_UNREADABLE;
  if (!S_ISREG(st.st_mode)) {
    *found = found_of(st.st_mode);
    return PLC_ERR_NOT_A_FILE;
  }
  if ((unsigned long long)st.st_size > (unsigned long long)(cap - 1)) return PLC_ERR_FILE_TOO_LARGE;
  /* O_NONBLOCK: a FIFO put there since the stat opens without waiting for a writer. */
  fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    if (errno == ELOOP && !follow_links) *found = FOUND_LINK;
    if (errno == ENXIO) *found = FOUND_OTHER;
    return errno == ENOENT ? PLC_ERR_NO_FILE : errno == ENXIO || (errno == ELOOP && !follow_links) ? PLC_ERR_NOT_A_FILE : PLC_ERR_FILE_UNREADABLE;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *found = S_ISREG(st.st_mode) ? FOUND_OTHER : found_of(st.st_mode);
    close(fd);
    return PLC_ERR_NOT_A_FILE;
  }
  if ((flags & READ_OWN_ONLY) != 0 && !own_entry(&st)) {
    *found = st.st_uid != geteuid() ? FOUND_NOT_OWN : FOUND_SHARED;
    close(fd);
    return PLC_ERR_FOREIGN_FOLDER;
  }
  if ((unsigned long long)st.st_size > (unsigned long long)(cap - 1)) {
    close(fd);
    return PLC_ERR_FILE_TOO_LARGE;
  }
  /* Bounded by cap; one byte more is asked for, to see a file that grew since. */
  for (;;) {
    char extra;
    ssize_t r = got < cap - 1 ? read(fd, buf + got, cap - 1 - got) : read(fd, &extra, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      result = PLC_ERR_FILE_UNREADABLE;
      break;
    }
    if (r == 0) break;
    if (got == cap - 1) {
      result = PLC_ERR_FILE_TOO_LARGE;
      break;
    }
    got += (size_t)r;
  }
  close(fd);
  if (result != PLC_OK) got = 0;
  buf[got] = '\0';
  *len = got;
  return result;
}

#endif

plc_status plc_read_document(const char *path, char *buf, size_t cap, size_t *len) {
  found_kind found;
  if (len != NULL) *len = 0;
  if (path == NULL || path[0] == '\0' || buf == NULL || cap == 0 || len == NULL) return PLC_ERR_INVALID_ARGUMENT;
  return read_small_file(path, READ_FOLLOW_LINKS, buf, cap, len, &found);
}

/* ---------------------------------------------------------------- agent on demand */

#ifndef _WIN32
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if defined(__APPLE__)
extern char ***_NSGetEnviron(void); /* <crt_externs.h>'s one declaration, here so the syntax check builds elsewhere */
#endif
#endif

/* The executable's default name, as the installers place it. */
#define PLC_DEFAULT_EXECUTABLE_NAME "plugin-license"

/* One component of the installers' place (the vendor, the program's name): a file name, never a
 * path. A separator, a control character, "." or ".." would name another folder; on Windows the
 * characters a file name cannot hold are refused too. */
static int valid_component(const char *s) {
  size_t n = 0;
  if (s == NULL || s[0] == '\0' || strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
  for (const char *p = s; *p != '\0'; p++, n++) {
    unsigned char ch = (unsigned char)*p;
    if (ch < 0x20 || ch == 0x7f || ch == '/' || ch == '\\') return 0;
#ifdef _WIN32
    if (strchr(":*?\"<>|", ch) != NULL) return 0;
#endif
  }
  return n <= 255;
}

/* The ticket section's: the namespace in effect by the library's one rule, and its pattern (the
 * agent refuses any other, so it is refused here before a start). */
static const char *ticket_app(const char *app);
static int valid_namespace(const char *app);

#if defined(_WIN32) || defined(PLC_WINDOWS_QUOTING)
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
#endif

#ifdef _WIN32

/* A variable of the environment as UTF-8 (the process's wide environment, so any user name or
 * folder works); 0 when unset, empty or too long. */
static int env_utf8(const WCHAR *name, char *out, size_t cap) {
  WCHAR wide[1024];
  DWORD n = GetEnvironmentVariableW(name, wide, (DWORD)(sizeof wide / sizeof wide[0]));
  if (n == 0 || n >= sizeof wide / sizeof wide[0]) return 0;
  return WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)cap, NULL, NULL) > 1;
}

static int to_wide(const char *utf8, WCHAR *out, int cap) {
  return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, out, cap) != 0;
}

static int is_program(const char *path) {
  WCHAR wide[1024];
  DWORD attributes;
  if (!to_wide(path, wide, (int)(sizeof wide / sizeof wide[0]))) return 0;
  attributes = GetFileAttributesW(wide);
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

#else

/* A regular file this user may execute (a link to one is followed). */
static int is_program(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

#endif

plc_status plc_default_executable(const char *vendor, const char *name, char *out, size_t out_size) {
  char path[1024];
  size_t pos = 0;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  path[0] = '\0';
  if (name == NULL || name[0] == '\0') name = PLC_DEFAULT_EXECUTABLE_NAME;
  if (!valid_component(name) || (vendor != NULL && vendor[0] != '\0' && !valid_component(vendor))) return PLC_ERR_INVALID_ARGUMENT;
#ifdef _WIN32
  if (env_utf8(L"PLUGIN_LICENSE_EXECUTABLE", path, sizeof path)) {
    pos = strlen(path);
  } else {
    char local[1024];
    if (vendor == NULL || vendor[0] == '\0') return PLC_ERR_INVALID_ARGUMENT;
    if (!env_utf8(L"LOCALAPPDATA", local, sizeof local)) return PLC_ERR_NO_PATH;
    if (append(path, sizeof path, &pos, local) != 0 || append(path, sizeof path, &pos, "\\Programs\\") != 0 ||
        append(path, sizeof path, &pos, vendor) != 0 || append(path, sizeof path, &pos, "\\") != 0 ||
        append(path, sizeof path, &pos, name) != 0 || append(path, sizeof path, &pos, ".exe") != 0)
      return PLC_ERR_PATH_TOO_LONG;
  }
#else
  {
    const char *env = getenv("PLUGIN_LICENSE_EXECUTABLE");
    if (env != NULL && env[0] != '\0') {
      if (append(path, sizeof path, &pos, env) != 0) return PLC_ERR_PATH_TOO_LONG;
    } else {
      char pwbuf[1024];
      const char *home = home_folder(pwbuf, sizeof pwbuf);
      if (home == NULL) return PLC_ERR_NO_PATH;
#if defined(__APPLE__)
      if (vendor == NULL || vendor[0] == '\0') return PLC_ERR_INVALID_ARGUMENT;
      if (append(path, sizeof path, &pos, home) != 0 || append(path, sizeof path, &pos, "/Library/Application Support/") != 0 ||
          append(path, sizeof path, &pos, vendor) != 0 || append(path, sizeof path, &pos, "/") != 0 ||
          append(path, sizeof path, &pos, name) != 0)
        return PLC_ERR_PATH_TOO_LONG;
#else
      if (append(path, sizeof path, &pos, home) != 0 || append(path, sizeof path, &pos, "/.local/bin/") != 0 ||
          append(path, sizeof path, &pos, name) != 0)
        return PLC_ERR_PATH_TOO_LONG;
#endif
    }
  }
#endif
  if (pos + 1 > out_size) return PLC_ERR_PATH_TOO_LONG;
  memcpy(out, path, pos + 1);
  /* The path stays in out when nothing is there: the caller names it in its message. */
  return is_program(out) ? PLC_OK : PLC_ERR_NO_FILE;
}

/* The agent starts in another folder, where a relative path means another file: only an absolute
 * one is started. POSIX: from the root. Windows: from a drive's root (C:\ or C:/) or a UNC or
 * device path (two separators first); C:name (the drive's current folder) and \name (the current
 * drive's root) are relative. */
static int absolute_path(const char *path) {
#ifdef _WIN32
  char c = path[0];
  if (((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) && path[1] == ':') return path[2] == '\\' || path[2] == '/';
  return (c == '\\' || c == '/') && (path[1] == '\\' || path[1] == '/');
#else
  return path[0] == '/';
#endif
}

#ifdef _WIN32

plc_status plc_start_agent(const char *executable, const char *app) {
  char line[4096];
  WCHAR wide_exe[1024], wide_line[4096], home[1024];
  size_t pos = 0;
  DWORD n, attributes;
  STARTUPINFOW si;
  PROCESS_INFORMATION pi;
  app = ticket_app(app);
  if (executable == NULL || !absolute_path(executable) || !valid_namespace(app)) return PLC_ERR_INVALID_ARGUMENT;
  if (!to_wide(executable, wide_exe, (int)(sizeof wide_exe / sizeof wide_exe[0]))) return PLC_ERR_INVALID_ARGUMENT;
  line[0] = '\0';
  if (quote_windows_arg(line, sizeof line, &pos, executable, 1) != 0) return PLC_ERR_INVALID_ARGUMENT;
  {
    const char *rest[] = {"agent", "run", "--app", app};
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) {
      if (append(line, sizeof line, &pos, " ") != 0 || quote_windows_arg(line, sizeof line, &pos, rest[i], 0) != 0) return PLC_ERR_INVALID_ARGUMENT;
    }
  }
  if (!to_wide(line, wide_line, (int)(sizeof wide_line / sizeof wide_line[0]))) return PLC_ERR_INVALID_ARGUMENT;
  if (!is_program(executable)) return PLC_ERR_NO_FILE;
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
    return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? PLC_ERR_NO_FILE : PLC_ERR_CONNECT;
  }
  /* Nothing to reap on Windows: the handles closed, the program runs on by itself. */
  CloseHandle(pi.hThread);
  CloseHandle(pi.hProcess);
  return PLC_OK;
}

#else

#ifndef NSIG
#define NSIG 65
#endif

/* After fork() in a host with many threads, only async-signal-safe calls: everything the child
 * needs is made before. */
typedef struct start_plan {
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int report;      /* the write end of the pipe that carries exec's errno back; close-on-exec */
  long max_fd;     /* where the fallback loop of closes stops */
  sigset_t none;
} start_plan;

/* Closes every descriptor above 2 but keep. Linux: close_range (5.9), one call; elsewhere, and on
 * an older kernel, every number up to the descriptor limit (a DAW holds hundreds, any of them). */
static void close_descriptors(int keep, long max_fd) {
#if defined(__linux__) && defined(SYS_close_range)
  if ((keep == 3 || syscall(SYS_close_range, 3u, (unsigned)keep - 1u, 0u) == 0) &&
      syscall(SYS_close_range, (unsigned)keep + 1u, ~0u, 0u) == 0)
    return;
#endif
  for (long fd = 3; fd < max_fd; fd++)
    if (fd != keep) close((int)fd);
}

static void report_and_exit(int report, int code) {
  int e = errno;
  if (write(report, &e, sizeof e) < 0) _exit(code);
  _exit(code);
}

static void exec_agent(const start_plan *plan) {
  int null, report;
  /* The report pipe above the standard streams, whatever number it had (a host may run with
   * stdin closed, so the pipe could be 0). */
  report = fcntl(plan->report, F_DUPFD_CLOEXEC, 3);
  if (report < 0) _exit(126);
  null = open("/dev/null", O_RDWR);
  if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) report_and_exit(report, 126);
  close_descriptors(report, plan->max_fd);
  if (chdir(plan->cwd) != 0 && chdir("/") != 0) report_and_exit(report, 126);
  /* A host's blocked signals would stay blocked through exec: the agent starts with none blocked.
   * Its caught ones are reset by exec; ignored ones stay ignored, which the agent overrides where it
   * matters (it handles SIGINT, SIGTERM and SIGHUP itself). No sigaction here: plc installs and
   * changes no signal disposition in any process (compile.test.ts checks the symbol). */
  sigprocmask(SIG_SETMASK, &plan->none, NULL);
  execve(plan->argv[0], plan->argv, plan->envp);
  report_and_exit(report, 127);
}

/*
 * POSIX: a double fork rather than posix_spawn. posix_spawn (POSIX_SPAWN_SETSID, glibc's
 * addclosefrom_np, Apple's POSIX_SPAWN_CLOEXEC_DEFAULT) would close the descriptors, but leave the
 * agent a child of the host: reaping it means a thread waiting as long as the agent lives, or a
 * zombie in the DAW. Here the middle process starts a new session and forks the agent, then exits
 * at once (reaped below); the agent, adopted by init, is no child of the host, and has no
 * controlling terminal it could ever acquire (it is not the session's leader). The agent closes
 * every inherited descriptor itself before exec (close_range), puts its standard streams on
 * /dev/null, moves to the home (else "/") and gets this environment. The caller waits for the two
 * forks and the exec, never for the agent: a pipe closed on exec says it started (or carries
 * exec's errno).
 */
plc_status plc_start_agent(const char *executable, const char *app) {
  static char agent_word[] = "agent", run_word[] = "run", app_flag[] = "--app";
  char app_copy[65], exe_copy[1024], pwbuf[1024];
  char *argv[6];
  start_plan plan;
  struct rlimit limit;
  sigset_t all, old;
  int fds[2], e, status;
  pid_t middle;
  ssize_t got = 0;
  const char *home;
  app = ticket_app(app);
  if (executable == NULL || !absolute_path(executable) || strlen(executable) >= sizeof exe_copy || !valid_namespace(app))
    return PLC_ERR_INVALID_ARGUMENT;
  if (!is_program(executable)) return PLC_ERR_NO_FILE;
  memcpy(exe_copy, executable, strlen(executable) + 1);
  memcpy(app_copy, app, strlen(app) + 1);
  argv[0] = exe_copy;
  argv[1] = agent_word;
  argv[2] = run_word;
  argv[3] = app_flag;
  argv[4] = app_copy;
  argv[5] = NULL;
  home = home_folder(pwbuf, sizeof pwbuf);
  plan.argv = argv;
#if defined(__APPLE__)
  plan.envp = *_NSGetEnviron(); /* a plugin is a bundle: `environ` is the executable's alone */
#else
  {
#if !defined(__linux__)
    extern char **environ; /* Linux: <unistd.h> declares it under _GNU_SOURCE (a second one is -Wredundant-decls) */
#endif
    plan.envp = environ;
  }
#endif
  plan.cwd = home != NULL ? home : "/";
  plan.max_fd = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (1L << 20)
                    ? (long)limit.rlim_cur
                    : (1L << 20);
  sigemptyset(&plan.none);
#if defined(__linux__) && !defined(__APPLE__)
  if (pipe2(fds, O_CLOEXEC) != 0) return PLC_ERR_CONNECT;
#else
  if (pipe(fds) != 0) return PLC_ERR_CONNECT;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
#endif
  plan.report = fds[1];
  /* No host signal handler may run in the children before exec. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  middle = fork();
  if (middle == 0) {
    pid_t agent;
    close(fds[0]);
    setsid();
    agent = fork();
    if (agent == 0) exec_agent(&plan);
    if (agent < 0) report_and_exit(fds[1], 1);
    _exit(0);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(fds[1]);
  if (middle < 0) {
    close(fds[0]);
    return PLC_ERR_CONNECT;
  }
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  /* Until exec closes the pipe (or its errno arrives). Bounded all the same: another thread of the
   * host that forks meanwhile may hold the write end a moment (macOS has no pipe2). */
  {
    struct pollfd pfd;
    int64_t deadline = now_ms() + 5000;
    pfd.fd = fds[0];
    pfd.events = POLLIN;
    e = 0;
    for (;;) {
      int r;
      pfd.revents = 0;
      r = poll(&pfd, 1, remaining_ms(deadline));
      if (r < 0 && errno == EINTR) continue;
      if (r > 0) {
        while ((got = read(fds[0], &e, sizeof e)) < 0 && errno == EINTR) {
        }
      }
      break;
    }
  }
  close(fds[0]);
  if (got == (ssize_t)sizeof e) return e == ENOENT || e == ENOTDIR ? PLC_ERR_NO_FILE : PLC_ERR_CONNECT;
  return PLC_OK;
}

#endif

/* ---------------------------------------------------------------- waker */

#ifdef _WIN32

plc_status plc_waker_open(plc_waker *waker) {
  HANDLE event;
  if (waker == NULL) return PLC_ERR_INVALID_ARGUMENT;
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
  event = CreateEventA(NULL, TRUE, FALSE, NULL);
  if (event == NULL) return PLC_ERR_IO;
  waker->wait_handle = waker->signal_handle = (intptr_t)event;
  return PLC_OK;
}

void plc_waker_signal(plc_waker *waker) {
  if (waker != NULL && waker->signal_handle != PLC_NO_INTERRUPT) SetEvent((HANDLE)waker->signal_handle);
}

int plc_waker_wait(plc_waker *waker, int timeout_ms) {
  if (waker == NULL || waker->wait_handle == PLC_NO_INTERRUPT) return 0;
  return WaitForSingleObject((HANDLE)waker->wait_handle, (DWORD)(timeout_ms > 0 ? timeout_ms : 0)) == WAIT_OBJECT_0;
}

void plc_waker_clear(plc_waker *waker) {
  if (waker != NULL && waker->wait_handle != PLC_NO_INTERRUPT) ResetEvent((HANDLE)waker->wait_handle);
}

void plc_waker_close(plc_waker *waker) {
  if (waker == NULL) return;
  if (waker->wait_handle != PLC_NO_INTERRUPT) CloseHandle((HANDLE)waker->wait_handle);
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
}

#else

static int set_flags(int fd) {
  return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 ? 0 : -1;
}

plc_status plc_waker_open(plc_waker *waker) {
  int fds[2];
  if (waker == NULL) return PLC_ERR_INVALID_ARGUMENT;
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
  if (pipe(fds) != 0) return PLC_ERR_IO;
  if (set_flags(fds[0]) != 0 || set_flags(fds[1]) != 0) {
    close(fds[0]);
    close(fds[1]);
    return PLC_ERR_IO;
  }
  waker->wait_handle = fds[0];
  waker->signal_handle = fds[1];
  return PLC_OK;
}

void plc_waker_signal(plc_waker *waker) {
  /* A full pipe is signalled already; nothing else can fail that matters here. */
  if (waker != NULL && waker->signal_handle != PLC_NO_INTERRUPT && write((int)waker->signal_handle, "", 1) < 0) return;
}

int plc_waker_wait(plc_waker *waker, int timeout_ms) {
  struct pollfd pfd;
  int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
  if (waker == NULL || waker->wait_handle == PLC_NO_INTERRUPT) return 0;
  pfd.fd = (int)waker->wait_handle;
  pfd.events = POLLIN;
  for (;;) {
    pfd.revents = 0;
    int r = poll(&pfd, 1, remaining_ms(deadline));
    if (r > 0) return 1;
    if (r == 0 || errno != EINTR) return 0;
  }
}

void plc_waker_clear(plc_waker *waker) {
  char drain[64];
  if (waker == NULL || waker->wait_handle == PLC_NO_INTERRUPT) return;
  while (read((int)waker->wait_handle, drain, sizeof drain) > 0) {
  }
}

void plc_waker_close(plc_waker *waker) {
  if (waker == NULL) return;
  if (waker->wait_handle != PLC_NO_INTERRUPT) close((int)waker->wait_handle);
  if (waker->signal_handle != PLC_NO_INTERRUPT) close((int)waker->signal_handle);
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
}

#endif

intptr_t plc_waker_handle(const plc_waker *waker) { return waker == NULL ? PLC_NO_INTERRUPT : waker->wait_handle; }

/* ================================================================ ticket
 * The license ticket (docs/license-ticket.md): SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), the
 * reader's rules of packages/licensing/src/ticket.ts judgeTicket, the data folder of paths.ts and
 * the raw machine id of machine-id.ts, all without allocation, child process or lock. The one
 * piece of state: this process's raw OS machine id, read once (pthread_once / InitOnceExecuteOnce). */

#ifdef _WIN32
#ifdef _MSC_VER
#pragma comment(lib, "advapi32.lib")
#endif
#elif defined(__APPLE__)
#include <pthread.h>
#if defined(__has_include)
#if !__has_include(<IOKit/IOKitLib.h>)
#define PLC_NO_IOKIT 1 /* only the syntax check of the macOS branch on another system (compile.test.ts) */
#endif
#endif
#ifndef PLC_NO_IOKIT
#include <CoreFoundation/CoreFoundation.h>
#include <IOKit/IOKitLib.h>
#endif
#else
#include <pthread.h>
#endif

/* ---------------------------------------------------------------- SHA-256, HMAC-SHA256 */

typedef struct sha256_ctx {
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t fill;
} sha256_ctx;

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
    0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
    0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
    0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define PLC_ROTR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(sha256_ctx *c, const unsigned char *p) {
  uint32_t w[64], a, b, d, e, f, g, h, cc, t1, t2;
  int i;
  for (i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (i = 16; i < 64; i++) {
    uint32_t s0 = PLC_ROTR(w[i - 15], 7) ^ PLC_ROTR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = PLC_ROTR(w[i - 2], 17) ^ PLC_ROTR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
  for (i = 0; i < 64; i++) {
    t1 = h + (PLC_ROTR(e, 6) ^ PLC_ROTR(e, 11) ^ PLC_ROTR(e, 25)) + ((e & f) ^ (~e & g)) + sha256_k[i] + w[i];
    t2 = (PLC_ROTR(a, 2) ^ PLC_ROTR(a, 13) ^ PLC_ROTR(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
    h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
  }
  c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d, c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha256_init(sha256_ctx *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->bytes = 0;
  c->fill = 0;
}

static void sha256_update(sha256_ctx *c, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  c->bytes += n;
  while (n > 0) {
    size_t take = 64 - c->fill < n ? 64 - c->fill : n;
    memcpy(c->block + c->fill, p, take);
    c->fill += take, p += take, n -= take;
    if (c->fill == 64) {
      sha256_block(c, c->block);
      c->fill = 0;
    }
  }
}

static void sha256_final(sha256_ctx *c, unsigned char out[32]) {
  uint64_t bits = c->bytes * 8;
  unsigned char pad = 0x80, len[8];
  int i;
  for (i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(c, &pad, 1);
  pad = 0;
  while (c->fill != 56) sha256_update(c, &pad, 1);
  sha256_update(c, len, 8);
  for (i = 0; i < 32; i++) out[i] = (unsigned char)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* HMAC-SHA256 (RFC 2104) whose key arrives in pieces: hmac_key_add, then hmac_begin. */
typedef struct hmac_ctx {
  sha256_ctx inner;
  sha256_ctx key_hash; /* the key's hash, once it is longer than a block */
  unsigned char key[64];
  size_t key_len;     /* bytes in key, or more than 64 when hashed */
} hmac_ctx;

static void hmac_key_start(hmac_ctx *m) {
  memset(m->key, 0, sizeof m->key);
  m->key_len = 0;
}

static void hmac_key_add(hmac_ctx *m, const void *data, size_t n) {
  if (m->key_len + n > 64) {
    if (m->key_len <= 64) {
      sha256_init(&m->key_hash);
      sha256_update(&m->key_hash, m->key, m->key_len);
    }
    sha256_update(&m->key_hash, data, n);
  } else {
    memcpy(m->key + m->key_len, data, n);
  }
  m->key_len += n;
}

static void hmac_begin(hmac_ctx *m) {
  unsigned char pad[64];
  int i;
  if (m->key_len > 64) {
    memset(m->key, 0, sizeof m->key);
    sha256_final(&m->key_hash, m->key);
  }
  for (i = 0; i < 64; i++) pad[i] = (unsigned char)(m->key[i] ^ 0x36);
  sha256_init(&m->inner);
  sha256_update(&m->inner, pad, 64);
}

static void hmac_end(hmac_ctx *m, unsigned char out[32]) {
  unsigned char pad[64], inner[32];
  sha256_ctx outer;
  int i;
  sha256_final(&m->inner, inner);
  for (i = 0; i < 64; i++) pad[i] = (unsigned char)(m->key[i] ^ 0x5c);
  sha256_init(&outer);
  sha256_update(&outer, pad, 64);
  sha256_update(&outer, inner, 32);
  sha256_final(&outer, out);
}

/* ---------------------------------------------------------------- the library's text rules */

/* Bytes of a JavaScript white-space character (the set of \s and String.prototype.trim) at p, else 0. */
static size_t js_space(const unsigned char *p, size_t left) {
  if (left >= 1 && (p[0] == ' ' || (p[0] >= 0x09 && p[0] <= 0x0d))) return 1;
  if (left >= 2 && p[0] == 0xc2 && p[1] == 0xa0) return 2;
  if (left < 3) return 0;
  if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) return 3;
  if (p[0] == 0xe2 && p[1] == 0x80 && ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf)) return 3;
  if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) return 3;
  if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) return 3;
  if (p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) return 3;
  return 0;
}

/* The library's normalizeRawId: without white space, dashes or braces, letters in lower case
 * (ASCII ones: no OS id has others). Hands each byte of the result to emit_byte(ctx, byte). */
static void normalize_raw_id(const char *raw, size_t n, void (*emit_byte)(void *, unsigned char), void *ctx) {
  const unsigned char *p = (const unsigned char *)raw;
  size_t i = 0;
  while (i < n) {
    size_t sp = js_space(p + i, n - i);
    if (sp > 0) {
      i += sp;
      continue;
    }
    if (p[i] != '-' && p[i] != '{' && p[i] != '}') emit_byte(ctx, (unsigned char)(p[i] >= 'A' && p[i] <= 'Z' ? p[i] + 32 : p[i]));
    i++;
  }
}

typedef struct id_buf {
  char *out;
  size_t cap, len;
} id_buf;

static void id_buf_add(void *ctx, unsigned char byte) {
  id_buf *b = (id_buf *)ctx;
  if (b->len + 1 < b->cap) b->out[b->len] = (char)byte;
  b->len++;
}

static void hmac_key_byte(void *ctx, unsigned char byte) { hmac_key_add((hmac_ctx *)ctx, &byte, 1); }

/* The library's plausibleRawId on a normalised id: 32+ lowercase hex digits, not all one digit. */
static int plausible_raw_id(const char *id, size_t n) {
  size_t i;
  int same = 1;
  if (n < 32) return 0;
  for (i = 0; i < n; i++) {
    if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) return 0;
    if (id[i] != id[0]) same = 0;
  }
  return !same;
}

/* True when text is empty or only white space (JavaScript's trim() === ''). */
static int js_blank(const char *text) {
  const unsigned char *p = (const unsigned char *)text;
  size_t n = strlen(text), i = 0, sp;
  while (i < n && (sp = js_space(p + i, n - i)) > 0) i += sp;
  return i == n;
}

/* The namespace by the library's one rule (chooseNamespace): the given one, else PLUGIN_LICENSE_APP,
 * else "plugin-license" (blank counts as not given). */
static const char *ticket_app(const char *app) {
  const char *env = getenv("PLUGIN_LICENSE_APP");
  if (app != NULL && !js_blank(app)) return app;
  if (env != NULL && !js_blank(env)) return env;
  return PLC_DEFAULT_APP;
}

/* paths.ts NAMESPACE_PATTERN: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit. */
static int valid_namespace(const char *app) {
  size_t n = 0;
  for (const char *p = app; *p != '\0'; p++, n++) {
    char ch = *p;
    int alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    if (!alnum && (n == 0 || (ch != '.' && ch != '_' && ch != '-'))) return 0;
  }
  return n >= 1 && n <= 64;
}

/* paths.ts assertProjectId: a UUID (8-4-4-4-12 hex digits, any case). */
static int valid_project_id(const char *id) {
  size_t i;
  if (id == NULL || strlen(id) != 36) return 0;
  for (i = 0; i < 36; i++) {
    char ch = id[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (ch != '-') return 0;
    } else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'))) {
      return 0;
    }
  }
  return 1;
}

/* The one comparison rule of project ids (the library's ticketProjectId): ASCII letters in lower
 * case, every other byte as it is, so no Unicode case folding (U+212A KELVIN SIGN is no 'k') makes
 * two ids one. Into out (cap bytes with the NUL); -1 when it does not fit. */
static int project_id_key(const char *id, char *out, size_t cap) {
  size_t i;
  for (i = 0; id[i] != '\0'; i++) {
    if (i + 1 >= cap) return -1;
    out[i] = (char)(id[i] >= 'A' && id[i] <= 'Z' ? id[i] + 32 : id[i]);
  }
  out[i] = '\0';
  return 0;
}

/* ---------------------------------------------------------------- the data folder */

#define PLC_DATA_CAP 1024

#ifndef _WIN32
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
#endif

static plc_status fit_data(const char *path, char *out, size_t cap) {
  size_t n = strlen(path);
  if (n + 1 > cap) return PLC_ERR_PATH_TOO_LONG;
  memcpy(out, path, n + 1);
  return PLC_OK;
}

/* Appends parts to out (NUL-terminated); -1 when it does not fit. */
static int join_parts(char *out, size_t cap, const char *const *parts, size_t count) {
  size_t pos = strlen(out);
  for (size_t i = 0; i < count; i++)
    if (append(out, cap, &pos, parts[i]) != 0) return -1;
  return 0;
}

/* The namespace's data folder by the library's one rule (paths.ts resolvePaths, env-paths 4), UTF-8:
 * PLUGIN_LICENSE_HOME/data (a relative one against the working folder, as path.resolve); else Linux
 * $XDG_DATA_HOME/APP (an absolute one) or HOME/.local/share/APP (HOME by home_folder), macOS
 * HOME/Library/Application Support/APP or, with an app group, the real home's
 * Library/Group Containers/GROUP/APP, Windows %LOCALAPPDATA%\APP\Data. app is resolved and valid. */
static plc_status data_folder(const char *app, const char *group, char *out, size_t cap) {
#ifdef _WIN32
  WCHAR wide[PLC_DATA_CAP], full[PLC_DATA_CAP];
  DWORD n;
  (void)group;
  out[0] = '\0';
  n = GetEnvironmentVariableW(L"PLUGIN_LICENSE_HOME", wide, PLC_DATA_CAP);
  if (n >= PLC_DATA_CAP) return PLC_ERR_PATH_TOO_LONG;
  if (n > 0) {
    if (WideCharToMultiByte(CP_UTF8, 0, wide, -1, out, (int)cap, NULL, NULL) == 0) return PLC_ERR_PATH_TOO_LONG;
    if (!js_blank(out)) {
      /* path.resolve: absolute, '.' and '..' resolved, against the working folder when relative. */
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
  n = GetEnvironmentVariableW(L"LOCALAPPDATA", wide, PLC_DATA_CAP);
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
  {
    const char *const tail[] = {"\\", app, "\\Data"};
    size_t len = strlen(out);
    if (len > 0 && (out[len - 1] == '\\' || out[len - 1] == '/')) out[len - 1] = '\0';
    return join_parts(out, cap, tail, 3) == 0 ? PLC_OK : PLC_ERR_PATH_TOO_LONG;
  }
#else
  char path[PLC_DATA_CAP];
  const char *env = getenv("PLUGIN_LICENSE_HOME");
  char pwbuf[1024];
  path[0] = '\0';
  if (env != NULL && !js_blank(env)) {
    const char *const parts[] = {"/", env, "/data"};
    if (env[0] != '/' && getcwd(path, sizeof path) == NULL) return PLC_ERR_NO_PATH;
    if (join_parts(path, sizeof path, parts, 3) != 0) return PLC_ERR_PATH_TOO_LONG;
  } else {
    const char *home = getenv("HOME");
    /* A HOME set but empty or relative is refused whatever else is set (paths.ts resolvePaths). */
    if (home != NULL && home[0] != '/') return PLC_ERR_NO_PATH;
#if defined(__APPLE__)
    if (group == NULL || group[0] == '\0') group = getenv("PLUGIN_LICENSE_APP_GROUP");
    if (group != NULL && group[0] != '\0') {
      const char *parts[] = {"", "/Library/Group Containers/", group, "/", app};
      struct passwd pw, *found = NULL;
      if (!valid_group(group)) return PLC_ERR_INVALID_ARGUMENT;
      /* In a sandbox HOME is the container's; the group container is under the real home. */
      if (getpwuid_r(getuid(), &pw, pwbuf, sizeof pwbuf, &found) != 0 || found == NULL) return PLC_ERR_NO_PATH;
      parts[0] = found->pw_dir;
      if (join_parts(path, sizeof path, parts, 5) != 0) return PLC_ERR_PATH_TOO_LONG;
      posix_normalize(path);
      return fit_data(path, out, cap);
    }
#else
    const char *xdg = getenv("XDG_DATA_HOME");
    (void)group;
    /* A relative XDG_DATA_HOME is ignored, as the XDG Base Directory specification says (paths.ts xdgDir). */
    if (xdg != NULL && xdg[0] == '/') {
      const char *const parts[] = {xdg, "/", app};
      if (join_parts(path, sizeof path, parts, 3) != 0) return PLC_ERR_PATH_TOO_LONG;
      posix_normalize(path);
      return fit_data(path, out, cap);
    }
#endif
    /* An empty or relative HOME would make a folder relative to the working one: refused. */
    home = home_folder(pwbuf, sizeof pwbuf);
    if (home == NULL) return PLC_ERR_NO_PATH;
    {
#if defined(__APPLE__)
      const char *const parts[] = {home, "/Library/Application Support/", app};
#else
      const char *const parts[] = {home, "/.local/share/", app};
#endif
      if (join_parts(path, sizeof path, parts, 3) != 0) return PLC_ERR_PATH_TOO_LONG;
    }
  }
  posix_normalize(path);
  return fit_data(path, out, cap);
#endif
}

#ifdef _WIN32
#define PLC_SEP "\\"
#else
#define PLC_SEP "/"
#endif

/* ---------------------------------------------------------------- the user's own folders */

/* The folder holding path, as Node's path.dirname says it (the library's reader asks the same):
 * "." for a bare name, the root for a name in it. -1 when it does not fit cap. */
static int parent_folder(const char *path, char *out, size_t cap) {
  size_t n = strlen(path);
#ifdef _WIN32
#define PLC_IS_SEP(c) ((c) == '\\' || (c) == '/')
  size_t root = n >= 2 && path[1] == ':' ? 2 : 0; /* a drive stays: C:\x's folder is C:\ */
  if (root == 2 && n >= 3 && PLC_IS_SEP(path[2])) root = 3;
#else
#define PLC_IS_SEP(c) ((c) == '/')
  size_t root = n >= 1 && path[0] == '/' ? 1 : 0;
#endif
  while (n > root && PLC_IS_SEP(path[n - 1])) n--; /* a final separator names the same entry */
  while (n > root && !PLC_IS_SEP(path[n - 1])) n--; /* the entry's name */
  while (n > root && PLC_IS_SEP(path[n - 1])) n--; /* the separators before it */
#undef PLC_IS_SEP
  if (n == 0) {
    if (cap < 2) return -1;
    memcpy(out, ".", 2);
    return 0;
  }
  if (n + 1 > cap) return -1;
  memcpy(out, path, n);
  out[n] = '\0';
  return 0;
}

typedef enum folder_state { FOLDER_OK = 0, FOLDER_MISSING, FOLDER_BAD } folder_state;

/* The reader's folder rule (license-ticket.md, signed-ticket.md: the socket folder's): the folder
 * at path, links resolved, is a folder of the user's own (own_entry: owned by this user, writable
 * by nobody else). MISSING when nothing is there (a ticket in it is missing too); BAD with its words,
 * which start with `name` ("the data folder"), in problem. Windows: a folder (its ACL is the user's
 * own under %LOCALAPPDATA%). */
static folder_state own_folder(const char *path, const char *name, char *problem, size_t cap) {
  size_t pos = 0;
  problem[0] = '\0';
#ifdef _WIN32
  {
    WCHAR wide[PLC_DATA_CAP];
    DWORD attributes;
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide, PLC_DATA_CAP) == 0) {
      add(problem, cap, &pos, name);
      add(problem, cap, &pos, "'s path is not UTF-8");
      return FOLDER_BAD;
    }
    attributes = GetFileAttributesW(wide);
    if (attributes == INVALID_FILE_ATTRIBUTES) {
      DWORD e = GetLastError();
      if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return FOLDER_MISSING;
      add(problem, cap, &pos, name);
      add(problem, cap, &pos, " cannot be checked (permission or a read error)");
      return FOLDER_BAD;
    }
    if ((attributes & FILE_ATTRIBUTE_DIRECTORY) != 0) return FOLDER_OK;
    add(problem, cap, &pos, name);
    add(problem, cap, &pos, " is not a folder");
    return FOLDER_BAD;
  }
#else
  {
    struct stat st;
    char mode[4];
    if (stat(path, &st) != 0) {
      if (errno == ENOENT) return FOLDER_MISSING;
      add(problem, cap, &pos, name);
      add(problem, cap, &pos, errno == ENOTDIR ? " is under a file, not a folder" : " cannot be checked (permission or a read error)");
      return FOLDER_BAD;
    }
    if (S_ISDIR(st.st_mode) && own_entry(&st)) return FOLDER_OK;
    add(problem, cap, &pos, name);
    if (!S_ISDIR(st.st_mode)) {
      add(problem, cap, &pos, S_ISFIFO(st.st_mode) ? " is a FIFO, not a folder" : S_ISREG(st.st_mode) ? " is a file, not a folder" : " is not a folder");
    } else if (st.st_uid != geteuid()) {
      add(problem, cap, &pos, " belongs to user ");
      add_number(problem, cap, &pos, (unsigned long)st.st_uid);
      add(problem, cap, &pos, ", not to this one: nothing in it is trusted");
    } else {
      mode[0] = (char)('0' + ((st.st_mode >> 6) & 7));
      mode[1] = (char)('0' + ((st.st_mode >> 3) & 7));
      mode[2] = (char)('0' + (st.st_mode & 7));
      mode[3] = '\0';
      add(problem, cap, &pos, " is writable by others (mode ");
      add(problem, cap, &pos, mode);
      add(problem, cap, &pos, "): nothing in it is trusted; chmod 700 it");
    }
    return FOLDER_BAD;
  }
#endif
}

/* The two folders a ticket at path sits in, DATA/tickets/NAME, by the folder rule, outermost
 * first: FOLDER_OK when both pass, else the first that does not (its words in problem). */
static folder_state ticket_folders(const char *path, char *problem, size_t cap) {
  char tickets[PLC_DATA_CAP], data[PLC_DATA_CAP];
  folder_state st;
  if (parent_folder(path, tickets, sizeof tickets) != 0 || parent_folder(tickets, data, sizeof data) != 0) {
    size_t pos = 0;
    problem[0] = '\0';
    add(problem, cap, &pos, "the ticket's path is longer than 1023 bytes");
    return FOLDER_BAD;
  }
  st = own_folder(data, "the data folder", problem, cap);
  return st != FOLDER_OK ? st : own_folder(tickets, "the tickets folder", problem, cap);
}

plc_status plc_ticket_path(const char *app, const char *app_group, const char *project_id, char *out, size_t out_size) {
  char path[PLC_DATA_CAP], id[40];
  plc_status st;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  app = ticket_app(app);
  if (!valid_namespace(app) || !valid_project_id(project_id)) return PLC_ERR_INVALID_ARGUMENT;
  (void)project_id_key(project_id, id, sizeof id); /* a UUID: fits */
  st = data_folder(app, app_group, path, sizeof path);
  if (st != PLC_OK) return st;
  {
    const char *const parts[] = {PLC_SEP "tickets" PLC_SEP, id, ".ticket"};
    if (join_parts(path, sizeof path, parts, 3) != 0) return PLC_ERR_PATH_TOO_LONG;
  }
  return fit_data(path, out, out_size);
}

/* ---------------------------------------------------------------- the raw machine id */

static char os_raw_id[PLC_MACHINE_ID_CAP];
static size_t os_raw_len; /* 0: the OS has none the library would take */

#if defined(_WIN32)

static void read_os_raw_id(char *raw, size_t cap) {
  WCHAR value[128];
  DWORD size = (DWORD)sizeof value;
  raw[0] = '\0';
  if (RegGetValueW(HKEY_LOCAL_MACHINE, L"SOFTWARE\\Microsoft\\Cryptography", L"MachineGuid", RRF_RT_REG_SZ | RRF_SUBKEY_WOW6464KEY, NULL, value,
                   &size) != ERROR_SUCCESS ||
      WideCharToMultiByte(CP_UTF8, 0, value, -1, raw, (int)cap, NULL, NULL) == 0)
    raw[0] = '\0';
}

#elif defined(__APPLE__)

/* IOKit allocates CoreFoundation objects inside this call, once per process; they are released here. */
#ifdef PLC_NO_IOKIT
static void read_os_raw_id(char *raw, size_t cap) {
  (void)cap;
  raw[0] = '\0';
}
#else
static void read_os_raw_id(char *raw, size_t cap) {
  io_service_t device = IOServiceGetMatchingService(MACH_PORT_NULL, IOServiceMatching("IOPlatformExpertDevice"));
  raw[0] = '\0';
  if (device == 0) return;
  CFTypeRef uuid = IORegistryEntryCreateCFProperty(device, CFSTR(kIOPlatformUUIDKey), kCFAllocatorDefault, 0);
  if (uuid != NULL) {
    if (CFGetTypeID(uuid) != CFStringGetTypeID() || !CFStringGetCString((CFStringRef)uuid, raw, (CFIndex)cap, kCFStringEncodingUTF8)) raw[0] = '\0';
    CFRelease(uuid);
  }
  IOObjectRelease(device);
}
#endif

#else

/* Adds bytes up to and with the first newline to line; *complete once it came. */
static void take_line(char *line, size_t cap, size_t *n, const char *bytes, size_t len, int *complete) {
  for (size_t i = 0; i < len && !*complete; i++) {
    if (bytes[i] == '\n') *complete = 1;
    else if (*n + 1 < cap) line[(*n)++] = bytes[i];
    else *n = cap; /* too long for any id: not plausible */
  }
}

/* What node-machine-id runs, `( cat /var/lib/dbus/machine-id /etc/machine-id 2> /dev/null || hostname ) | head -n 1`,
 * read in-process: the first line of the two files' bytes, then the host name when either could not be read. */
static void read_os_raw_id(char *raw, size_t cap) {
  static const char *const files[] = {"/var/lib/dbus/machine-id", "/etc/machine-id"};
  char buf[PLC_TICKET_MAX_BYTES + 1];
  size_t n = 0, len;
  int complete = 0, failed = 0;
  found_kind found;
  for (size_t i = 0; i < 2; i++) {
    if (read_small_file(files[i], READ_FOLLOW_LINKS, buf, sizeof buf, &len, &found) != PLC_OK) failed = 1;
    else take_line(raw, cap, &n, buf, len, &complete);
  }
  if (failed && !complete && gethostname(buf, sizeof buf - 1) == 0) {
    buf[sizeof buf - 1] = '\0';
    take_line(raw, cap, &n, buf, strlen(buf), &complete);
  }
  raw[n < cap ? n : 0] = '\0';
  if (n >= cap) raw[0] = '\0';
}

#endif

static void os_raw_id_once(void) {
  char raw[PLC_MACHINE_ID_CAP * 2];
  id_buf b;
  read_os_raw_id(raw, sizeof raw);
  b.out = os_raw_id;
  b.cap = sizeof os_raw_id;
  b.len = 0;
  normalize_raw_id(raw, strlen(raw), id_buf_add, &b);
  os_raw_len = b.len < b.cap && plausible_raw_id(os_raw_id, b.len) ? b.len : 0;
  os_raw_id[os_raw_len] = '\0';
}

#ifdef _WIN32
static INIT_ONCE os_raw_init = INIT_ONCE_STATIC_INIT;
static BOOL CALLBACK os_raw_init_cb(PINIT_ONCE once, PVOID param, PVOID *context) {
  (void)once, (void)param, (void)context;
  os_raw_id_once();
  return TRUE;
}
#else
static pthread_once_t os_raw_init = PTHREAD_ONCE_INIT;
#endif

plc_status plc_raw_machine_id(const char *app, const char *app_group, char *out, size_t out_size) {
  char path[PLC_DATA_CAP], buf[PLC_TICKET_MAX_BYTES + 1];
  size_t len, start = 0, i;
  found_kind found;
  plc_status st;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
#ifdef _WIN32
  InitOnceExecuteOnce(&os_raw_init, os_raw_init_cb, NULL, NULL);
#else
  pthread_once(&os_raw_init, os_raw_id_once);
#endif
  if (os_raw_len > 0) {
    if (os_raw_len + 1 > out_size) return PLC_ERR_INVALID_ARGUMENT;
    memcpy(out, os_raw_id, os_raw_len + 1);
    return PLC_OK;
  }
  /* The generated secret (machine-id.ts readSecret): trimmed, 64 lowercase hex digits, in a data
   * folder of the user's own and a file of theirs (the folder rule: else it is not trusted). */
  app = ticket_app(app);
  if (!valid_namespace(app)) return PLC_ERR_INVALID_ARGUMENT;
  st = data_folder(app, app_group, path, sizeof path);
  if (st != PLC_OK) return st;
  if (own_folder(path, "the data folder", buf, sizeof buf) != FOLDER_OK) return PLC_ERR_NO_FILE;
  {
    const char *const parts[] = {PLC_SEP "machine-secret"};
    if (join_parts(path, sizeof path, parts, 1) != 0) return PLC_ERR_PATH_TOO_LONG;
  }
  st = read_small_file(path, READ_FOLLOW_LINKS | READ_OWN_ONLY, buf, sizeof buf, &len, &found);
  if (st != PLC_OK) return st == PLC_ERR_NO_FILE || st == PLC_ERR_FOREIGN_FOLDER ? PLC_ERR_NO_FILE : st;
  for (size_t sp; start < len && (sp = js_space((const unsigned char *)buf + start, len - start)) > 0;) start += sp;
  while (len > start) {
    size_t back = len >= start + 3 ? js_space((const unsigned char *)buf + len - 3, 3) : 0;
    if (back == 3) {
      len -= 3;
      continue;
    }
    back = len >= start + 2 ? js_space((const unsigned char *)buf + len - 2, 2) : 0;
    if (back == 2) {
      len -= 2;
      continue;
    }
    if (js_space((const unsigned char *)buf + len - 1, 1) == 1) {
      len -= 1;
      continue;
    }
    break;
  }
  if (len - start != 64) return PLC_ERR_NO_FILE;
  for (i = start; i < len; i++)
    if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f'))) return PLC_ERR_NO_FILE;
  if (out_size < 65) return PLC_ERR_INVALID_ARGUMENT;
  memcpy(out, buf + start, 64);
  out[64] = '\0';
  return PLC_OK;
}

/* ---------------------------------------------------------------- the reader's rules (judgeTicket) */

const char *plc_ticket_verdict_name(plc_ticket_verdict verdict) {
  switch (verdict) {
    case PLC_TICKET_NONE: return "none";
    case PLC_TICKET_VALID: return "valid";
    case PLC_TICKET_NOT_LICENSED: return "not_licensed";
    case PLC_TICKET_TAMPERED: return "tampered";
    case PLC_TICKET_EXPIRED: return "expired";
    case PLC_TICKET_CLOCK: return "clock";
  }
  return "unknown";
}

static plc_ticket_verdict ticket_answer(plc_ticket *out, plc_ticket_verdict verdict, plc_reason reason, const char *problem) {
  size_t pos = 0;
  out->verdict = verdict;
  out->reason = reason;
  if (problem != NULL) add(out->problem, sizeof out->problem, &pos, problem);
  return verdict;
}

static plc_ticket_verdict ticket_tampered(plc_ticket *out, const char *problem) {
  out->source = PLC_SOURCE_UNKNOWN;
  out->code_hint[0] = '\0';
  out->issued_at = out->valid_until = 0;
  out->problem[0] = '\0';
  return ticket_answer(out, PLC_TICKET_TAMPERED, PLC_REASON_CACHE_INVALID, problem);
}

static void ticket_reset(plc_ticket *out) {
  memset(out, 0, sizeof *out);
  out->verdict = PLC_TICKET_NONE;
}

/* TextDecoder('utf-8', { fatal: true }): no overlong form, no surrogate, nothing past U+10FFFF. */
static int valid_utf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i], lo = 0x80, hi = 0xBF;
    size_t need, k;
    if (c < 0x80) {
      i++;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    if (n - i - 1 < need || p[i + 1] < lo || p[i + 1] > hi) return 0;
    for (k = 2; k <= need; k++)
      if ((p[i + k] & 0xC0) != 0x80) return 0;
    i += need + 1;
  }
  return 1;
}

typedef enum jtype { J_MISSING = 0, J_STRING, J_NUMBER, J_TRUE, J_FALSE, J_NULL, J_OTHER } jtype;

/* The last value of one key of line 1 (JSON.parse keeps the last of duplicate keys). */
typedef struct jfield {
  jtype type;
  const char *at, *end; /* its text */
  long long number;     /* J_NUMBER: the integer part, clamped */
  int integral;         /* J_NUMBER: written without a fraction or an exponent */
} jfield;

enum { F_V, F_APP, F_PROJECT, F_VALID, F_REASON, F_SOURCE, F_HINT, F_ISSUED, F_UNTIL, F_COUNT };
static const char *const ticket_keys[F_COUNT] = {"v", "app", "project_id", "valid", "reason", "source", "code_hint", "issued_at", "valid_until"};

/* One JSON value of any shape (a scalar, or arrays and objects of any depth: a ticket's 4 KB can
 * nest 2,000 deep, so no recursion). What it is goes to *f (when not NULL) in one place, after the
 * whole value was read: its text [at, end), always both set, and its kind (J_OTHER for an array or
 * an object; for a number its integer part and whether it is written as digits only). *fraction is
 * set when any number in it has a fraction or an exponent. */
static int ticket_value(scan *s, jfield *f, int *fraction) {
  unsigned char objects[PLC_TICKET_MAX_BYTES / 8 + 1]; /* a bit per open container: 1 an object */
  size_t depth = 0;
  jfield whole;
  memset(&whole, 0, sizeof whole);
  whole.type = J_OTHER;
  if (peek(s) < 0) return -1;
  whole.at = s->p;
  for (;;) {
    int ch = peek(s);
    const char *at = s->p;
    if (ch == '{' || ch == '[') {
      s->p++;
      if (depth >= sizeof objects * 8) return -1;
      if (ch == '{') objects[depth / 8] = (unsigned char)(objects[depth / 8] | (1u << (depth % 8)));
      else objects[depth / 8] = (unsigned char)(objects[depth / 8] & ~(1u << (depth % 8)));
      depth++;
      if (peek(s) == (ch == '{' ? '}' : ']')) {
        s->p++;
        depth--;
      } else {
        /* The first member's key, or the first element: read as any value, below. */
        if (ch == '{' && (scan_string(s, NULL, 0, NULL) < 0 || expect(s, ':') != 0)) return -1;
        continue;
      }
    } else {
      jtype type;
      long long number = 0;
      int integral = 1;
      if (ch == '"') {
        if (scan_string(s, NULL, 0, NULL) < 0) return -1;
        type = J_STRING;
      } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        if (scan_number(s, &number) != 0) return -1;
        integral = memchr(at, '.', (size_t)(s->p - at)) == NULL && memchr(at, 'e', (size_t)(s->p - at)) == NULL &&
                   memchr(at, 'E', (size_t)(s->p - at)) == NULL;
        if (!integral) *fraction = 1;
        type = J_NUMBER;
      } else if (ch == 't' && literal(s, "true") == 0) {
        type = J_TRUE;
      } else if (ch == 'f' && literal(s, "false") == 0) {
        type = J_FALSE;
      } else if (ch == 'n' && literal(s, "null") == 0) {
        type = J_NULL;
      } else {
        return -1;
      }
      if (depth == 0) { /* the whole value is this scalar */
        whole.type = type;
        whole.number = number;
        whole.integral = integral;
      }
    }
    /* After a value: close what ends here, or go on to the next member or element. */
    for (;;) {
      int object;
      if (depth == 0) {
        whole.end = s->p;
        if (f != NULL) *f = whole;
        return 0;
      }
      object = (objects[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
      ch = peek(s);
      if (ch == ',') {
        s->p++;
        if (object && (scan_string(s, NULL, 0, NULL) < 0 || expect(s, ':') != 0)) return -1;
        break;
      }
      if (ch != (object ? '}' : ']')) return -1;
      s->p++;
      depth--;
    }
  }
}

/* Line 1 into its fields: 0, -1 not JSON, -2 JSON but not an object. */
static int ticket_fields(const char *line, size_t n, jfield *fields, int *fraction) {
  scan s;
  int first = 1;
  s.p = line;
  s.end = line + n;
  memset(fields, 0, sizeof(jfield) * F_COUNT);
  /* TextDecoder drops a leading byte order mark before JSON.parse sees the text. */
  if (n >= 3 && (unsigned char)line[0] == 0xEF && (unsigned char)line[1] == 0xBB && (unsigned char)line[2] == 0xBF) s.p += 3;
  if (peek(&s) != '{') {
    if (ticket_value(&s, NULL, fraction) != 0 || peek(&s) != -1) return -1;
    return -2;
  }
  s.p++;
  for (;;) {
    char key[16];
    size_t key_len = 0;
    jfield value;
    int ch = peek(&s), cut, k;
    if (first && ch == '}') {
      s.p++;
      break;
    }
    if (!first) {
      if (ch == '}') {
        s.p++;
        break;
      }
      if (ch != ',') return -1;
      s.p++;
    }
    first = 0;
    cut = scan_string(&s, key, sizeof key, &key_len);
    if (cut < 0 || expect(&s, ':') != 0) return -1;
    memset(&value, 0, sizeof value);
    if (ticket_value(&s, &value, fraction) != 0) return -1;
    for (k = 0; cut == 0 && k < F_COUNT; k++)
      if (key_len == strlen(ticket_keys[k]) && memcmp(key, ticket_keys[k], key_len) == 0) fields[k] = value;
  }
  return peek(&s) == -1 ? 0 : -1;
}

/* True when a string's text (without its quotes) has a \uD800-\uDFFF escape that is not half of a
 * pair: JSON.parse keeps it, so it can never equal a real app or project id. */
static int lone_surrogate(const char *p, const char *end) {
  int high = 0;
  while (p < end) {
    unsigned cp;
    if (p[0] == '\\' && end - p >= 6 && p[1] == 'u' && hex4(p + 2, &cp) == 0) {
      if (high && !(cp >= 0xDC00 && cp <= 0xDFFF)) return 1;
      if (!high && cp >= 0xDC00 && cp <= 0xDFFF) return 1;
      high = !high && cp >= 0xD800 && cp <= 0xDBFF;
      p += 6;
      continue;
    }
    if (high) return 1;
    p += p[0] == '\\' ? 2 : 1;
  }
  return high;
}

/* A string field decoded into out (cap bytes with the NUL): its length, or (size_t)-1 when it is
 * not a string, was cut, or has a lone surrogate. */
static size_t ticket_text(const jfield *f, char *out, size_t cap) {
  scan s;
  size_t len = 0;
  out[0] = '\0';
  if (f->type != J_STRING || lone_surrogate(f->at + 1, f->end - 1)) return (size_t)-1;
  s.p = f->at;
  s.end = f->end;
  if (scan_string(&s, out, cap, &len) != 0) return (size_t)-1;
  return len;
}

/* A field's JSON text as written, for words: at most cap - 1 bytes cut at a UTF-8 boundary, or
 * "undefined" when the key is missing (JSON.stringify's word). */
static const char *field_shown(const jfield *f, char *out, size_t cap) {
  size_t n;
  if (f->type == J_MISSING || f->at == NULL || f->end < f->at) return "undefined";
  n = (size_t)(f->end - f->at);
  if (n > cap - 1) {
    n = cap - 1;
    memcpy(out, f->at, n);
    trim_utf8(out, &n);
  } else {
    memcpy(out, f->at, n);
  }
  out[n] = '\0';
  return out;
}

static int ticket_time(const jfield *f) {
  /* Number.isSafeInteger, written as digits (the contract's Unix seconds). */
  return f->type == J_NUMBER && f->integral && f->number <= 9007199254740991LL && f->number >= -9007199254740991LL;
}

/* The ticket's key: HMAC-SHA256(key = the normalised raw id, message = "plugin-license/ticket/v1" NUL app). */
static void ticket_key(const char *raw, const char *app, unsigned char key[32]) {
  hmac_ctx m;
  hmac_key_start(&m);
  normalize_raw_id(raw, strlen(raw), hmac_key_byte, &m);
  hmac_begin(&m);
  sha256_update(&m.inner, "plugin-license/ticket/v1", 25); /* with its NUL */
  sha256_update(&m.inner, app, strlen(app));
  hmac_end(&m, key);
}

static int hex_value(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

plc_ticket_verdict plc_ticket_judge(const char *bytes, size_t len, const char *app, const char *project_id, int64_t now,
                                    const char *raw_machine_id, plc_ticket *out) {
  plc_ticket ignored;
  const char *nl, *line2;
  size_t line1_len, line2_len, i;
  unsigned char key[32], tag[32], given[32], diff = 0;
  jfield f[F_COUNT];
  int fraction = 0, r;
  char text[256], want[256];
  size_t text_len;
  hmac_ctx m;
  if (out == NULL) out = &ignored;
  ticket_reset(out);
  app = ticket_app(app);
  if (bytes == NULL) len = 0;
  if (len > PLC_TICKET_MAX_BYTES) {
    char problem[64];
    size_t pos = 0;
    problem[0] = '\0';
    add_number(problem, sizeof problem, &pos, (unsigned long)len);
    add(problem, sizeof problem, &pos, " bytes, more than a ticket's 4096");
    return ticket_tampered(out, problem);
  }
  nl = len > 0 ? (const char *)memchr(bytes, '\n', len) : NULL;
  if (nl == NULL) return ticket_tampered(out, "not two lines");
  line1_len = (size_t)(nl - bytes);
  line2 = nl + 1;
  line2_len = len - line1_len - 1;
  if (line2_len > 0 && line2[line2_len - 1] == '\n') line2_len--;
  if (line2_len != 64) return ticket_tampered(out, "line 2 is not a lowercase hex HMAC-SHA256");
  for (i = 0; i < 64; i++)
    if (hex_value(line2[i]) < 0) return ticket_tampered(out, "line 2 is not a lowercase hex HMAC-SHA256");
  for (i = 0; i < 32; i++) given[i] = (unsigned char)(hex_value(line2[2 * i]) << 4 | hex_value(line2[2 * i + 1]));
  ticket_key(raw_machine_id != NULL ? raw_machine_id : "", app, key);
  hmac_key_start(&m);
  hmac_key_add(&m, key, sizeof key);
  hmac_begin(&m);
  sha256_update(&m.inner, bytes, line1_len);
  hmac_end(&m, tag);
  for (i = 0; i < 32; i++) diff = (unsigned char)(diff | (tag[i] ^ given[i])); /* constant time */
  if (diff != 0) return ticket_tampered(out, "authentication tag does not match (edited, another app, or written on another machine)");

  if (!valid_utf8((const unsigned char *)bytes, line1_len)) return ticket_tampered(out, "line 1 is not JSON");
  r = ticket_fields(bytes, line1_len, f, &fraction);
  if (r == -1) return ticket_tampered(out, "line 1 is not JSON");
  if (r == -2) return ticket_tampered(out, "line 1 is not a JSON object");
  text_len = ticket_text(&f[F_APP], text, sizeof text);
  if (text_len != strlen(app) || memcmp(text, app, text_len) != 0) return ticket_tampered(out, "belongs to another app");
  text_len = ticket_text(&f[F_PROJECT], text, sizeof text);
  if (project_id == NULL || project_id_key(project_id, want, sizeof want) != 0 || text_len != strlen(want) || memcmp(text, want, text_len) != 0)
    return ticket_tampered(out, "belongs to another project");
  if (f[F_V].type != J_NUMBER || !f[F_V].integral || f[F_V].number != 1) {
    char problem[64];
    size_t pos = 0;
    problem[0] = '\0';
    add(problem, sizeof problem, &pos, "unknown version ");
    add(problem, sizeof problem, &pos, field_shown(&f[F_V], text, 25));
    return ticket_tampered(out, problem);
  }
  {
    const char *problem = "a field of version 1 is missing or of the wrong type";
    plc_reason reason = PLC_REASON_NONE;
    int valid = f[F_VALID].type == J_TRUE;
    if ((f[F_VALID].type != J_TRUE && f[F_VALID].type != J_FALSE) || !ticket_time(&f[F_ISSUED]) || !ticket_time(&f[F_UNTIL]) || fraction)
      return ticket_tampered(out, problem);
    if (f[F_REASON].type != J_NULL) {
      text_len = ticket_text(&f[F_REASON], text, 32);
      reason = text_len == (size_t)-1 || text_len != strlen(text) ? PLC_REASON_OTHER : reason_from_text(text);
      if (reason == PLC_REASON_NONE || reason == PLC_REASON_OTHER) return ticket_tampered(out, problem);
    }
    if (valid && reason != PLC_REASON_NONE) return ticket_tampered(out, problem);
    text_len = ticket_text(&f[F_SOURCE], text, 16);
    if (text_len == 6 && memcmp(text, "online", 6) == 0) out->source = PLC_SOURCE_ONLINE;
    else if (text_len == 5 && memcmp(text, "cache", 5) == 0) out->source = PLC_SOURCE_CACHE;
    else if (text_len == 7 && memcmp(text, "offline", 7) == 0) out->source = PLC_SOURCE_OFFLINE;
    else return ticket_tampered(out, problem);
    if (f[F_HINT].type == J_STRING) {
      scan s;
      s.p = f[F_HINT].at;
      s.end = f[F_HINT].end;
      (void)scan_string(&s, out->code_hint, sizeof out->code_hint, NULL); /* cut to fit */
    } else if (f[F_HINT].type != J_NULL) {
      return ticket_tampered(out, problem);
    }
    out->issued_at = (int64_t)f[F_ISSUED].number;
    out->valid_until = (int64_t)f[F_UNTIL].number;
    if (!valid) return ticket_answer(out, PLC_TICKET_NOT_LICENSED, reason == PLC_REASON_NONE ? PLC_REASON_NOT_ACTIVATED : reason, NULL);
    if (now < out->issued_at - 3600) return ticket_answer(out, PLC_TICKET_CLOCK, PLC_REASON_CLOCK_TAMPERED, NULL);
    if (now > out->valid_until) return ticket_answer(out, PLC_TICKET_EXPIRED, PLC_REASON_GRACE_EXPIRED, NULL);
    return ticket_answer(out, PLC_TICKET_VALID, PLC_REASON_NONE, NULL);
  }
}

/* Reads the ticket at path and judges it; raw_machine_id NULL: this computer has none. What is
 * missing (the ticket, or a folder it would be in) is NONE; everything else that is there and
 * fails a rule is TAMPERED: the folders' (ticket_folders), then the file's (the one bounded reader:
 * a regular file of the user's own, not a link), then the judge's. */
static plc_ticket_verdict ticket_read(const char *path, const char *app, const char *project_id, int64_t now, const char *raw_machine_id,
                                      plc_ticket *out) {
  char buf[PLC_TICKET_MAX_BYTES + 1];
  size_t len = 0;
  found_kind found;
  plc_status st;
  ticket_reset(out);
  if (path == NULL || path[0] == '\0') return ticket_answer(out, PLC_TICKET_NONE, PLC_REASON_NONE, "no path");
  switch (ticket_folders(path, out->problem, sizeof out->problem)) {
    case FOLDER_OK: break;
    case FOLDER_MISSING: return ticket_answer(out, PLC_TICKET_NONE, PLC_REASON_NONE, NULL);
    case FOLDER_BAD: return ticket_answer(out, PLC_TICKET_TAMPERED, PLC_REASON_CACHE_INVALID, NULL);
  }
  st = read_small_file(path, READ_OWN_ONLY, buf, sizeof buf, &len, &found);
  /* Not a switch: JUCE's recommended warnings (-Wswitch-enum, as errors) want every status named. */
  if (st == PLC_ERR_NO_FILE) return ticket_answer(out, PLC_TICKET_NONE, PLC_REASON_NONE, NULL);
  if (st == PLC_ERR_NOT_A_FILE)
    return ticket_tampered(out, found == FOUND_LINK     ? "a link, not a regular file"
                                : found == FOUND_FIFO   ? "a FIFO, not a regular file"
                                : found == FOUND_DEVICE ? "a device, not a regular file"
                                : found == FOUND_FOLDER ? "a folder, not a regular file"
                                : found == FOUND_SOCKET ? "a socket, not a regular file"
                                                        : "not a regular file");
  if (st == PLC_ERR_FOREIGN_FOLDER)
    return ticket_tampered(out, found == FOUND_NOT_OWN ? "the ticket belongs to another user, not to this one"
                                                       : "the ticket is writable by others; chmod 600 it");
  if (st == PLC_ERR_FILE_TOO_LARGE) return ticket_tampered(out, "more than 4096 bytes");
  if (st == PLC_ERR_INVALID_ARGUMENT) return ticket_tampered(out, "the path is not UTF-8");
  if (st != PLC_OK) return ticket_tampered(out, "cannot be opened or read (permission or a read error)");
  if (raw_machine_id == NULL) return ticket_tampered(out, "this computer has no machine id to check it with (no OS id, no machine-secret)");
  return plc_ticket_judge(buf, len, app, project_id, now, raw_machine_id, out);
}

plc_ticket_verdict plc_ticket_read(const char *path, const char *app, const char *project_id, int64_t now, const char *raw_machine_id,
                                   plc_ticket *out) {
  plc_ticket ignored;
  return ticket_read(path, app, project_id, now, raw_machine_id != NULL ? raw_machine_id : "", out != NULL ? out : &ignored);
}

plc_ticket_verdict plc_ticket_check(const char *app, const char *app_group, const char *project_id, int64_t now, plc_ticket *out) {
  char path[PLC_DATA_CAP], raw[PLC_MACHINE_ID_CAP];
  plc_ticket ignored;
  plc_status st;
  if (out == NULL) out = &ignored;
  ticket_reset(out);
  st = plc_ticket_path(app, app_group, project_id, path, sizeof path);
  if (st != PLC_OK)
    return ticket_answer(out, PLC_TICKET_NONE, PLC_REASON_NONE,
                         st == PLC_ERR_PATH_TOO_LONG ? "no ticket path: it would be longer than 1023 bytes (the data folder's path is too long)"
                         : st == PLC_ERR_NO_PATH     ? "no ticket path: no home folder to find the data folder in (set HOME or PLUGIN_LICENSE_HOME)"
                                                     : "no ticket path: a bad app, app group or project id");
  st = plc_raw_machine_id(app, app_group, raw, sizeof raw);
  return ticket_read(path, app, project_id, now, st == PLC_OK ? raw : NULL, out);
}
