/*
 * signed-bench: what one signed-ticket judgement costs in C, for test/bench/signed-ticket.bench.mjs.
 * Test only. Judges the signed ticket in SIGNED_FILE as the reader of
 * packages/licensing/test/signed-ticket-vectors (acme-audio, its project, raw id and time) with
 * the vendor's KEY and no cache, so every call verifies its Ed25519 signature; and, interleaved, the
 * baseline: the HMAC ticket in TICKET_FILE judged by plc_ticket_judge for the same reader. Each
 * call timed alone in this thread's CPU time (CLOCK_THREAD_CPUTIME_ID: the work a call does, which
 * a shared machine's preemptions would otherwise swamp at the p99), ITERATIONS of each after a
 * warm-up; prints one JSON line:
 *   {"signed_p99_ms":..,"signed_median_ms":..,"ticket_p99_ms":..,"ticket_median_ms":..,"iterations":N}
 * Exit 1 when either is not judged valid (a benchmark of a refusal measures nothing).
 *
 *   signed-bench TICKET_FILE SIGNED_FILE KEY ITERATIONS
 */
#define _POSIX_C_SOURCE 200809L
#include "../plc.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SB_APP "acme-audio"
#define SB_PROJECT "123e4567-e89b-12d3-a456-426614174000"
#define SB_RAW "0123456789abcdef0123456789abcdef"
#define SB_NOW ((int64_t)1768478460)

static size_t read_all(const char *path, char *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  size_t n;
  if (f == NULL) return 0;
  n = fread(buf, 1, cap, f);
  fclose(f);
  return n;
}

static double bench_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double pick(double *xs, size_t n, double q) {
  size_t at;
  qsort(xs, n, sizeof *xs, by_value);
  at = (size_t)(q * (double)n + 0.999999);
  return xs[(at == 0 ? 1 : at > n ? n : at) - 1];
}

int main(int argc, char **argv) {
  static char signed_text[PLC_TICKET_MAX_BYTES + 1], ticket[PLC_TICKET_MAX_BYTES + 1];
  plc_ticket_key key;
  plc_trust trust = {&key, 1, NULL};
  plc_ticket t;
  size_t signed_len, ticket_len, n;
  double *signed_ms, *ticket_ms;
  long iterations;
  if (argc != 5 || (iterations = atol(argv[4])) <= 0) {
    fprintf(stderr, "usage: signed-bench TICKET_FILE SIGNED_FILE KEY ITERATIONS\n");
    return 2;
  }
  ticket_len = read_all(argv[1], ticket, sizeof ticket);
  signed_len = read_all(argv[2], signed_text, sizeof signed_text);
  if (plc_ticket_key_parse(argv[3], &key) != PLC_OK) return 2;
  n = (size_t)iterations;
  signed_ms = calloc(n, sizeof *signed_ms);
  ticket_ms = calloc(n, sizeof *ticket_ms);
  if (signed_ms == NULL || ticket_ms == NULL) return 2;
  for (long i = -50; i < iterations; i++) { /* 50 rounds of warm-up, not counted */
    double t0 = bench_ms();
    const plc_ticket_verdict sv = plc_signed_ticket_judge(signed_text, signed_len, &trust, SB_APP, SB_PROJECT, SB_NOW, SB_RAW, &t);
    double t1 = bench_ms();
    const plc_ticket_verdict tv = plc_ticket_judge(ticket, ticket_len, SB_APP, SB_PROJECT, SB_NOW, SB_RAW, &t);
    double t2 = bench_ms();
    if (sv != PLC_TICKET_VALID || tv != PLC_TICKET_VALID) {
      fprintf(stderr, "signed-bench: not valid (signed %s, ticket %s)\n", plc_ticket_verdict_name(sv), plc_ticket_verdict_name(tv));
      return 1;
    }
    if (i >= 0) {
      signed_ms[i] = t1 - t0;
      ticket_ms[i] = t2 - t1;
    }
  }
  printf("{\"signed_p99_ms\":%.6f,\"signed_median_ms\":%.6f,", pick(signed_ms, n, 0.99), pick(signed_ms, n, 0.5));
  printf("\"ticket_p99_ms\":%.6f,\"ticket_median_ms\":%.6f,\"iterations\":%ld}\n", pick(ticket_ms, n, 0.99), pick(ticket_ms, n, 0.5), iterations);
  free(signed_ms);
  free(ticket_ms);
  return 0;
}
