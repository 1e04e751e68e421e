/*
 * Part of plc.c (compiled through it, never alone): this machine's raw id as the library reads it
 * (packages/licensing/src/machine-id.ts): the OS's (read by the OS's machine_id.c, once per
 * process, normalised and kept if plausible), else the generated secret in the data folder, taken
 * only from a folder and a file of the user's own. The one piece of state of the library: that id.
 */

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

static char os_raw_id[PLC_MACHINE_ID_CAP];
static size_t os_raw_len; /* 0: the OS has none the library would take */
static plc_once os_raw_init = PLC_ONCE_INIT;

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

plc_status plc_raw_machine_id(const char *app, const char *app_group, char *out, size_t out_size) {
  char path[PLC_DATA_CAP], buf[PLC_TICKET_MAX_BYTES + 1];
  size_t len, start, i;
  found_kind found;
  plc_status st;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  run_once(&os_raw_init, os_raw_id_once);
  if (os_raw_len > 0) {
    if (os_raw_len + 1 > out_size) return PLC_ERR_INVALID_ARGUMENT;
    memcpy(out, os_raw_id, os_raw_len + 1);
    return PLC_OK;
  }
  /* The generated secret (machine-id.ts readSecret): trimmed, 64 lowercase hex digits, in a data
   * folder of the user's own and a file of theirs (the folder rule: else it is not trusted). */
  app = choose_namespace(app);
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
  js_trim(buf, len, &start, &len);
  if (len - start != 64) return PLC_ERR_NO_FILE;
  for (i = start; i < len; i++)
    if (!((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f'))) return PLC_ERR_NO_FILE;
  if (out_size < 65) return PLC_ERR_INVALID_ARGUMENT;
  memcpy(out, buf + start, 64);
  out[64] = '\0';
  return PLC_OK;
}
