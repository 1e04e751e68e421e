/*
 * Part of plc.c (compiled through it, never alone): the words of plc's enums, as curl's
 * strerror.c: a status in English, a reason's and a ticket verdict's protocol names.
 */

const char *plc_strerror(plc_status status) {
  switch (status) {
    case PLC_OK: return "ok";
    case PLC_ERR_INVALID_ARGUMENT: return "invalid argument (NULL, empty or too long)";
    /* One status for every path a call makes (the socket's, the executable's, the ticket's): the
     * words fit each; plc_describe and the calls' callers say which it was. */
    case PLC_ERR_PATH_TOO_LONG:
      return "a path is longer than the platform or the buffer allows, never cut (the agent's socket: set a shorter PLUGIN_LICENSE_SOCKET; "
             "the data folder: PLUGIN_LICENSE_HOME; the executable: PLUGIN_LICENSE_EXECUTABLE)";
    case PLC_ERR_NO_PATH: return "no default path: no home folder or user name to make it from (set HOME, or PLUGIN_LICENSE_SOCKET for the agent's socket)";
    case PLC_ERR_NOT_RUNNING: return "the agent is not running; treat the license as unknown and retry later";
    case PLC_ERR_CONNECT: return "could not connect to the agent socket (permission, or not a socket)";
    case PLC_ERR_TIMEOUT: return "the agent did not answer in time";
    case PLC_ERR_IO: return "a socket read or write failed";
    case PLC_ERR_CLOSED: return "the agent closed the connection before answering";
    case PLC_ERR_TOO_LARGE: return "the agent's answer is larger than the client buffer (PLC_BUFFER_SIZE)";
    case PLC_ERR_PROTOCOL: return "the agent's answer is not a valid protocol message";
    case PLC_ERR_AGENT: return "the agent answered with an error";
    case PLC_ERR_FOREIGN_AGENT: return "another user's program answers on the agent's socket or pipe; nothing was sent to it (start your own agent, or ask your administrator)";
    case PLC_ERR_INTERRUPTED: return "the call was interrupted";
    case PLC_ERR_AGENT_OUTDATED: return "the license agent needs an update: it does not know this request";
    case PLC_ERR_FOREIGN_FOLDER: return "the agent's socket folder belongs to another user, is writable by others or is a link; nothing was sent (remove that folder, or set PLUGIN_LICENSE_SOCKET to a path in a private folder of yours)";
    case PLC_ERR_NOT_A_FILE: return "this is not a regular file (a pipe, a device or a folder); nothing was read: choose the file itself";
    case PLC_ERR_FILE_TOO_LARGE: return "the file is far larger than the document it should be; nothing was read: choose the right file";
    case PLC_ERR_NO_FILE: return "no such file";
    case PLC_ERR_FILE_UNREADABLE: return "the file cannot be read (permission or a read error)";
  }
  return "unknown status";
}

/* By the enum's value: PLC_REASON_OTHER's word is "other", and PLC_REASON_UNSIGNED came after it. */
static const char *const reason_names[] = {
    "", "not_activated", "code_revoked", "code_not_found", "deactivated",
    "grace_expired", "clock_tampered", "cache_invalid", "other", "unsigned",
};

const char *plc_reason_name(plc_reason reason) {
  if ((int)reason >= 0 && (size_t)reason < sizeof reason_names / sizeof reason_names[0]) return reason_names[reason];
  return "other";
}

/* A reason's protocol name to the enum: "" none, a name this client does not know PLC_REASON_OTHER. */
PLC_SHARED plc_reason reason_from_text(const char *text) {
  if (text[0] == '\0') return PLC_REASON_NONE;
  for (size_t i = 1; i < sizeof reason_names / sizeof reason_names[0]; i++)
    if (strcmp(text, reason_names[i]) == 0) return (plc_reason)i;
  return PLC_REASON_OTHER;
}

const char *plc_ticket_verdict_name(plc_ticket_verdict verdict) {
  switch (verdict) {
    case PLC_TICKET_NONE: return "none";
    case PLC_TICKET_VALID: return "valid";
    case PLC_TICKET_NOT_LICENSED: return "not_licensed";
    case PLC_TICKET_TAMPERED: return "tampered";
    case PLC_TICKET_EXPIRED: return "expired";
    case PLC_TICKET_CLOCK: return "clock";
  }
  return "unknown";
}
