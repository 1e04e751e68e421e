/*
 * plc-ticket: judges a license ticket (docs/license-ticket.md) with plc's own reader, as a plugin
 * would, and prints the verdict as one JSON line. For support staff and the tests. With the
 * vendor's public keys (--key, repeatable), the signed ticket beside it too, by the reader's rule
 * of docs/signed-ticket.md (plc_ticket_check_signed, plc_ticket_read_signed).
 *
 *   plc-ticket [--app APP] [--app-group GROUP] [--now UNIX_S] [--machine-id RAW] [--file PATH]
 *              [--key PUBLIC_KEY]... [--signed-file PATH] PROJECT_ID
 *
 * Exit status: 0 valid; 1 not licensed, tampered, expired or clock; 3 none (no ticket); 2 usage.
 */
#include "plc.h"
#include "json-out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char help[] =
    "usage: plc-ticket [--app APP] [--app-group GROUP] [--now UNIX_S] [--machine-id RAW] [--file PATH]\n"
    "                  [--key PUBLIC_KEY]... [--signed-file PATH] PROJECT_ID\n"
    "\n"
    "Judges this computer's license ticket of PROJECT_ID the way a plugin does, without the agent,\n"
    "and prints one JSON line: verdict (valid, not_licensed, none, tampered, expired, clock), reason,\n"
    "source, code_hint, issued_at, valid_until (Unix seconds), problem (what a tampered ticket\n"
    "failed), path, and with keys signer (the signed ticket's key id, once its line 2 was read).\n"
    "It never prints a machine id, a code or a private key.\n"
    "\n"
    "  --app APP          the vendor's namespace (default: PLUGIN_LICENSE_APP, else plugin-license)\n"
    "  --app-group GROUP  macOS: the vendor's app group (default: PLUGIN_LICENSE_APP_GROUP)\n"
    "  --now UNIX_S       judge at this time instead of the clock's\n"
    "  --machine-id RAW   the raw machine id to key with, instead of this computer's\n"
    "  --file PATH        this ticket file instead of the namespace's DATA/tickets/PROJECT_ID.ticket\n"
    "  --key PUBLIC_KEY   a public key of the vendor's (\"ed25519:\" and 43 base64url characters, as\n"
    "                     plugin-license offline keygen prints it; repeatable): judge as a plugin built\n"
    "                     with these keys, which plays only on a ticket signed by one of them\n"
    "  --signed-file PATH the signed ticket instead of the one beside the ticket (PROJECT_ID.signed)\n"
    "\n"
    "Exit status: 0 valid; 1 not licensed, tampered, expired or clock; 3 no ticket; 2 usage.\n";

static int usage(const char *message) {
  fprintf(stderr, "plc-ticket: %s\nRun plc-ticket --help for the options.\n", message);
  return 2;
}

#define MAX_KEYS 16

static void print_field(const char *key, const char *value) {
  printf(",\"%s\":", key);
  if (value == NULL || value[0] == '\0') fputs("null", stdout);
  else print_json_string(value);
}

int main(int argc, char **argv) {
  const char *app = NULL, *group = NULL, *machine_id = NULL, *file = NULL, *project = NULL, *signed_file = NULL;
  static plc_ticket_key keys[MAX_KEYS];
  plc_trust trust = {keys, 0, NULL};
  int64_t now = (int64_t)time(NULL);
  char path[1024], raw[PLC_MACHINE_ID_CAP];
  plc_ticket t;
  plc_ticket_verdict v;
  static const char *const sources[] = {"", "online", "cache", "offline"};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(help, stdout);
      return 0;
    }
    if (strcmp(a, "--app") == 0 || strcmp(a, "--app-group") == 0 || strcmp(a, "--now") == 0 || strcmp(a, "--machine-id") == 0 ||
        strcmp(a, "--file") == 0 || strcmp(a, "--key") == 0 || strcmp(a, "--signed-file") == 0) {
      if (i + 1 >= argc) return usage("an option needs a value");
      const char *value = argv[++i];
      if (strcmp(a, "--key") == 0) {
        if (trust.key_count == MAX_KEYS) return usage("at most 16 keys (--key)");
        if (plc_ticket_key_parse(value, &keys[trust.key_count]) != PLC_OK) {
          fprintf(stderr, "plc-ticket: --key (key %u) is %s\nRun plc-ticket --help for the options.\n", (unsigned)trust.key_count + 1,
                  keys[trust.key_count].problem);
          return 2;
        }
        trust.key_count++;
      } else if (strcmp(a, "--signed-file") == 0) {
        signed_file = value;
      } else if (strcmp(a, "--app") == 0) app = value;
      else if (strcmp(a, "--app-group") == 0) group = value;
      else if (strcmp(a, "--machine-id") == 0) machine_id = value;
      else if (strcmp(a, "--file") == 0) file = value;
      else {
        char *end = NULL;
        errno = 0;
        long long n = strtoll(value, &end, 10);
        if (value[0] == '\0' || end == NULL || *end != '\0' || errno != 0) return usage("--now takes Unix seconds, e.g. --now 1768478460");
        now = (int64_t)n;
      }
    } else if (a[0] == '-' && a[1] == '-') {
      return usage("unknown option");
    } else if (project != NULL) {
      return usage("one PROJECT_ID only");
    } else {
      project = a;
    }
  }
  if (project == NULL) return usage("give the PROJECT_ID (a UUID, as in the vendor's dashboard)");
  if (signed_file != NULL && (trust.key_count == 0 || signed_file[0] == '\0'))
    return usage("--signed-file needs a path and at least one --key (without keys the ticket alone decides)");
  path[0] = '\0';
  if (file == NULL) {
    plc_status st = plc_ticket_path(app, group, project, path, sizeof path);
    if (st == PLC_ERR_INVALID_ARGUMENT) return usage("the PROJECT_ID must be a UUID and the app 1-64 letters, digits, '.', '_' or '-' (or the app group is not valid)");
    if (st != PLC_OK) {
      fprintf(stderr, "plc-ticket: no ticket path: %s\n",
              st == PLC_ERR_PATH_TOO_LONG ? "the ticket's path would be longer than plc-ticket holds (1023 bytes); set a shorter PLUGIN_LICENSE_HOME (or XDG_DATA_HOME), or pass --file"
                                          : "no home folder to find the data folder in; set HOME or PLUGIN_LICENSE_HOME, or pass --file");
      return 2;
    }
  } else {
    size_t n = strlen(file);
    if (n == 0 || n >= sizeof path) return usage("--file needs a path");
    memcpy(path, file, n + 1);
  }
  if (file == NULL && machine_id == NULL && signed_file == NULL) {
    v = plc_ticket_check_signed(app, group, project, now, &trust, &t); /* what a plugin calls (no keys: plc_ticket_check) */
  } else {
    if (machine_id == NULL && plc_raw_machine_id(app, group, raw, sizeof raw) == PLC_OK) machine_id = raw;
    v = plc_ticket_read_signed(path, signed_file, &trust, app, project, now, machine_id, &t);
  }
  printf("{\"verdict\":\"%s\"", plc_ticket_verdict_name(v));
  print_field("reason", t.reason == PLC_REASON_NONE ? NULL : plc_reason_name(t.reason));
  print_field("source", sources[t.source <= PLC_SOURCE_OFFLINE ? t.source : 0]);
  print_field("code_hint", t.code_hint);
  if (t.source != PLC_SOURCE_UNKNOWN) printf(",\"issued_at\":%lld,\"valid_until\":%lld", (long long)t.issued_at, (long long)t.valid_until);
  else fputs(",\"issued_at\":null,\"valid_until\":null", stdout);
  print_field("problem", t.problem);
  print_field("path", path);
  if (trust.key_count > 0) print_field("signer", t.signer);
  fputs("}\n", stdout);
  return v == PLC_TICKET_VALID ? 0 : v == PLC_TICKET_NONE ? 3 : 1;
}
