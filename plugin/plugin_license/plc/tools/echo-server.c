/*
 * echo-server: the floor of a socket round trip, for the benchmark.
 *
 *   echo-server SOCKET
 *
 * Listens on a Unix socket; for every line received it writes back one fixed LicenseState
 * answer carrying the request's id (so plc_check accepts it). Prints {"ready":true,"socket":..}
 * once listening; SIGINT or SIGTERM removes the socket and exits 0. Up to 64 clients.
 */
#if !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "send-all.h"

#define MAX_CLIENTS 64
#define LINE_CAP 4096

static const char answer_head[] = "{\"jsonrpc\":\"2.0\",\"id\":";
static const char answer_tail[] =
    ",\"result\":{\"project_id\":\"bench\",\"valid\":true,\"reason\":null,\"source\":\"online\","
    "\"code_hint\":\"a1b2\\u20267890\",\"activations\":1,\"max_activations\":2,"
    "\"validated_at\":\"2026-11-22T10:00:00Z\",\"grace_until\":\"2026-12-22T10:00:00Z\","
    "\"next_check_at\":\"2026-11-23T09:41:07Z\"}}\n";

static volatile sig_atomic_t stopping = 0;
static void on_signal(int sig) {
  (void)sig;
  stopping = 1;
}

struct conn {
  int fd;
  size_t len;
  char buf[LINE_CAP];
};
static struct conn conns[MAX_CLIENTS];

/* Answers every complete line held for c; -1 when the client must go. */
static int answer_lines(struct conn *c) {
  char out[sizeof answer_head + 32 + sizeof answer_tail];
  char *nl;
  while ((nl = memchr(c->buf, '\n', c->len)) != NULL) {
    size_t line = (size_t)(nl - c->buf);
    const char *id = NULL;
    size_t id_len = 0;
    for (size_t i = 0; i + 5 <= line; i++) {
      if (memcmp(c->buf + i, "\"id\":", 5) == 0) {
        id = c->buf + i + 5;
        while (id + id_len < nl && id_len < 20 && (id[id_len] == '-' || (id[id_len] >= '0' && id[id_len] <= '9'))) id_len++;
        break;
      }
    }
    if (id_len == 0) {
      id = "null";
      id_len = 4;
    }
    size_t pos = 0;
    memcpy(out, answer_head, sizeof answer_head - 1);
    pos += sizeof answer_head - 1;
    memcpy(out + pos, id, id_len);
    pos += id_len;
    memcpy(out + pos, answer_tail, sizeof answer_tail - 1);
    pos += sizeof answer_tail - 1;
    if (send_all(c->fd, out, pos) != 0) return -1;
    memmove(c->buf, nl + 1, c->len - line - 1);
    c->len -= line + 1;
  }
  return c->len == sizeof c->buf ? -1 : 0;
}

int main(int argc, char **argv) {
  struct sockaddr_un addr;
  struct sigaction sa;
  if (argc != 2) {
    fprintf(stderr, "usage: %s SOCKET\n", argv[0]);
    return 64;
  }
  if (strlen(argv[1]) >= sizeof addr.sun_path) {
    fprintf(stderr, "socket path too long (max %zu bytes)\n", sizeof addr.sun_path - 1);
    return 64;
  }
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, argv[1]);
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  unlink(argv[1]);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 128) != 0) {
    perror("echo-server: listen");
    return 1;
  }
  printf("{\"ready\":true,\"socket\":\"%s\"}\n", argv[1]);
  fflush(stdout);

  for (int i = 0; i < MAX_CLIENTS; i++) conns[i].fd = -1;
  while (!stopping) {
    struct pollfd pfds[MAX_CLIENTS + 1];
    int map[MAX_CLIENTS + 1], n = 0;
    pfds[n].fd = lfd;
    pfds[n].events = POLLIN;
    map[n++] = -1;
    for (int i = 0; i < MAX_CLIENTS; i++) {
      if (conns[i].fd < 0) continue;
      pfds[n].fd = conns[i].fd;
      pfds[n].events = POLLIN;
      map[n++] = i;
    }
    int r = poll(pfds, (nfds_t)n, 1000);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) break;
    for (int k = 0; k < n; k++) {
      if (pfds[k].revents == 0) continue;
      if (map[k] < 0) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) continue;
        int slot = -1;
        for (int i = 0; i < MAX_CLIENTS && slot < 0; i++)
          if (conns[i].fd < 0) slot = i;
        if (slot < 0) {
          close(fd);
          continue;
        }
        conns[slot].fd = fd;
        conns[slot].len = 0;
        continue;
      }
      struct conn *c = &conns[map[k]];
      ssize_t got = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0 || (c->len += (size_t)got, answer_lines(c) != 0)) {
        close(c->fd);
        c->fd = -1;
      }
    }
  }
  for (int i = 0; i < MAX_CLIENTS; i++)
    if (conns[i].fd >= 0) close(conns[i].fd);
  close(lfd);
  unlink(argv[1]);
  return 0;
}
