/*
 * Part of plc.c (compiled through it, never alone): the POSIX waker, a non-blocking, close-on-exec
 * pipe: its read end is the handle plc_set_interrupt takes.
 */

static int set_flags(int fd) {
  return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0 ? 0 : -1;
}

plc_status plc_waker_open(plc_waker *waker) {
  int fds[2];
  if (waker == NULL) return PLC_ERR_INVALID_ARGUMENT;
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
  if (pipe(fds) != 0) return PLC_ERR_IO;
  if (set_flags(fds[0]) != 0 || set_flags(fds[1]) != 0) {
    close(fds[0]);
    close(fds[1]);
    return PLC_ERR_IO;
  }
  waker->wait_handle = fds[0];
  waker->signal_handle = fds[1];
  return PLC_OK;
}

void plc_waker_signal(plc_waker *waker) {
  /* A full pipe is signalled already; nothing else can fail that matters here. */
  if (waker != NULL && waker->signal_handle != PLC_NO_INTERRUPT && write((int)waker->signal_handle, "", 1) < 0) return;
}

int plc_waker_wait(plc_waker *waker, int timeout_ms) {
  struct pollfd pfd;
  int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
  if (waker == NULL || waker->wait_handle == PLC_NO_INTERRUPT) return 0;
  pfd.fd = (int)waker->wait_handle;
  pfd.events = POLLIN;
  for (;;) {
    pfd.revents = 0;
    int r = poll(&pfd, 1, remaining_ms(deadline));
    if (r > 0) return 1;
    if (r == 0 || errno != EINTR) return 0;
  }
}

void plc_waker_clear(plc_waker *waker) {
  char drain[64];
  if (waker == NULL || waker->wait_handle == PLC_NO_INTERRUPT) return;
  while (read((int)waker->wait_handle, drain, sizeof drain) > 0) {
  }
}

void plc_waker_close(plc_waker *waker) {
  if (waker == NULL) return;
  if (waker->wait_handle != PLC_NO_INTERRUPT) close((int)waker->wait_handle);
  if (waker->signal_handle != PLC_NO_INTERRUPT) close((int)waker->signal_handle);
  waker->wait_handle = waker->signal_handle = PLC_NO_INTERRUPT;
}
