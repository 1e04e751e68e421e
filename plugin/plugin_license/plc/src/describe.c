/*
 * Part of plc.c (compiled through it, never alone): plc_describe, plc_strerror's words with what a
 * client learnt. Who holds the agent's path is worded by the OS's transport (describe_holder),
 * where it was checked.
 */

const char *plc_describe(const plc_client *client, plc_status status, char *out, size_t out_size) {
  size_t pos = 0;
  if (out == NULL || out_size == 0) return "";
  out[0] = '\0';
  /* A client's paths are its socket's: say so, and what to set. */
  if (client != NULL && status == PLC_ERR_PATH_TOO_LONG) {
    describe_socket_limit(out, out_size, &pos);
    return out;
  }
  if (client != NULL && status == PLC_ERR_NO_PATH) {
    add(out, out_size, &pos, "no default path for the agent's socket: no home folder or user name to make it from; set PLUGIN_LICENSE_SOCKET");
    return out;
  }
  if (client == NULL || client->holder < 0 || (status != PLC_ERR_FOREIGN_FOLDER && status != PLC_ERR_FOREIGN_AGENT)) {
    add(out, out_size, &pos, plc_strerror(status));
    return out;
  }
  describe_holder(client, status, out, out_size, &pos);
  return out;
}
