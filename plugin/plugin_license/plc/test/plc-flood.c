/*
 * plc-flood: hostile peers for the C client's waits and its check of who holds the path, and a
 * client that drives one plc call against them (the tests run both as real processes).
 *
 *   plc-flood serve SOCKET MODE     listens on SOCKET; prints {"event":"ready"} once listening, then per
 *                                   connection one line of what happened. MODE:
 *     flood       reads a request, never answers it, and streams unrelated lines non-stop (a notification
 *                 that is not `changed`, an answer to another id, an answer whose id is 1.0); prints
 *                 {"event":"flooding"} once 1 MiB went out on a connection
 *     subscribed  the same, after answering the first request (a subscribe) with its id
 *     stalled     never accepts (a backlog of one): connections queue, then connecting fails with EAGAIN
 *     record      reads what a client sends until it closes; prints {"event":"received","bytes":N}
 *   plc-flood call VERB SOCKET TIMEOUT_MS
 *                                   makes one plc call (check, activate, refresh, subscribe, wait-change:
 *                                   subscribe then wait; connect: after filling a stalled listener's
 *                                   backlog) with a waker set; a line "interrupt" on standard input signals
 *                                   it. Prints {"status":"…","elapsed_ms":N,"after_interrupt_ms":N|null}.
 *                                   wait-change prints {"event":"subscribed"}, then waits for a line "go".
 *
 * Exit status: 0 printed, 64 usage, 1 a system call failed.
 */
#if !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
#include "plc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tools/send-all.h"

static long long monotonic_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int usage(void) {
  fprintf(stderr, "usage: plc-flood serve SOCKET flood|subscribed|stalled|record\n"
                  "       plc-flood call check|activate|refresh|subscribe|wait-change|connect SOCKET TIMEOUT_MS\n");
  return 64;
}

static void say(const char *line) {
  /* One write per line: children of the server share standard output. */
  if (write(1, line, strlen(line)) < 0) _exit(1);
}

/* ---------------------------------------------------------------- the server */

/* The first request line's id token, copied (digits only); "" when none. */
static void first_id(const char *line, size_t n, char *id, size_t cap) {
  const char *p = memmem(line, n, "\"id\":", 5);
  size_t k = 0;
  id[0] = '\0';
  if (p == NULL) return;
  p += 5;
  while (p < line + n && k + 1 < cap && *p >= '0' && *p <= '9') id[k++] = *p++;
  id[k] = '\0';
}

static void serve_connection(int fd, const char *mode) {
  char buf[65536];
  size_t len = 0;
  long long total = 0;
  if (strcmp(mode, "record") == 0) {
    for (;;) {
      ssize_t r = recv(fd, buf, sizeof buf, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      total += r;
    }
    char line[80];
    snprintf(line, sizeof line, "{\"event\":\"received\",\"bytes\":%lld}\n", total);
    say(line);
    return;
  }
  /* flood, subscribed: wait for the request line first. */
  for (;;) {
    ssize_t r = recv(fd, buf + len, sizeof buf - 1 - len, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
    len += (size_t)r;
    if (memchr(buf, '\n', len) != NULL || len == sizeof buf - 1) break;
  }
  if (strcmp(mode, "subscribed") == 0) {
    char id[24], answer[96];
    first_id(buf, len, id, sizeof id);
    snprintf(answer, sizeof answer, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", id[0] ? id : "null");
    if (send_all(fd, answer, strlen(answer)) != 0) return;
  }
  {
    /* Unrelated lines that cost the client more to read than the flood costs to write (nested
     * values it must skip), so bytes are always waiting: no read ever has to wait on the socket. */
    static const char lines[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"progress\",\"params\":{\"step\":1}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{\"valid\":true}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{\"valid\":true}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2.0,\"result\":{\"valid\":true}}\n";
    static const char heavy_head[] = "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":[";
    static const char heavy_item[] = "[[[[[[[[[[[[[[[[-1.5e-3,\"\\u00e9\\n\"]]]]]]]]]]]]]]]],";
    static const char heavy_tail[] = "0]}\n";
    char block[16384];
    size_t used = 0;
    int told = 0;
    memcpy(block, lines, sizeof lines - 1);
    used = sizeof lines - 1;
    while (used + sizeof heavy_head + sizeof heavy_tail + 40 * sizeof heavy_item <= sizeof block) {
      memcpy(block + used, heavy_head, sizeof heavy_head - 1);
      used += sizeof heavy_head - 1;
      for (int i = 0; i < 40; i++) {
        memcpy(block + used, heavy_item, sizeof heavy_item - 1);
        used += sizeof heavy_item - 1;
      }
      memcpy(block + used, heavy_tail, sizeof heavy_tail - 1);
      used += sizeof heavy_tail - 1;
    }
    {
      /* As much as the system lets one socket hold (root may force more). */
      int size = 8 * 1024 * 1024;
      if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    for (;;) {
      if (send_all(fd, block, used) != 0) return; /* the client went away */
      total += (long long)used;
      if (!told && total >= 1024 * 1024) {
        say("{\"event\":\"flooding\"}\n");
        told = 1;
      }
    }
  }
}

static int serve(const char *path, const char *mode) {
  struct sockaddr_un addr;
  int lfd;
  int stalled = strcmp(mode, "stalled") == 0;
  if (!stalled && strcmp(mode, "flood") != 0 && strcmp(mode, "subscribed") != 0 && strcmp(mode, "record") != 0) return usage();
  if (strlen(path) >= sizeof addr.sun_path) return usage();
  signal(SIGPIPE, SIG_IGN);
  signal(SIGCHLD, SIG_IGN); /* children reaped by the system */
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path, strlen(path));
  unlink(path);
  lfd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, stalled ? 1 : 16) != 0) {
    perror("plc-flood: listen");
    return 1;
  }
  say("{\"event\":\"ready\"}\n");
  if (stalled) {
    for (;;) pause();
  }
  for (;;) {
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    pid_t child = fork();
    if (child == 0) {
      close(lfd);
      serve_connection(fd, mode);
      _exit(0);
    }
    close(fd);
  }
}

/* ---------------------------------------------------------------- the client */

static plc_client client;
static plc_waker waker;
static volatile long long interrupted_at = -1;

static void *read_control(void *unused) {
  char line[64];
  (void)unused;
  while (fgets(line, sizeof line, stdin) != NULL) {
    if (strncmp(line, "interrupt", 9) == 0) {
      interrupted_at = monotonic_ms();
      plc_waker_signal(&waker);
    }
  }
  return NULL;
}

static const char *name(plc_status st) {
  switch (st) {
    case PLC_OK: return "ok";
    case PLC_ERR_TIMEOUT: return "timeout";
    case PLC_ERR_INTERRUPTED: return "interrupted";
    case PLC_ERR_PROTOCOL: return "protocol";
    case PLC_ERR_CLOSED: return "closed";
    case PLC_ERR_NOT_RUNNING: return "not_running";
    case PLC_ERR_CONNECT: return "connect";
    case PLC_ERR_TOO_LARGE: return "too_large";
    default: return "other";
  }
}

/* Queues connections on a stalled listener until one would wait (EAGAIN): the backlog is full. */
static int fill_backlog(const char *path) {
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path, strlen(path));
  for (int i = 0; i < 64; i++) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
      int e = errno;
      close(fd);
      return e == EAGAIN ? 0 : -1;
    }
    /* kept open: it holds its place in the backlog */
  }
  return -1;
}

static int call(const char *verb, const char *path, int timeout_ms) {
  plc_license lic;
  plc_status st;
  pthread_t control;
  long long started, ended;
  char line[160];
  plc_init(&client, path);
  if (plc_waker_open(&waker) != PLC_OK) return 1;
  if (strcmp(verb, "wait-change") == 0) {
    st = plc_subscribe(&client, "p1", &lic, 5000);
    if (st != PLC_OK) {
      snprintf(line, sizeof line, "{\"status\":\"subscribe_%s\"}\n", name(st));
      say(line);
      return 0;
    }
    /* The control: the test says "go" once the flood is queued up for this connection. */
    say("{\"event\":\"subscribed\"}\n");
    if (fgets(line, sizeof line, stdin) == NULL || strncmp(line, "go", 2) != 0) return usage();
  }
  if (strcmp(verb, "connect") == 0 && fill_backlog(path) != 0) {
    say("{\"status\":\"backlog_not_full\"}\n");
    return 1;
  }
  plc_set_interrupt(&client, plc_waker_handle(&waker));
  if (pthread_create(&control, NULL, read_control, NULL) != 0) return 1;
  say("{\"event\":\"calling\"}\n");
  started = monotonic_ms();
  if (strcmp(verb, "check") == 0) st = plc_check(&client, "p1", &lic, timeout_ms);
  else if (strcmp(verb, "activate") == 0) st = plc_activate(&client, "p1", "CODE-1234-5678", &lic, timeout_ms);
  else if (strcmp(verb, "refresh") == 0) st = plc_refresh(&client, "p1", &lic, timeout_ms);
  else if (strcmp(verb, "subscribe") == 0) st = plc_subscribe(&client, "p1", &lic, timeout_ms);
  else if (strcmp(verb, "wait-change") == 0) st = plc_wait_change(&client, &lic, timeout_ms);
  else if (strcmp(verb, "connect") == 0) st = plc_connect(&client, timeout_ms);
  else return usage();
  ended = monotonic_ms();
  if (interrupted_at >= 0) {
    snprintf(line, sizeof line, "{\"status\":\"%s\",\"elapsed_ms\":%lld,\"after_interrupt_ms\":%lld}\n", name(st), ended - started,
             ended - interrupted_at);
  } else {
    snprintf(line, sizeof line, "{\"status\":\"%s\",\"elapsed_ms\":%lld,\"after_interrupt_ms\":null}\n", name(st), ended - started);
  }
  say(line);
  plc_close(&client);
  _exit(0); /* the control thread may still sit in fgets */
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "serve") == 0) return serve(argv[2], argv[3]);
  if (argc == 5 && strcmp(argv[1], "call") == 0) return call(argv[2], argv[3], atoi(argv[4]));
  return usage();
}
