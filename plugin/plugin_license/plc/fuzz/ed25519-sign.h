/*
 * ed25519-sign.h: Ed25519 signing (RFC 8032 section 5.1.6), TEST ONLY: plc verifies and never
 * signs. The signed-ticket fuzzer (signed-fuzz.c) signs each mutated line 1 with it, so its cases
 * reach the rules past the signature; the known-answer driver (test/ed25519-kat.c) holds its
 * signatures to node:crypto's, which makes the scalar multiplication, SHA-512 and the reduction mod
 * L of ed25519.c answer to a second implementation. Include it after plc.c, whose static field,
 * point and scalar code it uses.
 */
#ifndef PLC_ED25519_SIGN_H
#define PLC_ED25519_SIGN_H

/* out = (a b + c) mod L, a, b and c 32-byte little-endian numbers below 2^256 (a b + c below 2^512). */
static void es_muladd(unsigned char out[32], const unsigned char a[32], const unsigned char b[32], const unsigned char c[32]) {
  uint64_t acc[17] = {0};
  uint32_t x[8], y[8];
  unsigned char wide[64];
  int i, j;
  for (i = 0; i < 8; i++) {
    x[i] = (uint32_t)a[4 * i] | (uint32_t)a[4 * i + 1] << 8 | (uint32_t)a[4 * i + 2] << 16 | (uint32_t)a[4 * i + 3] << 24;
    y[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
  }
  for (i = 0; i < 32; i++) acc[i / 4] += (uint64_t)c[i] << (8 * (i % 4));
  for (i = 0; i < 8; i++) {
    for (j = 0; j < 8; j++) {
      const uint64_t p = (uint64_t)x[i] * y[j];
      acc[i + j] += p & 0xffffffffu;
      acc[i + j + 1] += p >> 32;
    }
    for (j = 0; j < 16; j++) { /* keep every word below 2^33 */
      acc[j + 1] += acc[j] >> 32;
      acc[j] &= 0xffffffffu;
    }
  }
  for (i = 0; i < 64; i++) wide[i] = (unsigned char)(acc[i / 4] >> (8 * (i % 4)));
  sc_reduce512(out, wide);
}

/* The key pair of a 32-byte seed: the public key, the secret scalar and the nonce prefix. */
static void es_keypair(const unsigned char seed[32], unsigned char public_key[32], unsigned char scalar[32], unsigned char prefix[32]) {
  static const unsigned char zero[32];
  unsigned char h[64];
  sha512_ctx c;
  ge a, nothing;
  sha512_init(&c);
  sha512_update(&c, seed, 32);
  sha512_final(&c, h);
  memcpy(scalar, h, 32);
  scalar[0] &= 248;
  scalar[31] &= 127;
  scalar[31] |= 64;
  memcpy(prefix, h + 32, 32);
  ge_identity(&nothing);
  ge_double_scalarmult(&a, scalar, zero, &nothing); /* [s]B */
  ge_encode(public_key, &a);
}

/* The 64-byte signature of message by the key of seed; its public key into public_key. */
static void es_sign(const unsigned char seed[32], const void *message, size_t len, unsigned char signature[64], unsigned char public_key[32]) {
  static const unsigned char zero[32];
  unsigned char scalar[32], prefix[32], h[64], r[32], k[32];
  sha512_ctx c;
  ge big_r, nothing;
  es_keypair(seed, public_key, scalar, prefix);
  sha512_init(&c);
  sha512_update(&c, prefix, 32);
  sha512_update(&c, message, len);
  sha512_final(&c, h);
  sc_reduce512(r, h);
  ge_identity(&nothing);
  ge_double_scalarmult(&big_r, r, zero, &nothing);
  ge_encode(signature, &big_r);
  sha512_init(&c);
  sha512_update(&c, signature, 32);
  sha512_update(&c, public_key, 32);
  sha512_update(&c, message, len);
  sha512_final(&c, h);
  sc_reduce512(k, h);
  es_muladd(signature + 32, k, scalar, r);
}

#endif
