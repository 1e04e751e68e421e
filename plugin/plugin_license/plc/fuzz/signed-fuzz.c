/*
 * signed-fuzz: libFuzzer harness of plc's signed-ticket reader (plc_signed_ticket_judge, the reader's
 * rule through plc_answer_judge) and of its Ed25519 verifier (plc_ed25519_verify). Each input is
 *   1. judged as it is, as a signed ticket, by a reader that trusts the vendor's key;
 *   2. its line 1 signed again with that key (fuzz/ed25519-sign.h) and judged, so the cases reach
 *      the rules past the signature (the JSON, the fields, app, project, machine, time) rather than
 *      the signature refusing; a signature plc itself made must never be refused as not verifying;
 *   3. as an agent's answer carrying it (plc_answer_judge), which must say what rule 2 says;
 *   4. read as key (32 bytes), signature (64) and message (the rest) by plc_ed25519_verify, and the
 *      honest signature of that message checked to verify while the input's S + 1 does not.
 * Every verdict is checked whole: a valid one has its source, its times in order and a signer.
 * Built with the sanitizers, any out-of-bounds read, overflow or undefined behaviour stops it:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
 *     fuzz/signed-fuzz.c -o signed-fuzz                (from plc's folder)
 *   cp -r fuzz/signed-corpus /tmp/sc
 *   ./signed-fuzz -max_len=8192 -max_total_time=300 /tmp/sc
 *
 * The corpus (fuzz/signed-corpus) is packages/licensing/test/signed-ticket-vectors' signed tickets,
 * signed by the key this harness trusts (vendor-key-1's seed); compile.test.ts replays it and runs a
 * fixed number of mutations. It includes plc.c to reach its static functions; nothing here is part
 * of the library.
 */
#include "../plc.c"
#include "ed25519-sign.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SF_APP "acme-audio"
#define SF_PROJECT "123e4567-e89b-12d3-a456-426614174000"
#define SF_RAW "0123456789abcdef0123456789abcdef"
#define SF_NOW 1768478460

static unsigned char sf_seed[32];
static plc_ticket_key sf_key;
static plc_trust sf_trust = {&sf_key, 1, NULL};

/* The key of packages/licensing/test/signed-ticket-vectors.ts's "vendor-key-1": its seed is the
 * SHA-256 of "signed-ticket-vectors/vendor-key-1". */
static void sf_setup(void) {
  static int done;
  static const char label[] = "signed-ticket-vectors/vendor-key-1";
  unsigned char scalar[32], prefix[32], digest[32];
  sha256_ctx c;
  if (done) return;
  done = 1;
  sha256_init(&c);
  sha256_update(&c, label, sizeof label - 1);
  sha256_final(&c, sf_seed);
  es_keypair(sf_seed, sf_key.public_key, scalar, prefix);
  sha256_init(&c);
  sha256_update(&c, sf_key.public_key, 32);
  sha256_final(&c, digest);
  hex_of(digest, 8, sf_key.kid);
  sf_key.problem = NULL;
}

static void sf_fail(const char *what, const plc_ticket *t) {
  fprintf(stderr, "signed-fuzz: %s (verdict %s, problem %s)\n", what, plc_ticket_verdict_name(t->verdict), t->problem);
  abort();
}

/* Every answer whole: a known verdict with its reason; a valid one with its source, times in order,
 * and the signer the vendor's key; a refusal with words. */
static void sf_check(plc_ticket_verdict v, const plc_ticket *t) {
  if (v != t->verdict) sf_fail("the verdict returned is not the one stored", t);
  switch (v) {
    case PLC_TICKET_VALID:
      if (t->reason != PLC_REASON_NONE || t->source == PLC_SOURCE_UNKNOWN || t->issued_at - 3600 > SF_NOW || t->valid_until < SF_NOW ||
          strcmp(t->signer, sf_key.kid) != 0)
        sf_fail("a valid verdict that breaks the rule", t);
      break;
    case PLC_TICKET_TAMPERED:
      if (t->reason != PLC_REASON_CACHE_INVALID || t->problem[0] == '\0') sf_fail("a tampered verdict without cache_invalid and words", t);
      break;
    case PLC_TICKET_CLOCK:
      if (t->reason != PLC_REASON_CLOCK_TAMPERED || SF_NOW >= t->issued_at - 3600) sf_fail("a clock verdict that breaks the rule", t);
      break;
    case PLC_TICKET_EXPIRED:
      if (t->reason != PLC_REASON_GRACE_EXPIRED || SF_NOW <= t->valid_until) sf_fail("an expired verdict that breaks the rule", t);
      break;
    case PLC_TICKET_NONE:
    case PLC_TICKET_NOT_LICENSED: sf_fail("a signed ticket judged alone is never none or not licensed", t);
  }
  if (memchr(t->problem, '\0', sizeof t->problem) == NULL || memchr(t->code_hint, '\0', sizeof t->code_hint) == NULL) sf_fail("an unterminated text", t);
}

static size_t sf_b64url(const unsigned char *in, size_t n, char *out) {
  static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  size_t o = 0, i;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (i = 0; i < n; i++) {
    acc = acc << 8 | in[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out[o++] = abc[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out[o++] = abc[(acc << (6 - bits)) & 63];
  return o;
}

/* One signed ticket's bytes judged alone and as an agent's answer: the same verdict both ways. */
static plc_ticket_verdict sf_judge(const char *bytes, size_t len, plc_ticket *t) {
  static plc_license answer;
  plc_ticket via_agent;
  plc_ticket_verdict v = plc_signed_ticket_judge(bytes, len, &sf_trust, SF_APP, SF_PROJECT, SF_NOW, SF_RAW, t), w;
  sf_check(v, t);
  memset(&answer, 0, sizeof answer);
  answer.valid = 1;
  answer.has_signed_ticket = 1;
  answer.signed_ticket_len = len > PLC_TICKET_MAX_BYTES ? PLC_TICKET_MAX_BYTES + 1 : len;
  memcpy(answer.signed_ticket, bytes, len > PLC_TICKET_MAX_BYTES ? PLC_TICKET_MAX_BYTES : len);
  w = plc_answer_judge(&answer, &sf_trust, SF_APP, SF_PROJECT, SF_NOW, SF_RAW, &via_agent);
  if (w != v || via_agent.reason != t->reason) sf_fail("an agent's answer carrying the signed ticket is judged otherwise than the file", t);
  return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char text[2 * PLC_TICKET_MAX_BYTES + 256];
  static unsigned char message[sizeof SIGNED_TICKET_CONTEXT + 2 * PLC_TICKET_MAX_BYTES];
  const char *bytes = (const char *)data;
  const char *nl = size > 0 ? (const char *)memchr(bytes, '\n', size) : NULL;
  size_t line = nl != NULL ? (size_t)(nl - bytes) : size, n;
  unsigned char signature[64], public_key[32];
  plc_ticket t;
  sf_setup();
  /* 1. As it is. */
  sf_judge(bytes, size, &t);
  /* 2. Line 1 signed again by the vendor's key. */
  if (line <= PLC_TICKET_MAX_BYTES) {
    memcpy(message, SIGNED_TICKET_CONTEXT, sizeof SIGNED_TICKET_CONTEXT);
    memcpy(message + sizeof SIGNED_TICKET_CONTEXT, bytes, line);
    es_sign(sf_seed, message, sizeof SIGNED_TICKET_CONTEXT + line, signature, public_key);
    memcpy(text, bytes, line);
    n = line;
    memcpy(text + n, "\ned25519:", 9);
    n += 9;
    memcpy(text + n, sf_key.kid, 16);
    n += 16;
    text[n++] = ':';
    n += sf_b64url(signature, 64, text + n);
    text[n++] = '\n';
    sf_judge(text, n, &t);
    if (strstr(t.problem, "does not verify") != NULL) sf_fail("a signature made with the trusted key does not verify", &t);
    if (!plc_ed25519_verify(sf_key.public_key, message, sizeof SIGNED_TICKET_CONTEXT + line, signature)) sf_fail("an honest signature refused", &t);
  }
  /* 4. The verifier on raw bytes: key, signature, message. */
  if (size >= 96) {
    (void)plc_ed25519_verify(data, data + 96, size - 96, data + 32);
    es_sign(sf_seed, data + 96, size - 96, signature, public_key);
    if (!plc_ed25519_verify(public_key, data + 96, size - 96, signature)) sf_fail("an honest signature of raw bytes refused", &t);
    signature[32] ^= 1; /* S changed: another scalar, never the same signature */
    if (plc_ed25519_verify(public_key, data + 96, size - 96, signature)) sf_fail("a signature with S changed verifies", &t);
  }
  return 0;
}
