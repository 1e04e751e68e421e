/*
 * Part of plc.c (compiled through it, never alone): RFC 3339 text to Unix seconds, as the
 * protocol's times and plc_parse_time need it.
 */

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
