/*
 * ed25519-kat: reaches plc.c's SHA-512 and Ed25519 (static parts included) for ed25519.test.ts.
 * Test only. Reads commands from stdin, one a line, and answers each with one line on stdout:
 *
 *   verify PUBLIC_HEX MESSAGE_HEX SIGNATURE_HEX   1 when plc_ed25519_verify accepts, else 0
 *   sha512 MESSAGE_HEX                           the SHA-512 of the bytes, in hex
 *   sha512-a COUNT                               the SHA-512 of COUNT bytes 'a'
 *   sign SEED_HEX MESSAGE_HEX                    fuzz/ed25519-sign.h's signature, then the public key, in hex
 *   order8 HEX                                   1 when the encoding decodes to a point P with [8]P the identity, else 0
 *   key TEXT                                     plc_ticket_key_parse: "ok KID" or "refused PROBLEM"
 *   trust KEY                                    the key the next judge lines trust
 *   judge FILE                                   plc_signed_ticket_judge of the file's bytes as the signed-ticket
 *                                                vectors' reader (acme-audio, its project, raw id and time):
 *                                                "VERDICT REASON" (reason "-" when none)
 *   cache GOOD_FILE BAD_FILE KEY                 plc_verify_cache, judged as the signed-ticket vectors' reader:
 *                                                the verdicts of GOOD, GOOD again, BAD, and BAD once the cache
 *                                                is made to hold BAD's bytes (a hit skips the verification)
 *
 * "-" stands for an empty hex string. Messages up to 64 KB.
 */
#include "../plc.c"
#include "../fuzz/ed25519-sign.h"

#include <stdio.h>

#define CAP 65536

static int unhex(const char *hex, unsigned char *out, size_t cap, size_t *len) {
  size_t n = strlen(hex);
  if (strcmp(hex, "-") == 0) n = 0;
  if (n % 2 != 0 || n / 2 > cap) return -1;
  for (size_t i = 0; i < n / 2; i++) {
    const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return -1;
    out[i] = (unsigned char)(hi << 4 | lo);
  }
  *len = n / 2;
  return 0;
}

static void print_hex(const unsigned char *d, size_t n) {
  for (size_t i = 0; i < n; i++) printf("%02x", d[i]);
}

/* [8]P is the identity: X = 0 and Y = Z. */
static int order_divides_8(const unsigned char s[32]) {
  ge p;
  fe zero;
  if (!ed_canonical_y(s) || ge_decode(&p, s) != 0) return 0;
  ge_dbl(&p, &p, 0);
  ge_dbl(&p, &p, 0);
  ge_dbl(&p, &p, 1);
  fe_set(&zero, 0);
  return fe_equal(&p.X, &zero) && fe_equal(&p.Y, &p.Z);
}

int main(void) {
  static char line[4 * CAP];
  static unsigned char message[CAP];
  unsigned char pk[32], sig[64], seed[32], out[64];
  static plc_ticket_key trusted;
  size_t n, len;
  while (fgets(line, sizeof line, stdin) != NULL) {
    char *cmd = strtok(line, " \n"), *a = strtok(NULL, " \n"), *b = strtok(NULL, " \n"), *c = strtok(NULL, " \n");
    if (cmd == NULL) continue;
    if (strcmp(cmd, "verify") == 0 && c != NULL) {
      if (unhex(a, pk, 32, &n) != 0 || n != 32 || unhex(b, message, CAP, &len) != 0 || unhex(c, sig, 64, &n) != 0 || n != 64) return 2;
      printf("%d\n", plc_ed25519_verify(pk, message, len, sig));
    } else if (strcmp(cmd, "sha512") == 0 && a != NULL) {
      sha512_ctx ctx;
      if (unhex(a, message, CAP, &len) != 0) return 2;
      sha512_init(&ctx);
      sha512_update(&ctx, message, len);
      sha512_final(&ctx, out);
      print_hex(out, 64);
      putchar('\n');
    } else if (strcmp(cmd, "sha512-a") == 0 && a != NULL) {
      sha512_ctx ctx;
      long count = atol(a);
      memset(message, 'a', 1000);
      sha512_init(&ctx);
      for (; count > 0; count -= 1000) sha512_update(&ctx, message, count < 1000 ? (size_t)count : 1000);
      sha512_final(&ctx, out);
      print_hex(out, 64);
      putchar('\n');
    } else if (strcmp(cmd, "sign") == 0 && b != NULL) {
      if (unhex(a, seed, 32, &n) != 0 || n != 32 || unhex(b, message, CAP, &len) != 0) return 2;
      es_sign(seed, message, len, sig, pk);
      print_hex(sig, 64);
      putchar(' ');
      print_hex(pk, 32);
      putchar('\n');
    } else if (strcmp(cmd, "order8") == 0 && a != NULL) {
      if (unhex(a, pk, 32, &n) != 0 || n != 32) return 2;
      printf("%d\n", order_divides_8(pk));
    } else if (strcmp(cmd, "key") == 0 && a != NULL) {
      plc_ticket_key key;
      if (plc_ticket_key_parse(a, &key) == PLC_OK) printf("ok %s\n", key.kid);
      else printf("refused %s\n", key.problem);
    } else if (strcmp(cmd, "trust") == 0 && a != NULL) {
      if (plc_ticket_key_parse(a, &trusted) != PLC_OK) return 2;
    } else if (strcmp(cmd, "judge") == 0 && a != NULL) {
      static char bytes[2 * PLC_TICKET_MAX_BYTES];
      plc_trust trust = {&trusted, 1, NULL};
      plc_ticket t;
      plc_ticket_verdict v;
      FILE *f = fopen(a, "rb");
      if (f == NULL) return 2;
      n = fread(bytes, 1, sizeof bytes, f);
      fclose(f);
      v = plc_signed_ticket_judge(bytes, n, &trust, "acme-audio", "123e4567-e89b-12d3-a456-426614174000", 1768478460, "0123456789abcdef0123456789abcdef", &t);
      printf("%s %s\n", plc_ticket_verdict_name(v), t.reason == PLC_REASON_NONE ? "-" : plc_reason_name(t.reason));
    } else if (strcmp(cmd, "cache") == 0 && c != NULL) {
      static char good[PLC_TICKET_MAX_BYTES + 1], bad[PLC_TICKET_MAX_BYTES + 1];
      static plc_verify_cache cache;
      plc_ticket_key key;
      plc_trust trust = {&key, 1, &cache};
      plc_ticket t;
      FILE *f;
      size_t good_len, bad_len;
      const char *app = "acme-audio", *project = "123e4567-e89b-12d3-a456-426614174000", *raw = "0123456789abcdef0123456789abcdef";
      const int64_t when = 1768478460;
      if ((f = fopen(a, "rb")) == NULL) return 2;
      good_len = fread(good, 1, sizeof good, f);
      fclose(f);
      if ((f = fopen(b, "rb")) == NULL) return 2;
      bad_len = fread(bad, 1, sizeof bad, f);
      fclose(f);
      if (plc_ticket_key_parse(c, &key) != PLC_OK) return 2;
      cache.len = 0;
      printf("%s", plc_ticket_verdict_name(plc_signed_ticket_judge(good, good_len, &trust, app, project, when, raw, &t)));
      printf(" %s", plc_ticket_verdict_name(plc_signed_ticket_judge(good, good_len, &trust, app, project, when, raw, &t)));
      printf(" %s", plc_ticket_verdict_name(plc_signed_ticket_judge(bad, bad_len, &trust, app, project, when, raw, &t)));
      printf(" %s", cache.len == good_len && memcmp(cache.bytes, good, good_len) == 0 ? "kept" : "changed");
      memcpy(cache.bytes, bad, bad_len);
      cache.len = bad_len;
      printf(" %s\n", plc_ticket_verdict_name(plc_signed_ticket_judge(bad, bad_len, &trust, app, project, when, raw, &t)));
    } else {
      return 2;
    }
    fflush(stdout);
  }
  return 0;
}
