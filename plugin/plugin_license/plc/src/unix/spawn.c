/*
 * Part of plc.c (compiled through it, never alone): the POSIX launcher, plc_start_program, the one
 * way plc and the JUCE module start a program of the vendor's (the agent, the license manager).
 *
 * A double fork rather than posix_spawn. posix_spawn (POSIX_SPAWN_SETSID, glibc's addclosefrom_np,
 * Apple's POSIX_SPAWN_CLOEXEC_DEFAULT) would close the descriptors, but leave the program a child
 * of the host: reaping it means a thread waiting as long as it lives, or a zombie in the DAW. Here
 * the middle process starts a new session and forks the program, then exits at once (reaped
 * below); the program, adopted by init, is no child of the host, and has no controlling terminal it
 * could ever acquire (it is not the session's leader). Before exec it closes every inherited
 * descriptor itself (close_range), puts its standard streams on /dev/null (standard output on the
 * caller's pipe when asked), moves to the home (else "/") and gets this environment. The caller
 * waits for the two forks and the exec, never for the program: a pipe closed on exec says it
 * started (or carries exec's errno).
 */

/* Where a path's length stops (as plc_start_agent always had it). */
#define PLC_EXE_CAP 1024

/* An executable path must be absolute: the program starts in another folder. */
static int absolute_path(const char *path) { return path[0] == '/'; }

/* 0 when path is a regular file this user may execute (a link to one is followed); else the
 * errno exec would give (ENOENT, EACCES, ...). */
static int program_error(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EACCES;
  return access(path, X_OK) == 0 ? 0 : errno;
}

static int is_program(const char *path) { return program_error(path) == 0; }

/* PLUGIN_LICENSE_EXECUTABLE into path: 1, 0 when unset or empty, -1 when it does not fit. */
static int executable_variable(char *path, size_t cap) {
  const char *env = getenv("PLUGIN_LICENSE_EXECUTABLE");
  size_t pos = 0;
  if (env == NULL || env[0] == '\0') return 0;
  return append(path, cap, &pos, env) == 0 ? 1 : -1;
}

/* The environment a started program gets: this process's. macOS: a plugin is a bundle, so
 * `environ` is the host executable's alone; _NSGetEnviron is the process's. */
#if defined(__APPLE__)
static char *const *host_environment(void) { return *_NSGetEnviron(); }
#elif defined(__linux__)
static char *const *host_environment(void) { return environ; } /* <unistd.h> declares it under _GNU_SOURCE */
#else
extern char **environ;
static char *const *host_environment(void) { return environ; }
#endif

/* A close-on-exec pipe: in one call where pipe2 exists (no other thread's fork can inherit it
 * meanwhile), else pipe and fcntl. */
#if defined(PLC_HAVE_PIPE2)
static int cloexec_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }
#else
static int cloexec_pipe(int fds[2]) {
  if (pipe(fds) != 0) return -1;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return 0;
}
#endif

/* Closes every descriptor above 2 but keep. Linux: close_range (5.9), one call; elsewhere, and on
 * an older kernel, every number up to the descriptor limit (a DAW holds hundreds, any of them). */
#if defined(PLC_HAVE_CLOSE_RANGE)
static int close_range_but(int keep) {
  return (keep == 3 || syscall(SYS_close_range, 3u, (unsigned)keep - 1u, 0u) == 0) && syscall(SYS_close_range, (unsigned)keep + 1u, ~0u, 0u) == 0 ? 0 : -1;
}
#else
static int close_range_but(int keep) {
  (void)keep;
  return -1;
}
#endif

static void close_descriptors(int keep, long max_fd) {
  if (close_range_but(keep) == 0) return;
  for (long fd = 3; fd < max_fd; fd++)
    if (fd != keep) close((int)fd);
}

/* After fork() in a host with many threads, only async-signal-safe calls: everything the child
 * needs is made before. */
typedef struct start_plan {
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int report;  /* the write end of the pipe that carries exec's errno back; close-on-exec */
  int output;  /* the write end of the caller's pipe for standard output, or -1 */
  long max_fd; /* where the fallback loop of closes stops */
  sigset_t none;
} start_plan;

static void report_and_exit(int report, int code) {
  int e = errno;
  if (write(report, &e, sizeof e) < 0) _exit(code);
  _exit(code);
}

static void exec_program(const start_plan *plan) {
  int null, report, output = -1;
  /* The pipes above the standard streams, whatever numbers they had (a host may run with stdin
   * closed, so a pipe could be 0). */
  report = fcntl(plan->report, F_DUPFD_CLOEXEC, 3);
  if (report < 0) _exit(126);
  if (plan->output >= 0 && (output = fcntl(plan->output, F_DUPFD_CLOEXEC, 3)) < 0) report_and_exit(report, 126);
  null = open("/dev/null", O_RDWR);
  if (null < 0 || dup2(null, 0) < 0 || dup2(output >= 0 ? output : null, 1) < 0 || dup2(null, 2) < 0) report_and_exit(report, 126);
  close_descriptors(report, plan->max_fd);
  if (chdir(plan->cwd) != 0 && chdir("/") != 0) report_and_exit(report, 126);
  /* A host's blocked signals would stay blocked through exec: the program starts with none blocked.
   * Its caught ones are reset by exec; ignored ones stay ignored, which the agent overrides where it
   * matters (it handles SIGINT, SIGTERM and SIGHUP itself). No sigaction here: plc installs and
   * changes no signal disposition in any process (compile.test.ts checks the symbol). */
  sigprocmask(SIG_SETMASK, &plan->none, NULL);
  execve(plan->argv[0], plan->argv, plan->envp);
  report_and_exit(report, 127);
}

/* Until exec closes the report pipe (0), or its errno arrives. Bounded all the same: another thread
 * of the host that forks meanwhile may hold the write end a moment (where there is no pipe2). */
static int exec_result(int report) {
  struct pollfd pfd;
  int64_t deadline = now_ms() + 5000;
  int e = 0;
  ssize_t got = 0;
  pfd.fd = report;
  pfd.events = POLLIN;
  for (;;) {
    int r;
    pfd.revents = 0;
    r = poll(&pfd, 1, remaining_ms(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r > 0) {
      while ((got = read(report, &e, sizeof e)) < 0 && errno == EINTR) {
      }
    }
    break;
  }
  if (got != (ssize_t)sizeof e) return 0;
  return e != 0 ? e : EIO;
}

static plc_status start_failed(int e, int *os_error) {
  if (os_error != NULL) *os_error = e;
  return e == ENOENT || e == ENOTDIR ? PLC_ERR_NO_FILE : PLC_ERR_CONNECT;
}

plc_status plc_start_program(const char *const *argv, intptr_t *output, int *os_error) {
  char pwbuf[1024];
  start_plan plan;
  struct rlimit limit;
  sigset_t all, old;
  int report[2], out[2] = {-1, -1}, e, status;
  pid_t middle;
  const char *home;
  if (output != NULL) *output = -1;
  if (os_error != NULL) *os_error = 0;
  if (argv == NULL || argv[0] == NULL || !absolute_path(argv[0]) || strlen(argv[0]) >= PLC_EXE_CAP) return PLC_ERR_INVALID_ARGUMENT;
  e = program_error(argv[0]);
  if (e != 0) {
    if (os_error != NULL) *os_error = e;
    return PLC_ERR_NO_FILE;
  }
  home = home_folder(pwbuf, sizeof pwbuf);
  /* execve takes char *const[]: it changes neither the array nor the strings. */
  plan.argv = (char *const *)argv;
  plan.envp = host_environment();
  plan.cwd = home != NULL ? home : "/";
  plan.max_fd = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (1L << 20)
                    ? (long)limit.rlim_cur
                    : (1L << 20);
  sigemptyset(&plan.none);
  if (cloexec_pipe(report) != 0) return start_failed(errno, os_error);
  if (output != NULL && cloexec_pipe(out) != 0) {
    e = errno;
    close(report[0]);
    close(report[1]);
    return start_failed(e, os_error);
  }
  plan.report = report[1];
  plan.output = out[1];
  /* No host signal handler may run in the children before exec. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  middle = fork();
  if (middle == 0) {
    pid_t program;
    close(report[0]);
    setsid();
    program = fork();
    if (program == 0) exec_program(&plan);
    if (program < 0) report_and_exit(report[1], 1);
    _exit(0);
  }
  e = errno;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(report[1]);
  if (out[1] >= 0) close(out[1]);
  if (middle < 0) {
    close(report[0]);
    if (out[0] >= 0) close(out[0]);
    return start_failed(e, os_error);
  }
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  e = exec_result(report[0]);
  close(report[0]);
  if (e != 0) {
    if (out[0] >= 0) close(out[0]);
    return start_failed(e, os_error);
  }
  if (output != NULL) *output = out[0];
  return PLC_OK;
}
