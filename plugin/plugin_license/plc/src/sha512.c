/*
 * Part of plc.c (compiled through it, never alone): SHA-512 (FIPS 180-4, section 6.4), for
 * Ed25519's k = SHA-512(R || A || M) (ed25519.c). The constants are FIPS 180-4's: the first 64
 * bits of the fractional parts of the cube roots of the first 80 primes (K) and of the square
 * roots of the first 8 (the initial value). Shaped as sha256.c. Known answers: test/ed25519-kat.c.
 */

typedef struct sha512_ctx {
  uint64_t h[8];
  uint64_t bytes; /* a message of at most 2^64 - 1 bytes: far more than a signed ticket's 4 KB */
  unsigned char block[128];
  size_t fill;
} sha512_ctx;

static const uint64_t sha512_k[80] = {
    0x428a2f98d728ae22ULL, 0x7137449123ef65cdULL, 0xb5c0fbcfec4d3b2fULL, 0xe9b5dba58189dbbcULL,
    0x3956c25bf348b538ULL, 0x59f111f1b605d019ULL, 0x923f82a4af194f9bULL, 0xab1c5ed5da6d8118ULL,
    0xd807aa98a3030242ULL, 0x12835b0145706fbeULL, 0x243185be4ee4b28cULL, 0x550c7dc3d5ffb4e2ULL,
    0x72be5d74f27b896fULL, 0x80deb1fe3b1696b1ULL, 0x9bdc06a725c71235ULL, 0xc19bf174cf692694ULL,
    0xe49b69c19ef14ad2ULL, 0xefbe4786384f25e3ULL, 0x0fc19dc68b8cd5b5ULL, 0x240ca1cc77ac9c65ULL,
    0x2de92c6f592b0275ULL, 0x4a7484aa6ea6e483ULL, 0x5cb0a9dcbd41fbd4ULL, 0x76f988da831153b5ULL,
    0x983e5152ee66dfabULL, 0xa831c66d2db43210ULL, 0xb00327c898fb213fULL, 0xbf597fc7beef0ee4ULL,
    0xc6e00bf33da88fc2ULL, 0xd5a79147930aa725ULL, 0x06ca6351e003826fULL, 0x142929670a0e6e70ULL,
    0x27b70a8546d22ffcULL, 0x2e1b21385c26c926ULL, 0x4d2c6dfc5ac42aedULL, 0x53380d139d95b3dfULL,
    0x650a73548baf63deULL, 0x766a0abb3c77b2a8ULL, 0x81c2c92e47edaee6ULL, 0x92722c851482353bULL,
    0xa2bfe8a14cf10364ULL, 0xa81a664bbc423001ULL, 0xc24b8b70d0f89791ULL, 0xc76c51a30654be30ULL,
    0xd192e819d6ef5218ULL, 0xd69906245565a910ULL, 0xf40e35855771202aULL, 0x106aa07032bbd1b8ULL,
    0x19a4c116b8d2d0c8ULL, 0x1e376c085141ab53ULL, 0x2748774cdf8eeb99ULL, 0x34b0bcb5e19b48a8ULL,
    0x391c0cb3c5c95a63ULL, 0x4ed8aa4ae3418acbULL, 0x5b9cca4f7763e373ULL, 0x682e6ff3d6b2b8a3ULL,
    0x748f82ee5defb2fcULL, 0x78a5636f43172f60ULL, 0x84c87814a1f0ab72ULL, 0x8cc702081a6439ecULL,
    0x90befffa23631e28ULL, 0xa4506cebde82bde9ULL, 0xbef9a3f7b2c67915ULL, 0xc67178f2e372532bULL,
    0xca273eceea26619cULL, 0xd186b8c721c0c207ULL, 0xeada7dd6cde0eb1eULL, 0xf57d4f7fee6ed178ULL,
    0x06f067aa72176fbaULL, 0x0a637dc5a2c898a6ULL, 0x113f9804bef90daeULL, 0x1b710b35131c471bULL,
    0x28db77f523047d84ULL, 0x32caab7b40c72493ULL, 0x3c9ebe0a15c9bebcULL, 0x431d67c49c100d4cULL,
    0x4cc5d4becb3e42b6ULL, 0x597f299cfc657e2aULL, 0x5fcb6fab3ad6faecULL, 0x6c44198c4a475817ULL,
};

#define PLC_ROTR64(x, n) (((x) >> (n)) | ((x) << (64 - (n))))

static uint64_t load_be64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

static void sha512_block(sha512_ctx *c, const unsigned char *p) {
  uint64_t w[80], a, b, cc, d, e, f, g, h, t1, t2;
  int i;
  for (i = 0; i < 16; i++) w[i] = load_be64(p + 8 * i);
  for (i = 16; i < 80; i++) {
    uint64_t s0 = PLC_ROTR64(w[i - 15], 1) ^ PLC_ROTR64(w[i - 15], 8) ^ (w[i - 15] >> 7);
    uint64_t s1 = PLC_ROTR64(w[i - 2], 19) ^ PLC_ROTR64(w[i - 2], 61) ^ (w[i - 2] >> 6);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3], e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
  for (i = 0; i < 80; i++) {
    t1 = h + (PLC_ROTR64(e, 14) ^ PLC_ROTR64(e, 18) ^ PLC_ROTR64(e, 41)) + ((e & f) ^ (~e & g)) + sha512_k[i] + w[i];
    t2 = (PLC_ROTR64(a, 28) ^ PLC_ROTR64(a, 34) ^ PLC_ROTR64(a, 39)) + ((a & b) ^ (a & cc) ^ (b & cc));
    h = g, g = f, f = e, e = d + t1, d = cc, cc = b, b = a, a = t1 + t2;
  }
  c->h[0] += a, c->h[1] += b, c->h[2] += cc, c->h[3] += d, c->h[4] += e, c->h[5] += f, c->h[6] += g, c->h[7] += h;
}

static void sha512_init(sha512_ctx *c) {
  static const uint64_t iv[8] = {
      0x6a09e667f3bcc908ULL, 0xbb67ae8584caa73bULL, 0x3c6ef372fe94f82bULL, 0xa54ff53a5f1d36f1ULL,
      0x510e527fade682d1ULL, 0x9b05688c2b3e6c1fULL, 0x1f83d9abfb41bd6bULL, 0x5be0cd19137e2179ULL};
  memcpy(c->h, iv, sizeof iv);
  c->bytes = 0;
  c->fill = 0;
}

static void sha512_update(sha512_ctx *c, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  c->bytes += n;
  while (n > 0) {
    size_t take = 128 - c->fill < n ? 128 - c->fill : n;
    memcpy(c->block + c->fill, p, take);
    c->fill += take, p += take, n -= take;
    if (c->fill == 128) {
      sha512_block(c, c->block);
      c->fill = 0;
    }
  }
}

/* The padding: 0x80, zeros to 112 bytes of the block, the length in bits as 128 bits big-endian. */
static void sha512_final(sha512_ctx *c, unsigned char out[64]) {
  uint64_t bytes = c->bytes;
  unsigned char pad = 0x80, len[16];
  int i;
  for (i = 0; i < 8; i++) len[i] = (unsigned char)(i == 7 ? bytes >> 61 : 0);
  for (i = 0; i < 8; i++) len[8 + i] = (unsigned char)((bytes << 3) >> (56 - 8 * i));
  sha512_update(c, &pad, 1);
  pad = 0;
  while (c->fill != 112) sha512_update(c, &pad, 1);
  sha512_update(c, len, 16);
  for (i = 0; i < 64; i++) out[i] = (unsigned char)(c->h[i / 8] >> (56 - 8 * (i % 8)));
}
