/*
 * plc: a small C client of the plugin-license agent (protocol version 1).
 *
 * One header, one file to compile (plc.c, which includes the library's files in src/), no
 * allocation: every byte lives in the caller's plc_client. POSIX: a Unix domain socket with a
 * non-blocking connect and poll() time-outs, no SIGPIPE, close-on-exec. Windows: a named pipe with
 * overlapped I/O.
 *
 * Three parts, each left out of a build by one switch defined for plc.c (-DPLC_NO_...; a call
 * into a part left out does not link):
 *   PLC_NO_AGENT_CLIENT  the agent client: plc_init ... plc_wait_change, the waker, plc_describe,
 *                        plc_default_socket_path, plc_app_group_socket_path, plc_read_document
 *   PLC_NO_AGENT_START   the agent on demand: plc_start_agent, plc_start_program, plc_default_executable
 *   PLC_NO_TICKET        the license ticket and the signed ticket: plc_ticket_*, plc_raw_machine_id,
 *                        plc_machine_id, plc_signed_ticket_*, plc_answer_judge, plc_ed25519_verify
 * A plugin that only judges its ticket defines the first two: its object then has no socket, pipe,
 * fork or CreateProcess in it. plc_strerror, plc_reason_name and plc_parse_time are always there.
 *
 * Call it from a background thread, never from the audio thread: a call may wait up to its
 * time-out (200 ms by default for check; PLC_SERVICE_TIMEOUT_MS for activate and the other calls
 * that wait on the service or the disk, so never call those on the message thread either).
 * A plc_client is not thread-safe; give each thread its own. The one exception: the handle given
 * to plc_set_interrupt may be signalled from any thread.
 *
 * Every call has one deadline (its time-out, from when it began) and can be interrupted, whatever
 * the peer sends meanwhile. Before a byte is sent, every connection checks who holds the path: the
 * socket's folder must be the user's and writable by no one else, and the program on the other end
 * must run as the user (PLC_ERR_FOREIGN_FOLDER, PLC_ERR_FOREIGN_AGENT; plc_describe says who).
 *
 *   plc_client client;
 *   plc_license lic;
 *   plc_init(&client, NULL);                  // NULL: PLUGIN_LICENSE_SOCKET, else the default path
 *   plc_status st = plc_check(&client, "your-project-id", &lic, PLC_DEFAULT_TIMEOUT_MS);
 *   if (st == PLC_OK && lic.valid) { ... }   // st == PLC_ERR_NOT_RUNNING: unknown, retry later
 *   plc_close(&client);
 */
#ifndef PLC_H
#define PLC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLC_PROTOCOL_VERSION 1
#define PLC_DEFAULT_TIMEOUT_MS 200
/* activate, deactivate, refresh, offline_request, offline_import: the agent's own service
 * time-out (10 s for a call, one retry inside it) and a slot-count query (3 s), plus a margin. */
#define PLC_SERVICE_TIMEOUT_MS 20000
/* Room for an offline request as its text line (a request is about 600 bytes as text). */
#define PLC_DOCUMENT_CAP 2048
/* The longest document plc_offline_import sends (the agent's line limit is 65,536 bytes). */
#define PLC_IMPORT_MAX_BYTES 60000
#define PLC_DEFAULT_APP "plugin-license"
/* The largest ticket and signed ticket a reader takes, in bytes (docs/license-ticket.md,
 * docs/signed-ticket.md). */
#define PLC_TICKET_MAX_BYTES 4096

/* Bytes kept for one answer line. A LicenseState line is about 400 bytes, about 900 with the
 * signed ticket a relay signed (signed_ticket: up to 4096 bytes of text, a little more once
 * escaped as JSON); a longer line is refused with PLC_ERR_TOO_LARGE. Define it for the whole build
 * (-DPLC_BUFFER_SIZE=...), never per file: it changes the size of plc_client. */
#ifndef PLC_BUFFER_SIZE
#define PLC_BUFFER_SIZE 8192
#endif

/* The longest activation code, in bytes (the agent's limit). */
#define PLC_CODE_MAX 256

/* Room for a socket path or pipe name, including the terminating NUL. */
#define PLC_PATH_CAP 260

typedef enum plc_status {
  PLC_OK = 0,
  PLC_ERR_INVALID_ARGUMENT, /* NULL pointer, empty or over-long project id or path */
  PLC_ERR_PATH_TOO_LONG,    /* a path does not fit: the socket's in the platform's sun_path, or the executable's or ticket's in
                               plc's or the caller's buffer (plc_strerror's words fit each; plc_describe names the socket's) */
  PLC_ERR_NO_PATH,          /* no default path could be made (no HOME / USERNAME) */
  PLC_ERR_NOT_RUNNING,      /* nothing listens on the path: treat the license as unknown */
  PLC_ERR_CONNECT,          /* connecting failed otherwise (permission, not a socket) */
  PLC_ERR_TIMEOUT,          /* no connection or no answer within the time-out */
  PLC_ERR_IO,               /* a send or receive failed */
  PLC_ERR_CLOSED,           /* the agent closed the connection before answering */
  PLC_ERR_TOO_LARGE,        /* an answer line longer than PLC_BUFFER_SIZE */
  PLC_ERR_PROTOCOL,         /* an answer that is not a JSON-RPC 2.0 LicenseState */
  PLC_ERR_AGENT,            /* the agent answered an error object: see plc_license.error_* */
  PLC_ERR_FOREIGN_AGENT,    /* the program on the other end runs as another user (POSIX: peer credentials; Windows: the pipe's
                               server); nothing was sent. plc_describe names who. */
  PLC_ERR_INTERRUPTED,      /* the handle given to plc_set_interrupt was signalled */
  PLC_ERR_AGENT_OUTDATED,   /* the agent does not know the request (-32601): the license agent needs an update */
  PLC_ERR_FOREIGN_FOLDER,   /* POSIX: the socket's folder belongs to another user, is writable by others, or is a link;
                               nothing was sent. plc_describe names the folder and its owner. */
  PLC_ERR_NOT_A_FILE,       /* plc_read_document: a FIFO, a device, a folder, a socket (or a link to one); nothing was read */
  PLC_ERR_FILE_TOO_LARGE,   /* plc_read_document: larger than the caller's limit; refused before reading */
  PLC_ERR_NO_FILE,          /* plc_read_document: no such file */
  PLC_ERR_FILE_UNREADABLE   /* plc_read_document: the file exists but cannot be opened or read (permission, I/O) */
} plc_status;

typedef enum plc_reason {
  PLC_REASON_NONE = 0, /* valid, or no reason given */
  PLC_REASON_NOT_ACTIVATED,
  PLC_REASON_CODE_REVOKED,
  PLC_REASON_CODE_NOT_FOUND,
  PLC_REASON_DEACTIVATED,
  PLC_REASON_GRACE_EXPIRED,
  PLC_REASON_CLOCK_TAMPERED,
  PLC_REASON_CACHE_INVALID,
  PLC_REASON_OTHER,   /* a reason this client does not know: see reason_text */
  PLC_REASON_UNSIGNED /* a plugin with the vendor's keys: valid, but no ticket signed by the vendor says so
                         (docs/signed-ticket.md); the plugin's own verdict, text "unsigned" */
} plc_reason;

typedef enum plc_source {
  PLC_SOURCE_UNKNOWN = 0,
  PLC_SOURCE_ONLINE, /* the service answered during this agent's life */
  PLC_SOURCE_CACHE,  /* the state rests on the stored cache */
  PLC_SOURCE_OFFLINE /* the state rests on an imported offline activation (valid until grace_until) */
} plc_source;

/* One LicenseState. Text fields are NUL-terminated and empty when the agent sent null or
 * nothing; times are RFC 3339 text plus seconds since the Unix epoch (0 when absent). */
typedef struct plc_license {
  int valid;
  plc_reason reason;
  char reason_text[32];
  plc_source source;
  char project_id[128];
  char code_hint[32];
  long activations;     /* -1 when absent */
  long max_activations; /* -1 when absent */
  char validated_at[40];
  char grace_until[40];
  char next_check_at[40];
  int64_t validated_at_s;
  int64_t grace_until_s;
  int64_t next_check_at_s;
  /* Filled when a call returns PLC_ERR_AGENT (or PLC_ERR_AGENT_OUTDATED). */
  long error_code;         /* JSON-RPC code, e.g. -32602 invalid params, -32003 over a limit */
  char error_message[160]; /* the agent's message, cut to fit */
  char error_detail[48];   /* data.code when given (the service's error code) */
  /* The agent's signed_ticket (docs/agent-protocol.md: the text of the project's signed ticket, only
   * when one is stored), for plc_answer_judge: has_signed_ticket 1 when the answer carried one,
   * signed_ticket its text (NUL-terminated; its bytes signed_ticket_len). A text longer than
   * PLC_TICKET_MAX_BYTES is kept cut, with signed_ticket_len PLC_TICKET_MAX_BYTES + 1: no signed
   * ticket is that long, and the judge refuses it. */
  int has_signed_ticket;
  size_t signed_ticket_len;
  char signed_ticket[PLC_TICKET_MAX_BYTES + 1];
} plc_license;

/* What plc_offline_request returns: the request to carry to a computer that is online. */
typedef struct plc_document {
  char text[PLC_DOCUMENT_CAP]; /* the offline request as one line of text (base64url and a checksum) */
  char file_name[96];          /* a file name to suggest when saving it, e.g. acme-audio-request-123e4567.txt */
  /* Filled when the call returns PLC_ERR_AGENT, as in plc_license. */
  long error_code;
  char error_message[160];
  char error_detail[48];
} plc_document;

typedef struct plc_client {
#ifdef _WIN32
  void *pipe;  /* HANDLE, INVALID_HANDLE_VALUE when closed */
  void *event; /* manual-reset event for overlapped I/O */
#else
  int fd; /* -1 when closed */
#endif
  intptr_t interrupt;      /* plc_set_interrupt's handle (a descriptor, or an event HANDLE), PLC_NO_INTERRUPT: none */
  unsigned long next_id;
  size_t len;              /* bytes held in buf */
  plc_status path_status;  /* why path is empty, when plc_init could not make one */
  /* Who holds the path, after PLC_ERR_FOREIGN_AGENT or PLC_ERR_FOREIGN_FOLDER (-1: unknown). POSIX: the
   * user id owning the folder or running the program on the other end; Windows: the pipe server's
   * process id. plc_describe words it. */
  long holder;
  unsigned long holder_mode; /* POSIX, after PLC_ERR_FOREIGN_FOLDER: the folder's st_mode */
  char path[PLC_PATH_CAP];
  char buf[PLC_BUFFER_SIZE];
} plc_client;

/* Prepares a client; no I/O. socket_path NULL or "" means plc_default_socket_path(NULL, ...).
 * A path that does not fit is reported by the first plc_connect / plc_check. */
void plc_init(plc_client *client, const char *socket_path);

/* Connects now (plc_check also connects on demand). timeout_ms <= 0 means the default. */
plc_status plc_connect(plc_client *client, int timeout_ms);

/* Asks the agent for the state of project_id: connects when needed, sends `check`, waits for
 * the answer with the same id, skipping notifications. The whole call is bounded by timeout_ms
 * (<= 0: PLC_DEFAULT_TIMEOUT_MS). After any error other than PLC_ERR_AGENT the connection is
 * closed, and the next call reconnects. */
plc_status plc_check(plc_client *client, const char *project_id, plc_license *out, int timeout_ms);

/* The calls below use the same connection as plc_check and follow its rules: connect on demand,
 * one time-out for the whole call (<= 0: the default named), the connection closed after any error
 * other than PLC_ERR_AGENT and PLC_ERR_AGENT_OUTDATED. On PLC_ERR_AGENT, `out` holds error_code,
 * error_message (the agent's words, for the user: "the service refused: code_revoked", ...) and
 * error_detail (data.code: the service's code, or offline_refused / invalid_offline_file).
 * An agent that predates a method answers PLC_ERR_AGENT_OUTDATED. Never on the audio or message
 * thread: they wait on the service or the disk. */

/* `activate`: activates `code` online for this machine (default time-out PLC_SERVICE_TIMEOUT_MS). */
plc_status plc_activate(plc_client *client, const char *project_id, const char *code, plc_license *out, int timeout_ms);

/* `deactivate`: frees this machine's slot ("move the license to another computer"). */
plc_status plc_deactivate(plc_client *client, const char *project_id, plc_license *out, int timeout_ms);

/* `refresh`: asks the service now; offline it answers from the cache. */
plc_status plc_refresh(plc_client *client, const char *project_id, plc_license *out, int timeout_ms);

/* `offline_request`: the offline request (step 1 of the offline exchange) for this machine, as a
 * line of text and a file name to suggest; code may be NULL (the online step then gives it). The
 * agent stores the request's nonce before answering. */
plc_status plc_offline_request(plc_client *client, const char *project_id, const char *code, plc_document *out, int timeout_ms);

/* `offline_import`: imports an offline response (a response file's contents or its line of text,
 * at most PLC_IMPORT_MAX_BYTES); `out` is the state after it. A response the import rules refuse
 * is PLC_ERR_AGENT with error_detail "offline_refused" and the reason in error_message. */
plc_status plc_offline_import(plc_client *client, const char *document, plc_license *out, int timeout_ms);

/* `subscribe`: from now on the agent sends this connection a `changed` notification whenever
 * project_id's state changes (NULL: any project's). Read them with plc_wait_change. Default
 * time-out PLC_DEFAULT_TIMEOUT_MS. A subscription lives as long as the connection: after any
 * error that closed it, connect and subscribe again (then plc_check, since changes were missed).
 * Calls on a subscribed connection skip the notifications that arrive before their answer (the
 * answer about the project is newer than them): subscribe a connection to one project. */
plc_status plc_subscribe(plc_client *client, const char *project_id, plc_license *error_out, int timeout_ms);

/* Waits up to timeout_ms (0: one read of what has arrived) for the next `changed` notification of a
 * subscribed connection: PLC_OK with `out` the new state. Other lines, however many, do not
 * extend the wait. PLC_ERR_TIMEOUT (nothing came) and
 * PLC_ERR_INTERRUPTED leave the connection open; any other error closes it. PLC_ERR_CLOSED when
 * the client is not connected. */
plc_status plc_wait_change(plc_client *client, plc_license *out, int timeout_ms);

/* Lets another thread end a call that waits on this client: pass the read end of a pipe (POSIX)
 * or an event HANDLE (Windows, cast to intptr_t); the call returns PLC_ERR_INTERRUPTED as soon as
 * it is readable or signalled (it is not drained or reset: the owner does that).
 * PLC_NO_INTERRUPT removes it. The handle stays yours; set it after plc_init. */
void plc_set_interrupt(plc_client *client, intptr_t handle);
#ifdef _WIN32
#define PLC_NO_INTERRUPT ((intptr_t)0)
#else
#define PLC_NO_INTERRUPT ((intptr_t)-1)
#endif

/* A waker: what one thread signals to end another's wait (plc_set_interrupt takes its handle).
 * POSIX: a non-blocking, close-on-exec pipe; Windows: a manual-reset event. */
typedef struct plc_waker {
  intptr_t wait_handle;   /* the pipe's read end, or the event */
  intptr_t signal_handle; /* the pipe's write end, or the event again */
} plc_waker;

/* Opens a waker: PLC_OK, or PLC_ERR_IO when the system has no descriptor or event left. */
plc_status plc_waker_open(plc_waker *waker);
/* Signals it, from any thread; a waker already signalled stays so. */
void plc_waker_signal(plc_waker *waker);
/* Waits up to timeout_ms (0: a look) for the signal: 1 signalled, 0 not. It stays signalled. */
int plc_waker_wait(plc_waker *waker, int timeout_ms);
/* Takes the signal back (drains the pipe, resets the event). */
void plc_waker_clear(plc_waker *waker);
/* The handle to give plc_set_interrupt. */
intptr_t plc_waker_handle(const plc_waker *waker);
/* Closes it; safe on a waker that failed to open or was closed. */
void plc_waker_close(plc_waker *waker);

/* Closes the connection; the client can be used again. Safe to call twice. */
void plc_close(plc_client *client);

/* Writes the agent's default socket path (or pipe name) for namespace app (NULL: the
 * PLUGIN_LICENSE_APP variable, else "plugin-license"), following the protocol: the
 * PLUGIN_LICENSE_SOCKET variable wins; on macOS the PLUGIN_LICENSE_APP_GROUP variable gives the
 * app-group form (see plc_app_group_socket_path). A path over the platform's limit is PLC_ERR_PATH_TOO_LONG,
 * never cut. */
plc_status plc_default_socket_path(const char *app, char *out, size_t out_size);

/* macOS, for sandboxed plugins (an AUv3, or an AU in a host that sandboxes it): the sandbox lets
 * a plugin reach a socket only inside an app group container of its team, so the vendor's agent
 * listens at ~/Library/Group Containers/GROUP/APP/agent.sock (the agent's PLUGIN_LICENSE_APP_GROUP,
 * "app_group" in config.json, or pnpm package --app-group) and the plugin, entitled to that
 * group (com.apple.security.application-groups), asks here. The home is the user's real one,
 * not the sandbox's container. PLUGIN_LICENSE_SOCKET still wins. Elsewhere the group is ignored:
 * the answer is plc_default_socket_path's. A group that is not letters, digits, '.' and '-' is
 * PLC_ERR_INVALID_ARGUMENT. */
plc_status plc_app_group_socket_path(const char *group, const char *app, char *out, size_t out_size);

/* A short English text for a status, e.g. "the agent is not running". Never NULL. The words are
 * the status's, whatever call returned it: PLC_ERR_PATH_TOO_LONG and PLC_ERR_NO_PATH, which a
 * socket's, an executable's and a ticket's path share, say what to set for each; plc_describe
 * names a client's (the socket's), and the ticket's problem the ticket's. */
const char *plc_strerror(plc_status status);

/* plc_strerror's words for what a call on `client` returned, with what the client learnt: after
 * PLC_ERR_FOREIGN_FOLDER or PLC_ERR_FOREIGN_AGENT, the path and who holds it ("the agent's folder
 * /tmp/plugin-license-1000 belongs to user 65534 (nobody), not to you (1000): ..."); after
 * PLC_ERR_PATH_TOO_LONG or PLC_ERR_NO_PATH, that the path is the agent's socket's. Writes a
 * NUL-terminated text into out (cut to fit; 512 bytes hold every text) and returns out ("" when
 * out_size is 0). */
const char *plc_describe(const plc_client *client, plc_status status, char *out, size_t out_size);

/* Reads a file the user picked (an offline response) into buf, NUL-terminated, with *len the bytes
 * read: only a regular file (a link to one is followed), of at most cap - 1 bytes. A FIFO, a
 * device, a folder, a socket or a link to one is PLC_ERR_NOT_A_FILE and a larger file
 * PLC_ERR_FILE_TOO_LARGE, both before any byte is read; opening never waits for a writer, and the
 * read is bounded by cap (a file that grows meanwhile is PLC_ERR_FILE_TOO_LARGE). PLC_ERR_NO_FILE,
 * PLC_ERR_FILE_UNREADABLE otherwise. path is UTF-8, on Windows too. For an offline response pass
 * cap = PLC_IMPORT_MAX_BYTES + 1, then plc_offline_import(buf) (a file with a NUL byte inside,
 * *len > strlen(buf), is not one). Blocks only as long as reading that much of a regular file
 * takes: still, keep it off the message thread where the file may sit on a network share. */
plc_status plc_read_document(const char *path, char *buf, size_t cap, size_t *len);

/* The protocol's name of a reason ("not_activated"), "" for PLC_REASON_NONE. */
const char *plc_reason_name(plc_reason reason);

/* Parses RFC 3339 text ("2026-12-22T10:00:00Z", fractions and offsets allowed) into seconds
 * since the Unix epoch. Returns 0 on success, -1 on malformed text. */
int plc_parse_time(const char *text, int64_t *seconds);

/* ---- The license ticket (docs/license-ticket.md): the plugin's own verdict, without the agent ----
 *
 * The library writes DATA/tickets/PROJECT_ID.ticket with every license state it stores; a plugin
 * judges it by itself in microseconds, so its first audio block is right and stopping the agent
 * unlocks nothing. These calls allocate nothing, start no process, take no lock, and read at most
 * PLC_TICKET_MAX_BYTES + 1 bytes of a regular file opened without following a link, a FIFO, a
 * device or a folder (any of those is TAMPERED, never a wait). Any thread but the audio thread
 * (they read a small file); plc::Monitor calls them for you. */

/* Room for a normalised raw machine id (the OS's, or the generated 64-hex secret) with its NUL. */
#define PLC_MACHINE_ID_CAP 160

typedef enum plc_ticket_verdict {
  PLC_TICKET_NONE = 0,     /* no ticket at the path: the state is unknown (ask the agent) */
  PLC_TICKET_VALID,        /* licensed until valid_until */
  PLC_TICKET_NOT_LICENSED, /* the writer found it invalid: see reason */
  PLC_TICKET_TAMPERED,     /* there but failing a rule (MAC, app, project, version, size, not a regular file):
                              a known "not licensed", reason cache_invalid; problem says which */
  PLC_TICKET_EXPIRED,      /* read after valid_until: reason grace_expired */
  PLC_TICKET_CLOCK         /* read more than an hour before issued_at: reason clock_tampered */
} plc_ticket_verdict;

typedef struct plc_ticket {
  plc_ticket_verdict verdict;
  plc_reason reason;     /* PLC_REASON_NONE when valid or none */
  plc_source source;     /* the ticket's, once its MAC and fields were good; else unknown */
  char code_hint[32];    /* the ticket's, "" when null or not read */
  int64_t issued_at;     /* Unix seconds, 0 when not read */
  int64_t valid_until;   /* Unix seconds, 0 when not read */
  char problem[96];      /* TAMPERED: what failed, in English ("authentication tag does not match", ...) */
  /* The signed ticket's key id once its line 2 was read (the plc_*_signed calls, plc_answer_judge
   * and plc_signed_ticket_judge), "" otherwise: with keys, a VALID verdict was signed by it. */
  char signer[17];
} plc_ticket;

/* The verdict's name as the JSON of the C tools and the library say it: "valid", "not_licensed",
 * "none", "tampered", "expired", "clock". Never NULL. */
const char *plc_ticket_verdict_name(plc_ticket_verdict verdict);

/* Judges a ticket's bytes with the contract's reader rules, for app (NULL: PLUGIN_LICENSE_APP, else
 * "plugin-license"), project_id (any case) and now (Unix seconds), keyed by raw_machine_id (as the
 * OS gives it: normalised here, lowercase without dashes, braces or white space). len over
 * PLC_TICKET_MAX_BYTES is TAMPERED. Fills *out and returns its verdict. */
plc_ticket_verdict plc_ticket_judge(const char *bytes, size_t len, const char *app, const char *project_id, int64_t now,
                                    const char *raw_machine_id, plc_ticket *out);

/* Reads the ticket at path (bounded, non-blocking, no link followed, a regular file only) and
 * judges it as plc_ticket_judge: a missing file is NONE, anything else there that is not a ticket
 * of at most PLC_TICKET_MAX_BYTES is TAMPERED. The folder rule (the socket folder's): path is
 * DATA/tickets/NAME, and both folders, links resolved, must be the user's own (owned by this user,
 * writable by nobody else; Windows: folders), as must the file; a folder that fails, or that is no
 * folder (a file, a FIFO), is TAMPERED with the problem naming it, a missing one NONE. */
plc_ticket_verdict plc_ticket_read(const char *path, const char *app, const char *project_id, int64_t now,
                                   const char *raw_machine_id, plc_ticket *out);

/* The one call a plugin needs: this machine's ticket of project_id in app's data folder, judged at
 * now with this machine's raw id (plc_raw_machine_id). app_group (NULL: PLUGIN_LICENSE_APP_GROUP)
 * is used on macOS only, as for the socket. An unusable id or path is TAMPERED when a ticket is
 * there, NONE when none is. */
plc_ticket_verdict plc_ticket_check(const char *app, const char *app_group, const char *project_id, int64_t now, plc_ticket *out);

/* DATA/tickets/PROJECT_ID.ticket (lowercase id) by the library's one rule: PLUGIN_LICENSE_HOME/data;
 * else Linux $XDG_DATA_HOME/APP (an absolute one) or ~/.local/share/APP, Windows %LOCALAPPDATA%\APP\Data, macOS
 * ~/Library/Application Support/APP or ~/Library/Group Containers/GROUP/APP with an app group.
 * PLC_ERR_INVALID_ARGUMENT for a bad app, group or project id, PLC_ERR_NO_PATH without a home (or a
 * HOME set but empty or relative),
 * PLC_ERR_PATH_TOO_LONG when out is too small (never cut). UTF-8, on Windows too. */
plc_status plc_ticket_path(const char *app, const char *app_group, const char *project_id, char *out, size_t out_size);

/* This machine's raw id as the library reads and normalises it (Linux: the first line of
 * /var/lib/dbus/machine-id, else /etc/machine-id; macOS: IOPlatformUUID through IOKit; Windows:
 * HKLM\SOFTWARE\Microsoft\Cryptography\MachineGuid from the 64-bit view), read in-process once per
 * process; where the OS has none (or one the library would not take), the generated secret in app's
 * DATA/machine-secret, taken only from a data folder and a file of the user's own (the folder rule).
 * PLC_ERR_NO_FILE when neither exists (no ticket can be valid then). */
plc_status plc_raw_machine_id(const char *app, const char *app_group, char *out, size_t out_size);

/* ---- The signed ticket (docs/signed-ticket.md): anything may say no, only the vendor's signature says yes ----
 *
 * The ticket's MAC above is keyed by what anyone on the computer can read, so a script can write a
 * valid one. A vendor who runs the license relay (or signs offline responses) has the library
 * store DATA/tickets/PROJECT_ID.signed beside the ticket: two lines, line 1 a JSON object (v, kid,
 * app, project_id, machine_id, code_hint, source, issued_at, valid_until), line 2
 * "ed25519:KID:SIG", an Ed25519 signature by a key that never leaves the vendor. A plugin built
 * with the vendor's PUBLIC keys (compiled in: never from the environment, a file or the agent,
 * which whoever runs code as the user controls) judges by the reader's rule:
 *   1. the ticket (or an agent's answer) readable and not licensed: that answer;
 *   2. otherwise the signed ticket decides: the file's text (or the agent's signed_ticket when the
 *      agent answered valid) in its format, signed by one of the keys (its kid), for this app,
 *      project and machine (plc_machine_id), and issued_at - 3600 <= now <= valid_until: VALID,
 *      with its source, code_hint and times; else TAMPERED (cache_invalid), CLOCK (clock_tampered)
 *      or EXPIRED (grace_expired);
 *   3. no signed ticket: NONE when there is no ticket either (unknown, as before), else
 *      NOT_LICENSED with PLC_REASON_UNSIGNED: a ticket or an agent's "valid" alone is not enough.
 * With no keys (key_count 0) every call answers as the ticket's own rules above: nothing changes.
 * The same rule, on the same vectors, is packages/licensing's judgeLicense.
 * These calls allocate nothing; an Ed25519 verification is about a tenth of a millisecond, so
 * plc::Monitor verifies once per file version (plc_verify_cache). */

/* A vendor's public key, parsed once (plc_ticket_key_parse). */
typedef struct plc_ticket_key {
  unsigned char public_key[32]; /* the raw 32 bytes */
  char kid[17];                 /* its id: the first 8 bytes of its SHA-256, lowercase hex (offline keygen's key_id) */
  const char *problem;          /* after a refused parse, why, in English (static text); NULL once parsed */
} plc_ticket_key;

/* What a caller keeps so that identical bytes are verified once: the last signed ticket whose
 * signature verified, and the key it verified with. Zero it (or len = 0) before the first use; one
 * thread at a time (plc::Monitor keeps one per project). */
typedef struct plc_verify_cache {
  size_t len; /* 0: empty */
  unsigned char public_key[32];
  char bytes[PLC_TICKET_MAX_BYTES];
} plc_verify_cache;

/* Whom a reader trusts: the vendor's keys (key_count 0 or keys NULL: none, the old rules), and
 * optionally where verified bytes are remembered. */
typedef struct plc_trust {
  const plc_ticket_key *keys;
  size_t key_count;
  plc_verify_cache *cache; /* NULL: verify every time */
} plc_trust;

/* Parses a public key as offline keygen prints it: the unpadded base64url of its raw 32 bytes (43
 * characters), "ed25519:" before it optional, white space around it ignored. Refused
 * (PLC_ERR_INVALID_ARGUMENT, out->problem says why): another length or alphabet, padding, unused
 * bits set, and a key no signature could be trusted under (y >= p, a point of small order, the
 * all-zero key, no point of the curve). PLC_OK fills public_key and kid. */
plc_status plc_ticket_key_parse(const char *text, plc_ticket_key *out);

/* Ed25519 (RFC 8032) verification of signature over message with public_key, with libsodium's
 * refusals before any curve arithmetic: S >= L, A or R not canonical (y >= p) or of small order.
 * 1 when it verifies, 0 otherwise. No allocation; the same work for any signature that gets past
 * the refusals. */
int plc_ed25519_verify(const unsigned char public_key[32], const void *message, size_t len, const unsigned char signature[64]);

/* The machine id a signed ticket names, as the library derives it for the service: "m1_" and the
 * lowercase hex HMAC-SHA256 keyed by the namespace app (NULL: PLUGIN_LICENSE_APP, else
 * "plugin-license") over raw_machine_id normalised (plc_raw_machine_id's). 68 bytes hold it with
 * its NUL. PLC_ERR_INVALID_ARGUMENT for a bad app or a buffer too small. */
plc_status plc_machine_id(const char *app, const char *raw_machine_id, char *out, size_t out_size);

/* DATA/tickets/PROJECT_ID.signed (lowercase id), beside plc_ticket_path's ticket, by the same rule. */
plc_status plc_signed_ticket_path(const char *app, const char *app_group, const char *project_id, char *out, size_t out_size);

/* Judges a signed ticket's bytes alone (rule 2): its format, key, signature, app, project, machine
 * (derived from raw_machine_id) and times. VALID, TAMPERED, CLOCK or EXPIRED; NONE only when the
 * trust has no keys (nothing can be judged then). */
plc_ticket_verdict plc_signed_ticket_judge(const char *bytes, size_t len, const plc_trust *trust, const char *app, const char *project_id,
                                           int64_t now, const char *raw_machine_id, plc_ticket *out);

/* The reader's rule from files: the ticket at ticket_path (as plc_ticket_read; NULL: none) and the
 * signed ticket at signed_path (NULL: beside the ticket, ID.signed for ID.ticket), read by the same
 * rules (its folders and the file the user's own, a regular file of at most PLC_TICKET_MAX_BYTES,
 * never blocking: anything else there is TAMPERED). */
plc_ticket_verdict plc_ticket_read_signed(const char *ticket_path, const char *signed_path, const plc_trust *trust, const char *app,
                                          const char *project_id, int64_t now, const char *raw_machine_id, plc_ticket *out);

/* The one call a plugin with the vendor's keys needs: plc_ticket_check with the signed ticket,
 * this machine's raw id, and the reader's rule. */
plc_ticket_verdict plc_ticket_check_signed(const char *app, const char *app_group, const char *project_id, int64_t now,
                                           const plc_trust *trust, plc_ticket *out);

/* The reader's rule on an agent's answer (a LicenseState from plc_check, plc_wait_change, ...): not
 * valid is NOT_LICENSED with its reason; valid needs its signed_ticket to pass rule 2 (none:
 * NOT_LICENSED, PLC_REASON_UNSIGNED), so a program answering "valid" on the user's socket unlocks
 * nothing. With no keys: the answer as it is (VALID, or NOT_LICENSED with its reason). */
plc_ticket_verdict plc_answer_judge(const plc_license *answer, const plc_trust *trust, const char *app, const char *project_id,
                                    int64_t now, const char *raw_machine_id, plc_ticket *out);

/* ---- The agent on demand ---- */

/* The vendor's installed executable by the rule "Manage licenses…" uses: PLUGIN_LICENSE_EXECUTABLE
 * when set, else the installers' place for vendor and name (Windows
 * %LOCALAPPDATA%\Programs\VENDOR\NAME.exe, macOS ~/Library/Application Support/VENDOR/NAME, Linux
 * ~/.local/bin/NAME). PLC_ERR_NO_FILE when that file does not exist or is not executable (out still
 * holds its path, to name in a message). name NULL or "": "plugin-license"; a vendor or name that is
 * not a plain file name (a separator, a control character, "." or "..") is PLC_ERR_INVALID_ARGUMENT,
 * as is no vendor where the place needs one (Windows, macOS). */
plc_status plc_default_executable(const char *vendor, const char *name, char *out, size_t out_size);

/* Starts `EXECUTABLE agent run --app APP` (executable: an absolute path; app NULL: PLUGIN_LICENSE_APP,
 * else "plugin-license"; a namespace the agent would refuse is PLC_ERR_INVALID_ARGUMENT, as is a
 * relative path) detached: its own session, no inherited descriptors or
 * handles, standard streams on the null device, working folder the user's home (else the root),
 * this process's environment. Returns at once (PLC_OK once the program was started; PLC_ERR_NO_FILE,
 * PLC_ERR_CONNECT when it could not be). It never waits for the agent: connect afterwards. No rate
 * limit here (plc::Monitor keeps one: at most once per 30 s per process and project). */
plc_status plc_start_agent(const char *executable, const char *app);

/* The one launcher plc_start_agent uses, for the vendor's other programs (the JUCE module starts
 * the license manager with it): argv[0] (an absolute path; NULL-terminated argv, argv[0] included)
 * started detached as plc_start_agent says. With output not NULL (POSIX only: on Windows it is
 * PLC_ERR_INVALID_ARGUMENT), the program's standard output is a pipe and *output its read end, a
 * close-on-exec descriptor the caller reads and closes (-1 when the call fails); else the null
 * device. *os_error (when not NULL) gets the system's error number of a failed start (errno;
 * Windows: GetLastError()), 0 otherwise. PLC_OK once the program runs (its exec succeeded);
 * PLC_ERR_NO_FILE when argv[0] is missing or not an executable file, PLC_ERR_CONNECT when it could
 * not be started otherwise. */
plc_status plc_start_program(const char *const *argv, intptr_t *output, int *os_error);

#ifdef __cplusplus
}
#endif

#endif /* PLC_H */
