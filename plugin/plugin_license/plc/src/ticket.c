/*
 * Part of plc.c (compiled through it, never alone): the license ticket (docs/license-ticket.md),
 * the plugin's own verdict without the agent. The reader's rules of packages/licensing/src/ticket.ts
 * judgeTicket (plc_ticket_judge), where a ticket is (DATA/tickets/PROJECT_ID.ticket, the folder rule
 * of its two folders) and its bounded read: no allocation, child process or lock.
 */

/* ---------------------------------------------------------------- ids and paths */

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

/* The folder holding path, as Node's path.dirname says it (the library's reader asks the same):
 * "." for a bare name, the root for a name in it. -1 when it does not fit cap. */
static int parent_folder(const char *path, char *out, size_t cap) {
  size_t n = strlen(path);
  size_t root = path_root(path, n);
  while (n > root && is_separator(path[n - 1])) n--; /* a final separator names the same entry */
  while (n > root && !is_separator(path[n - 1])) n--; /* the entry's name */
  while (n > root && is_separator(path[n - 1])) n--; /* the separators before it */
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
  app = choose_namespace(app);
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

/* ---------------------------------------------------------------- the reader's rules (judgeTicket) */

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

enum { F_V, F_APP, F_PROJECT, F_VALID, F_REASON, F_SOURCE, F_HINT, F_ISSUED, F_UNTIL, F_COUNT };
static const char *const ticket_keys[F_COUNT] = {"v", "app", "project_id", "valid", "reason", "source", "code_hint", "issued_at", "valid_until"};

/* Line 1 into its fields (the last of each key, as JSON.parse keeps it): 0, -1 not JSON, -2 JSON but
 * not an object. *fraction is set when any number of line 1 has a fraction or an exponent. */
static int ticket_fields(const char *line, size_t n, json_value *fields, int *fraction) {
  json_scan s;
  char key[16];
  size_t key_len;
  int first = 1, r;
  s.p = line;
  s.end = line + n;
  memset(fields, 0, sizeof(json_value) * F_COUNT);
  /* TextDecoder drops a leading byte order mark before JSON.parse sees the text. */
  if (n >= 3 && (unsigned char)line[0] == 0xEF && (unsigned char)line[1] == 0xBB && (unsigned char)line[2] == 0xBF) s.p += 3;
  if (json_peek(&s) != '{') {
    if (json_walk(&s, PLC_JSON_DEPTH_CAP, NULL, fraction) != 0 || json_peek(&s) != -1) return -1;
    return -2;
  }
  s.p++;
  while ((r = json_member(&s, &first, key, sizeof key, &key_len)) == 1) {
    json_value value;
    if (json_walk(&s, PLC_JSON_DEPTH_CAP, &value, fraction) != 0) return -1;
    for (int k = 0; k < F_COUNT; k++)
      if (json_key_is(key, key_len, ticket_keys[k])) fields[k] = value;
  }
  return r == 0 && json_peek(&s) == -1 ? 0 : -1;
}

/* True when a string's text (without its quotes) has a \uD800-\uDFFF escape that is not half of a
 * pair: JSON.parse keeps it, so it can never equal a real app or project id. */
static int lone_surrogate(const char *p, const char *end) {
  int high = 0;
  while (p < end) {
    unsigned cp;
    if (p[0] == '\\' && end - p >= 6 && p[1] == 'u' && json_hex4(p + 2, &cp) == 0) {
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
static size_t ticket_text(const json_value *f, char *out, size_t cap) {
  json_scan s;
  size_t len = 0;
  out[0] = '\0';
  if (f->type != JSON_STRING || lone_surrogate(f->at + 1, f->end - 1)) return (size_t)-1;
  s.p = f->at;
  s.end = f->end;
  if (json_string(&s, out, cap, &len) != 0) return (size_t)-1;
  return len;
}

/* A field's JSON text as written, for words: at most cap - 1 bytes cut at a UTF-8 boundary, or
 * "undefined" when the key is missing (JSON.stringify's word). */
static const char *field_shown(const json_value *f, char *out, size_t cap) {
  size_t n;
  if (f->type == JSON_MISSING || f->at == NULL || f->end < f->at) return "undefined";
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

static int ticket_time(const json_value *f) {
  /* Number.isSafeInteger, written as digits (the contract's Unix seconds). */
  return f->type == JSON_NUMBER && f->integral && f->number <= 9007199254740991LL && f->number >= -9007199254740991LL;
}

static void hmac_key_byte(void *ctx, unsigned char byte) { hmac_key_add((hmac_ctx *)ctx, &byte, 1); }

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
  json_value f[F_COUNT];
  int fraction = 0, r;
  char text[256], want[256];
  size_t text_len;
  hmac_ctx m;
  if (out == NULL) out = &ignored;
  ticket_reset(out);
  app = choose_namespace(app);
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
  if (f[F_V].type != JSON_NUMBER || !f[F_V].integral || f[F_V].number != 1) {
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
    int valid = f[F_VALID].type == JSON_TRUE;
    if ((f[F_VALID].type != JSON_TRUE && f[F_VALID].type != JSON_FALSE) || !ticket_time(&f[F_ISSUED]) || !ticket_time(&f[F_UNTIL]) || fraction)
      return ticket_tampered(out, problem);
    if (f[F_REASON].type != JSON_NULL) {
      text_len = ticket_text(&f[F_REASON], text, 32);
      reason = text_len == (size_t)-1 || text_len != strlen(text) ? PLC_REASON_OTHER : reason_from_text(text);
      if (reason == PLC_REASON_NONE || reason == PLC_REASON_OTHER || reason == PLC_REASON_UNSIGNED) return ticket_tampered(out, problem); /* a plugin's verdict, never a ticket's */
    }
    if (valid && reason != PLC_REASON_NONE) return ticket_tampered(out, problem);
    text_len = ticket_text(&f[F_SOURCE], text, 16);
    if (text_len == 6 && memcmp(text, "online", 6) == 0) out->source = PLC_SOURCE_ONLINE;
    else if (text_len == 5 && memcmp(text, "cache", 5) == 0) out->source = PLC_SOURCE_CACHE;
    else if (text_len == 7 && memcmp(text, "offline", 7) == 0) out->source = PLC_SOURCE_OFFLINE;
    else return ticket_tampered(out, problem);
    if (f[F_HINT].type == JSON_STRING) {
      json_scan s;
      s.p = f[F_HINT].at;
      s.end = f[F_HINT].end;
      (void)json_string(&s, out->code_hint, sizeof out->code_hint, NULL); /* cut to fit */
    } else if (f[F_HINT].type != JSON_NULL) {
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

/* What the one read of a file in DATA/tickets/ found. */
typedef enum ticket_file { TICKET_FILE_READ = 0, TICKET_FILE_MISSING, TICKET_FILE_BAD } ticket_file;

/* The one read of a file in DATA/tickets/ (the ticket, the signed ticket; the library's readTicketFile):
 * what is missing (the file, or a folder it would be in) is MISSING; everything else that is there
 * and fails a rule is BAD, with its words in problem: the folders' (ticket_folders), then the
 * file's (the one bounded reader: a regular file of the user's own, not a link, of at most
 * PLC_TICKET_MAX_BYTES). READ: its bytes in buf (PLC_TICKET_MAX_BYTES + 1 bytes). */
static ticket_file ticket_file_read(const char *path, char *buf, size_t *len, char *problem, size_t problem_cap) {
  found_kind found;
  plc_status st;
  const char *words;
  size_t pos = 0;
  *len = 0;
  problem[0] = '\0';
  if (path == NULL || path[0] == '\0') {
    add(problem, problem_cap, &pos, "no path");
    return TICKET_FILE_MISSING;
  }
  switch (ticket_folders(path, problem, problem_cap)) {
    case FOLDER_OK: break;
    case FOLDER_MISSING: return TICKET_FILE_MISSING;
    case FOLDER_BAD: return TICKET_FILE_BAD;
  }
  st = read_small_file(path, READ_OWN_ONLY, buf, PLC_TICKET_MAX_BYTES + 1, len, &found);
  /* Not a switch: JUCE's recommended warnings (-Wswitch-enum, as errors) want every status named. */
  if (st == PLC_OK) return TICKET_FILE_READ;
  if (st == PLC_ERR_NO_FILE) return TICKET_FILE_MISSING;
  if (st == PLC_ERR_NOT_A_FILE)
    words = found == FOUND_LINK     ? "a link, not a regular file"
            : found == FOUND_FIFO   ? "a FIFO, not a regular file"
            : found == FOUND_DEVICE ? "a device, not a regular file"
            : found == FOUND_FOLDER ? "a folder, not a regular file"
            : found == FOUND_SOCKET ? "a socket, not a regular file"
                                    : "not a regular file";
  else if (st == PLC_ERR_FOREIGN_FOLDER)
    words = found == FOUND_NOT_OWN ? "the ticket belongs to another user, not to this one" : "the ticket is writable by others; chmod 600 it";
  else if (st == PLC_ERR_FILE_TOO_LARGE)
    words = "more than 4096 bytes";
  else if (st == PLC_ERR_INVALID_ARGUMENT)
    words = "the path is not UTF-8";
  else
    words = "cannot be opened or read (permission or a read error)";
  add(problem, problem_cap, &pos, words);
  return TICKET_FILE_BAD;
}

/* Reads the ticket at path and judges it; raw_machine_id NULL: this computer has none. */
static plc_ticket_verdict ticket_read(const char *path, const char *app, const char *project_id, int64_t now, const char *raw_machine_id,
                                      plc_ticket *out) {
  char buf[PLC_TICKET_MAX_BYTES + 1];
  size_t len = 0;
  ticket_reset(out);
  switch (ticket_file_read(path, buf, &len, out->problem, sizeof out->problem)) {
    case TICKET_FILE_READ: break;
    case TICKET_FILE_MISSING: return ticket_answer(out, PLC_TICKET_NONE, PLC_REASON_NONE, NULL);
    case TICKET_FILE_BAD: return ticket_answer(out, PLC_TICKET_TAMPERED, PLC_REASON_CACHE_INVALID, NULL);
  }
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
