/*
 * send_all: a whole buffer over a stream socket, never raising SIGPIPE; 0, or -1 when the peer went
 * away. For the stand-in peers (echo-server.c, test/plc-flood.c), which are not plc and link no
 * part of it. Include after <errno.h> and <sys/socket.h> (with _GNU_SOURCE: MSG_NOSIGNAL).
 */
#ifndef PLC_TOOLS_SEND_ALL_H
#define PLC_TOOLS_SEND_ALL_H

static int send_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

#endif
