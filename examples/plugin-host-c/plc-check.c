/*
 * plc-check: asks the agent for one project's license state and prints it as one JSON line.
 *
 *   plc-check SOCKET PROJECT_ID [TIMEOUT_MS] [REPEAT]   SOCKET "-" means the default path
 *   plc-check --default-path [APP]                      prints the default socket path
 *
 * Exit status: 0 valid, 1 not valid, 2 no answer (agent down, time-out, error), 64 usage.
 * REPEAT > 1 checks that many times over one plc_client and prints one line per answer.
 */
#include "plc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  }
  return "unknown";
}

static void print_json_string(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if (*p < 0x20) printf("\\u%04x", *p);
    else putchar(*p);
  }
  putchar('"');
}

static void print_text_or_null(const char *key, const char *value) {
  printf(",\"%s\":", key);
  if (value[0] == '\0') fputs("null", stdout);
  else print_json_string(value);
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
    fputs(",\"message\":", stdout);
    print_json_string(plc_strerror(st));
    if (st == PLC_ERR_AGENT) {
      printf(",\"error_code\":%ld", lic->error_code);
      print_text_or_null("error_message", lic->error_message);
      print_text_or_null("error_detail", lic->error_detail);
    }
  }
  puts("}");
  fflush(stdout);
  return st != PLC_OK ? 2 : lic->valid ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "--default-path") == 0) {
    char path[PLC_PATH_CAP];
    plc_status st = plc_default_socket_path(argc >= 3 ? argv[2] : NULL, path, sizeof path);
    if (st != PLC_OK) {
      printf("{\"status\":\"%s\",\"message\":", status_name(st));
      print_json_string(plc_strerror(st));
      puts("}");
      return 2;
    }
    printf("{\"status\":\"ok\",\"path\":");
    print_json_string(path);
    puts("}");
    return 0;
  }
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: %s SOCKET|- PROJECT_ID [TIMEOUT_MS] [REPEAT]\n       %s --default-path [APP]\n", argv[0],
            argv[0]);
    return 64;
  }
  int timeout_ms = argc >= 4 ? atoi(argv[3]) : PLC_DEFAULT_TIMEOUT_MS;
  int repeat = argc >= 5 ? atoi(argv[4]) : 1;
  if (repeat < 1 || repeat > 1000) {
    fprintf(stderr, "REPEAT must be 1 to 1000\n");
    return 64;
  }

  static plc_client client; /* 4 KiB buffer inside: keep it off the stack */
  plc_license lic;
  int code = 2;
  plc_init(&client, strcmp(argv[1], "-") == 0 ? NULL : argv[1]);
  for (int i = 0; i < repeat; i++) {
    plc_status st = plc_check(&client, argv[2], &lic, timeout_ms);
    code = print_answer(st, &lic);
  }
  plc_close(&client);
  return code;
}
