/*
 * plc-fuzz: libFuzzer harness of plc's answer reader: one line from the agent, classified for a
 * request id (the answer, its error, a `changed` notification, something to skip, or junk), then
 * parsed as a LicenseState, an error object and an offline document; and plc_parse_time; and the
 * same bytes judged as a license ticket (plc_ticket_judge, keyed by the vectors' raw id). Built
 * with the sanitizers, any out-of-bounds read, overflow or undefined behaviour stops it:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     fuzz/plc-fuzz.c -o plc-fuzz                     (from plc's folder)
 *   ./plc-fuzz -max_total_time=60 fuzz/corpus       (a copy of it: libFuzzer adds what it finds)
 *
 * It includes plc.c to reach its static functions; nothing here is part of the library.
 */
#include "../plc.c"

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
    json_scan s;
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
  {
    plc_ticket t;
    plc_ticket_verdict v = plc_ticket_judge((const char *)data, size, "acme-audio", "123e4567-e89b-12d3-a456-426614174000",
                                            (int64_t)data[0] * 86400, "0123456789abcdef0123456789abcdef", &t);
    assert(v != PLC_TICKET_NONE);
    assert(memchr(t.problem, '\0', sizeof t.problem) != NULL && memchr(t.code_hint, '\0', sizeof t.code_hint) != NULL);
  }
  return 0;
}
