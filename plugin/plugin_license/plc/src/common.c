/*
 * Part of plc.c (compiled through it, never alone): the helpers every part uses, first so no part
 * borrows from another. Text into fixed buffers (never an allocation), UTF-8 cuts, JavaScript's
 * white space (the library's trim()), a deadline's time left.
 */

/* Appends src to dst (cap bytes with the NUL) at *pos; -1, dst unchanged, when it does not fit. */
PLC_SHARED int append(char *dst, size_t cap, size_t *pos, const char *src) {
  size_t n = strlen(src);
  if (*pos + n >= cap) return -1;
  memcpy(dst + *pos, src, n);
  *pos += n;
  dst[*pos] = '\0';
  return 0;
}

PLC_SHARED int append_ulong(char *dst, size_t cap, size_t *pos, unsigned long v) {
  char tmp[24];
  size_t i = sizeof tmp;
  tmp[--i] = '\0';
  do {
    tmp[--i] = (char)('0' + (v % 10));
    v /= 10;
  } while (v != 0 && i > 0);
  return append(dst, cap, pos, tmp + i);
}

/* Appends parts to out (NUL-terminated); -1 when it does not fit. */
PLC_SHARED int join_parts(char *out, size_t cap, const char *const *parts, size_t count) {
  size_t pos = strlen(out);
  for (size_t i = 0; i < count; i++)
    if (append(out, cap, &pos, parts[i]) != 0) return -1;
  return 0;
}

/* Copies a path made whole into the caller's out; never cut. */
PLC_SHARED plc_status fit_data(const char *path, char *out, size_t cap) {
  size_t n = strlen(path);
  if (n + 1 > cap) return PLC_ERR_PATH_TOO_LONG;
  memcpy(out, path, n + 1);
  return PLC_OK;
}

/* Words: appends as much of src as fits (cut at a UTF-8 boundary); never fails. */
PLC_SHARED void add(char *out, size_t cap, size_t *pos, const char *src) {
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

PLC_SHARED void add_number(char *out, size_t cap, size_t *pos, unsigned long v) {
  char tmp[24];
  size_t n = 0;
  tmp[0] = '\0';
  append_ulong(tmp, sizeof tmp, &n, v);
  add(out, cap, pos, tmp);
}

/* A cut text must not end inside a UTF-8 sequence: *pos goes back to the last whole character. */
PLC_SHARED void trim_utf8(char *out, size_t *pos) {
  size_t i = *pos;
  while (i > 0 && ((unsigned char)out[i - 1] & 0xC0) == 0x80) i--;
  if (i == 0) return;
  unsigned char lead = (unsigned char)out[i - 1];
  size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (*pos - (i - 1) < need) *pos = i - 1;
}

/* Bytes of a JavaScript white-space character (the set of \s and String.prototype.trim) at p, else 0. */
PLC_SHARED size_t js_space(const unsigned char *p, size_t left) {
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

/* The bounds [*start, *end) of the len bytes of text without the white space around them, as
 * JavaScript's trim() leaves them. */
PLC_SHARED void js_trim(const char *text, size_t len, size_t *start, size_t *end) {
  const unsigned char *p = (const unsigned char *)text;
  size_t from = 0, to = len, sp;
  while (from < to && (sp = js_space(p + from, to - from)) > 0) from += sp;
  while (to > from) {
    if (to - from >= 3 && js_space(p + to - 3, 3) == 3) to -= 3;
    else if (to - from >= 2 && js_space(p + to - 2, 2) == 2) to -= 2;
    else if (js_space(p + to - 1, 1) == 1) to -= 1;
    else break;
  }
  *start = from;
  *end = to;
}

/* True when text is empty or only white space (JavaScript's trim() === ''). */
PLC_SHARED int js_blank(const char *text) {
  const unsigned char *p = (const unsigned char *)text;
  size_t n = strlen(text), i = 0, sp;
  while (i < n && (sp = js_space(p + i, n - i)) > 0) i += sp;
  return i == n;
}

/* The bounded read of an open file (read_small_file's, on every OS): at most cap - 1 bytes into buf,
 * NUL-terminated, and one byte more asked for, to see a file that grew since it was measured
 * (PLC_ERR_FILE_TOO_LARGE). Nothing is kept after an error. */
PLC_SHARED plc_status read_bounded(plc_file f, char *buf, size_t cap, size_t *len) {
  size_t got = 0;
  plc_status st = PLC_OK;
  for (;;) {
    char extra;
    long r = got < cap - 1 ? file_read(f, buf + got, cap - 1 - got) : file_read(f, &extra, 1);
    if (r < 0) {
      st = PLC_ERR_FILE_UNREADABLE;
      break;
    }
    if (r == 0) break;
    if (got == cap - 1) {
      st = PLC_ERR_FILE_TOO_LARGE;
      break;
    }
    got += (size_t)r;
  }
  if (st != PLC_OK) got = 0;
  buf[got] = '\0';
  *len = got;
  return st;
}

/* Milliseconds left until a deadline of now_ms(), 0 once it passed. */
PLC_SHARED int remaining_ms(int64_t deadline) {
  int64_t left = deadline - now_ms();
  if (left <= 0) return 0;
  return left > 0x7fffffff ? 0x7fffffff : (int)left;
}
