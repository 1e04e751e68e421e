/*
 * plc's internal header, as curl's curl_setup.h: what every file of the library assumes. plc.c
 * includes it first, then the library's files in dependency order (plc.c says the order). Here:
 * the feature macros, the system headers (the one place they are included), the compile-out
 * switches, the limits and types the parts share, and the OS interface: the functions the
 * portable files call and each OS implements in its own folder (unix/, with darwin/ for what
 * macOS does otherwise; win/). Nothing here is API: plc.h is.
 */
#ifndef PLC_SETUP_H
#define PLC_SETUP_H

/* ---------------------------------------------------------------- feature macros */

#if !defined(_WIN32) && !defined(__APPLE__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* SOCK_CLOEXEC, SOCK_NONBLOCK, MSG_NOSIGNAL, pipe2 with -std=c11 */
#endif
#if defined(__APPLE__) && !defined(_DARWIN_C_SOURCE)
#define _DARWIN_C_SOURCE /* SO_NOSIGPIPE */
#endif
#ifdef _WIN32
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef _WIN32_WINNT
#define _WIN32_WINNT 0x0A00 /* the SDK's and mingw-w64's default: RRF_SUBKEY_WOW6464KEY (0x0600: GetNamedPipeServerProcessId) */
#endif
#endif

#include "../plc.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- compile-out switches
 * Three parts, each left out of a build by one switch (plc.h's head and README.md list them):
 * PLC_NO_AGENT_CLIENT the calls over the agent's socket or pipe (and the waker, the socket paths,
 * plc_describe, plc_read_document); PLC_NO_AGENT_START the agent on demand (plc_start_agent, plc_start_program,
 * plc_default_executable); PLC_NO_TICKET the license ticket (plc_ticket_*, plc_raw_machine_id).
 * A plugin that only judges its ticket defines the first two: no socket, pipe, fork or
 * CreateProcess is then in the object. */
#if defined(PLC_NO_AGENT_CLIENT) && defined(PLC_NO_AGENT_START) && defined(PLC_NO_TICKET)
#error "plc: PLC_NO_AGENT_CLIENT, PLC_NO_AGENT_START and PLC_NO_TICKET together leave nothing to build"
#endif

/* ---------------------------------------------------------------- system headers */

#ifdef _WIN32
#include <windows.h>
#ifdef _MSC_VER
#pragma comment(lib, "advapi32.lib") /* RegGetValueW, the machine id */
#endif
#else
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/syscall.h>
#endif
#if defined(__APPLE__)
#if defined(__has_include)
#if !__has_include(<IOKit/IOKitLib.h>)
#define PLC_NO_IOKIT 1 /* only the syntax check of the macOS files on another system (compile.test.ts) */
#endif
#endif
#ifndef PLC_NO_IOKIT
#include <CoreFoundation/CoreFoundation.h>
#include <IOKit/IOKitLib.h>
#endif
/* <unistd.h> and <crt_externs.h> have these; declared again for the syntax check elsewhere. */
int getpeereid(int, uid_t *, gid_t *);
extern char ***_NSGetEnviron(void);
#endif
#endif

/* ---------------------------------------------------------------- what the system offers */

#ifdef _WIN32
#define PLC_SEP "\\"
#define PLC_NAME_RESERVED ":*?\"<>|" /* what a Windows file name cannot hold, besides separators and controls */
#else
#define PLC_SEP "/"
#define PLC_NAME_RESERVED ""
#define PLC_SUN_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)
#if defined(MSG_NOSIGNAL)
#define PLC_SEND_FLAGS MSG_NOSIGNAL
#else
#define PLC_SEND_FLAGS 0 /* SO_NOSIGPIPE is set on the socket instead */
#endif
#if defined(SOCK_CLOEXEC) && defined(SOCK_NONBLOCK)
#define PLC_HAVE_SOCK_FLAGS 1
#endif
#if !defined(__APPLE__) && defined(SO_PEERCRED)
#define PLC_HAVE_SO_PEERCRED 1 /* Linux; elsewhere getpeereid */
#endif
#if defined(__linux__) && defined(SYS_close_range)
#define PLC_HAVE_CLOSE_RANGE 1
#endif
#if defined(__linux__) && !defined(__APPLE__)
#define PLC_HAVE_PIPE2 1
#endif
#ifndef NSIG
#define NSIG 65
#endif
#endif

/* A helper several parts share: a build without one of them leaves it unused, which is no warning
 * then. The whole library uses every one (a warning otherwise, as MSVC's C4505 at /W4). */
#if (defined(PLC_NO_AGENT_CLIENT) || defined(PLC_NO_AGENT_START) || defined(PLC_NO_TICKET)) && (defined(__GNUC__) || defined(__clang__))
#define PLC_SHARED static __attribute__((unused))
#else
#define PLC_SHARED static
#endif

/* ---------------------------------------------------------------- limits */

/* The deepest nesting of the agent's answers (a value inside 32 objects or arrays); unknown
 * members are skipped up to it. */
#define PLC_PROTOCOL_DEPTH 32
/* Room for the walk of any JSON value that fits a ticket (every byte of its 4 KB a '['). */
#define PLC_JSON_DEPTH_CAP PLC_TICKET_MAX_BYTES
/* Room for a data folder, a ticket's path, an executable's path, a socket path being made. */
#define PLC_DATA_CAP 1024

/* ---------------------------------------------------------------- types the parts share */

/* What read_small_file found at a path that is not a regular file (for the words of a problem), or
 * a file that is not the user's own (FOUND_NOT_OWN: another user's; FOUND_SHARED: writable by group or others). */
typedef enum found_kind { FOUND_FILE = 0, FOUND_LINK, FOUND_FIFO, FOUND_DEVICE, FOUND_FOLDER, FOUND_SOCKET, FOUND_OTHER, FOUND_NOT_OWN, FOUND_SHARED } found_kind;

/* read_small_file's flags: follow a link to a regular file; take only a file of the user's own
 * (owned by this user, writable by nobody else; POSIX), else PLC_ERR_FOREIGN_FOLDER. */
#define READ_FOLLOW_LINKS 1
#define READ_OWN_ONLY 2

typedef enum folder_state { FOLDER_OK = 0, FOLDER_MISSING, FOLDER_BAD } folder_state;

/* An open file. */
#ifdef _WIN32
typedef HANDLE plc_file;
#else
typedef int plc_file;
#endif

/* Once per process. */
#ifdef _WIN32
typedef INIT_ONCE plc_once;
#define PLC_ONCE_INIT INIT_ONCE_STATIC_INIT
#else
typedef pthread_once_t plc_once;
#define PLC_ONCE_INIT PTHREAD_ONCE_INIT
#endif

/* ---------------------------------------------------------------- the OS interface
 * Declared here, defined once per OS: unix/ (Linux, macOS, the BSDs), darwin/ (macOS's own
 * places and machine id), win/. The portable files call only these. */

/* core.c: a monotonic clock in milliseconds; fn run once per process for `once`. */
PLC_SHARED int64_t now_ms(void);
PLC_SHARED void run_once(plc_once *once, void (*fn)(void));

/* files.c: the one bounded reader of small files (a document the user picked, a ticket, machine
 * ids): only a regular file of at most cap - 1 bytes, NUL-terminated in buf; opening never waits
 * for a writer or acts on a device, and at most cap bytes are read (a file that grew is
 * PLC_ERR_FILE_TOO_LARGE). Without READ_FOLLOW_LINKS a link is PLC_ERR_NOT_A_FILE (O_NOFOLLOW;
 * Windows: a reparse point). *found says what was there when PLC_ERR_NOT_A_FILE. */
PLC_SHARED plc_status read_small_file(const char *path, int flags, char *buf, size_t cap, size_t *len, found_kind *found);
/* files.c: up to n bytes of an open file into p: how many, 0 at its end, -1 on an error. */
static long file_read(plc_file f, void *p, size_t n);

#ifndef PLC_NO_AGENT_CLIENT
/* transport.c: the agent's Unix socket or named pipe, whose holder is checked before a byte is
 * sent (PLC_ERR_FOREIGN_FOLDER, PLC_ERR_FOREIGN_AGENT, with plc_client.holder set). */
static void transport_init(plc_client *c);
static int transport_is_open(const plc_client *c);
static void transport_close(plc_client *c);
static int interrupt_signalled(const plc_client *c);
static plc_status transport_connect(plc_client *c, int64_t deadline);
static plc_status transport_send_all(plc_client *c, const char *data, size_t n, int64_t deadline);
static plc_status transport_recv(plc_client *c, char *dst, size_t cap, size_t *got, int64_t deadline);
/* True when a socket path (or pipe name) of len bytes can be connected to. */
static int socket_path_fits(size_t len);
/* plc_describe's words for a socket path over the limit, and for who holds the path. */
static void describe_socket_limit(char *out, size_t cap, size_t *pos);
static void describe_holder(const plc_client *client, plc_status status, char *out, size_t cap, size_t *pos);
/* places.c: the default socket path of namespace app (resolved), and the macOS app-group form
 * (elsewhere the default), into out as plc_default_socket_path says. */
static plc_status socket_place(const char *app, char *out, size_t out_size);
static plc_status group_socket_place(const char *group, const char *app, char *out, size_t out_size);
#endif

#ifndef PLC_NO_AGENT_START
/* spawn.c: a regular file this user may execute (a link to one is followed); the
 * PLUGIN_LICENSE_EXECUTABLE variable into path (1, 0 when unset, -1 when it does not fit). */
static int is_program(const char *path);
static int executable_variable(char *path, size_t cap);
/* places.c: where the installers put the vendor's executable, into path (empty); vendor and name
 * are valid file names. */
static plc_status executable_place(const char *vendor, const char *name, char *path, size_t cap);
#endif

#ifndef PLC_NO_TICKET
/* files.c: the reader's folder rule: the folder at path, links resolved, is a folder of the
 * user's own. MISSING when nothing is there; BAD with its words, starting with `name`, in problem. */
static folder_state own_folder(const char *path, const char *name, char *problem, size_t cap);
/* paths.c: the namespace's data folder by the library's one rule (app resolved and valid). */
static plc_status data_folder(const char *app, const char *group, char *out, size_t cap);
/* paths.c: a path separator; how many leading bytes of path are its root, which a parent keeps. */
static int is_separator(char c);
static size_t path_root(const char *path, size_t n);
/* machine_id.c: the OS's raw machine id as the OS gives it ("" when it has none). */
static void read_os_raw_id(char *raw, size_t cap);
#endif

#endif /* PLC_SETUP_H */
