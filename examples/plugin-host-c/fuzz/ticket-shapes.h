/*
 * ticket-shapes.h: the structure of a ticket for the ticket fuzzer (ticket-fuzz.c) and the
 * differential driver (test/ticket-diff.c). Test only; include it after plc.c, whose scanner and
 * HMAC it uses.
 *
 * A ticket's line 1 is a JSON object; what a reader must survive is any field replaced by any
 * JSON value (arrays, objects, deep nesting, odd numbers, strings with escapes), keys missing,
 * repeated or escaped, and the bytes around them. This file holds the one list of those shapes,
 * the one mutator that applies them to any line 1 (the fuzzer's custom mutator, and the driver's
 * generated set), the corpus (every field in every shape), and the signer that recomputes line 2
 * with the reader's key, so every case reaches the judge rather than stopping at the MAC.
 */
#ifndef PLC_TICKET_SHAPES_H
#define PLC_TICKET_SHAPES_H

#include <stdio.h>
#include <stdlib.h>

/* The reader every case is judged by (the ticket vectors' reader, docs/license-ticket.md). */
#define TS_APP "acme-audio"
#define TS_PROJECT "123e4567-e89b-12d3-a456-426614174000"
#define TS_RAW "0123456789abcdef0123456789abcdef"
#define TS_NOW ((int64_t)1768478460)
/* Line 1's room: a little more than a ticket holds, so the size rule is reached too. */
#define TS_LINE_CAP (PLC_TICKET_MAX_BYTES + 64)
/* A ticket's room: line 1, a newline, 64 hex digits, a newline. */
#define TS_TICKET_CAP (TS_LINE_CAP + 66)

/* The valid ticket the vectors start from (issued 2026-01-15T12:00:00Z, valid 30 days). */
static const char ts_base[] =
    "{\"v\":1,\"app\":\"acme-audio\",\"project_id\":\"123e4567-e89b-12d3-a456-426614174000\",\"valid\":true,\"reason\":null,"
    "\"source\":\"online\",\"code_hint\":\"\xe2\x80\xa6" "B601\",\"issued_at\":1768478400,\"valid_until\":1771070400}";

/* The same, invalid (revoked): the base of the "not licensed" cases. */
static const char ts_revoked[] =
    "{\"v\":1,\"app\":\"acme-audio\",\"project_id\":\"123e4567-e89b-12d3-a456-426614174000\",\"valid\":false,\"reason\":\"code_revoked\","
    "\"source\":\"cache\",\"code_hint\":null,\"issued_at\":1768478400,\"valid_until\":1768478400}";

/* The keys a reader looks at, and one it does not. */
static const char *const ts_keys[] = {"v", "app", "project_id", "valid", "reason", "source", "code_hint", "issued_at", "valid_until", "x"};
#define TS_KEY_COUNT (sizeof ts_keys / sizeof ts_keys[0])

/* Values a field can be replaced by, as JSON text. */
static const char *const ts_shapes[] = {
    /* containers */
    "[]", "{}", "[1]", "[[1]]", "[1,2]", "[null]", "[{}]", "[\"acme-audio\"]", "{\"v\":1}", "{\"a\":[1,{\"b\":null}]}",
    "[true,false,null,-0,\"x\"]", "[ 1 , [ ] , { } ]", "{\"\":{\"\":[]}}", "{\"v\":1,\"v\":[1]}",
    /* numbers */
    "0", "-0", "1", "-1", "2", "1.0", "1e0", "1E+0", "10e-1", "0.5", "-0.0", "1e400", "-1e400", "1.5e-400", "9007199254740991",
    "9007199254740992", "9007199254740993", "-9007199254740991", "-9007199254740993", "123456789012345678901234567890",
    "-123456789012345678901234567890", "1768478400", "1771070400", "17684784e2", "1771070400.5", "-1771070400",
    /* literals */
    "true", "false", "null",
    /* strings */
    "\"\"", "\"1\"", "\"true\"", "\"null\"", "\"acme-audio\"", "\"acme\\u002daudio\"", "\"ACME-AUDIO\"", "\"acme-audio\\u0000\"",
    "\"acme-audio\\ud800\"", "\"\\udc00acme-audio\"", "\"123e4567-e89b-12d3-a456-426614174000\"", "\"123E4567-E89B-12D3-A456-426614174000\"",
    "\"123e4567-e89b-12d3-a456-42661417400\\u212a\"", "\"online\"", "\"cache\"", "\"offline\"", "\"ONLINE\"", "\"code_revoked\"",
    "\"not_activated\"", "\"cache_invalid\"", "\"grace_expired\"", "\"stolen\"", "\"code_revoked\\u0000\"", "\"\\u0063ode_revoked\"",
    "\"\\ud83c\\udfb9\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\u00e9\"", "\"\xc3\xa9\"", "\"\\ufeff\"", "\"\xe2\x80\xa8\"", "\"\\u212a\"",
    "\"\xef\xbf\xbf\"", "\"\x7f\"",
};
#define TS_SHAPE_COUNT (sizeof ts_shapes / sizeof ts_shapes[0])

/* ---------------------------------------------------------------- text edits */

/* Replaces n bytes at `at` of line (length *len, room cap) by text; -1 when it would not fit. */
static int ts_splice(char *line, size_t *len, size_t cap, size_t at, size_t n, const char *text, size_t text_len) {
  if (at > *len || n > *len - at || *len - n + text_len > cap) return -1;
  memmove(line + at + text_len, line + at + n, *len - at - n);
  memcpy(line + at, text, text_len);
  *len = *len - n + text_len;
  return 0;
}

/* One top-level member of line 1: where its key and its value are. */
typedef struct ts_member {
  size_t key_at, value_at, value_end, comma_before; /* comma_before: where the ',' before it is, or key_at for the first */
  char key[16];                                     /* decoded, "" when cut */
} ts_member;

/* The members of an object line 1 (plc's own scanner reads them); -1 when it is no JSON object. */
static int ts_members(const char *line, size_t n, ts_member *m, int cap) {
  scan s;
  int count = 0, fraction = 0;
  size_t comma;
  s.p = line;
  s.end = line + n;
  if (peek(&s) != '{') return -1;
  s.p++;
  if (peek(&s) == '}') return 0;
  comma = (size_t)(s.p - line);
  for (;;) {
    ts_member one;
    size_t klen = 0;
    jfield f;
    int cut;
    memset(&one, 0, sizeof one);
    one.comma_before = comma;
    if (peek(&s) < 0) return -1;
    one.key_at = (size_t)(s.p - line);
    cut = scan_string(&s, one.key, sizeof one.key, &klen);
    if (cut < 0 || expect(&s, ':') != 0) return -1;
    if (cut) one.key[0] = '\0';
    if (peek(&s) < 0) return -1;
    one.value_at = (size_t)(s.p - line);
    if (ticket_value(&s, &f, &fraction) != 0) return -1;
    one.value_end = (size_t)(s.p - line);
    if (count < cap) m[count++] = one;
    if (peek(&s) == ',') {
      comma = (size_t)(s.p - line);
      s.p++;
      continue;
    }
    return expect(&s, '}') == 0 ? count : -1;
  }
}

/* The last member named key (JSON.parse keeps the last), or -1. */
static int ts_find(const ts_member *m, int count, const char *key) {
  int found = -1;
  for (int i = 0; i < count; i++)
    if (strcmp(m[i].key, key) == 0) found = i;
  return found;
}

/* ---------------------------------------------------------------- random */

static uint64_t ts_next(uint64_t *state) { /* xorshift64* */
  uint64_t x = *state == 0 ? 0x9e3779b97f4a7c15ULL : *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545f4914f6cdd1dULL;
}

static size_t ts_below(uint64_t *state, size_t n) { return n == 0 ? 0 : (size_t)(ts_next(state) % n); }

/* ---------------------------------------------------------------- shapes made to measure */

/* `[[[…inner…]]]` (depth arrays) or `{"a":{"a":…inner…}}` (depth objects) into out; its length, 0 when it does not fit. */
static size_t ts_nest(char *out, size_t cap, int objects, size_t depth, const char *inner, size_t inner_len) {
  size_t open = objects ? 5 : 1, n = depth * (open + 1) + inner_len, pos = 0;
  if (n + 1 > cap) return 0;
  for (size_t i = 0; i < depth; i++) {
    memcpy(out + pos, objects ? "{\"a\":" : "[", open);
    pos += open;
  }
  memcpy(out + pos, inner, inner_len);
  pos += inner_len;
  for (size_t i = 0; i < depth; i++) out[pos++] = objects ? '}' : ']';
  out[pos] = '\0';
  return pos;
}

/* A shape chosen by number: the list's, then made ones (deep nesting, long strings and numbers,
 * the old value wrapped or padded with white space). old is the field's value now ("1" if none). */
static size_t ts_shape(size_t which, const char *old, size_t old_len, char *out, size_t cap) {
  static const size_t depths[] = {2, 33, 100, 1000, 2000};
  if (which < TS_SHAPE_COUNT) {
    size_t n = strlen(ts_shapes[which]);
    if (n + 1 > cap) return 0;
    memcpy(out, ts_shapes[which], n + 1);
    return n;
  }
  which -= TS_SHAPE_COUNT;
  if (which < 5) return ts_nest(out, cap, 0, depths[which], old, old_len);
  if (which < 10) return ts_nest(out, cap, 1, depths[which - 5] / 2, old, old_len);
  if (which == 10 || which == 11) { /* 300 characters of text, or 400 digits */
    size_t n = which == 10 ? 302 : 400;
    if (n + 1 > cap) return 0;
    memset(out, which == 10 ? 'x' : '7', n);
    if (which == 10) out[0] = out[n - 1] = '"';
    out[n] = '\0';
    return n;
  }
  if (which == 12) { /* white space JSON allows, around the old value */
    if (old_len + 9 > cap) return 0;
    memcpy(out, " \t\r ", 4);
    memcpy(out + 4, old, old_len);
    memcpy(out + 4 + old_len, " \r\t ", 5);
    return old_len + 8;
  }
  if (which == 13) { /* the old value in an object */
    if (old_len + 8 > cap) return 0;
    memcpy(out, "{\"x\":", 5);
    memcpy(out + 5, old, old_len);
    memcpy(out + 5 + old_len, "}", 2);
    return old_len + 6;
  }
  /* twice in an array */
  if (2 * old_len + 4 > cap) return 0;
  out[0] = '[';
  memcpy(out + 1, old, old_len);
  out[1 + old_len] = ',';
  memcpy(out + 2 + old_len, old, old_len);
  memcpy(out + 2 + 2 * old_len, "]", 2);
  return 2 * old_len + 3;
}
#define TS_MADE_SHAPES 15
#define TS_ALL_SHAPES (TS_SHAPE_COUNT + TS_MADE_SHAPES)

/* ---------------------------------------------------------------- edits of line 1 */

/* Sets key's value to shape `which` (the last one when repeated; added first when missing). */
static int ts_set(char *line, size_t *len, size_t cap, const char *key, size_t which) {
  static char value[TS_LINE_CAP + 1];
  ts_member m[64];
  int count = ts_members(line, *len, m, 64), i;
  size_t n;
  if (count < 0) return -1;
  i = ts_find(m, count, key);
  n = i < 0 ? ts_shape(which, "1", 1, value, sizeof value)
            : ts_shape(which, line + m[i].value_at, m[i].value_end - m[i].value_at, value, sizeof value);
  if (n == 0) return -1;
  if (i >= 0) return ts_splice(line, len, cap, m[i].value_at, m[i].value_end - m[i].value_at, value, n);
  {
    static char member[TS_LINE_CAP + 32];
    size_t k = strlen(key), at = (size_t)((const char *)memchr(line, '{', *len) - line) + 1;
    if (k + n + 5 > sizeof member) return -1;
    member[0] = '"';
    memcpy(member + 1, key, k);
    memcpy(member + 1 + k, "\":", 2);
    memcpy(member + 3 + k, value, n);
    member[3 + k + n] = ',';
    return ts_splice(line, len, cap, at, 0, member, k + n + (count > 0 ? 4 : 3));
  }
}

/* Removes every member named key. */
static int ts_remove(char *line, size_t *len, const char *key) {
  ts_member m[64];
  for (int round = 0; round < 64; round++) {
    int count = ts_members(line, *len, m, 64), i;
    size_t from, to;
    if (count < 0) return -1;
    if ((i = ts_find(m, count, key)) < 0) return 0;
    /* The first member goes with the comma after it; any other with the comma before it. */
    from = i == 0 ? m[i].key_at : m[i].comma_before;
    to = i == 0 && count > 1 ? m[1].comma_before + 1 : m[i].value_end;
    if (ts_splice(line, len, *len, from, to - from, "", 0) != 0) return -1;
  }
  return 0;
}

/* Adds `,"key":shape` at the end: a repeated key (JSON.parse keeps the last). */
static int ts_repeat(char *line, size_t *len, size_t cap, const char *key, size_t which) {
  static char member[TS_LINE_CAP + 32];
  char value[2200 * 6];
  size_t k = strlen(key), n = ts_shape(which, "1", 1, value, sizeof value), end = *len;
  if (n == 0 || k + n + 5 > sizeof member) return -1;
  while (end > 0 && line[end - 1] != '}') end--;
  if (end == 0) return -1;
  member[0] = ',';
  member[1] = '"';
  memcpy(member + 2, key, k);
  memcpy(member + 2 + k, "\":", 2);
  memcpy(member + 4 + k, value, n);
  return ts_splice(line, len, cap, end - 1, 0, member, k + n + 4);
}

/* Writes key's name with \u escapes, the same text to a JSON reader. */
static int ts_escape_key(char *line, size_t *len, size_t cap, const char *key) {
  ts_member m[64];
  char escaped[16 * 6 + 3];
  int count = ts_members(line, *len, m, 64), i;
  size_t pos = 0, k = strlen(key), old;
  if (count < 0 || (i = ts_find(m, count, key)) < 0) return -1;
  escaped[pos++] = '"';
  for (size_t j = 0; j < k; j++) {
    static const char hex[] = "0123456789abcdef";
    memcpy(escaped + pos, "\\u00", 4);
    escaped[pos + 4] = hex[(unsigned char)key[j] >> 4];
    escaped[pos + 5] = hex[(unsigned char)key[j] & 15];
    pos += 6;
  }
  escaped[pos++] = '"';
  old = m[i].value_at;
  while (old > m[i].key_at && line[old - 1] != ':') old--;
  return ts_splice(line, len, cap, m[i].key_at, old - 1 - m[i].key_at, escaped, pos);
}

/* Byte-level edits where libFuzzer's own are not at hand: flip, insert or delete a byte. */
static size_t ts_bytes(char *line, size_t len, size_t cap, uint64_t *rng) {
  static const char interesting[] = "{}[],:\"\\-.0123456789eEtfn \t\r\x80\xc3\xff";
  size_t at = ts_below(rng, len + 1);
  switch (ts_below(rng, 3)) {
    case 0:
      if (len > 0) line[at < len ? at : len - 1] = interesting[ts_below(rng, sizeof interesting - 1)];
      return len;
    case 1:
      if (len < cap) {
        memmove(line + at + 1, line + at, len - at);
        line[at] = interesting[ts_below(rng, sizeof interesting - 1)];
        return len + 1;
      }
      return len;
    default:
      if (at < len) {
        memmove(line + at, line + at + 1, len - at - 1);
        return len - 1;
      }
      return len;
  }
}

/* The byte-level mutator: libFuzzer's (LLVMFuzzerMutate) in the fuzzer, ts_bytes elsewhere. */
typedef size_t (*ts_byte_mutator)(char *line, size_t len, size_t cap, uint64_t *rng);

/* One random edit of line 1 (length *len, room cap), by the shapes; `bytes` for byte-level ones.
 * A line that is no object any more is edited byte-wise, or put back to the base ticket. */
static void ts_mutate(char *line, size_t *len, size_t cap, uint64_t *rng, ts_byte_mutator bytes) {
  const char *key = ts_keys[ts_below(rng, TS_KEY_COUNT)];
  size_t shape = ts_below(rng, TS_ALL_SHAPES), before = *len;
  int ok = 0;
  switch (ts_below(rng, 10)) {
    case 0: case 1: case 2: case 3: ok = ts_set(line, len, cap, key, shape) == 0; break;
    case 4: ok = ts_remove(line, len, key) == 0; break;
    case 5: ok = ts_repeat(line, len, cap, key, shape) == 0; break;
    case 6: ok = ts_escape_key(line, len, cap, key) == 0; break;
    case 7: *len = bytes(line, *len, cap, rng); ok = 1; break;
    case 8:
      if (ts_below(rng, 4) == 0 && *len + 3 <= cap) { /* a byte order mark first */
        ok = ts_splice(line, len, cap, 0, 0, "\xef\xbb\xbf", 3) == 0;
      } else if (ts_below(rng, 4) == 0) { /* line 1 no object at all */
        char value[64];
        size_t n = ts_shape(ts_below(rng, TS_SHAPE_COUNT), "1", 1, value, sizeof value);
        ok = n > 0 && ts_splice(line, len, cap, 0, *len, value, n) == 0;
      }
      break;
    default: break;
  }
  if (!ok && before == *len && ts_below(rng, 8) == 0) { /* stuck: start again from a valid or a revoked ticket */
    const int revoked = ts_below(rng, 3) == 0;
    *len = revoked ? sizeof ts_revoked - 1 : sizeof ts_base - 1;
    memcpy(line, revoked ? ts_revoked : ts_base, *len);
  }
}

/* ---------------------------------------------------------------- line 2 */

/* line 1, a newline, its MAC by the reader's key in lowercase hex, a newline: the ticket's length,
 * 0 when it does not fit cap. */
static size_t ts_sign(const char *line, size_t n, char *out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  unsigned char key[32], tag[32];
  hmac_ctx m;
  if (n + 66 > cap) return 0;
  ticket_key(TS_RAW, TS_APP, key);
  hmac_key_start(&m);
  hmac_key_add(&m, key, sizeof key);
  hmac_begin(&m);
  sha256_update(&m.inner, line, n);
  hmac_end(&m, tag);
  memmove(out, line, n);
  out[n] = '\n';
  for (int i = 0; i < 32; i++) {
    out[n + 1 + 2 * i] = hex[tag[i] >> 4];
    out[n + 2 + 2 * i] = hex[tag[i] & 15];
  }
  out[n + 65] = '\n';
  return n + 66;
}

/* ---------------------------------------------------------------- the corpus */

/* Calls emit(name, ticket, length) for every case of the corpus: each key in each shape, missing,
 * repeated and escaped; line 1's white space, byte order mark and non-object forms. */
static inline void ts_corpus(void (*emit)(const char *name, const char *ticket, size_t len, void *ctx), void *ctx) {
  static char line[TS_LINE_CAP + 1], ticket[TS_TICKET_CAP];
  char name[64];
  size_t len, n;
#define TS_RESET() (len = sizeof ts_base - 1, memcpy(line, ts_base, len))
#define TS_EMIT(...)                                   \
  do {                                                 \
    snprintf(name, sizeof name, __VA_ARGS__);          \
    n = ts_sign(line, len, ticket, sizeof ticket);     \
    if (n > 0) emit(name, ticket, n, ctx);             \
  } while (0)
  TS_RESET();
  TS_EMIT("base");
  for (size_t k = 0; k < TS_KEY_COUNT; k++) {
    for (size_t s = 0; s < TS_ALL_SHAPES; s++) {
      TS_RESET();
      if (ts_set(line, &len, TS_LINE_CAP, ts_keys[k], s) == 0) TS_EMIT("%s.%03zu", ts_keys[k], s);
    }
    TS_RESET();
    if (ts_remove(line, &len, ts_keys[k]) == 0) TS_EMIT("%s.missing", ts_keys[k]);
    TS_RESET();
    if (ts_repeat(line, &len, TS_LINE_CAP, ts_keys[k], 2) == 0) TS_EMIT("%s.repeated", ts_keys[k]);
    TS_RESET();
    if (ts_escape_key(line, &len, TS_LINE_CAP, ts_keys[k]) == 0) TS_EMIT("%s.escaped-key", ts_keys[k]);
  }
  /* Not licensed: a revoked ticket's valid, reason and source in every shape. */
  len = sizeof ts_revoked - 1;
  memcpy(line, ts_revoked, len);
  TS_EMIT("revoked");
  for (size_t k = 3; k < 6; k++) {
    for (size_t s = 0; s < TS_SHAPE_COUNT; s++) {
      len = sizeof ts_revoked - 1;
      memcpy(line, ts_revoked, len);
      if (ts_set(line, &len, TS_LINE_CAP, ts_keys[k], s) == 0) TS_EMIT("revoked.%s.%03zu", ts_keys[k], s);
    }
  }
  TS_RESET();
  if (ts_splice(line, &len, TS_LINE_CAP, 0, 0, "\xef\xbb\xbf", 3) == 0) TS_EMIT("line.bom");
  TS_RESET();
  if (ts_splice(line, &len, TS_LINE_CAP, 0, 0, " \t\r", 3) == 0 && ts_splice(line, &len, TS_LINE_CAP, len, 0, "\r\t ", 3) == 0) TS_EMIT("line.spaces");
  for (size_t s = 0; s < TS_SHAPE_COUNT; s++) {
    len = strlen(ts_shapes[s]);
    memcpy(line, ts_shapes[s], len);
    TS_EMIT("line.%03zu", s);
  }
#undef TS_RESET
#undef TS_EMIT
}

/* ---------------------------------------------------------------- what every verdict must be */

#define TS_REQUIRE(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "ticket-shapes: %s:%d: %s does not hold\n", __FILE__, __LINE__, #cond); \
      abort();                                                                       \
    }                                                                                \
  } while (0)

/* The judge's answer is one of the contract's, whole: a verdict with its reason, a problem for a
 * tampered ticket only, the ticket's fields once it was read, every text terminated. */
static void ts_check(plc_ticket_verdict v, const plc_ticket *t) {
  TS_REQUIRE(v == t->verdict);
  TS_REQUIRE(memchr(t->problem, '\0', sizeof t->problem) != NULL);
  TS_REQUIRE(memchr(t->code_hint, '\0', sizeof t->code_hint) != NULL);
  TS_REQUIRE((v == PLC_TICKET_TAMPERED) == (t->problem[0] != '\0'));
  switch (v) {
    case PLC_TICKET_NONE: TS_REQUIRE(0); break;
    case PLC_TICKET_TAMPERED: TS_REQUIRE(t->reason == PLC_REASON_CACHE_INVALID && t->source == PLC_SOURCE_UNKNOWN); break;
    case PLC_TICKET_VALID: TS_REQUIRE(t->reason == PLC_REASON_NONE); break;
    case PLC_TICKET_NOT_LICENSED: TS_REQUIRE(t->reason > PLC_REASON_NONE && t->reason < PLC_REASON_OTHER); break;
    case PLC_TICKET_EXPIRED: TS_REQUIRE(t->reason == PLC_REASON_GRACE_EXPIRED); break;
    case PLC_TICKET_CLOCK: TS_REQUIRE(t->reason == PLC_REASON_CLOCK_TAMPERED); break;
  }
  if (v != PLC_TICKET_TAMPERED) {
    TS_REQUIRE(t->source != PLC_SOURCE_UNKNOWN);
    TS_REQUIRE(t->issued_at >= -9007199254740991LL && t->issued_at <= 9007199254740991LL);
    TS_REQUIRE(t->valid_until >= -9007199254740991LL && t->valid_until <= 9007199254740991LL);
  }
}

#endif
