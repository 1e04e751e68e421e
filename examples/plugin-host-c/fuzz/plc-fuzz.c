/*
 * plc-fuzz: libFuzzer harness of plc's answer reader: one line from the agent, classified for a
 * request id (the answer, its error, a `changed` notification, something to skip, or junk), then
 * parsed as a LicenseState, an error object and an offline document; and plc_parse_time. Built
 * with the sanitizers, any out-of-bounds read, overflow or undefined behaviour stops it:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     -I../../plugin/plugin_license/plc fuzz/plc-fuzz.c -o plc-fuzz
 *   ./plc-fuzz -max_total_time=60 fuzz/corpus       (a copy of it: libFuzzer adds what it finds)
 *
 * It includes plc.c to reach its static functions; nothing here is part of the library.
 */
#include "../../../plugin/plugin_license/plc/plc.c"

#include <assert.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char line[PLC_BUFFER_SIZE + 1];
  plc_license lic;
  plc_document doc;
  const char *at = NULL;
  unsigned long id;
  if (size < 1 || size > PLC_BUFFER_SIZE) return 0;
  /* The first byte picks the id the line is checked against: 1..255, or a large one. */
  id = data[0] == 0 ? (unsigned long)-1 : data[0];
  memcpy(line, data + 1, size - 1);
  line[size - 1] = '\0';
  line_kind kind = classify(line, size - 1, id, &at);
  if (kind == LINE_RESULT || kind == LINE_ERROR || kind == LINE_CHANGED) {
    scan s;
    assert(at >= line && at <= line + size - 1);
    s.p = at;
    s.end = line + size - 1;
    reset_license(&lic);
    if (kind == LINE_ERROR) {
      (void)parse_error(&s, &lic);
    } else {
      (void)parse_license(&s, &lic);
      s.p = at;
      memset(&doc, 0, sizeof doc);
      (void)parse_document(&s, &doc);
      assert(memchr(doc.text, '\0', sizeof doc.text) != NULL);
    }
    assert(memchr(lic.reason_text, '\0', sizeof lic.reason_text) != NULL);
    assert(memchr(lic.error_message, '\0', sizeof lic.error_message) != NULL);
  }
  {
    int64_t seconds;
    (void)plc_parse_time(line, &seconds);
  }
  return 0;
}
