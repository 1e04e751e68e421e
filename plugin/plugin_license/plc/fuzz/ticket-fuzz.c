/*
 * ticket-fuzz: libFuzzer harness of plc's ticket reader (plc_ticket_judge), structure-aware. Its
 * inputs are tickets (the corpus in fuzz/ticket-corpus: every field of line 1 in every shape of
 * ticket-shapes.h, made by `ticket-diff corpus`); its custom mutator edits line 1 by those shapes
 * (a field replaced by arrays, objects, deep nesting, odd numbers and strings, keys missing,
 * repeated or escaped) or byte-wise (libFuzzer's own mutator), then recomputes line 2 with the
 * reader's key, so the judge is reached rather than the MAC refusing. Each input is judged as it
 * is and with its MAC recomputed, and every answer checked whole (ts_check). Built with the
 * sanitizers, any out-of-bounds read, overflow or undefined behaviour stops it:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     fuzz/ticket-fuzz.c -o ticket-fuzz               (from plc's folder)
 *   cp -r fuzz/ticket-corpus /tmp/tc
 *   ./ticket-fuzz -max_len=8192 -max_total_time=300 /tmp/tc    (libFuzzer adds what it finds to /tmp/tc)
 *
 * The test suite (compile.test.ts) replays the corpus and runs a fixed number of mutations; the
 * differential test (ticket-diff.test.ts) holds the library's judge to the same answers.
 * It includes plc.c to reach its static functions; nothing here is part of the library.
 */
#include "../plc.c"
#include "ticket-shapes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

static void judge(const char *bytes, size_t len) {
  plc_ticket t;
  plc_ticket_verdict v = plc_ticket_judge(bytes, len, TS_APP, TS_PROJECT, TS_NOW, TS_RAW, &t);
  ts_check(v, &t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char ticket[TS_TICKET_CAP];
  const char *bytes = (const char *)data;
  const char *nl = size > 0 ? (const char *)memchr(bytes, '\n', size) : NULL;
  size_t line = nl != NULL ? (size_t)(nl - bytes) : size, n;
  judge(bytes, size);
  /* Line 1 with its MAC recomputed: past the MAC, into the JSON and the rules. */
  if (line <= TS_LINE_CAP && (n = ts_sign(bytes, line, ticket, sizeof ticket)) > 0) judge(ticket, n);
  return 0;
}

/* libFuzzer's byte-level mutator, and now and then the shapes' own (JSON's bytes). */
static size_t fuzzer_bytes(char *line, size_t len, size_t cap, uint64_t *rng) {
  if (ts_below(rng, 4) == 0) return ts_bytes(line, len, cap, rng);
  return LLVMFuzzerMutate((uint8_t *)line, len, cap);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  static char line[TS_LINE_CAP + 1];
  uint64_t rng = (uint64_t)seed * 0x9e3779b97f4a7c15ULL + 1;
  const char *nl = size > 0 ? (const char *)memchr(data, '\n', size) : NULL;
  size_t len = nl != NULL ? (size_t)(nl - (const char *)data) : size, edits, n;
  if (len > TS_LINE_CAP) len = TS_LINE_CAP;
  memcpy(line, data, len);
  edits = 1 + ts_below(&rng, 3);
  for (size_t i = 0; i < edits; i++) ts_mutate(line, &len, TS_LINE_CAP, &rng, fuzzer_bytes);
  n = ts_sign(line, len, (char *)data, max_size);
  if (n > 0) return n;
  /* No room for line 2 (libFuzzer's -max_len): line 1 alone, cut to fit. */
  n = len < max_size ? len : max_size;
  memcpy(data, line, n);
  return n;
}
