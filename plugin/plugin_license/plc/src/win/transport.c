/*
 * Part of plc.c (compiled through it, never alone): the Windows transport, a named pipe opened
 * with FILE_FLAG_OVERLAPPED (not inheritable: the Windows form of close-on-exec), every read and
 * write overlapped and waited with the interrupt event for the time left, cancelled on time-out.
 * Who serves the pipe is checked before a byte is sent, and worded here for plc_describe.
 */

/* plc_client.path bounds a pipe name; the system takes any that fits. */
static int socket_path_fits(size_t len) {
  (void)len;
  return 1;
}

static void transport_init(plc_client *c) {
  c->pipe = INVALID_HANDLE_VALUE;
  c->event = NULL;
}

static int transport_is_open(const plc_client *c) { return c->pipe != INVALID_HANDLE_VALUE && c->pipe != NULL; }

static int interrupt_signalled(const plc_client *c) {
  return c->interrupt != PLC_NO_INTERRUPT && WaitForSingleObject((HANDLE)c->interrupt, 0) == WAIT_OBJECT_0;
}

static void transport_close(plc_client *c) {
  if (transport_is_open(c)) CloseHandle((HANDLE)c->pipe);
  if (c->event != NULL) CloseHandle((HANDLE)c->event);
  c->pipe = INVALID_HANDLE_VALUE;
  c->event = NULL;
}

/* The user SID of a process's token, copied into `out` (a TOKEN_USER buffer). */
static int token_user_of(HANDLE process, unsigned char *out, DWORD size) {
  HANDLE token = NULL;
  DWORD needed = 0;
  int ok;
  if (!OpenProcessToken(process, TOKEN_QUERY, &token)) return 0;
  ok = GetTokenInformation(token, TokenUser, out, size, &needed) != 0;
  CloseHandle(token);
  return ok;
}

/*
 * Who holds the path, checked on every connection before a single byte is sent (an activate
 * carries a code). Anyone can create a pipe of a well-known name first: the process serving the
 * pipe must run as this user, its token's user SID equal to ours. A process we may not even query
 * belongs to someone else.
 */
static plc_status check_holder(plc_client *c, HANDLE pipe) {
  ULONG server_pid = 0;
  unsigned char ours[256], theirs[256];
  HANDLE server;
  int same;
  c->holder = -1;
  if (!GetNamedPipeServerProcessId(pipe, &server_pid)) return PLC_ERR_FOREIGN_AGENT;
  c->holder = (long)server_pid;
  if (server_pid == GetCurrentProcessId()) return PLC_OK;
  if (!token_user_of(GetCurrentProcess(), ours, (DWORD)sizeof ours)) return PLC_ERR_IO;
  server = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, server_pid);
  if (server == NULL) return PLC_ERR_FOREIGN_AGENT;
  same = token_user_of(server, theirs, (DWORD)sizeof theirs) && EqualSid(((TOKEN_USER *)ours)->User.Sid, ((TOKEN_USER *)theirs)->User.Sid);
  CloseHandle(server);
  return same ? PLC_OK : PLC_ERR_FOREIGN_AGENT;
}

static plc_status transport_connect(plc_client *c, int64_t deadline) {
  HANDLE h;
  plc_status owner;
  for (;;) {
    /* Handles are not inheritable unless asked for: the Windows form of close-on-exec. */
    h = CreateFileA(c->path, GENERIC_READ | GENERIC_WRITE, 0, NULL, OPEN_EXISTING, FILE_FLAG_OVERLAPPED, NULL);
    if (h != INVALID_HANDLE_VALUE) break;
    DWORD e = GetLastError();
    if (e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND) return PLC_ERR_NOT_RUNNING;
    if (e != ERROR_PIPE_BUSY) return PLC_ERR_CONNECT;
    plc_status st = still_waiting(c, deadline, 1);
    if (st != PLC_OK) return st;
    /* WaitNamedPipe cannot be interrupted: wait in slices, each turn checking the interrupt. */
    int left = remaining_ms(deadline);
    if (left > 0) WaitNamedPipeA(c->path, (DWORD)(left < 50 ? left : 50)); /* never 0: that is the pipe's default wait */
  }
  owner = check_holder(c, h);
  if (owner != PLC_OK) {
    CloseHandle(h);
    return owner;
  }
  c->event = CreateEventA(NULL, TRUE, FALSE, NULL);
  if (c->event == NULL) {
    CloseHandle(h);
    return PLC_ERR_IO;
  }
  c->pipe = h;
  return PLC_OK;
}

static plc_status map_pipe_error(DWORD e) {
  return e == ERROR_BROKEN_PIPE || e == ERROR_NO_DATA || e == ERROR_PIPE_NOT_CONNECTED ? PLC_ERR_CLOSED : PLC_ERR_IO;
}

/* One overlapped ReadFile or WriteFile, bounded by the deadline; cancelled on time-out. */
static plc_status overlapped_io(plc_client *c, int writing, void *data, DWORD n, DWORD *done, int64_t deadline) {
  HANDLE h = (HANDLE)c->pipe;
  OVERLAPPED ov;
  BOOL ok;
  memset(&ov, 0, sizeof ov);
  ov.hEvent = (HANDLE)c->event;
  ResetEvent(ov.hEvent);
  *done = 0;
  ok = writing ? WriteFile(h, data, n, NULL, &ov) : ReadFile(h, data, n, NULL, &ov);
  if (!ok) {
    DWORD e = GetLastError();
    HANDLE events[2];
    DWORD count = 1, w;
    if (e != ERROR_IO_PENDING) return map_pipe_error(e);
    events[0] = ov.hEvent;
    if (c->interrupt != PLC_NO_INTERRUPT) events[count++] = (HANDLE)c->interrupt;
    w = WaitForMultipleObjects(count, events, FALSE, (DWORD)remaining_ms(deadline));
    if (w != WAIT_OBJECT_0) {
      CancelIoEx(h, &ov);
      /* The OVERLAPPED lives on this stack: wait for the cancel. A read that completed in the
       * meantime keeps its bytes (a waiting plc_wait_change must not lose a line). */
      if (GetOverlappedResult(h, &ov, done, TRUE) && *done > 0 && !writing) return PLC_OK;
      return w == WAIT_TIMEOUT ? PLC_ERR_TIMEOUT : w == WAIT_OBJECT_0 + 1 ? PLC_ERR_INTERRUPTED : PLC_ERR_IO;
    }
  }
  if (!GetOverlappedResult(h, &ov, done, FALSE)) return map_pipe_error(GetLastError());
  return PLC_OK;
}

static plc_status transport_send_all(plc_client *c, const char *data, size_t n, int64_t deadline) {
  while (n > 0) {
    DWORD done;
    plc_status st = still_waiting(c, deadline, 1);
    if (st == PLC_OK) st = overlapped_io(c, 1, (void *)data, (DWORD)n, &done, deadline);
    if (st != PLC_OK) return st;
    data += done;
    n -= done;
  }
  return PLC_OK;
}

static plc_status transport_recv(plc_client *c, char *dst, size_t cap, size_t *got, int64_t deadline) {
  DWORD done;
  plc_status st = overlapped_io(c, 0, dst, (DWORD)cap, &done, deadline);
  if (st != PLC_OK) return st;
  if (done == 0) return PLC_ERR_CLOSED;
  *got = done;
  return PLC_OK;
}

/* ---------------------------------------------------------------- words */

static void describe_socket_limit(char *out, size_t cap, size_t *pos) {
  add(out, cap, pos, "the agent's pipe name is longer than plc allows (PLC_PATH_CAP); set a shorter PLUGIN_LICENSE_SOCKET");
}

/* Who serves the pipe (check_holder's finding), in words. */
static void describe_holder(const plc_client *client, plc_status status, char *out, size_t cap, size_t *pos) {
  (void)status;
  add(out, cap, pos, "the agent's pipe ");
  add(out, cap, pos, client->path);
  add(out, cap, pos, " is served by process ");
  add_number(out, cap, pos, (unsigned long)client->holder);
  add(out, cap, pos, ", which runs as another user; nothing was sent to it (start your own agent, or ask your administrator)");
}
