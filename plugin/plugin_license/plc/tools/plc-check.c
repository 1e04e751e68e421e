/*
 * plc-check: asks the agent for one project's license state and prints it as one JSON line;
 * also every other call of plc, one JSON line per answer (the tests drive plc through it).
 *
 *   plc-check SOCKET PROJECT_ID [TIMEOUT_MS] [REPEAT]      SOCKET "-" means the default path
 *   plc-check --default-path [APP]                         prints the default socket path
 *   plc-check --app-group-path GROUP [APP]                 prints the app-group socket path (macOS)
 *   plc-check activate SOCKET PROJECT_ID CODE [TIMEOUT_MS]
 *   plc-check deactivate|refresh SOCKET PROJECT_ID [TIMEOUT_MS]
 *   plc-check offline-request SOCKET PROJECT_ID CODE|- [TIMEOUT_MS]   "-": no code
 *   plc-check offline-import SOCKET FILE|- [TIMEOUT_MS]                "-": standard input
 *   plc-check watch SOCKET PROJECT_ID|- COUNT WAIT_MS      subscribe ("-": all), then print up to
 *                                                          COUNT changes, each awaited WAIT_MS
 *   plc-check interrupt SOCKET PROJECT_ID AFTER_MS         subscribe, wait for a change, and
 *                                                          interrupt the wait from elsewhere
 *   plc-check read-document FILE [CAP]                     plc_read_document (CAP: PLC_IMPORT_MAX_BYTES + 1)
 *
 * A failed call's "message" is plc_describe's words (who holds the path, when that is the failure).
 *
 * Exit status: 0 valid (or done), 1 not valid, 2 no answer (agent down, time-out, error), 64 usage.
 * REPEAT > 1 checks that many times over one plc_client and prints one line per answer.
 */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep, fork with -std=c11 */
#endif
#include "plc.h"
#include "json-out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef _WIN32
#include <windows.h>
#else
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static const char *status_name(plc_status st) {
  switch (st) {
    case PLC_OK: return "ok";
    case PLC_ERR_INVALID_ARGUMENT: return "invalid_argument";
    case PLC_ERR_PATH_TOO_LONG: return "path_too_long";
    case PLC_ERR_NO_PATH: return "no_path";
    case PLC_ERR_NOT_RUNNING: return "not_running";
    case PLC_ERR_CONNECT: return "connect";
    case PLC_ERR_TIMEOUT: return "timeout";
    case PLC_ERR_IO: return "io";
    case PLC_ERR_CLOSED: return "closed";
    case PLC_ERR_TOO_LARGE: return "too_large";
    case PLC_ERR_PROTOCOL: return "protocol";
    case PLC_ERR_AGENT: return "agent_error";
    case PLC_ERR_FOREIGN_AGENT: return "foreign_agent";
    case PLC_ERR_INTERRUPTED: return "interrupted";
    case PLC_ERR_AGENT_OUTDATED: return "agent_outdated";
    case PLC_ERR_FOREIGN_FOLDER: return "foreign_folder";
    case PLC_ERR_NOT_A_FILE: return "not_a_file";
    case PLC_ERR_FILE_TOO_LARGE: return "file_too_large";
    case PLC_ERR_NO_FILE: return "no_file";
    case PLC_ERR_FILE_UNREADABLE: return "file_unreadable";
  }
  return "unknown";
}

static void print_text_or_null(const char *key, const char *value) {
  printf(",\"%s\":", key);
  if (value[0] == '\0') fputs("null", stdout);
  else print_json_string(value);
}

static plc_client client; /* 4 KiB buffer inside: keep it off the stack */

static void print_message(plc_status st) {
  char words[512];
  fputs(",\"message\":", stdout);
  print_json_string(plc_describe(&client, st, words, sizeof words));
}

static int print_answer(plc_status st, const plc_license *lic) {
  printf("{\"status\":\"%s\"", status_name(st));
  if (st == PLC_OK) {
    static const char *const sources[] = {"unknown", "online", "cache", "offline"};
    printf(",\"valid\":%s", lic->valid ? "true" : "false");
    print_text_or_null("reason", lic->reason_text);
    printf(",\"reason_enum\":\"%s\",\"source\":\"%s\"", lic->reason == PLC_REASON_NONE ? "none" : plc_reason_name(lic->reason),
           sources[lic->source]);
    print_text_or_null("project_id", lic->project_id);
    print_text_or_null("code_hint", lic->code_hint);
    printf(",\"activations\":%ld,\"max_activations\":%ld", lic->activations, lic->max_activations);
    print_text_or_null("validated_at", lic->validated_at);
    printf(",\"validated_at_s\":%lld", (long long)lic->validated_at_s);
    print_text_or_null("grace_until", lic->grace_until);
    printf(",\"grace_until_s\":%lld", (long long)lic->grace_until_s);
    print_text_or_null("next_check_at", lic->next_check_at);
    printf(",\"next_check_at_s\":%lld", (long long)lic->next_check_at_s);
  } else {
    print_message(st);
    if (st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) {
      printf(",\"error_code\":%ld", lic->error_code);
      print_text_or_null("error_message", lic->error_message);
      print_text_or_null("error_detail", lic->error_detail);
    }
  }
  puts("}");
  fflush(stdout);
  return st != PLC_OK ? 2 : lic->valid ? 0 : 1;
}

static int usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s SOCKET|- PROJECT_ID [TIMEOUT_MS] [REPEAT]\n"
          "       %s --default-path [APP]\n"
          "       %s --app-group-path GROUP [APP]\n"
          "       %s activate SOCKET PROJECT_ID CODE [TIMEOUT_MS]\n"
          "       %s deactivate|refresh SOCKET PROJECT_ID [TIMEOUT_MS]\n"
          "       %s offline-request SOCKET PROJECT_ID CODE|- [TIMEOUT_MS]\n"
          "       %s offline-import SOCKET FILE|- [TIMEOUT_MS]\n"
          "       %s watch SOCKET PROJECT_ID|- COUNT WAIT_MS\n"
          "       %s interrupt SOCKET PROJECT_ID AFTER_MS\n"
          "       %s read-document FILE [CAP]\n",
          argv0, argv0, argv0, argv0, argv0, argv0, argv0, argv0, argv0, argv0);
  return 64;
}

static const char *socket_arg(const char *arg) { return strcmp(arg, "-") == 0 ? NULL : arg; }

static long long monotonic_ms(void) {
#ifdef _WIN32
  return (long long)GetTickCount64();
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
#endif
}

static char document[PLC_IMPORT_MAX_BYTES + 2];

static int offline_request(int argc, char **argv) {
  static plc_document doc;
  if (argc < 5 || argc > 6) return usage(argv[0]);
  plc_init(&client, socket_arg(argv[2]));
  plc_status st = plc_offline_request(&client, argv[3], strcmp(argv[4], "-") == 0 ? NULL : argv[4], &doc, argc == 6 ? atoi(argv[5]) : 0);
  printf("{\"status\":\"%s\"", status_name(st));
  if (st == PLC_OK) {
    print_text_or_null("document", doc.text);
    print_text_or_null("file_name", doc.file_name);
  } else {
    print_message(st);
    if (st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) {
      printf(",\"error_code\":%ld", doc.error_code);
      print_text_or_null("error_message", doc.error_message);
      print_text_or_null("error_detail", doc.error_detail);
    }
  }
  puts("}");
  plc_close(&client);
  return st == PLC_OK ? 0 : 2;
}

static int offline_import(int argc, char **argv) {
  plc_license lic;
  FILE *in;
  size_t n;
  if (argc < 4 || argc > 5) return usage(argv[0]);
  in = strcmp(argv[3], "-") == 0 ? stdin : fopen(argv[3], "rb");
  if (in == NULL) {
    fprintf(stderr, "cannot open %s\n", argv[3]);
    return 64;
  }
  n = fread(document, 1, sizeof document - 1, in);
  document[n] = '\0';
  if (in != stdin) fclose(in);
  plc_init(&client, socket_arg(argv[2]));
  int code = print_answer(plc_offline_import(&client, document, &lic, argc == 5 ? atoi(argv[4]) : 0), &lic);
  plc_close(&client);
  return code;
}

/* Subscribes, prints the current state ("event":"state"), then up to COUNT changes. */
static int watch(int argc, char **argv) {
  plc_license lic;
  const char *project = strcmp(argv[3], "-") == 0 ? NULL : argv[3];
  int count, wait_ms, code = 2;
  if (argc != 6) return usage(argv[0]);
  count = atoi(argv[4]);
  wait_ms = atoi(argv[5]);
  plc_init(&client, socket_arg(argv[2]));
  plc_status st = plc_subscribe(&client, project, &lic, 5000);
  if (st != PLC_OK) return print_answer(st, &lic);
  fputs("{\"event\":\"subscribed\"}\n", stdout);
  fflush(stdout);
  for (int i = 0; i < count; i++) {
    st = plc_wait_change(&client, &lic, wait_ms);
    code = print_answer(st, &lic);
    if (st != PLC_OK) break;
  }
  plc_close(&client);
  return code;
}

/* A wait of a minute for a change, ended by another party after AFTER_MS through the interrupt
 * handle: prints the status and how long the wait took. */
static int interrupt_wait(int argc, char **argv) {
  plc_license lic;
  long long started;
  int after_ms;
  if (argc != 5) return usage(argv[0]);
  after_ms = atoi(argv[4]);
  plc_init(&client, socket_arg(argv[2]));
  plc_status st = plc_subscribe(&client, argv[3], &lic, 5000);
  if (st != PLC_OK) return print_answer(st, &lic);
#ifdef _WIN32
  /* The other party: a manual-reset waitable timer is an event that signals itself after AFTER_MS. */
  HANDLE timer = CreateWaitableTimerA(NULL, TRUE, NULL);
  LARGE_INTEGER due;
  due.QuadPart = -(LONGLONG)after_ms * 10000;
  plc_set_interrupt(&client, (intptr_t)timer);
  started = monotonic_ms();
  SetWaitableTimer(timer, &due, 0, NULL, NULL, FALSE);
  st = plc_wait_change(&client, &lic, 60000);
  CloseHandle(timer);
#else
  int fds[2];
  pid_t child;
  if (pipe(fds) != 0) return 2;
  plc_set_interrupt(&client, fds[0]);
  started = monotonic_ms();
  child = fork();
  if (child == 0) {
    struct timespec pause;
    pause.tv_sec = after_ms / 1000;
    pause.tv_nsec = (long)(after_ms % 1000) * 1000000L;
    nanosleep(&pause, NULL);
    if (write(fds[1], "x", 1) != 1) _exit(1);
    _exit(0);
  }
  st = plc_wait_change(&client, &lic, 60000);
  waitpid(child, NULL, 0);
  close(fds[0]);
  close(fds[1]);
#endif
  plc_set_interrupt(&client, PLC_NO_INTERRUPT);
  printf("{\"status\":\"%s\",\"elapsed_ms\":%lld,\"connected\":%s}\n", status_name(st), monotonic_ms() - started,
         plc_wait_change(&client, &lic, 0) == PLC_ERR_TIMEOUT ? "true" : "false");
  plc_close(&client);
  return st == PLC_ERR_INTERRUPTED ? 0 : 2;
}

/* plc_read_document: prints the status, the bytes read and the words. */
static int read_document(int argc, char **argv) {
  size_t cap = argc == 4 ? (size_t)strtoul(argv[3], NULL, 10) : sizeof document - 1;
  size_t len = 0;
  plc_status st;
  if (argc < 3 || argc > 4 || cap == 0 || cap > sizeof document) return usage(argv[0]);
  st = plc_read_document(argv[2], document, cap, &len);
  printf("{\"status\":\"%s\",\"bytes\":%lu,\"text_bytes\":%lu", status_name(st), (unsigned long)len, (unsigned long)strlen(document));
  if (st != PLC_OK) print_message(st);
  puts("}");
  return st == PLC_OK ? 0 : 2;
}

int main(int argc, char **argv) {
  plc_license lic;
  if (argc >= 2 && (strcmp(argv[1], "--default-path") == 0 || strcmp(argv[1], "--app-group-path") == 0)) {
    char path[PLC_PATH_CAP];
    plc_status st = strcmp(argv[1], "--default-path") == 0 ? plc_default_socket_path(argc >= 3 ? argv[2] : NULL, path, sizeof path)
                    : argc >= 3 ? plc_app_group_socket_path(argv[2], argc >= 4 ? argv[3] : NULL, path, sizeof path)
                                : PLC_ERR_INVALID_ARGUMENT;
    if (st != PLC_OK) {
      char words[512];
      printf("{\"status\":\"%s\",\"message\":", status_name(st));
      print_json_string(plc_describe(&client, st, words, sizeof words)); /* a client's words: its path is the socket's */
      puts("}");
      return 2;
    }
    printf("{\"status\":\"ok\",\"path\":");
    print_json_string(path);
    puts("}");
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "activate") == 0) {
    if (argc < 5 || argc > 6) return usage(argv[0]);
    plc_init(&client, socket_arg(argv[2]));
    return print_answer(plc_activate(&client, argv[3], argv[4], &lic, argc == 6 ? atoi(argv[5]) : 0), &lic);
  }
  if (argc >= 2 && (strcmp(argv[1], "deactivate") == 0 || strcmp(argv[1], "refresh") == 0)) {
    int timeout_ms = argc == 5 ? atoi(argv[4]) : 0;
    if (argc < 4 || argc > 5) return usage(argv[0]);
    plc_init(&client, socket_arg(argv[2]));
    return print_answer(strcmp(argv[1], "deactivate") == 0 ? plc_deactivate(&client, argv[3], &lic, timeout_ms)
                                                          : plc_refresh(&client, argv[3], &lic, timeout_ms),
                        &lic);
  }
  if (argc >= 2 && strcmp(argv[1], "offline-request") == 0) return offline_request(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "offline-import") == 0) return offline_import(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "watch") == 0) return argc == 6 ? watch(argc, argv) : usage(argv[0]);
  if (argc >= 2 && strcmp(argv[1], "interrupt") == 0) return interrupt_wait(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "read-document") == 0) return read_document(argc, argv);
  if (argc < 3 || argc > 5) return usage(argv[0]);
  int timeout_ms = argc >= 4 ? atoi(argv[3]) : PLC_DEFAULT_TIMEOUT_MS;
  int repeat = argc >= 5 ? atoi(argv[4]) : 1;
  if (repeat < 1 || repeat > 1000) {
    fprintf(stderr, "REPEAT must be 1 to 1000\n");
    return 64;
  }

  int code = 2;
  plc_init(&client, socket_arg(argv[1]));
  for (int i = 0; i < repeat; i++) {
    plc_status st = plc_check(&client, argv[2], &lic, timeout_ms);
    code = print_answer(st, &lic);
  }
  plc_close(&client);
  return code;
}
