/*
 * bench-check: the C client's `check` round trip, measured one request at a time.
 *
 *   bench-check SOCKET PROJECT_ID N [WARMUP]
 *
 * Connects once, runs WARMUP unmeasured checks (default 200), then N measured ones
 * (1 to 100000), and prints {"p50_us":..,"p99_us":..,"mean_us":..,"n":N} on one line.
 * Any failed check stops the run with exit status 2 and an {"error":..} line.
 */
#if !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "plc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_N 100000
#define CHECK_TIMEOUT_MS 1000 /* generous: a benchmark must not fail on one scheduler hiccup */

static double samples_us[MAX_N];

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, int n, double p) {
  int rank = (int)(p * n + 0.999999) - 1; /* nearest-rank */
  if (rank < 0) rank = 0;
  if (rank >= n) rank = n - 1;
  return sorted[rank];
}

int main(int argc, char **argv) {
  static plc_client client;
  plc_license lic;
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: %s SOCKET PROJECT_ID N [WARMUP]\n", argv[0]);
    return 64;
  }
  int n = atoi(argv[3]);
  int warmup = argc == 5 ? atoi(argv[4]) : 200;
  if (n < 1 || n > MAX_N || warmup < 0 || warmup > MAX_N) {
    fprintf(stderr, "N must be 1 to %d and WARMUP 0 to %d\n", MAX_N, MAX_N);
    return 64;
  }

  plc_init(&client, argv[1]);
  for (int i = 0; i < warmup + n; i++) {
    double start = now_us();
    plc_status st = plc_check(&client, argv[2], &lic, CHECK_TIMEOUT_MS);
    double took = now_us() - start;
    if (st != PLC_OK) {
      printf("{\"error\":\"%s\",\"at\":%d}\n", plc_strerror(st), i);
      plc_close(&client);
      return 2;
    }
    if (i >= warmup) samples_us[i - warmup] = took;
  }
  plc_close(&client);

  double sum = 0;
  for (int i = 0; i < n; i++) sum += samples_us[i];
  qsort(samples_us, (size_t)n, sizeof samples_us[0], by_value);
  printf("{\"p50_us\":%.2f,\"p99_us\":%.2f,\"mean_us\":%.2f,\"n\":%d,\"valid\":%s}\n", percentile(samples_us, n, 0.50),
         percentile(samples_us, n, 0.99), sum / n, n, lic.valid ? "true" : "false");
  return 0;
}
