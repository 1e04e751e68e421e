/*
 * Part of plc.c (compiled through it, never alone): the POSIX transport, an AF_UNIX stream socket:
 * non-blocking and close-on-exec, a connect finished with poll, poll before every read and write,
 * no SIGPIPE (MSG_NOSIGNAL, or SO_NOSIGPIPE on macOS). Who holds the path is checked before a byte
 * is sent, and worded here for plc_describe.
 */

static int socket_path_fits(size_t len) { return len <= PLC_SUN_PATH_MAX; }

/* The folder of a socket path ("." for a bare name); dir holds PLC_PATH_CAP bytes. */
static void socket_folder(const char *path, char *dir) {
  const char *slash = strrchr(path, '/');
  size_t n = slash == NULL ? 0 : slash == path ? 1 : (size_t)(slash - path);
  if (n == 0) {
    memcpy(dir, ".", 2);
    return;
  }
  memcpy(dir, path, n);
  dir[n] = '\0';
}

static void transport_init(plc_client *c) { c->fd = -1; }

static int transport_is_open(const plc_client *c) { return c->fd >= 0; }

static void transport_close(plc_client *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
}

static int interrupt_signalled(const plc_client *c) {
  struct pollfd pfd;
  if (c->interrupt == PLC_NO_INTERRUPT) return 0;
  pfd.fd = (int)c->interrupt;
  pfd.events = POLLIN;
  pfd.revents = 0;
  return poll(&pfd, 1, 0) > 0 && pfd.revents != 0;
}

/* Waits until fd is ready for events, the client's interrupt descriptor is readable, or the
 * deadline passes. */
static plc_status wait_fd(const plc_client *c, int fd, short events, int64_t deadline) {
  for (;;) {
    struct pollfd pfd[2];
    nfds_t n = 1;
    pfd[0].fd = fd;
    pfd[0].events = events;
    pfd[0].revents = 0;
    if (c->interrupt != PLC_NO_INTERRUPT) {
      pfd[1].fd = (int)c->interrupt;
      pfd[1].events = POLLIN;
      pfd[1].revents = 0;
      n = 2;
    }
    int r = poll(pfd, n, remaining_ms(deadline));
    if (r > 0 && n == 2 && pfd[1].revents != 0) return PLC_ERR_INTERRUPTED;
    if (r > 0) return PLC_OK; /* errors and hang-ups surface in the following call */
    if (r == 0) return PLC_ERR_TIMEOUT;
    if (errno != EINTR) return PLC_ERR_IO;
  }
}

/* No SIGPIPE from a socket whose peer went away: SO_NOSIGPIPE where it exists (macOS, the BSDs),
 * else MSG_NOSIGNAL on every send (PLC_SEND_FLAGS). */
#if defined(SO_NOSIGPIPE)
static int no_sigpipe(int fd) {
  int one = 1;
  return setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
}
#else
static int no_sigpipe(int fd) {
  (void)fd;
  return 0;
}
#endif

/* A non-blocking, close-on-exec stream socket: in one call where the flags exist, else fcntl. */
#if defined(PLC_HAVE_SOCK_FLAGS)
static int new_socket(void) { return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); }
#else
static int new_socket(void) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd >= 0 && (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)) {
    close(fd);
    return -1;
  }
  return fd;
}
#endif

static int open_socket(void) {
  int fd = new_socket();
  if (fd >= 0 && no_sigpipe(fd) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The user id the program on the other end runs as (peer credentials): 0, or -1 when unknown. */
#if defined(PLC_HAVE_SO_PEERCRED)
static int peer_uid(int fd, uid_t *uid) {
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return -1;
  *uid = cred.uid;
  return 0;
}
#else
static int peer_uid(int fd, uid_t *uid) {
  gid_t group;
  return getpeereid(fd, uid, &group) == 0 ? 0 : -1;
}
#endif

/*
 * Who holds the path, checked on every connection before a single byte is sent (an activate
 * carries a code), as the agent checks its own folder (agent/src/socket-dir.ts): without
 * XDG_RUNTIME_DIR the socket sits in /tmp/APP-UID, a folder another user can create first. The
 * socket's folder must be a real folder (not a link), owned by this user and writable by nobody
 * else; the program on the other end must run as this user (peer credentials).
 */
static plc_status check_holder(plc_client *c, int fd) {
  char dir[PLC_PATH_CAP];
  struct stat st;
  uid_t me = geteuid();
  uid_t peer;
  c->holder = -1;
  c->holder_mode = 0;
  socket_folder(c->path, dir);
  if (lstat(dir, &st) != 0) return PLC_ERR_CONNECT;
  c->holder = (long)st.st_uid;
  c->holder_mode = (unsigned long)st.st_mode;
  if (!S_ISDIR(st.st_mode) || !own_entry(&st)) return PLC_ERR_FOREIGN_FOLDER;
  if (peer_uid(fd, &peer) != 0) {
    c->holder = -1;
    return PLC_ERR_FOREIGN_AGENT;
  }
  c->holder = (long)peer;
  return peer == me ? PLC_OK : PLC_ERR_FOREIGN_AGENT;
}

static plc_status map_connect_error(int e) {
  if (e == ENOENT || e == ECONNREFUSED || e == ENOTDIR) return PLC_ERR_NOT_RUNNING;
  if (e == ETIMEDOUT) return PLC_ERR_TIMEOUT;
  return PLC_ERR_CONNECT;
}

static plc_status transport_connect(plc_client *c, int64_t deadline) {
  struct sockaddr_un addr;
  size_t n = strlen(c->path);
  int fd;
  if (!socket_path_fits(n)) return PLC_ERR_PATH_TOO_LONG;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, c->path, n);
  fd = open_socket();
  if (fd < 0) return PLC_ERR_IO;
  for (;;) {
    if (connect(fd, (struct sockaddr *)&addr, (socklen_t)sizeof addr) == 0) break;
    int e = errno;
    if (e == EINPROGRESS || e == EINTR) {
      int err = 0;
      socklen_t len = sizeof err;
      plc_status st = wait_fd(c, fd, POLLOUT, deadline);
      if (st == PLC_OK && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      if (st == PLC_OK && err != 0) st = map_connect_error(err);
      if (st != PLC_OK) {
        close(fd);
        return st;
      }
      break;
    }
    if (e == EAGAIN) {
      /* Linux: the listener's backlog is full (a DAW opening many plugins at once); try again. */
      struct timespec pause = {0, 1000000};
      plc_status st = still_waiting(c, deadline, 1);
      if (st != PLC_OK) {
        close(fd);
        return st;
      }
      nanosleep(&pause, NULL);
      continue;
    }
    close(fd);
    return map_connect_error(e);
  }
  plc_status holder = check_holder(c, fd);
  if (holder != PLC_OK) {
    close(fd);
    return holder;
  }
  c->fd = fd;
  return PLC_OK;
}

static plc_status transport_send_all(plc_client *c, const char *data, size_t n, int64_t deadline) {
  while (n > 0) {
    plc_status turn = still_waiting(c, deadline, 1);
    if (turn != PLC_OK) return turn;
    ssize_t w = send(c->fd, data, n, PLC_SEND_FLAGS);
    if (w > 0) {
      data += w;
      n -= (size_t)w;
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      plc_status st = wait_fd(c, c->fd, POLLOUT, deadline);
      if (st != PLC_OK) return st;
      continue;
    }
    return w < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) ? PLC_ERR_CLOSED : PLC_ERR_IO;
  }
  return PLC_OK;
}

static plc_status transport_recv(plc_client *c, char *dst, size_t cap, size_t *got, int64_t deadline) {
  for (;;) {
    ssize_t r = recv(c->fd, dst, cap, 0);
    if (r > 0) {
      *got = (size_t)r;
      return PLC_OK;
    }
    if (r == 0) return PLC_ERR_CLOSED;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      plc_status st = wait_fd(c, c->fd, POLLIN, deadline);
      if (st != PLC_OK) return st;
      continue;
    }
    return errno == ECONNRESET ? PLC_ERR_CLOSED : PLC_ERR_IO;
  }
}

/* ---------------------------------------------------------------- words */

static void describe_socket_limit(char *out, size_t cap, size_t *pos) {
  add(out, cap, pos, "the agent's socket path is longer than this platform allows (");
  add_number(out, cap, pos, (unsigned long)PLC_SUN_PATH_MAX);
  add(out, cap, pos, " bytes); set a shorter PLUGIN_LICENSE_SOCKET (or XDG_RUNTIME_DIR)");
}

/* "user 65534 (nobody)", or "user 65534" when the name is not found. */
static void add_user(char *out, size_t cap, size_t *pos, unsigned long uid) {
  char pwbuf[1024];
  struct passwd pw, *found = NULL;
  add(out, cap, pos, "user ");
  add_number(out, cap, pos, uid);
  if (getpwuid_r((uid_t)uid, &pw, pwbuf, sizeof pwbuf, &found) == 0 && found != NULL && found->pw_name != NULL) {
    add(out, cap, pos, " (");
    add(out, cap, pos, found->pw_name);
    add(out, cap, pos, ")");
  }
}

/* Who holds the path (check_holder's finding), in words: the peer's user, or the folder's owner
 * or mode, with what to do. */
static void describe_holder(const plc_client *client, plc_status status, char *out, size_t cap, size_t *pos) {
  char dir[PLC_PATH_CAP];
  if (status == PLC_ERR_FOREIGN_AGENT) {
    add(out, cap, pos, "the program on the agent's socket ");
    add(out, cap, pos, client->path);
    add(out, cap, pos, " runs as ");
    add_user(out, cap, pos, (unsigned long)client->holder);
    add(out, cap, pos, ", not as you (");
    add_number(out, cap, pos, (unsigned long)geteuid());
    add(out, cap, pos, "); nothing was sent to it (start your own agent, or ask your administrator)");
    return;
  }
  socket_folder(client->path, dir);
  add(out, cap, pos, "the agent's socket folder ");
  add(out, cap, pos, dir);
  if (!S_ISDIR((mode_t)client->holder_mode)) {
    add(out, cap, pos, S_ISLNK((mode_t)client->holder_mode) ? " is a symbolic link" : " is not a folder");
    add(out, cap, pos, " (owned by ");
    add_user(out, cap, pos, (unsigned long)client->holder);
    add(out, cap, pos, "); nothing was sent: remove it");
  } else if ((uid_t)client->holder != geteuid()) {
    add(out, cap, pos, " belongs to ");
    add_user(out, cap, pos, (unsigned long)client->holder);
    add(out, cap, pos, ", not to you (");
    add_number(out, cap, pos, (unsigned long)geteuid());
    add(out, cap, pos, "), who may have made it to receive your activation code; nothing was sent: have it removed");
  } else {
    add(out, cap, pos, " is writable by other users (mode ");
    add_mode(out, cap, pos, client->holder_mode);
    add(out, cap, pos, "); nothing was sent: make it private to you (mode 700)");
  }
  add(out, cap, pos, ", or set PLUGIN_LICENSE_SOCKET to a path in a private folder of yours");
}
