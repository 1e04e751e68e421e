/*
 * Part of plc.c (compiled through it, never alone): the one JSON reader, for the agent's answers
 * (protocol.c) and the ticket's line 1 (ticket.c). Bounded by the text it is given, no allocation,
 * no recursion: a value of any depth is walked with one bit a level (a ticket's 4 KB can nest 4,000
 * deep); the protocol sets its own depth limit. Strict as JSON.parse: no leading zeros, no control
 * characters in strings, no escape JSON lacks, nothing after the value but white space (the
 * caller checks that). What a caller keeps of a value is its text, its kind, and for a number its
 * integer part; strings are decoded into the caller's buffer, cut to fit on a UTF-8 boundary.
 */

typedef struct json_scan {
  const char *p;
  const char *end;
} json_scan;

typedef enum json_type { JSON_MISSING = 0, JSON_STRING, JSON_NUMBER, JSON_TRUE, JSON_FALSE, JSON_NULL, JSON_OTHER } json_type;

/* What one value is: its kind (JSON_OTHER for an array or an object), its text [at, end), and for a
 * number its integer part (clamped) and whether it is written as digits only. */
typedef struct json_value {
  json_type type;
  const char *at, *end;
  long long number;
  int integral;
} json_value;

static void json_skip_ws(json_scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

/* The next byte after white space, -1 at the end. */
static int json_peek(json_scan *s) {
  json_skip_ws(s);
  return s->p < s->end ? (unsigned char)*s->p : -1;
}

static int json_expect(json_scan *s, char ch) {
  if (json_peek(s) != (unsigned char)ch) return -1;
  s->p++;
  return 0;
}

static int json_literal(json_scan *s, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0) return -1;
  s->p += n;
  return 0;
}

static int json_hex4(const char *p, unsigned *v) {
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
static void json_put(char *out, size_t cap, size_t *pos, int *cut, unsigned char byte) {
  if (out == NULL) return;
  if (*pos + 1 < cap) out[(*pos)++] = (char)byte;
  else *cut = 1;
}

static void json_put_utf8(char *out, size_t cap, size_t *pos, int *cut, unsigned cp) {
  if (cp < 0x80) {
    json_put(out, cap, pos, cut, (unsigned char)cp);
  } else if (cp < 0x800) {
    json_put(out, cap, pos, cut, (unsigned char)(0xC0 | (cp >> 6)));
    json_put(out, cap, pos, cut, (unsigned char)(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    json_put(out, cap, pos, cut, (unsigned char)(0xE0 | (cp >> 12)));
    json_put(out, cap, pos, cut, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
    json_put(out, cap, pos, cut, (unsigned char)(0x80 | (cp & 0x3F)));
  } else {
    json_put(out, cap, pos, cut, (unsigned char)(0xF0 | (cp >> 18)));
    json_put(out, cap, pos, cut, (unsigned char)(0x80 | ((cp >> 12) & 0x3F)));
    json_put(out, cap, pos, cut, (unsigned char)(0x80 | ((cp >> 6) & 0x3F)));
    json_put(out, cap, pos, cut, (unsigned char)(0x80 | (cp & 0x3F)));
  }
}

/* Reads a JSON string, decoding it into out (cap bytes with the NUL) when out is not NULL; a lone
 * surrogate escape decodes as U+FFFD. Returns 0, 1 when the text was cut to fit, -1 when malformed. */
static int json_string(json_scan *s, char *out, size_t cap, size_t *out_len) {
  size_t pos = 0;
  int cut = 0;
  if (json_expect(s, '"') != 0) return -1;
  for (;;) {
    if (s->p >= s->end) return -1;
    unsigned char c = (unsigned char)*s->p++;
    if (c == '"') break;
    if (c < 0x20) return -1;
    if (c != '\\') {
      json_put(out, cap, &pos, &cut, c);
      continue;
    }
    if (s->p >= s->end) return -1;
    c = (unsigned char)*s->p++;
    switch (c) {
      case '"': case '\\': case '/': json_put(out, cap, &pos, &cut, c); break;
      case 'b': json_put(out, cap, &pos, &cut, '\b'); break;
      case 'f': json_put(out, cap, &pos, &cut, '\f'); break;
      case 'n': json_put(out, cap, &pos, &cut, '\n'); break;
      case 'r': json_put(out, cap, &pos, &cut, '\r'); break;
      case 't': json_put(out, cap, &pos, &cut, '\t'); break;
      case 'u': {
        unsigned cp, lo;
        if (s->end - s->p < 4 || json_hex4(s->p, &cp) != 0) return -1;
        s->p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' && json_hex4(s->p + 2, &lo) == 0 && lo >= 0xDC00 &&
              lo <= 0xDFFF) {
            s->p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        json_put_utf8(out, cap, &pos, &cut, cp);
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

/* Reads a JSON number; *value (when not NULL) gets its integer part, clamped. */
static int json_number(json_scan *s, long long *value) {
  long long v = 0;
  int neg = 0, any = 0;
  json_skip_ws(s);
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

/* Member iteration: call with *first = 1 right after '{'. Returns 1 with the key decoded into key
 * (cap bytes) and its length in *key_len, the ':' consumed; 0 at the closing '}'; -1 when
 * malformed. A key cut to fit reads as "" (length 0): no name a caller looks for. */
static int json_member(json_scan *s, int *first, char *key, size_t cap, size_t *key_len) {
  int ch = json_peek(s), r;
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
  r = json_string(s, key, cap, key_len);
  if (r < 0) return -1;
  if (r == 1) key[0] = '\0', *key_len = 0;
  return json_expect(s, ':') == 0 ? 1 : -1;
}

/* True when a member's key (json_member's, len bytes: it may hold a \u0000) is name. */
static int json_key_is(const char *key, size_t len, const char *name) { return len == strlen(name) && memcmp(key, name, len) == 0; }

/* One JSON value of any shape, read whole: the one walk of every value the readers do not decode
 * field by field. A value nested more than max_depth levels below this one (the value itself is
 * level 0) is malformed. What it is goes to *v (when not NULL) in one place, after the whole value
 * was read. *fraction (when not NULL) is set when any number in it has a fraction or an exponent. */
static int json_walk(json_scan *s, size_t max_depth, json_value *v, int *fraction) {
  unsigned char objects[PLC_JSON_DEPTH_CAP / 8 + 1]; /* a bit per open container: 1 an object */
  size_t depth = 0;
  json_value whole;
  memset(&whole, 0, sizeof whole);
  whole.type = JSON_OTHER;
  if (json_peek(s) < 0) return -1;
  whole.at = s->p;
  for (;;) {
    int ch = json_peek(s);
    const char *at = s->p;
    if (depth > max_depth) return -1;
    if (ch == '{' || ch == '[') {
      s->p++;
      if (depth >= sizeof objects * 8) return -1;
      if (ch == '{') objects[depth / 8] = (unsigned char)(objects[depth / 8] | (1u << (depth % 8)));
      else objects[depth / 8] = (unsigned char)(objects[depth / 8] & ~(1u << (depth % 8)));
      depth++;
      if (json_peek(s) == (ch == '{' ? '}' : ']')) {
        s->p++;
        depth--;
      } else {
        /* The first member's key, or the first element: read as any value, below. */
        if (ch == '{' && (json_string(s, NULL, 0, NULL) < 0 || json_expect(s, ':') != 0)) return -1;
        continue;
      }
    } else {
      json_type type;
      long long number = 0;
      int integral = 1;
      if (ch == '"') {
        if (json_string(s, NULL, 0, NULL) < 0) return -1;
        type = JSON_STRING;
      } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
        if (json_number(s, &number) != 0) return -1;
        integral = memchr(at, '.', (size_t)(s->p - at)) == NULL && memchr(at, 'e', (size_t)(s->p - at)) == NULL &&
                   memchr(at, 'E', (size_t)(s->p - at)) == NULL;
        if (!integral && fraction != NULL) *fraction = 1;
        type = JSON_NUMBER;
      } else if (ch == 't' && json_literal(s, "true") == 0) {
        type = JSON_TRUE;
      } else if (ch == 'f' && json_literal(s, "false") == 0) {
        type = JSON_FALSE;
      } else if (ch == 'n' && json_literal(s, "null") == 0) {
        type = JSON_NULL;
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
        if (v != NULL) *v = whole;
        return 0;
      }
      object = (objects[(depth - 1) / 8] >> ((depth - 1) % 8)) & 1;
      ch = json_peek(s);
      if (ch == ',') {
        s->p++;
        if (object && (json_string(s, NULL, 0, NULL) < 0 || json_expect(s, ':') != 0)) return -1;
        break;
      }
      if (ch != (object ? '}' : ']')) return -1;
      s->p++;
      depth--;
    }
  }
}
