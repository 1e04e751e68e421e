/*
 * Part of plc.c (compiled through it, never alone): the agent client. Where the agent listens,
 * one connection per plc_client (opened on demand, kept, reopened once when the agent closed it
 * idle), one request at a time with one deadline, the calls of plc.h and the subscription. The
 * transport is the OS's (unix/transport.c, win/transport.c); the messages are protocol.c's.
 */

/* ---------------------------------------------------------------- where the agent listens */

static plc_status fit_path(const char *path, size_t len, char *out, size_t out_size) {
  if (!socket_path_fits(len)) return PLC_ERR_PATH_TOO_LONG;
  if (len + 1 > out_size) return PLC_ERR_PATH_TOO_LONG;
  memcpy(out, path, len + 1);
  return PLC_OK;
}

/* A socket path made of parts (the OS's places.c), then fit as plc_default_socket_path says. */
static plc_status socket_path_of(const char *const *parts, size_t count, char *out, size_t out_size) {
  char path[PLC_DATA_CAP];
  path[0] = '\0';
  if (join_parts(path, sizeof path, parts, count) != 0) return PLC_ERR_PATH_TOO_LONG;
  return fit_path(path, strlen(path), out, out_size);
}

/* PLUGIN_LICENSE_SOCKET wins (1, its status in *st); else 0 with *app the namespace in effect: the
 * argument, else PLUGIN_LICENSE_APP, else "plugin-license". */
static int socket_from_env(const char **app, char *out, size_t out_size, plc_status *st) {
  const char *env = getenv("PLUGIN_LICENSE_SOCKET");
  if (env != NULL && env[0] != '\0') {
    *st = fit_path(env, strlen(env), out, out_size);
    return 1;
  }
  if (*app == NULL || (*app)[0] == '\0') *app = getenv("PLUGIN_LICENSE_APP");
  if (*app == NULL || (*app)[0] == '\0') *app = PLC_DEFAULT_APP;
  return 0;
}

plc_status plc_default_socket_path(const char *app, char *out, size_t out_size) {
  plc_status st;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  if (socket_from_env(&app, out, out_size, &st)) return st;
  return socket_place(app, out, out_size);
}

plc_status plc_app_group_socket_path(const char *group, const char *app, char *out, size_t out_size) {
  plc_status st;
  if (out == NULL || out_size == 0) return PLC_ERR_INVALID_ARGUMENT;
  out[0] = '\0';
  if (!valid_group(group)) return PLC_ERR_INVALID_ARGUMENT;
  if (socket_from_env(&app, out, out_size, &st)) return st;
  return group_socket_place(group, app, out, out_size);
}

/* ---------------------------------------------------------------- waiting */

/*
 * The one check every waiting loop makes on each turn (connect, send, each read of an answer or a
 * change, each line skipped), whatever arrived meanwhile: the interrupt, then the call's one
 * deadline, computed once when the call began. A read that finds bytes waiting never blocks, so
 * without this a peer streaming lines would hold a call past both. `enforce_deadline` is 0 only
 * for a call's first read and the lines it brought (at most PLC_BUFFER_SIZE bytes): a 0 time-out
 * still takes what has arrived.
 */
static plc_status still_waiting(const plc_client *c, int64_t deadline, int enforce_deadline) {
  if (interrupt_signalled(c)) return PLC_ERR_INTERRUPTED;
  if (enforce_deadline && remaining_ms(deadline) == 0) return PLC_ERR_TIMEOUT;
  return PLC_OK;
}

/* ---------------------------------------------------------------- the connection */

void plc_init(plc_client *client, const char *socket_path) {
  if (client == NULL) return;
  memset(client, 0, sizeof *client);
  transport_init(client);
  client->interrupt = PLC_NO_INTERRUPT;
  client->holder = -1;
  if (socket_path != NULL && socket_path[0] != '\0') {
    size_t n = strlen(socket_path);
    client->path_status = fit_path(socket_path, n, client->path, sizeof client->path);
  } else {
    client->path_status = plc_default_socket_path(NULL, client->path, sizeof client->path);
  }
  if (client->path_status != PLC_OK) client->path[0] = '\0';
}

void plc_set_interrupt(plc_client *client, intptr_t handle) {
  if (client != NULL) client->interrupt = handle;
}

intptr_t plc_waker_handle(const plc_waker *waker) { return waker == NULL ? PLC_NO_INTERRUPT : waker->wait_handle; }

void plc_close(plc_client *client) {
  if (client == NULL) return;
  transport_close(client);
  client->len = 0;
}

static plc_status connect_until(plc_client *client, int64_t deadline) {
  if (client->path_status != PLC_OK) return client->path_status;
  if (client->path[0] == '\0') return PLC_ERR_NO_PATH;
  client->len = 0;
  return transport_connect(client, deadline);
}

plc_status plc_connect(plc_client *client, int timeout_ms) {
  if (client == NULL) return PLC_ERR_INVALID_ARGUMENT;
  if (transport_is_open(client)) return PLC_OK;
  if (timeout_ms <= 0) timeout_ms = PLC_DEFAULT_TIMEOUT_MS;
  return connect_until(client, now_ms() + timeout_ms);
}

/* Finds the next complete line in the buffer, reading more when needed. `reads` counts the reads
 * of the whole call: every read but its first is a turn of a waiting loop (still_waiting). */
static plc_status next_line(plc_client *c, size_t *line_len, int64_t deadline, unsigned *reads) {
  size_t scanned = 0;
  for (;;) {
    const char *nl = memchr(c->buf + scanned, '\n', c->len - scanned);
    if (nl != NULL) {
      *line_len = (size_t)(nl - c->buf);
      return PLC_OK;
    }
    scanned = c->len;
    if (c->len == sizeof c->buf) return PLC_ERR_TOO_LARGE;
    plc_status st = still_waiting(c, deadline, *reads > 0);
    if (st != PLC_OK) return st;
    ++*reads;
    size_t got = 0;
    st = transport_recv(c, c->buf + c->len, sizeof c->buf - c->len, &got, deadline);
    if (st != PLC_OK) return st;
    c->len += got;
  }
}

static void drop_line(plc_client *c, size_t line_len) {
  size_t used = line_len + 1;
  memmove(c->buf, c->buf + used, c->len - used);
  c->len -= used;
}

static void reset_license(plc_license *out) {
  memset(out, 0, sizeof *out);
  out->activations = -1;
  out->max_activations = -1;
}

/* ---------------------------------------------------------------- requests */

/* Reads lines until the answer to `id`: its result parsed by `parse` into `out`, or its error
 * into `err`. Notifications and answers to other ids are skipped. */
static plc_status await_answer(plc_client *c, unsigned long id, result_parser parse, void *out, plc_license *err,
                               int64_t deadline, int *answered_bytes) {
  unsigned reads = 0;
  for (;;) {
    size_t line_len = 0;
    const char *at = NULL;
    plc_status st = next_line(c, &line_len, deadline, &reads);
    if (c->len > 0) *answered_bytes = 1;
    if (st != PLC_OK) return st;
    line_kind kind = classify(c->buf, line_len, id, &at);
    if (kind == LINE_RESULT || kind == LINE_ERROR) {
      json_scan s;
      int r;
      s.p = at;
      s.end = c->buf + line_len;
      if (kind == LINE_ERROR) {
        reset_license(err);
        r = parse_error(&s, err);
        st = r != 0 ? PLC_ERR_PROTOCOL : err->error_code == -32601 ? PLC_ERR_AGENT_OUTDATED : PLC_ERR_AGENT;
      } else {
        r = parse(&s, out);
        st = r == 0 ? PLC_OK : r == 1 ? PLC_ERR_TOO_LARGE : PLC_ERR_PROTOCOL;
      }
      drop_line(c, line_len);
      return st;
    }
    drop_line(c, line_len);
    if (kind == LINE_BAD) return PLC_ERR_PROTOCOL;
    st = still_waiting(c, deadline, reads > 1); /* a flood of notifications */
    if (st != PLC_OK) return st;
  }
}

/* One request and its answer over the client's connection, bounded by one time-out. */
static plc_status call(plc_client *client, const char *method, const field *fields, size_t count, result_parser parse,
                       void *out, plc_license *err, int timeout_ms, int default_timeout_ms) {
  int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : default_timeout_ms);
  int reused = transport_is_open(client);
  if (++client->next_id == 0) client->next_id = 1;
  for (int attempt = 0; attempt < 2; attempt++) {
    int answered = 0;
    plc_status st = PLC_OK;
    if (!transport_is_open(client)) st = connect_until(client, deadline);
    if (st == PLC_OK) st = send_request(client, client->next_id, method, fields, count, deadline);
    if (st == PLC_OK) st = await_answer(client, client->next_id, parse, out, err, deadline, &answered);
    if (st == PLC_OK || st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) return st;
    plc_close(client);
    /* The agent closes idle connections: a kept connection found closed before any answer
     * byte is reopened once, within the same deadline. */
    if (!(reused && attempt == 0 && st == PLC_ERR_CLOSED && !answered)) return st;
  }
  return PLC_ERR_CLOSED;
}

static int valid_text(const char *text, size_t cap) { return text != NULL && text[0] != '\0' && strlen(text) < cap; }

/* The project-and-code calls: check, activate, deactivate, refresh. */
static plc_status license_call(plc_client *client, const char *method, const char *project_id, const char *code, int need_code,
                               plc_license *out, int timeout_ms, int default_timeout_ms) {
  field fields[2];
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  reset_license(out);
  if (!valid_text(project_id, sizeof out->project_id)) return PLC_ERR_INVALID_ARGUMENT;
  if (need_code && !valid_text(code, PLC_CODE_MAX + 1)) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "project_id";
  fields[0].value = project_id;
  fields[1].key = "code";
  fields[1].value = need_code ? code : NULL;
  return call(client, method, fields, 2, parse_license_result, out, out, timeout_ms, default_timeout_ms);
}

plc_status plc_check(plc_client *client, const char *project_id, plc_license *out, int timeout_ms) {
  return license_call(client, "check", project_id, NULL, 0, out, timeout_ms, PLC_DEFAULT_TIMEOUT_MS);
}

plc_status plc_activate(plc_client *client, const char *project_id, const char *code, plc_license *out, int timeout_ms) {
  return license_call(client, "activate", project_id, code, 1, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_deactivate(plc_client *client, const char *project_id, plc_license *out, int timeout_ms) {
  return license_call(client, "deactivate", project_id, NULL, 0, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_refresh(plc_client *client, const char *project_id, plc_license *out, int timeout_ms) {
  return license_call(client, "refresh", project_id, NULL, 0, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

plc_status plc_offline_request(plc_client *client, const char *project_id, const char *code, plc_document *out, int timeout_ms) {
  field fields[2];
  plc_license err;
  plc_status st;
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  memset(out, 0, sizeof *out);
  if (!valid_text(project_id, sizeof err.project_id)) return PLC_ERR_INVALID_ARGUMENT;
  if (code != NULL && !valid_text(code, PLC_CODE_MAX + 1)) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "project_id";
  fields[0].value = project_id;
  fields[1].key = "code";
  fields[1].value = code;
  st = call(client, "offline_request", fields, 2, parse_document, out, &err, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
  if (st == PLC_ERR_AGENT || st == PLC_ERR_AGENT_OUTDATED) {
    out->error_code = err.error_code;
    memcpy(out->error_message, err.error_message, sizeof out->error_message);
    memcpy(out->error_detail, err.error_detail, sizeof out->error_detail);
  } else if (st != PLC_OK) {
    out->text[0] = '\0';
    out->file_name[0] = '\0';
  }
  return st;
}

plc_status plc_offline_import(plc_client *client, const char *document, plc_license *out, int timeout_ms) {
  field fields[1];
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  reset_license(out);
  if (document == NULL || document[0] == '\0' || json_escaped_size(document) > PLC_IMPORT_MAX_BYTES) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "document";
  fields[0].value = document;
  return call(client, "offline_import", fields, 1, parse_license_result, out, out, timeout_ms, PLC_SERVICE_TIMEOUT_MS);
}

/* A file the user picked (an offline response), by the one bounded reader. */
plc_status plc_read_document(const char *path, char *buf, size_t cap, size_t *len) {
  found_kind found;
  if (len != NULL) *len = 0;
  if (path == NULL || path[0] == '\0' || buf == NULL || cap == 0 || len == NULL) return PLC_ERR_INVALID_ARGUMENT;
  return read_small_file(path, READ_FOLLOW_LINKS, buf, cap, len, &found);
}

/* ---------------------------------------------------------------- the subscription */

plc_status plc_subscribe(plc_client *client, const char *project_id, plc_license *error_out, int timeout_ms) {
  field fields[1];
  plc_license ignored;
  plc_license *err = error_out != NULL ? error_out : &ignored;
  if (client == NULL) return PLC_ERR_INVALID_ARGUMENT;
  reset_license(err);
  if (project_id != NULL && !valid_text(project_id, sizeof err->project_id)) return PLC_ERR_INVALID_ARGUMENT;
  fields[0].key = "project_id";
  fields[0].value = project_id;
  return call(client, "subscribe", fields, 1, parse_subscribed, NULL, err, timeout_ms, PLC_DEFAULT_TIMEOUT_MS);
}

plc_status plc_wait_change(plc_client *client, plc_license *out, int timeout_ms) {
  int64_t deadline;
  unsigned reads = 0;
  if (client == NULL || out == NULL) return PLC_ERR_INVALID_ARGUMENT;
  if (!transport_is_open(client)) return PLC_ERR_CLOSED;
  deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
  for (;;) {
    size_t line_len = 0;
    const char *at = NULL;
    plc_status st = next_line(client, &line_len, deadline, &reads);
    if (st == PLC_ERR_TIMEOUT || st == PLC_ERR_INTERRUPTED) return st;
    if (st != PLC_OK) {
      plc_close(client);
      return st;
    }
    /* No request is waiting: id 0 is never one (ids start at 1). */
    line_kind kind = classify(client->buf, line_len, 0, &at);
    if (kind == LINE_CHANGED) {
      json_scan s;
      s.p = at;
      s.end = client->buf + line_len;
      reset_license(out);
      int r = parse_license(&s, out);
      drop_line(client, line_len);
      if (r == 0) return PLC_OK;
      reset_license(out);
      plc_close(client);
      return PLC_ERR_PROTOCOL;
    }
    drop_line(client, line_len);
    if (kind == LINE_BAD) {
      plc_close(client);
      return PLC_ERR_PROTOCOL;
    }
    /* Lines that are not a change (a flood of them) end the wait at its deadline all the same. */
    st = still_waiting(client, deadline, reads > 1);
    if (st != PLC_OK) return st;
  }
}
