/*
 * Part of plc.c (compiled through it, never alone): the signed ticket (docs/signed-ticket.md): the
 * vendor's public keys, the machine id a signed ticket names, the signed ticket's format and rules
 * (signed_ticket_judge), and the reader's rule (license_rule), the one place it is written in C,
 * which composes the ticket's verdict or an agent's answer with it. Its twin is packages/licensing's
 * judgeLicense; both are held to packages/licensing/test/signed-ticket-vectors. No allocation.
 */

#define SIGNED_TICKET_CONTEXT "plugin-license/signed-ticket/v1" /* and a NUL, then line 1: the signed bytes */
#define SIGNED_LINE2_LEN (8 + 16 + 1 + 86)                        /* "ed25519:" KID ":" SIG */

/* ---------------------------------------------------------------- base64url and keys */

static int b64url_value(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 : c >= '0' && c <= '9' ? c - '0' + 52 : c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* The bytes of exactly n characters of unpadded base64url into out (n * 6 / 8 bytes): -1 for a
 * character outside the URL alphabet or unused bits set in the last one, so one byte string has one
 * text (the format's base64UrlDecode). */
static int b64url_decode(const char *text, size_t n, unsigned char *out) {
  uint32_t acc = 0;
  unsigned bits = 0;
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    const int v = b64url_value((unsigned char)text[i]);
    if (v < 0) return -1;
    acc = (acc << 6 | (uint32_t)v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (unsigned char)(acc >> bits);
    }
  }
  return (acc & ((1u << bits) - 1)) == 0 ? 0 : -1;
}

static void hex_of(const unsigned char *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}

/* What makes a public key one no signature can be trusted under, or NULL: the verifier's refusals
 * (ed25519.c), then a y on no point of the curve. */
static const char *ed25519_key_problem(const unsigned char public_key[32]) {
  ge a;
  if (!ed_canonical_y(public_key)) return "not a usable Ed25519 public key: not written canonically (y >= p)";
  if (ed_small_order(public_key)) return "not a usable Ed25519 public key: a point of small order (the all-zero key is one)";
  if (ge_decode(&a, public_key) != 0) return "not a usable Ed25519 public key: not a point of the curve";
  return NULL;
}

plc_status plc_ticket_key_parse(const char *text, plc_ticket_key *out) {
  plc_ticket_key ignored;
  size_t start, end;
  unsigned char digest[32];
  sha256_ctx c;
  if (out == NULL) out = &ignored;
  memset(out, 0, sizeof *out);
  out->problem = "no key given";
  if (text == NULL) return PLC_ERR_INVALID_ARGUMENT;
  js_trim(text, strlen(text), &start, &end);
  if (end - start >= 8 && memcmp(text + start, "ed25519:", 8) == 0) start += 8;
  if (end - start != 43) {
    out->problem = "not 43 characters; an Ed25519 public key is 43 base64url characters (optionally after \"ed25519:\"), as plugin-license offline keygen prints it";
    return PLC_ERR_INVALID_ARGUMENT;
  }
  if (b64url_decode(text + start, 43, out->public_key) != 0) {
    out->problem = "not canonical unpadded base64url (letters, digits, - and _ only, as plugin-license offline keygen prints it)";
    return PLC_ERR_INVALID_ARGUMENT;
  }
  out->problem = ed25519_key_problem(out->public_key);
  if (out->problem != NULL) {
    memset(out->public_key, 0, sizeof out->public_key);
    return PLC_ERR_INVALID_ARGUMENT;
  }
  sha256_init(&c);
  sha256_update(&c, out->public_key, 32);
  sha256_final(&c, digest);
  hex_of(digest, 8, out->kid);
  return PLC_OK;
}

/* ---------------------------------------------------------------- the machine id */

static void hmac_message_byte(void *ctx, unsigned char byte) { sha256_update(&((hmac_ctx *)ctx)->inner, &byte, 1); }

/* "m1_" + hex HMAC-SHA256(key = app, message = the normalised raw id) into out (68 bytes): the
 * library's machineIdOf. */
static void machine_id_of(const char *app, const char *raw, char out[68]) {
  hmac_ctx m;
  unsigned char tag[32];
  hmac_key_start(&m);
  hmac_key_add(&m, app, strlen(app));
  hmac_begin(&m);
  normalize_raw_id(raw, strlen(raw), hmac_message_byte, &m);
  hmac_end(&m, tag);
  memcpy(out, "m1_", 3);
  hex_of(tag, 32, out + 3);
}

plc_status plc_machine_id(const char *app, const char *raw_machine_id, char *out, size_t out_size) {
  char id[68];
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  app = choose_namespace(app);
  if (raw_machine_id == NULL || !valid_namespace(app) || out_size < sizeof id) return PLC_ERR_INVALID_ARGUMENT;
  machine_id_of(app, raw_machine_id, id);
  memcpy(out, id, sizeof id);
  return PLC_OK;
}

plc_status plc_signed_ticket_path(const char *app, const char *app_group, const char *project_id, char *out, size_t out_size) {
  char path[PLC_DATA_CAP];
  plc_status st;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  st = plc_ticket_path(app, app_group, project_id, path, sizeof path);
  if (st != PLC_OK) return st;
  memcpy(path + strlen(path) - strlen(".ticket"), ".signed", sizeof ".signed"); /* as long: it fits */
  return fit_data(path, out, out_size);
}

/* ---------------------------------------------------------------- the signed ticket's rules */

enum { S_V, S_KID, S_APP, S_PROJECT, S_MACHINE, S_HINT, S_SOURCE, S_ISSUED, S_UNTIL, S_COUNT };
static const char *const signed_keys[S_COUNT] = {"v", "kid", "app", "project_id", "machine_id", "code_hint", "source", "issued_at", "valid_until"};

/* Line 1's members into f, each of exactly these names once (decoded: "\u0061pp" is app): NULL, or
 * what is wrong. *fraction is set when any number in it has a fraction or an exponent. */
static const char *signed_fields(const char *line, size_t n, json_value f[S_COUNT], int *fraction) {
  json_scan s;
  char key[16];
  size_t key_len;
  int first = 1, r, k;
  unsigned seen = 0;
  s.p = line;
  s.end = line + n;
  memset(f, 0, sizeof(json_value) * S_COUNT);
  if (!valid_utf8((const unsigned char *)line, n)) return "line 1 is not JSON in UTF-8";
  /* No byte order mark is skipped: JSON has none, and the signature covers line 1's bytes. */
  if (json_peek(&s) != '{') {
    if (json_walk(&s, PLC_JSON_DEPTH_CAP, NULL, fraction) != 0 || json_peek(&s) != -1) return "line 1 is not JSON in UTF-8";
    return "line 1 is not a JSON object";
  }
  s.p++;
  while ((r = json_member(&s, &first, key, sizeof key, &key_len)) == 1) {
    json_value value;
    if (json_walk(&s, PLC_JSON_DEPTH_CAP, &value, fraction) != 0) return "line 1 is not JSON in UTF-8";
    for (k = 0; k < S_COUNT && !json_key_is(key, key_len, signed_keys[k]); k++) {
    }
    if (k == S_COUNT) return "line 1 has an unknown field";
    if (seen & (1u << k)) return "line 1 has a field twice";
    seen |= 1u << k;
    f[k] = value;
  }
  if (r != 0 || json_peek(&s) != -1) return "line 1 is not JSON in UTF-8";
  return seen == (1u << S_COUNT) - 1 ? NULL : "line 1 misses a field";
}

/* True when a field is a string whose decoded text is exactly want (want_len bytes). */
static int field_is(const json_value *f, const char *want, size_t want_len) {
  char text[256];
  size_t n;
  if (want_len >= sizeof text) return 0;
  n = ticket_text(f, text, sizeof text);
  return n == want_len && memcmp(text, want, n) == 0;
}

static plc_ticket_verdict signed_refused(plc_ticket *out, const char *problem, const char *more) {
  size_t pos = 0;
  out->source = PLC_SOURCE_UNKNOWN;
  out->code_hint[0] = '\0';
  out->issued_at = out->valid_until = 0;
  out->problem[0] = '\0';
  add(out->problem, sizeof out->problem, &pos, "the signed ticket: ");
  add(out->problem, sizeof out->problem, &pos, problem);
  if (more != NULL) add(out->problem, sizeof out->problem, &pos, more);
  return ticket_answer(out, PLC_TICKET_TAMPERED, PLC_REASON_CACHE_INVALID, NULL);
}

/* The signature of the signed bytes with key: verified, or remembered as verified (the same bytes
 * and key as the last that did). */
static int signed_ticket_verified(const char *bytes, size_t len, size_t line1_len, const unsigned char signature[64], const plc_ticket_key *key,
                                  plc_verify_cache *cache) {
  if (cache != NULL && cache->len == len && len <= sizeof cache->bytes && memcmp(cache->public_key, key->public_key, 32) == 0 &&
      memcmp(cache->bytes, bytes, len) == 0)
    return 1;
  {
    /* The message is the context, a NUL and line 1: one buffer on the stack, no allocation. */
    char message[sizeof SIGNED_TICKET_CONTEXT + PLC_TICKET_MAX_BYTES];
    memcpy(message, SIGNED_TICKET_CONTEXT, sizeof SIGNED_TICKET_CONTEXT); /* with its NUL */
    memcpy(message + sizeof SIGNED_TICKET_CONTEXT, bytes, line1_len);
    if (!plc_ed25519_verify(key->public_key, message, sizeof SIGNED_TICKET_CONTEXT + line1_len, signature)) return 0;
  }
  if (cache != NULL && len <= sizeof cache->bytes) {
    memcpy(cache->public_key, key->public_key, 32);
    memcpy(cache->bytes, bytes, len);
    cache->len = len;
  }
  return 1;
}

/* Rule 2 of the reader (plc.h): the signed ticket's bytes judged, for the machine id machine_id. */
static plc_ticket_verdict signed_ticket_judge(const char *bytes, size_t len, const plc_trust *trust, const char *app, const char *project_id,
                                              int64_t now, const char *machine_id, plc_ticket *out) {
  const char *nl, *line2, *problem;
  size_t line1_len, i, n;
  unsigned char signature[64];
  json_value f[S_COUNT];
  const plc_ticket_key *key = NULL;
  char text[32], want[64];
  int fraction = 0;
  ticket_reset(out);
  if (bytes == NULL) len = 0;
  if (len > PLC_TICKET_MAX_BYTES) return signed_refused(out, "more than 4096 bytes", NULL);
  /* Two lines, each ending with "\n", nothing after. */
  nl = len > 0 ? (const char *)memchr(bytes, '\n', len) : NULL;
  if (nl == NULL) return signed_refused(out, len == 0 ? "empty" : "one line; a signed ticket is two lines", NULL);
  line1_len = (size_t)(nl - bytes);
  line2 = nl + 1;
  if (line1_len + 1 + SIGNED_LINE2_LEN + 1 != len || line2[SIGNED_LINE2_LEN] != '\n' || memchr(line2, '\n', SIGNED_LINE2_LEN) != NULL)
    return signed_refused(out, "not two lines with line 2 \"ed25519:KEY_ID:SIGNATURE\", each ending with a newline alone", NULL);
  /* Line 2: "ed25519:" KID ":" SIG, KID 16 lowercase hex digits, SIG the canonical base64url of 64 bytes. */
  if (memcmp(line2, "ed25519:", 8) != 0 || line2[24] != ':') return signed_refused(out, "line 2 is not \"ed25519:KEY_ID:SIGNATURE\"", NULL);
  for (i = 8; i < 24; i++)
    if (hex_value(line2[i]) < 0) return signed_refused(out, "line 2's key id is not 16 lowercase hex digits", NULL);
  memcpy(out->signer, line2 + 8, 16);
  out->signer[16] = '\0';
  if (b64url_decode(line2 + 25, 86, signature) != 0) return signed_refused(out, "the signature is not canonical unpadded base64url", NULL);
  /* Line 1: a JSON object of exactly the fields, with their types. */
  problem = signed_fields(bytes, line1_len, f, &fraction);
  if (problem != NULL) return signed_refused(out, problem, NULL);
  if (fraction) return signed_refused(out, "a number in line 1 is not written as digits only (times are whole Unix seconds)", NULL);
  if (f[S_V].type != JSON_NUMBER || f[S_V].number != 1) return signed_refused(out, "line 1 is not of version 1", NULL);
  n = ticket_text(&f[S_KID], text, sizeof text);
  if (n != 16) return signed_refused(out, "line 1's kid is not 16 lowercase hex digits", NULL);
  for (i = 0; i < 16; i++)
    if (hex_value(text[i]) < 0) return signed_refused(out, "line 1's kid is not 16 lowercase hex digits", NULL);
  if (f[S_APP].type != JSON_STRING || f[S_PROJECT].type != JSON_STRING || f[S_MACHINE].type != JSON_STRING || f[S_HINT].type != JSON_STRING)
    return signed_refused(out, "a field of line 1 that is text is not a string", NULL);
  if (!field_is(&f[S_SOURCE], "online", 6) && !field_is(&f[S_SOURCE], "offline", 7))
    return signed_refused(out, "line 1's source is neither \"online\" nor \"offline\"", NULL);
  if (!ticket_time(&f[S_ISSUED]) || !ticket_time(&f[S_UNTIL])) return signed_refused(out, "a time in line 1 is not a whole number of Unix seconds", NULL);
  if (memcmp(text, out->signer, 16) != 0) return signed_refused(out, "line 1 and line 2 name different keys", NULL);
  /* The key it names, one of the vendor's, and its signature. */
  for (i = 0; trust != NULL && trust->keys != NULL && i < trust->key_count && key == NULL; i++)
    if (trust->keys[i].problem == NULL && memcmp(trust->keys[i].kid, out->signer, 17) == 0) key = &trust->keys[i];
  if (key == NULL) return signed_refused(out, "signed by a key this plugin does not trust: ", out->signer);
  if (!signed_ticket_verified(bytes, len, line1_len, signature, key, trust->cache))
    return signed_refused(out, "the signature does not verify (changed after it was signed, or refused)", NULL);
  /* Whose it is. */
  if (!field_is(&f[S_APP], app, strlen(app))) return signed_refused(out, "signed for another app", NULL);
  if (project_id == NULL || project_id_key(project_id, want, sizeof want) != 0 || !field_is(&f[S_PROJECT], want, strlen(want)))
    return signed_refused(out, "signed for another project", NULL);
  if (!field_is(&f[S_MACHINE], machine_id, strlen(machine_id))) return signed_refused(out, "signed for another computer", NULL);
  /* Its time. */
  out->source = field_is(&f[S_SOURCE], "online", 6) ? PLC_SOURCE_ONLINE : PLC_SOURCE_OFFLINE;
  {
    json_scan s;
    s.p = f[S_HINT].at;
    s.end = f[S_HINT].end;
    (void)json_string(&s, out->code_hint, sizeof out->code_hint, NULL); /* cut to fit */
  }
  out->issued_at = (int64_t)f[S_ISSUED].number;
  out->valid_until = (int64_t)f[S_UNTIL].number;
  if (now < out->issued_at - 3600) return ticket_answer(out, PLC_TICKET_CLOCK, PLC_REASON_CLOCK_TAMPERED, "the clock is more than an hour before the signed ticket's issued_at");
  if (now > out->valid_until) return ticket_answer(out, PLC_TICKET_EXPIRED, PLC_REASON_GRACE_EXPIRED, "the signed ticket has ended (its valid_until)");
  return ticket_answer(out, PLC_TICKET_VALID, PLC_REASON_NONE, NULL);
}

static int keyed(const plc_trust *trust) { return trust != NULL && trust->keys != NULL && trust->key_count > 0; }

plc_ticket_verdict plc_signed_ticket_judge(const char *bytes, size_t len, const plc_trust *trust, const char *app, const char *project_id,
                                           int64_t now, const char *raw_machine_id, plc_ticket *out) {
  plc_ticket ignored;
  char machine[68];
  if (out == NULL) out = &ignored;
  app = choose_namespace(app);
  if (!keyed(trust)) {
    ticket_reset(out);
    return ticket_answer(out, PLC_TICKET_NONE, PLC_REASON_NONE, "no keys to judge a signed ticket with");
  }
  machine_id_of(app, raw_machine_id != NULL ? raw_machine_id : "", machine);
  return signed_ticket_judge(bytes, len, trust, app, project_id, now, machine, out);
}

/* ---------------------------------------------------------------- the reader's rule */

/* What a reader holds of the signed ticket: none, one it could not read (its words), or its bytes. */
typedef struct signed_input {
  ticket_file kind;
  const char *bytes;
  size_t len;
  const char *problem;
} signed_input;

/* The reader's rule (plc.h; docs/signed-ticket.md, "The reader"), the one place it is written in C:
 * the answer (the ticket's verdict, or an agent's in the same words) composed with the signed
 * ticket. With no keys, the answer as it is. */
static plc_ticket_verdict license_rule(const plc_ticket *answer, const signed_input *signed_ticket, const plc_trust *trust, const char *app,
                                       const char *project_id, int64_t now, const char *raw_machine_id, plc_ticket *out) {
  char machine[68];
  if (!keyed(trust) || (answer->verdict != PLC_TICKET_VALID && answer->verdict != PLC_TICKET_NONE)) {
    *out = *answer;
    return out->verdict;
  }
  if (signed_ticket->kind == TICKET_FILE_MISSING) {
    if (answer->verdict == PLC_TICKET_NONE) {
      *out = *answer;
      return out->verdict;
    }
    ticket_reset(out);
    return ticket_answer(out, PLC_TICKET_NOT_LICENSED, PLC_REASON_UNSIGNED, "no ticket signed by the vendor beside a valid one");
  }
  if (signed_ticket->kind == TICKET_FILE_BAD) {
    ticket_reset(out);
    return signed_refused(out, signed_ticket->problem, NULL);
  }
  machine_id_of(app, raw_machine_id != NULL ? raw_machine_id : "", machine);
  return signed_ticket_judge(signed_ticket->bytes, signed_ticket->len, trust, app, project_id, now, machine, out);
}

plc_ticket_verdict plc_ticket_read_signed(const char *ticket_path, const char *signed_path, const plc_trust *trust, const char *app,
                                          const char *project_id, int64_t now, const char *raw_machine_id, plc_ticket *out) {
  char buf[PLC_TICKET_MAX_BYTES + 1], beside[PLC_DATA_CAP], problem[96];
  plc_ticket ignored, answer;
  signed_input in;
  if (out == NULL) out = &ignored;
  app = choose_namespace(app);
  ticket_read(ticket_path, app, project_id, now, raw_machine_id, &answer);
  if (!keyed(trust)) return license_rule(&answer, NULL, trust, app, project_id, now, raw_machine_id, out);
  if (signed_path == NULL && ticket_path != NULL) {
    const size_t n = strlen(ticket_path), suffix = strlen(".ticket");
    if (n > suffix && n - suffix + sizeof ".signed" <= sizeof beside && memcmp(ticket_path + n - suffix, ".ticket", suffix) == 0) {
      memcpy(beside, ticket_path, n - suffix);
      memcpy(beside + n - suffix, ".signed", sizeof ".signed");
      signed_path = beside;
    }
  }
  in.kind = ticket_file_read(signed_path, buf, &in.len, problem, sizeof problem);
  in.bytes = buf;
  in.problem = problem;
  return license_rule(&answer, &in, trust, app, project_id, now, raw_machine_id, out);
}

plc_ticket_verdict plc_ticket_check_signed(const char *app, const char *app_group, const char *project_id, int64_t now,
                                           const plc_trust *trust, plc_ticket *out) {
  char path[PLC_DATA_CAP], raw[PLC_MACHINE_ID_CAP];
  plc_ticket ignored;
  plc_status st;
  if (out == NULL) out = &ignored;
  if (!keyed(trust)) return plc_ticket_check(app, app_group, project_id, now, out);
  st = plc_ticket_path(app, app_group, project_id, path, sizeof path);
  if (st != PLC_OK) return plc_ticket_check(app, app_group, project_id, now, out); /* its words for a path it cannot make: NONE */
  st = plc_raw_machine_id(app, app_group, raw, sizeof raw);
  return plc_ticket_read_signed(path, NULL, trust, app, project_id, now, st == PLC_OK ? raw : NULL, out);
}

plc_ticket_verdict plc_answer_judge(const plc_license *answer, const plc_trust *trust, const char *app, const char *project_id, int64_t now,
                                    const char *raw_machine_id, plc_ticket *out) {
  plc_ticket ignored, said;
  signed_input in;
  size_t pos = 0;
  if (out == NULL) out = &ignored;
  app = choose_namespace(app);
  ticket_reset(&said);
  if (answer == NULL) return license_rule(&said, NULL, NULL, app, project_id, now, raw_machine_id, out);
  /* The agent's answer in the ticket's words. */
  said.verdict = answer->valid ? PLC_TICKET_VALID : PLC_TICKET_NOT_LICENSED;
  said.reason = answer->valid ? PLC_REASON_NONE : answer->reason == PLC_REASON_NONE ? PLC_REASON_NOT_ACTIVATED : answer->reason;
  said.source = answer->source;
  add(said.code_hint, sizeof said.code_hint, &pos, answer->code_hint);
  said.valid_until = answer->grace_until_s;
  in.kind = answer->has_signed_ticket ? TICKET_FILE_READ : TICKET_FILE_MISSING;
  in.bytes = answer->signed_ticket;
  in.len = answer->signed_ticket_len;
  in.problem = NULL;
  return license_rule(&said, &in, trust, app, project_id, now, raw_machine_id, out);
}
