/*
 * Part of plc.c (compiled through it, never alone): the agent protocol's messages
 * (docs/agent-protocol.md), read with the one JSON reader (json.c) and written as one request
 * line. Reading: which answer a line is (classify), then its LicenseState, error object or
 * offline document. Writing: a JSON-RPC request streamed through a small buffer to the transport.
 */

/* Skips the value at `level` (a top-level member is level 1): the answers' depth limit. */
static int skip_at(json_scan *s, size_t level) { return json_walk(s, PLC_PROTOCOL_DEPTH - level, NULL, NULL); }

/* null -> "", a string -> its text. Returns like json_string. */
static int read_text_or_null(json_scan *s, char *out, size_t cap) {
  if (json_peek(s) == 'n') {
    out[0] = '\0';
    return json_literal(s, "null");
  }
  return json_string(s, out, cap, NULL);
}

static int read_long_or_null(json_scan *s, long *out) {
  long long v;
  if (json_peek(s) == 'n') {
    *out = -1;
    return json_literal(s, "null");
  }
  if (json_number(s, &v) != 0) return -1;
  *out = v > 0x7fffffffL ? 0x7fffffffL : v < -0x7fffffffL ? -0x7fffffffL : (long)v;
  return 0;
}

static int read_time(json_scan *s, char *text, size_t cap, int64_t *seconds) {
  if (read_text_or_null(s, text, cap) != 0) return -1;
  if (text[0] == '\0' || plc_parse_time(text, seconds) != 0) *seconds = 0;
  return 0;
}

/* signed_ticket: null is none; a text is kept whole up to PLC_TICKET_MAX_BYTES bytes, a longer one
 * cut and marked as longer (signed_ticket_len one over), for plc_answer_judge to refuse. */
static int read_signed_ticket(json_scan *s, plc_license *out) {
  size_t n = 0;
  int got;
  out->has_signed_ticket = 0;
  out->signed_ticket_len = 0;
  out->signed_ticket[0] = '\0';
  if (json_peek(s) == 'n') return json_literal(s, "null");
  got = json_string(s, out->signed_ticket, sizeof out->signed_ticket, &n);
  if (got < 0) return -1;
  out->has_signed_ticket = 1;
  out->signed_ticket_len = got == 1 ? PLC_TICKET_MAX_BYTES + 1 : n;
  return 0;
}

/* A LicenseState (a result, or a `changed` notification's params) into out. */
static int parse_license(json_scan *s, plc_license *out) {
  char key[24];
  size_t k;
  int first = 1, r, have_valid = 0;
  if (json_expect(s, '{') != 0) return -1;
  while ((r = json_member(s, &first, key, sizeof key, &k)) == 1) {
    int bad = 0;
    if (json_key_is(key, k, "valid")) {
      int ch = json_peek(s);
      if (ch == 't') bad = json_literal(s, "true"), out->valid = 1;
      else if (ch == 'f') bad = json_literal(s, "false"), out->valid = 0;
      else bad = 1;
      have_valid = !bad;
    } else if (json_key_is(key, k, "reason")) {
      bad = read_text_or_null(s, out->reason_text, sizeof out->reason_text) < 0;
      out->reason = bad ? PLC_REASON_NONE : reason_from_text(out->reason_text);
    } else if (json_key_is(key, k, "source")) {
      char source[16] = "";
      bad = read_text_or_null(s, source, sizeof source) < 0;
      out->source = strcmp(source, "online") == 0 ? PLC_SOURCE_ONLINE
                    : strcmp(source, "cache") == 0 ? PLC_SOURCE_CACHE
                    : strcmp(source, "offline") == 0 ? PLC_SOURCE_OFFLINE
                                                     : PLC_SOURCE_UNKNOWN;
    } else if (json_key_is(key, k, "project_id")) {
      bad = read_text_or_null(s, out->project_id, sizeof out->project_id) != 0;
    } else if (json_key_is(key, k, "code_hint")) {
      bad = read_text_or_null(s, out->code_hint, sizeof out->code_hint) != 0;
    } else if (json_key_is(key, k, "activations")) {
      bad = read_long_or_null(s, &out->activations);
    } else if (json_key_is(key, k, "max_activations")) {
      bad = read_long_or_null(s, &out->max_activations);
    } else if (json_key_is(key, k, "validated_at")) {
      bad = read_time(s, out->validated_at, sizeof out->validated_at, &out->validated_at_s);
    } else if (json_key_is(key, k, "grace_until")) {
      bad = read_time(s, out->grace_until, sizeof out->grace_until, &out->grace_until_s);
    } else if (json_key_is(key, k, "next_check_at")) {
      bad = read_time(s, out->next_check_at, sizeof out->next_check_at, &out->next_check_at_s);
    } else if (json_key_is(key, k, "signed_ticket")) {
      bad = read_signed_ticket(s, out);
    } else {
      bad = skip_at(s, 2);
    }
    if (bad) return -1;
  }
  return r == 0 && have_valid ? 0 : -1;
}

/* An error object into out's error_code, error_message and error_detail (data.code). */
static int parse_error(json_scan *s, plc_license *out) {
  char key[16];
  size_t k;
  int first = 1, r, have_code = 0;
  if (json_expect(s, '{') != 0) return -1;
  while ((r = json_member(s, &first, key, sizeof key, &k)) == 1) {
    int bad;
    if (json_key_is(key, k, "code")) {
      bad = read_long_or_null(s, &out->error_code);
      have_code = !bad;
    } else if (json_key_is(key, k, "message")) {
      bad = read_text_or_null(s, out->error_message, sizeof out->error_message) < 0;
    } else if (json_key_is(key, k, "data") && json_peek(s) == '{') {
      int dfirst = 1, dr;
      s->p++;
      while ((dr = json_member(s, &dfirst, key, sizeof key, &k)) == 1) {
        if (json_key_is(key, k, "code") && json_peek(s) == '"') dr = json_string(s, out->error_detail, sizeof out->error_detail, NULL) < 0;
        else dr = skip_at(s, 3);
        if (dr != 0) return -1;
      }
      bad = dr != 0;
    } else {
      bad = skip_at(s, 2);
    }
    if (bad) return -1;
  }
  return r == 0 && have_code ? 0 : -1;
}

/* Parses an answer's `result` into `out`: 0, -1 when malformed, 1 when it does not fit. */
typedef int (*result_parser)(json_scan *s, void *out);

static int parse_license_result(json_scan *s, void *out) { return parse_license(s, (plc_license *)out); }

static int parse_subscribed(json_scan *s, void *out) {
  (void)out;
  return json_peek(s) == '{' ? skip_at(s, 1) : -1;
}

static int parse_document(json_scan *s, void *out) {
  plc_document *doc = (plc_document *)out;
  char key[16];
  size_t k;
  int first = 1, r, cut = 0, have_text = 0;
  if (json_expect(s, '{') != 0) return -1;
  while ((r = json_member(s, &first, key, sizeof key, &k)) == 1) {
    int got;
    if (json_key_is(key, k, "document")) {
      got = json_string(s, doc->text, sizeof doc->text, NULL);
      have_text = got >= 0;
    } else if (json_key_is(key, k, "file_name")) {
      got = read_text_or_null(s, doc->file_name, sizeof doc->file_name);
    } else {
      got = skip_at(s, 2);
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
 * result, error or params value. The whole line is read here, so the depth limit holds for it. */
static line_kind classify(const char *line, size_t len, unsigned long id, const char **at) {
  json_scan s = {line, line + len};
  char key[16], text[16];
  size_t k;
  int first = 1, r, is_ours = 0, id_null = 0, is_notification = 0, is_changed = 0, have_version = 0;
  const char *result_at = NULL, *error_at = NULL, *params_at = NULL;
  if (json_expect(&s, '{') != 0) return LINE_BAD;
  while ((r = json_member(&s, &first, key, sizeof key, &k)) == 1) {
    int bad;
    if (json_key_is(key, k, "jsonrpc")) {
      bad = json_string(&s, text, sizeof text, NULL) != 0 || strcmp(text, "2.0") != 0;
      have_version = !bad;
    } else if (json_key_is(key, k, "id")) {
      int ch = json_peek(&s);
      if (ch == 'n') {
        bad = json_literal(&s, "null");
        id_null = 1;
      } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        const char *token = s.p;
        bad = json_number(&s, NULL);
        is_ours = !bad && same_id(token, (size_t)(s.p - token), id);
      } else {
        bad = skip_at(&s, 1);
      }
    } else if (json_key_is(key, k, "method")) {
      int got = json_string(&s, text, sizeof text, NULL);
      is_notification = 1;
      is_changed = got == 0 && strcmp(text, "changed") == 0;
      bad = got < 0;
    } else if (json_key_is(key, k, "params")) {
      params_at = s.p;
      bad = skip_at(&s, 1);
    } else if (json_key_is(key, k, "result")) {
      result_at = s.p;
      bad = skip_at(&s, 1);
    } else if (json_key_is(key, k, "error")) {
      error_at = s.p;
      bad = skip_at(&s, 1);
    } else {
      bad = skip_at(&s, 1);
    }
    if (bad) return LINE_BAD;
  }
  if (r != 0 || json_peek(&s) != -1 || !have_version) return LINE_BAD;
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
