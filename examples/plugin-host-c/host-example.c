/*
 * host-example: how a plugin host uses plc.
 *
 *   host-example SOCKET|- PROJECT_ID DURATION_MS [INTERVAL_MS] [TIMEOUT_MS]
 *
 * A background "license thread" checks every INTERVAL_MS (default 1000), each check bounded by
 * TIMEOUT_MS (default 200), and publishes the answer as one atomic word. A simulated "audio
 * thread" reads that word once per block without locks, system calls or allocation, and counts
 * how many blocks it rendered licensed. The
 * license thread prints one line per state change ("state ..."), and one more ("audio thread
 * plays ...") once the audio thread has acted on it; the agent being down is "unknown" and is
 * retried at the next tick. The program stops after DURATION_MS, or on SIGINT / SIGTERM, and
 * prints a summary line.
 */
#if !defined(_WIN32) && !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "plc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
#else
#include <pthread.h>
#include <signal.h>
#include <time.h>
#endif

enum { STATE_UNKNOWN = 0, STATE_VALID = 1, STATE_INVALID = 2 };

/* state in bits 0-7, plc_reason in 8-15, plc_status in 16-23: one word, so one atomic load
 * gives the audio thread a consistent picture. */
static _Atomic uint32_t license_word = STATE_UNKNOWN;
/* The last word the audio thread acted on, stored back (an atomic store is real-time safe) so
 * the license thread can report when the audio side has caught up with a change. */
static _Atomic uint32_t audio_seen_word = UINT32_MAX;
static atomic_int stop_requested = 0;

static const char *socket_arg;
static const char *project_id;
static int interval_ms = 1000;
static int timeout_ms = PLC_DEFAULT_TIMEOUT_MS;
static unsigned long checks_done; /* written by the license thread, read after it is joined */
static unsigned long blocks_total, blocks_licensed, blocks_unknown; /* likewise, audio thread */

static uint32_t make_word(int state, plc_reason reason, plc_status status) {
  return (uint32_t)state | ((uint32_t)reason << 8) | ((uint32_t)status << 16);
}

static void sleep_ms(int ms) {
#ifdef _WIN32
  Sleep((DWORD)ms);
#else
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
#endif
}

/* Sleeps up to ms in short slices, so a stop request is noticed quickly. */
static void sleep_unless_stopped(int ms) {
  while (ms > 0 && !atomic_load(&stop_requested)) {
    int slice = ms < 10 ? ms : 10;
    sleep_ms(slice);
    ms -= slice;
  }
}

static const char *state_name(uint32_t word) {
  int state = (int)(word & 0xFF);
  return state == STATE_VALID ? "valid" : state == STATE_INVALID ? "invalid" : "unknown";
}

static void report(uint32_t word, const plc_license *lic, plc_status st) {
  int state = (int)(word & 0xFF);
  if (state == STATE_VALID) {
    printf("state valid code_hint=%s source=%s grace_until=%s\n", lic->code_hint[0] ? lic->code_hint : "-",
           lic->source == PLC_SOURCE_ONLINE    ? "online"
           : lic->source == PLC_SOURCE_CACHE   ? "cache"
           : lic->source == PLC_SOURCE_OFFLINE ? "offline"
                                               : "unknown",
           lic->grace_until[0] ? lic->grace_until : "-");
  } else if (state == STATE_INVALID) {
    printf("state invalid reason=%s\n", lic->reason_text[0] ? lic->reason_text : "-");
  } else {
    printf("state unknown status=%d (%s); retrying in %d ms\n", (int)st, plc_strerror(st), interval_ms);
  }
  fflush(stdout);
}

static void license_loop(void) {
  static plc_client client; /* keeps its connection between checks */
  plc_license lic;
  uint32_t last = UINT32_MAX, audio_reported = UINT32_MAX;
  plc_init(&client, strcmp(socket_arg, "-") == 0 ? NULL : socket_arg);
  while (!atomic_load(&stop_requested)) {
    plc_status st = plc_check(&client, project_id, &lic, timeout_ms);
    uint32_t word;
    checks_done++;
    if (st == PLC_OK) word = make_word(lic.valid ? STATE_VALID : STATE_INVALID, lic.reason, PLC_OK);
    else word = make_word(STATE_UNKNOWN, PLC_REASON_NONE, st);
    atomic_store_explicit(&license_word, word, memory_order_release);
    if (word != last) report(word, &lic, st);
    last = word;
    sleep_unless_stopped(interval_ms);
    uint32_t seen = atomic_load_explicit(&audio_seen_word, memory_order_acquire);
    if (seen != UINT32_MAX && (seen & 0xFF) != (audio_reported & 0xFF)) {
      printf("audio thread plays state=%s\n", state_name(seen));
      fflush(stdout);
      audio_reported = seen;
    }
  }
  plc_close(&client);
}

/* The real-time side: one relaxed-cost atomic load per block, nothing that can block. */
static void audio_loop(void) {
  while (!atomic_load_explicit(&stop_requested, memory_order_relaxed)) {
    uint32_t word = atomic_load_explicit(&license_word, memory_order_acquire);
    int state = (int)(word & 0xFF);
    if (word != atomic_load_explicit(&audio_seen_word, memory_order_relaxed))
      atomic_store_explicit(&audio_seen_word, word, memory_order_release);
    blocks_total++;
    if (state == STATE_VALID) blocks_licensed++;
    else if (state == STATE_UNKNOWN) blocks_unknown++;
    /* A real plugin renders here (or outputs silence when unlicensed); ~64 samples at 44.1 kHz. */
    sleep_ms(1);
  }
}

#ifdef _WIN32
static DWORD WINAPI license_thread(LPVOID arg) {
  (void)arg;
  license_loop();
  return 0;
}
static DWORD WINAPI audio_thread(LPVOID arg) {
  (void)arg;
  audio_loop();
  return 0;
}
#else
static void *license_thread(void *arg) {
  (void)arg;
#if defined(__linux__)
  pthread_setname_np(pthread_self(), "plc-poll"); /* visible in top -H, gdb, /proc */
#endif
  license_loop();
  return NULL;
}
static void *audio_thread(void *arg) {
  (void)arg;
  audio_loop();
  return NULL;
}
static void on_signal(int sig) {
  (void)sig;
  atomic_store(&stop_requested, 1);
}
#endif

int main(int argc, char **argv) {
  if (argc < 4 || argc > 6) {
    fprintf(stderr, "usage: %s SOCKET|- PROJECT_ID DURATION_MS [INTERVAL_MS] [TIMEOUT_MS]\n", argv[0]);
    return 64;
  }
  socket_arg = argv[1];
  project_id = argv[2];
  long duration_ms = atol(argv[3]);
  if (argc >= 5) interval_ms = atoi(argv[4]);
  if (argc >= 6) timeout_ms = atoi(argv[5]);
  if (duration_ms < 1 || duration_ms > 3600000L || interval_ms < 1 || interval_ms > 3600000 || timeout_ms < 1 ||
      timeout_ms > 60000) {
    fprintf(stderr, "DURATION_MS and INTERVAL_MS must be 1 to 3600000, TIMEOUT_MS 1 to 60000\n");
    return 64;
  }

#ifdef _WIN32
  HANDLE threads[2];
  threads[0] = CreateThread(NULL, 0, license_thread, NULL, 0, NULL);
  threads[1] = CreateThread(NULL, 0, audio_thread, NULL, 0, NULL);
  if (threads[0] == NULL || threads[1] == NULL) {
    fprintf(stderr, "could not start threads\n");
    return 1;
  }
#else
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  pthread_t threads[2];
  if (pthread_create(&threads[0], NULL, license_thread, NULL) != 0 ||
      pthread_create(&threads[1], NULL, audio_thread, NULL) != 0) {
    fprintf(stderr, "could not start threads\n");
    return 1;
  }
#endif

  sleep_unless_stopped((int)duration_ms);
  atomic_store(&stop_requested, 1);

#ifdef _WIN32
  WaitForMultipleObjects(2, threads, TRUE, INFINITE);
  CloseHandle(threads[0]);
  CloseHandle(threads[1]);
#else
  pthread_join(threads[0], NULL);
  pthread_join(threads[1], NULL);
#endif

  printf("done checks=%lu blocks=%lu licensed_blocks=%lu unknown_blocks=%lu\n", checks_done, blocks_total,
         blocks_licensed, blocks_unknown);
  return 0;
}
