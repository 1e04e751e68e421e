/*
 * plc-ticket-kat: reaches plc.c's SHA-256 and HMAC-SHA256 (static) for the known-answer tests of
 * plc-ticket.test.ts, and plc_raw_machine_id for comparing it with the library's. Test only.
 *
 *   plc-ticket-kat sha HEX            the SHA-256 of the bytes, in hex
 *   plc-ticket-kat sha-a COUNT        the SHA-256 of COUNT bytes 'a' (FIPS 180-4's million)
 *   plc-ticket-kat hmac KEYHEX HEX    HMAC-SHA256, the key given in pieces of 7 bytes
 *   plc-ticket-kat machine-id [APP]   plc_raw_machine_id's answer: status, then the id
 */
#include "../plc.c"

#include <stdio.h>

static size_t unhex(const char *hex, unsigned char *out, size_t cap) {
  size_t n = strlen(hex) / 2;
  if (n > cap) n = cap;
  for (size_t i = 0; i < n; i++) {
    unsigned v = 0;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (unsigned char)v;
  }
  return n;
}

static void print_hex(const unsigned char *d) {
  for (int i = 0; i < 32; i++) printf("%02x", d[i]);
  putchar('\n');
}

int main(int argc, char **argv) {
  static unsigned char a[65536], b[65536];
  unsigned char digest[32];
  if (argc >= 3 && strcmp(argv[1], "sha") == 0) {
    sha256_ctx c;
    size_t n = unhex(argv[2], a, sizeof a);
    sha256_init(&c);
    /* In uneven pieces, to cross the block boundary mid-update. */
    for (size_t i = 0; i < n; i += 13) sha256_update(&c, a + i, n - i < 13 ? n - i : 13);
    sha256_final(&c, digest);
  } else if (argc >= 3 && strcmp(argv[1], "sha-a") == 0) {
    sha256_ctx c;
    long count = atol(argv[2]);
    memset(a, 'a', 1000);
    sha256_init(&c);
    for (long i = 0; i < count; i += 1000) sha256_update(&c, a, (size_t)(count - i < 1000 ? count - i : 1000));
    sha256_final(&c, digest);
  } else if (argc >= 4 && strcmp(argv[1], "hmac") == 0) {
    hmac_ctx m;
    size_t kn = unhex(argv[2], a, sizeof a), n = unhex(argv[3], b, sizeof b);
    hmac_key_start(&m);
    for (size_t i = 0; i < kn; i += 7) hmac_key_add(&m, a + i, kn - i < 7 ? kn - i : 7);
    hmac_begin(&m);
    sha256_update(&m.inner, b, n);
    hmac_end(&m, digest);
  } else if (argc >= 2 && strcmp(argv[1], "machine-id") == 0) {
    char id[PLC_MACHINE_ID_CAP];
    plc_status st = plc_raw_machine_id(argc >= 3 ? argv[2] : NULL, NULL, id, sizeof id);
    printf("%d\n%s\n", (int)st, st == PLC_OK ? id : "");
    return 0;
  } else {
    fputs("usage: plc-ticket-kat sha HEX | sha-a COUNT | hmac KEYHEX HEX | machine-id [APP]\n", stderr);
    return 2;
  }
  print_hex(digest);
  return 0;
}
