/*
 * Part of plc.c (compiled through it, never alone): Ed25519 signature verification, written from
 * RFC 8032 (section 5.1: the curve, its encoding, decoding, point addition and doubling in extended
 * coordinates, and the verification of section 5.1.7), for the signed ticket (signed_ticket.c).
 * No allocation, no state, no table built before the first call: every call does the same work
 * whatever the signature is, once the refusals made before any curve arithmetic have passed.
 *
 * The rule (libsodium's crypto_sign_verify_detached, the library's verifyEd25519 too, so every
 * reader says one thing): refuse S >= L, a public key A or an R written non-canonically (y >= p),
 * and an A or R of small order (its y, sign bit ignored, one of the five y's of the 8 points P
 * with [8]P the identity); then decode A (RFC 8032 5.1.3; not a point: refused), compute
 * k = SHA-512(R || A || M) mod L and accept when the encoding of [S]B - [k]A is R's bytes
 * (cofactorless, as libsodium). Vectors: packages/licensing/test/ed25519-vectors.json, run by
 * test/ed25519-kat.c; the small-order list is checked there against [8]P.
 *
 * Field elements mod p = 2^255 - 19 are ten unsigned limbs in radix 2^25.5 (26 bits at even
 * positions, 25 at odd ones: limb i holds bits ceil(25.5 i) and up), multiplied with 64-bit
 * products and no wider type, so it builds the same on every compiler plc supports, MSVC included.
 */

typedef struct fe {
  uint32_t v[10];
} fe;

/* A point in extended coordinates (RFC 8032 5.1.4): x = X/Z, y = Y/Z, x y = T/Z. */
typedef struct ge {
  fe X, Y, Z, T;
} ge;

/* A point ready to be added: Y + X, Y - X, 2 Z and 2 d T. */
typedef struct ge_cached {
  fe y_plus_x, y_minus_x, z2, t2d;
} ge_cached;

#define FE_M26 0x3ffffffu
#define FE_M25 0x1ffffffu
static const unsigned char fe_width[10] = {26, 25, 26, 25, 26, 25, 26, 25, 26, 25};

/* The constants as little-endian bytes (RFC 8032 5.1): d = -121665/121666, 2d, sqrt(-1) =
 * 2^((p-1)/4), the base point B (y = 4/5, x even), and the group order L. */
static const unsigned char ed_d[32] = {0xa3, 0x78, 0x59, 0x13, 0xca, 0x4d, 0xeb, 0x75, 0xab, 0xd8, 0x41, 0x41, 0x4d, 0x0a, 0x70, 0x00,
                                       0x98, 0xe8, 0x79, 0x77, 0x79, 0x40, 0xc7, 0x8c, 0x73, 0xfe, 0x6f, 0x2b, 0xee, 0x6c, 0x03, 0x52};
static const unsigned char ed_d2[32] = {0x59, 0xf1, 0xb2, 0x26, 0x94, 0x9b, 0xd6, 0xeb, 0x56, 0xb1, 0x83, 0x82, 0x9a, 0x14, 0xe0, 0x00,
                                        0x30, 0xd1, 0xf3, 0xee, 0xf2, 0x80, 0x8e, 0x19, 0xe7, 0xfc, 0xdf, 0x56, 0xdc, 0xd9, 0x06, 0x24};
static const unsigned char ed_sqrtm1[32] = {0xb0, 0xa0, 0x0e, 0x4a, 0x27, 0x1b, 0xee, 0xc4, 0x78, 0xe4, 0x2f, 0xad, 0x06, 0x18, 0x43, 0x2f,
                                            0xa7, 0xd7, 0xfb, 0x3d, 0x99, 0x00, 0x4d, 0x2b, 0x0b, 0xdf, 0xc1, 0x4f, 0x80, 0x24, 0x83, 0x2b};
static const unsigned char ed_bx[32] = {0x1a, 0xd5, 0x25, 0x8f, 0x60, 0x2d, 0x56, 0xc9, 0xb2, 0xa7, 0x25, 0x95, 0x60, 0xc7, 0x2c, 0x69,
                                        0x5c, 0xdc, 0xd6, 0xfd, 0x31, 0xe2, 0xa4, 0xc0, 0xfe, 0x53, 0x6e, 0xcd, 0xd3, 0x36, 0x69, 0x21};
static const unsigned char ed_by[32] = {0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                                        0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66};
static const unsigned char ed_l[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
                                       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10};

/* The y's of the points of small order, as encoded (the 255 low bits): 0 (order 4), 1 (the
 * identity), p - 1 (order 2), and the two of order 8. */
static const unsigned char ed_small_order_y[5][32] = {
    {0},
    {1},
    {0xec, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
    {0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4, 0x89, 0xf2, 0xef, 0x98, 0xf0,
     0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6, 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
    {0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b, 0x76, 0x0d, 0x10, 0x67, 0x0f,
     0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39, 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
};

/* ---------------------------------------------------------------- the field */

static uint32_t fe_mask(int i) { return (i & 1) ? FE_M25 : FE_M26; }

/* The 255 low bits of a little-endian encoding (bit 255, a sign, left out): limbs in their widths. */
static void fe_frombytes(fe *h, const unsigned char s[32]) {
  unsigned start = 0;
  for (int i = 0; i < 10; i++) {
    uint64_t bits = 0;
    unsigned at = start / 8;
    for (unsigned k = 0; k < 5 && at + k < 32; k++) bits |= (uint64_t)s[at + k] << (8 * k);
    h->v[i] = (uint32_t)(bits >> (start % 8)) & fe_mask(i);
    start += fe_width[i];
  }
}

/* Limbs of up to 2^29 back to their widths and a few units over, in one pass whose steps do not
 * wait on each other: what additions and subtractions leave, so that the products of a multiplication
 * stay within 64 bits and every limb of 4p stays above the limb subtracted from it. */
static void fe_carry(fe *h) {
  uint32_t *v = h->v;
  const uint32_t c0 = v[0] >> 26, c1 = v[1] >> 25, c2 = v[2] >> 26, c3 = v[3] >> 25, c4 = v[4] >> 26;
  const uint32_t c5 = v[5] >> 25, c6 = v[6] >> 26, c7 = v[7] >> 25, c8 = v[8] >> 26, c9 = v[9] >> 25;
  v[0] = (v[0] & FE_M26) + 19 * c9; /* 2^255 = 19 mod p */
  v[1] = (v[1] & FE_M25) + c0;
  v[2] = (v[2] & FE_M26) + c1;
  v[3] = (v[3] & FE_M25) + c2;
  v[4] = (v[4] & FE_M26) + c3;
  v[5] = (v[5] & FE_M25) + c4;
  v[6] = (v[6] & FE_M26) + c5;
  v[7] = (v[7] & FE_M25) + c6;
  v[8] = (v[8] & FE_M26) + c7;
  v[9] = (v[9] & FE_M25) + c8;
}

static void fe_set(fe *h, uint32_t small) {
  memset(h, 0, sizeof *h);
  h->v[0] = small;
}

static void fe_add(fe *h, const fe *f, const fe *g) {
  for (int i = 0; i < 10; i++) h->v[i] = f->v[i] + g->v[i];
  fe_carry(h);
}

/* f - g as f + 4p - g: every limb of 4p is above the widest limb g can have. */
static void fe_sub(fe *h, const fe *f, const fe *g) {
  for (int i = 0; i < 10; i++) {
    uint32_t four_p = i == 0 ? (1u << 28) - 76 : (i & 1) ? (1u << 27) - 4 : (1u << 28) - 4;
    h->v[i] = f->v[i] + four_p - g->v[i];
  }
  fe_carry(h);
}

static void fe_neg(fe *h, const fe *f) {
  fe zero;
  fe_set(&zero, 0);
  fe_sub(h, &zero, f);
}

/* The 64-bit sums of a product (below 2^61 for limbs fe_carry or fe_product_carry left) back into
 * limbs: two carry chains side by side (from limb 0 and from limb 4), then limb 9's carry folded
 * into limb 0 as 19 times it. Limbs 1 and 5 may keep a few units over their 25 bits. */
#define FE_CARRY_STEP(t, i, bits) \
  do {                            \
    const uint64_t c_ = t[i] >> (bits); \
    t[i] &= ((uint64_t)1 << (bits)) - 1; \
    t[(i) + 1] += c_;             \
  } while (0)

static void fe_product_carry(fe *h, uint64_t t[10]) {
  uint64_t c;
  FE_CARRY_STEP(t, 0, 26);
  FE_CARRY_STEP(t, 4, 26);
  FE_CARRY_STEP(t, 1, 25);
  FE_CARRY_STEP(t, 5, 25);
  FE_CARRY_STEP(t, 2, 26);
  FE_CARRY_STEP(t, 6, 26);
  FE_CARRY_STEP(t, 3, 25);
  FE_CARRY_STEP(t, 7, 25);
  FE_CARRY_STEP(t, 4, 26);
  FE_CARRY_STEP(t, 8, 26);
  c = t[9] >> 25;
  t[9] &= FE_M25;
  t[0] += 19 * c;
  FE_CARRY_STEP(t, 0, 26);
  for (int i = 0; i < 10; i++) h->v[i] = (uint32_t)t[i];
}

/* h = f g. Limb i of f times limb j of g has the weight 2^(ceil(25.5 i) + ceil(25.5 j)): that of limb
 * i + j, doubled when i and j are both odd (the _2 factors); past limb 9, 2^255 = 19 mod p folds it
 * back (the _19 factors). Written out: the hot loop of a verification. h may be f or g. */
static void fe_mul(fe *h, const fe *f, const fe *g) {
  const uint64_t f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4], f5 = f->v[5], f6 = f->v[6], f7 = f->v[7], f8 = f->v[8], f9 = f->v[9];
  const uint64_t f1_2 = 2 * f1, f3_2 = 2 * f3, f5_2 = 2 * f5, f7_2 = 2 * f7, f9_2 = 2 * f9;
  const uint64_t g0 = g->v[0], g1 = g->v[1], g2 = g->v[2], g3 = g->v[3], g4 = g->v[4], g5 = g->v[5], g6 = g->v[6], g7 = g->v[7], g8 = g->v[8], g9 = g->v[9];
  const uint64_t g1_19 = 19 * g1, g2_19 = 19 * g2, g3_19 = 19 * g3, g4_19 = 19 * g4, g5_19 = 19 * g5, g6_19 = 19 * g6, g7_19 = 19 * g7, g8_19 = 19 * g8, g9_19 = 19 * g9;
  uint64_t t[10];
  t[0] = f0 * g0 + f1_2 * g9_19 + f2 * g8_19 + f3_2 * g7_19 + f4 * g6_19 + f5_2 * g5_19 + f6 * g4_19 + f7_2 * g3_19 + f8 * g2_19 + f9_2 * g1_19;
  t[1] = f0 * g1 + f1 * g0 + f2 * g9_19 + f3 * g8_19 + f4 * g7_19 + f5 * g6_19 + f6 * g5_19 + f7 * g4_19 + f8 * g3_19 + f9 * g2_19;
  t[2] = f0 * g2 + f1_2 * g1 + f2 * g0 + f3_2 * g9_19 + f4 * g8_19 + f5_2 * g7_19 + f6 * g6_19 + f7_2 * g5_19 + f8 * g4_19 + f9_2 * g3_19;
  t[3] = f0 * g3 + f1 * g2 + f2 * g1 + f3 * g0 + f4 * g9_19 + f5 * g8_19 + f6 * g7_19 + f7 * g6_19 + f8 * g5_19 + f9 * g4_19;
  t[4] = f0 * g4 + f1_2 * g3 + f2 * g2 + f3_2 * g1 + f4 * g0 + f5_2 * g9_19 + f6 * g8_19 + f7_2 * g7_19 + f8 * g6_19 + f9_2 * g5_19;
  t[5] = f0 * g5 + f1 * g4 + f2 * g3 + f3 * g2 + f4 * g1 + f5 * g0 + f6 * g9_19 + f7 * g8_19 + f8 * g7_19 + f9 * g6_19;
  t[6] = f0 * g6 + f1_2 * g5 + f2 * g4 + f3_2 * g3 + f4 * g2 + f5_2 * g1 + f6 * g0 + f7_2 * g9_19 + f8 * g8_19 + f9_2 * g7_19;
  t[7] = f0 * g7 + f1 * g6 + f2 * g5 + f3 * g4 + f4 * g3 + f5 * g2 + f6 * g1 + f7 * g0 + f8 * g9_19 + f9 * g8_19;
  t[8] = f0 * g8 + f1_2 * g7 + f2 * g6 + f3_2 * g5 + f4 * g4 + f5_2 * g3 + f6 * g2 + f7_2 * g1 + f8 * g0 + f9_2 * g9_19;
  t[9] = f0 * g9 + f1 * g8 + f2 * g7 + f3 * g6 + f4 * g5 + f5 * g4 + f6 * g3 + f7 * g2 + f8 * g1 + f9 * g0;
  fe_product_carry(h, t);
}

/* h = f^2: fe_mul's sums with each pair of distinct limbs once, doubled (the _2 and _4 factors). */
static void fe_sq(fe *h, const fe *f) {
  const uint64_t f0 = f->v[0], f1 = f->v[1], f2 = f->v[2], f3 = f->v[3], f4 = f->v[4], f5 = f->v[5], f6 = f->v[6], f7 = f->v[7], f8 = f->v[8], f9 = f->v[9];
  const uint64_t f0_2 = 2 * f0, f1_2 = 2 * f1, f1_4 = 4 * f1, f2_2 = 2 * f2, f3_2 = 2 * f3, f3_4 = 4 * f3, f4_2 = 2 * f4, f5_2 = 2 * f5, f5_4 = 4 * f5;
  const uint64_t f6_2 = 2 * f6, f7_2 = 2 * f7, f7_4 = 4 * f7, f8_2 = 2 * f8, f9_2 = 2 * f9;
  const uint64_t f5_19 = 19 * f5, f6_19 = 19 * f6, f7_19 = 19 * f7, f8_19 = 19 * f8, f9_19 = 19 * f9;
  uint64_t t[10];
  t[0] = f0 * f0 + f1_4 * f9_19 + f2_2 * f8_19 + f3_4 * f7_19 + f4_2 * f6_19 + f5_2 * f5_19;
  t[1] = f0_2 * f1 + f2_2 * f9_19 + f3_2 * f8_19 + f4_2 * f7_19 + f5_2 * f6_19;
  t[2] = f0_2 * f2 + f1_2 * f1 + f3_4 * f9_19 + f4_2 * f8_19 + f5_4 * f7_19 + f6 * f6_19;
  t[3] = f0_2 * f3 + f1_2 * f2 + f4_2 * f9_19 + f5_2 * f8_19 + f6_2 * f7_19;
  t[4] = f0_2 * f4 + f1_4 * f3 + f2 * f2 + f5_4 * f9_19 + f6_2 * f8_19 + f7_2 * f7_19;
  t[5] = f0_2 * f5 + f1_2 * f4 + f2_2 * f3 + f6_2 * f9_19 + f7_2 * f8_19;
  t[6] = f0_2 * f6 + f1_4 * f5 + f2_2 * f4 + f3_2 * f3 + f7_4 * f9_19 + f8 * f8_19;
  t[7] = f0_2 * f7 + f1_2 * f6 + f2_2 * f5 + f3_2 * f4 + f8_2 * f9_19;
  t[8] = f0_2 * f8 + f1_4 * f7 + f2_2 * f6 + f3_4 * f5 + f4 * f4 + f9_2 * f9_19;
  t[9] = f0_2 * f9 + f1_2 * f8 + f2_2 * f7 + f3_2 * f6 + f4_2 * f5;
  fe_product_carry(h, t);
}

/* n squarings. */
static void fe_sqn(fe *h, const fe *f, int n) {
  fe_sq(h, f);
  while (--n > 0) fe_sq(h, h);
}

/* z^(2^250 - 1) and z^11, on the way to z^(p - 2) and z^((p - 5) / 8): an addition chain of
 * squarings and 11 multiplications. */
static void fe_pow250(fe *z250, fe *z11, const fe *z) {
  fe z2, z9, t, z5, z10, z20, z50, z100;
  fe_sq(&z2, z);
  fe_sqn(&t, &z2, 2);
  fe_mul(&z9, &t, z);
  fe_mul(z11, &z9, &z2);
  fe_sq(&t, z11);
  fe_mul(&z5, &t, &z9); /* 2^5 - 1 */
  fe_sqn(&t, &z5, 5);
  fe_mul(&z10, &t, &z5); /* 2^10 - 1 */
  fe_sqn(&t, &z10, 10);
  fe_mul(&z20, &t, &z10); /* 2^20 - 1 */
  fe_sqn(&t, &z20, 20);
  fe_mul(&t, &t, &z20); /* 2^40 - 1 */
  fe_sqn(&t, &t, 10);
  fe_mul(&z50, &t, &z10); /* 2^50 - 1 */
  fe_sqn(&t, &z50, 50);
  fe_mul(&z100, &t, &z50); /* 2^100 - 1 */
  fe_sqn(&t, &z100, 100);
  fe_mul(&t, &t, &z100); /* 2^200 - 1 */
  fe_sqn(&t, &t, 50);
  fe_mul(z250, &t, &z50); /* 2^250 - 1 */
}

/* 1/z = z^(p - 2) = z^(2^255 - 21). */
static void fe_invert(fe *h, const fe *z) {
  fe t, z11;
  fe_pow250(&t, &z11, z);
  fe_sqn(&t, &t, 5);
  fe_mul(h, &t, &z11);
}

/* z^((p - 5) / 8) = z^(2^252 - 3), for the square root of RFC 8032 5.1.3. */
static void fe_pow22523(fe *h, const fe *z) {
  fe t, z11;
  fe_pow250(&t, &z11, z);
  fe_sqn(&t, &t, 2);
  fe_mul(h, &t, z);
}

/* The canonical encoding: the value reduced into [0, p), 255 bits little-endian, bit 255 clear. */
static void fe_tobytes(unsigned char s[32], const fe *f) {
  fe h = *f;
  uint32_t q, c;
  uint64_t acc = 0;
  unsigned have = 0, o = 0;
  int i;
  for (int pass = 0; pass < 2; pass++) { /* two sequential passes: every limb within its width, the value below 2^255 < 2p */
    for (i = 0; i < 9; i++) {
      c = h.v[i] >> fe_width[i];
      h.v[i] &= fe_mask(i);
      h.v[i + 1] += c;
    }
    c = h.v[9] >> 25;
    h.v[9] &= FE_M25;
    h.v[0] += 19 * c;
  }
  q = (h.v[0] + 19) >> 26;
  for (i = 1; i < 10; i++) q = (h.v[i] + q) >> fe_width[i]; /* 1 when h + 19 >= 2^255, i.e. h >= p */
  h.v[0] += 19 * q;
  for (i = 0; i < 9; i++) {
    c = h.v[i] >> fe_width[i];
    h.v[i] &= fe_mask(i);
    h.v[i + 1] += c;
  }
  h.v[9] &= FE_M25; /* minus 2^255: h - p */
  for (i = 0; i < 10; i++) {
    acc |= (uint64_t)h.v[i] << have;
    have += fe_width[i];
    while (have >= 8) {
      s[o++] = (unsigned char)acc;
      acc >>= 8;
      have -= 8;
    }
  }
  s[o] = (unsigned char)acc; /* the last 7 bits */
}

static int fe_equal(const fe *f, const fe *g) {
  unsigned char a[32], b[32];
  fe_tobytes(a, f);
  fe_tobytes(b, g);
  return memcmp(a, b, 32) == 0;
}

static int fe_is_odd(const fe *f) {
  unsigned char s[32];
  fe_tobytes(s, f);
  return s[0] & 1;
}

static int fe_is_zero(const fe *f) {
  fe zero;
  fe_set(&zero, 0);
  return fe_equal(f, &zero);
}

/* ---------------------------------------------------------------- the curve: -x^2 + y^2 = 1 + d x^2 y^2 */

static void ge_identity(ge *p) {
  fe_set(&p->X, 0);
  fe_set(&p->Y, 1);
  fe_set(&p->Z, 1);
  fe_set(&p->T, 0);
}

static void ge_to_cached(ge_cached *c, const ge *p) {
  fe d2;
  fe_frombytes(&d2, ed_d2);
  fe_add(&c->y_plus_x, &p->Y, &p->X);
  fe_sub(&c->y_minus_x, &p->Y, &p->X);
  fe_add(&c->z2, &p->Z, &p->Z);
  fe_mul(&c->t2d, &p->T, &d2);
}

/* r = p + q (RFC 8032 5.1.4, a = -1; complete: any two points, equal ones and the identity too). r may be p. */
static void ge_add(ge *r, const ge *p, const ge_cached *q) {
  fe a, b, c, d, e, f, g, h;
  fe_sub(&a, &p->Y, &p->X);
  fe_mul(&a, &a, &q->y_minus_x);
  fe_add(&b, &p->Y, &p->X);
  fe_mul(&b, &b, &q->y_plus_x);
  fe_mul(&c, &p->T, &q->t2d);
  fe_mul(&d, &p->Z, &q->z2);
  fe_sub(&e, &b, &a);
  fe_sub(&f, &d, &c);
  fe_add(&g, &d, &c);
  fe_add(&h, &b, &a);
  fe_mul(&r->X, &e, &f);
  fe_mul(&r->Y, &g, &h);
  fe_mul(&r->T, &e, &h);
  fe_mul(&r->Z, &f, &g);
}

/* r = 2p (RFC 8032 5.1.4). Doubling reads no T: with_t 0 leaves r's T stale, for a doubling that
 * another doubling follows. r may be p. */
static void ge_dbl(ge *r, const ge *p, int with_t) {
  fe a, b, c, e, f, g, h;
  fe_sq(&a, &p->X);
  fe_sq(&b, &p->Y);
  fe_sq(&c, &p->Z);
  fe_add(&c, &c, &c);
  fe_add(&h, &a, &b);
  fe_add(&e, &p->X, &p->Y);
  fe_sq(&e, &e);
  fe_sub(&e, &h, &e);
  fe_sub(&g, &a, &b);
  fe_add(&f, &c, &g);
  fe_mul(&r->X, &e, &f);
  fe_mul(&r->Y, &g, &h);
  if (with_t) fe_mul(&r->T, &e, &h);
  fe_mul(&r->Z, &f, &g);
}

/* RFC 8032 5.1.3: the point of a 32-byte encoding whose y is canonical (the caller checked): x from
 * x^2 = (y^2 - 1) / (d y^2 + 1), its sign from bit 255. -1 when no x exists, or x = 0 with the sign set. */
static int ge_decode(ge *p, const unsigned char s[32]) {
  fe y, u, v, v3, x, vxx, t, one, d;
  const int sign = s[31] >> 7;
  fe_frombytes(&y, s);
  fe_frombytes(&d, ed_d);
  fe_set(&one, 1);
  fe_sq(&u, &y);
  fe_mul(&v, &u, &d);
  fe_sub(&u, &u, &one); /* y^2 - 1 */
  fe_add(&v, &v, &one); /* d y^2 + 1 */
  fe_sq(&v3, &v);
  fe_mul(&v3, &v3, &v); /* v^3 */
  fe_sq(&x, &v3);
  fe_mul(&x, &x, &v);
  fe_mul(&x, &x, &u); /* u v^7 */
  fe_pow22523(&x, &x);
  fe_mul(&x, &x, &v3);
  fe_mul(&x, &x, &u); /* u v^3 (u v^7)^((p - 5) / 8) */
  fe_sq(&vxx, &x);
  fe_mul(&vxx, &vxx, &v);
  if (!fe_equal(&vxx, &u)) {
    fe_neg(&t, &u);
    if (!fe_equal(&vxx, &t)) return -1;
    fe_frombytes(&t, ed_sqrtm1);
    fe_mul(&x, &x, &t);
  }
  if (sign && fe_is_zero(&x)) return -1;
  if (fe_is_odd(&x) != sign) fe_neg(&x, &x);
  p->X = x;
  p->Y = y;
  fe_set(&p->Z, 1);
  fe_mul(&p->T, &x, &y);
  return 0;
}

static void ge_encode(unsigned char s[32], const ge *p) {
  fe zinv, x, y;
  fe_invert(&zinv, &p->Z);
  fe_mul(&x, &p->X, &zinv);
  fe_mul(&y, &p->Y, &zinv);
  fe_tobytes(s, &y);
  s[31] = (unsigned char)(s[31] | fe_is_odd(&x) << 7);
}

/* table[j] = [j]p for j = 0..15. */
static void ge_table(ge_cached table[16], const ge *p) {
  ge sum, zero;
  ge_identity(&zero);
  ge_to_cached(&table[0], &zero);
  ge_to_cached(&table[1], p);
  sum = *p;
  for (int j = 2; j < 16; j++) {
    ge_add(&sum, &sum, &table[1]);
    ge_to_cached(&table[j], &sum);
  }
}

/* The 4 bits at nibble i (0: the lowest) of a 32-byte little-endian scalar. */
static unsigned nibble(const unsigned char s[32], int i) { return (unsigned)(s[i / 2] >> (4 * (i & 1))) & 15; }

/* r = [a]B + [b]p, both scalars below 2^256: 4-bit windows from the top, each window four doublings
 * and two additions (of [0] too), so the work is the same whatever a and b are. */
static void ge_double_scalarmult(ge *r, const unsigned char a[32], const unsigned char b[32], const ge *p) {
  ge_cached tb[16], tp[16];
  ge base;
  fe_frombytes(&base.X, ed_bx);
  fe_frombytes(&base.Y, ed_by);
  fe_set(&base.Z, 1);
  fe_mul(&base.T, &base.X, &base.Y);
  ge_table(tb, &base);
  ge_table(tp, p);
  ge_identity(r);
  for (int i = 63; i >= 0; i--) {
    ge_dbl(r, r, 0);
    ge_dbl(r, r, 0);
    ge_dbl(r, r, 0);
    ge_dbl(r, r, 1);
    ge_add(r, r, &tp[nibble(b, i)]);
    ge_add(r, r, &tb[nibble(a, i)]);
  }
}

/* ---------------------------------------------------------------- scalars mod L */

/* out = the 512-bit little-endian h mod L, a bit at a time from the top: r = 2r + bit, then r - L
 * kept when it did not borrow (chosen by a mask, never a branch). r stays below L < 2^253. */
static void sc_reduce512(unsigned char out[32], const unsigned char h[64]) {
  uint32_t r[8] = {0}, t[8], l[8];
  int w, bit;
  for (w = 0; w < 8; w++) l[w] = (uint32_t)ed_l[4 * w] | (uint32_t)ed_l[4 * w + 1] << 8 | (uint32_t)ed_l[4 * w + 2] << 16 | (uint32_t)ed_l[4 * w + 3] << 24;
  for (bit = 511; bit >= 0; bit--) {
    uint32_t carry = (uint32_t)(h[bit / 8] >> (bit % 8)) & 1, borrow = 0, keep;
    for (w = 0; w < 8; w++) {
      const uint32_t top = r[w] >> 31;
      r[w] = r[w] << 1 | carry;
      carry = top;
    }
    for (w = 0; w < 8; w++) {
      const uint64_t d = (uint64_t)r[w] - l[w] - borrow;
      t[w] = (uint32_t)d;
      borrow = (uint32_t)(d >> 63);
    }
    keep = 0u - borrow; /* all ones: r < L, keep r */
    for (w = 0; w < 8; w++) r[w] = (r[w] & keep) | (t[w] & ~keep);
  }
  for (w = 0; w < 32; w++) out[w] = (unsigned char)(r[w / 4] >> (8 * (w % 4)));
}

static int sc_below_l(const unsigned char s[32]) {
  for (int i = 31; i >= 0; i--) {
    if (s[i] != ed_l[i]) return s[i] < ed_l[i];
  }
  return 0;
}

/* ---------------------------------------------------------------- the refusals and the verification */

/* y < p for the 255 low bits of an encoding. */
static int ed_canonical_y(const unsigned char s[32]) {
  if ((s[31] & 0x7f) != 0x7f) return 1;
  for (int i = 30; i > 0; i--)
    if (s[i] != 0xff) return 1;
  return s[0] < 0xed;
}

static int ed_small_order(const unsigned char s[32]) {
  for (size_t k = 0; k < sizeof ed_small_order_y / sizeof ed_small_order_y[0]; k++) {
    if (memcmp(s, ed_small_order_y[k], 31) == 0 && (s[31] & 0x7f) == ed_small_order_y[k][31]) return 1;
  }
  return 0;
}

/* An encoded point (A or R) that libsodium refuses before any arithmetic: y not canonical, or of small order. */
static int ed_refused_point(const unsigned char s[32]) { return !ed_canonical_y(s) || ed_small_order(s); }

int plc_ed25519_verify(const unsigned char public_key[32], const void *message, size_t len, const unsigned char signature[64]) {
  unsigned char h[64], k[32], check[32], diff = 0;
  sha512_ctx c;
  ge a, q;
  if (public_key == NULL || signature == NULL || (message == NULL && len > 0)) return 0;
  /* The refusals, before any curve arithmetic. */
  if (!sc_below_l(signature + 32) || ed_refused_point(public_key) || ed_refused_point(signature)) return 0;
  if (ge_decode(&a, public_key) != 0) return 0;
  fe_neg(&a.X, &a.X); /* -A */
  fe_neg(&a.T, &a.T);
  sha512_init(&c);
  sha512_update(&c, signature, 32);
  sha512_update(&c, public_key, 32);
  if (len > 0) sha512_update(&c, message, len);
  sha512_final(&c, h);
  sc_reduce512(k, h);
  ge_double_scalarmult(&q, signature + 32, k, &a); /* [S]B - [k]A */
  ge_encode(check, &q);
  for (int i = 0; i < 32; i++) diff = (unsigned char)(diff | (check[i] ^ signature[i]));
  return diff == 0;
}
