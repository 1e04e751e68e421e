/*
 * Part of plc.c (compiled through it, never alone): the raw machine id on Linux and the BSDs, as
 * node-machine-id reads it for the library. macOS: darwin/machine_id.c; Windows: win/machine_id.c.
 */

/* Adds bytes up to and with the first newline to line; *complete once it came. */
static void take_line(char *line, size_t cap, size_t *n, const char *bytes, size_t len, int *complete) {
  for (size_t i = 0; i < len && !*complete; i++) {
    if (bytes[i] == '\n') *complete = 1;
    else if (*n + 1 < cap) line[(*n)++] = bytes[i];
    else *n = cap; /* too long for any id: not plausible */
  }
}

/* What node-machine-id runs, `( cat /var/lib/dbus/machine-id /etc/machine-id 2> /dev/null || hostname ) | head -n 1`,
 * read in-process: the first line of the two files' bytes, then the host name when either could not be read. */
static void read_os_raw_id(char *raw, size_t cap) {
  static const char *const files[] = {"/var/lib/dbus/machine-id", "/etc/machine-id"};
  char buf[PLC_TICKET_MAX_BYTES + 1];
  size_t n = 0, len;
  int complete = 0, failed = 0;
  found_kind found;
  for (size_t i = 0; i < 2; i++) {
    if (read_small_file(files[i], READ_FOLLOW_LINKS, buf, sizeof buf, &len, &found) != PLC_OK) failed = 1;
    else take_line(raw, cap, &n, buf, len, &complete);
  }
  if (failed && !complete && gethostname(buf, sizeof buf - 1) == 0) {
    buf[sizeof buf - 1] = '\0';
    take_line(raw, cap, &n, buf, strlen(buf), &complete);
  }
  raw[n < cap ? n : 0] = '\0';
  if (n >= cap) raw[0] = '\0';
}
