import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519 } from '@noble/curves/ed25519';

/**
 * Ed25519 test vectors for every verifier of signed tickets (the library's `verifyEd25519`, plc's
 * `plc_ed25519_verify`): RFC 8032 section 7.1's five Ed25519 vectors (facts, typed in from the
 * RFC and checked here against node:crypto's deterministic signing), then edge cases built from
 * fixed seeds with @noble/curves' point arithmetic (a second implementation, used here only).
 *
 * The rule every case is judged by (`valid`): libsodium's `crypto_sign_verify_detached`, i.e.
 * RFC 8032's verification, cofactorless (`[S]B = R + [k]A`, R compared by its encoding), after
 * refusing, before any curve arithmetic:
 * - `S >= L` (the group order): a second encoding of one signature;
 * - a public key A or an R whose y (the 255 low bits, little-endian) is `>= p` (non-canonical);
 * - a public key A or an R of small order: its y (sign bit ignored) one of the 8 small-order
 *   points' (0, 1, p - 1 and the two of order 8), canonical or not. RFC 8032 alone accepts some
 *   of these, and so does node:crypto (OpenSSL): with A of small order one signature verifies
 *   for many messages, and with A and R both the identity and S = 0 for every message.
 * A public key that is not a point, or of mixed order, is not refused by an encoding rule: the
 * first never verifies, the second verifies only when the cofactorless equation holds.
 *
 * What node:crypto's `verify` answers alone is not recorded: it depends on the OpenSSL a Node
 * carries (Node 20's OpenSSL 3.0 accepts the small-order cases, Node 24's refuses some itself),
 * so a verifier built on it adds the refusals above on every Node, and the test checks them apart.
 *
 * File: `ed25519-vectors.json` = `{ about, rule, cases: [{ name, what, public_key, message,
 * signature, valid, secret_key? }] }`, bytes in lowercase hex (`message` may be
 * ""), `secret_key` the RFC's 32-byte seed where there is one. `ed25519.test.ts` regenerates it
 * and fails when the checked-in file differs; `UPDATE_ED25519_VECTORS=1 pnpm exec vitest run
 * packages/licensing/test/ed25519.test.ts` rewrites it.
 */

export const ED25519_VECTORS_FILE = join(import.meta.dirname, 'ed25519-vectors.json');

export interface Ed25519Case {
  name: string;
  what: string;
  public_key: string;
  message: string;
  signature: string;
  /** The verdict by the rule above. */
  valid: boolean;
  secret_key?: string;
}

export interface Ed25519Vectors {
  about: string;
  rule: string;
  cases: Ed25519Case[];
}

const Point = ed25519.Point;
/** The group order and the field prime of edwards25519 (RFC 8032 section 5.1). */
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const p = 2n ** 255n - 19n;

const RFC8032: readonly { name: string; title: string; secret: string; public: string; message: string; signature: string }[] = [
  {
    name: 'rfc8032-test-1',
    title: 'TEST 1 (an empty message)',
    secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
    public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
    message: '',
    signature: 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
  },
  {
    name: 'rfc8032-test-2',
    title: 'TEST 2 (one byte)',
    secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
    public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
    message: '72',
    signature: '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
  },
  {
    name: 'rfc8032-test-3',
    title: 'TEST 3 (two bytes)',
    secret: 'c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7',
    public: 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025',
    message: 'af82',
    signature: '6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a',
  },
  {
    name: 'rfc8032-test-1024',
    title: 'TEST 1024 (1023 bytes)',
    secret: 'f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5',
    public: '278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e',
    message: [
      '08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1',
      'e355f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d',
      '658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a',
      '7363c344fe6b199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e',
      '06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc10',
      '3b6621fcde2beca1231d206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1',
      '85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d',
      '502f1a8c6eb6f1ce22b3de1a1f40cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270',
      '88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089b',
      'eccf80cfe2df16a2cf65bd92dd597b0707e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba',
      'b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969b',
      'e3ea7082ff7fc9888c144da2af58429ec96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7',
      '51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c42f58c30c04aafdb038dda0847dd988d',
      'cda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df',
      'f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7',
      '984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4',
      '88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a32ef5b52a1ecc820e308aa342721aac09',
      '43bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f',
      'b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba77c225bc307ba537152f3f161',
      '0e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d',
      'b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef68d3a101e8a3b8ca',
      'c60c905c15fc910840b94c00a0b9d0',
    ].join(''),
    signature: '0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03',
  },
  {
    name: 'rfc8032-test-sha-abc',
    title: 'TEST SHA(abc) (the 64-byte SHA-512 of "abc")',
    secret: '833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42',
    public: 'ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf',
    message: 'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    signature: 'dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b58909351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704',
  },
];

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function le(n: bigint, length = 32): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}

function fromLe(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}

const concat = (...parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));
/** A fixed scalar (mod L) from a label: the vectors are the same on every run. */
const scalarOf = (label: string): bigint => fromLe(createHash('sha512').update(`ed25519-vectors/${label}`).digest()) % L;
/** k = SHA-512(R || A || M) mod L, the challenge of RFC 8032. */
const challenge = (R: Uint8Array, A: Uint8Array, M: Uint8Array): bigint => fromLe(createHash('sha512').update(R).update(A).update(M).digest()) % L;

/** The order of a point of small or mixed order's torsion part (1, 2, 4 or 8), or of a small-order point itself. */
function smallOrder(point: InstanceType<typeof Point>): number {
  let x = point;
  for (let order = 1; order <= 8; order++) {
    if (x.equals(Point.ZERO)) return order;
    x = x.add(point);
  }
  throw new Error('not a point of small order');
}

/** The 8 points of small order, by their canonical encodings (the identity first). */
function smallOrderPoints(): InstanceType<typeof Point>[] {
  // A point of order 8: L times a point whose torsion part has order 8 (y = 3 is one).
  for (let y = 2n; y < 100n; y++) {
    let q;
    try {
      q = Point.fromHex(hex(le(y)));
    } catch {
      continue;
    }
    const t = q.multiplyUnsafe(L - 1n).add(q);
    if (!t.equals(Point.ZERO) && smallOrder(t) === 8) return Array.from({ length: 8 }, (_, k) => (k === 0 ? Point.ZERO : t.multiplyUnsafe(BigInt(k))));
  }
  throw new Error('no point of order 8 found');
}

export function makeEd25519Vectors(): Ed25519Vectors {
  const cases: Ed25519Case[] = [];
  const add = (name: string, what: string, publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array, valid: boolean, secret?: string): void => {
    cases.push({
      name,
      what,
      public_key: hex(publicKey),
      message: hex(message),
      signature: hex(signature),
      valid,
      ...(secret === undefined ? {} : { secret_key: secret }),
    });
  };

  for (const v of RFC8032) {
    // The typed-in facts must be what deterministic Ed25519 gives for the seed: a typo fails here.
    if (hex(ed25519.getPublicKey(unhex(v.secret))) !== v.public || hex(ed25519.sign(unhex(v.message), unhex(v.secret))) !== v.signature) {
      throw new Error(`${v.name}: the typed-in vector does not match its seed`);
    }
    add(v.name, `RFC 8032 section 7.1, ${v.title}`, unhex(v.public), unhex(v.message), unhex(v.signature), true, v.secret);
  }

  const t2 = RFC8032[1]!;
  const [A2, M2, sig2] = [unhex(t2.public), unhex(t2.message), unhex(t2.signature)];
  const flip = (b: Uint8Array, i: number, bit = 1): Uint8Array => {
    const c = b.slice();
    c[i]! ^= bit;
    return c;
  };
  add('test-2-message-changed', 'TEST 2 with its message 0x72 changed to 0x73', A2, unhex('73'), sig2, false);
  add('test-2-r-changed', "TEST 2 with a bit of R flipped", A2, M2, flip(sig2, 0), false);
  add('test-2-s-changed', "TEST 2 with the lowest bit of S flipped", A2, M2, flip(sig2, 32), false);
  add('test-2-other-key', "TEST 2's signature under TEST 3's public key", unhex(RFC8032[2]!.public), M2, sig2, false);
  add('test-2-empty-signature', 'TEST 2 with a signature of 64 zero bytes', A2, M2, new Uint8Array(64), false);

  // S: one signature, one encoding (S < L).
  const t1 = RFC8032[0]!;
  const [A1, M1, sig1] = [unhex(t1.public), unhex(t1.message), unhex(t1.signature)];
  const withS = (sig: Uint8Array, s: Uint8Array): Uint8Array => concat(sig.subarray(0, 32), s);
  add('s-plus-l', 'TEST 1 with S + L in place of S (the same S mod L: a second encoding of the signature)', A1, M1, withS(sig1, le(fromLe(sig1.subarray(32)) + L)), false);
  add('s-equals-l', 'TEST 1 with S = L', A1, M1, withS(sig1, le(L)), false);
  add('s-top-bits', 'TEST 1 with the top 3 bits of S set (S >= 2^253)', A1, M1, withS(sig1, flip(sig1.subarray(32), 31, 0xe0)), false);
  add('s-all-ones', 'TEST 1 with S = 2^256 - 1', A1, M1, withS(sig1, new Uint8Array(32).fill(0xff)), false);

  // A key of this file's own: a (its scalar) and A = [a]B, for signatures built by hand.
  const a = scalarOf('key-a');
  const A = Point.BASE.multiply(a);
  const Abytes = A.toRawBytes();
  /** An honest signature of m by a with nonce r (R = [r]B, S = r + k a). */
  const signWith = (r: bigint, aa: bigint, Ab: Uint8Array, m: Uint8Array, Rpoint = Point.BASE.multiply(r)): Uint8Array => {
    const R = Rpoint.toRawBytes();
    return concat(R, le((r + challenge(R, Ab, m) * aa) % L));
  };
  add('own-key-valid', "an honest signature by this file's own key (the baseline of the cases below)", Abytes, utf8('plugin-license'), signWith(scalarOf('nonce-0'), a, Abytes, utf8('plugin-license')), true);

  const small = smallOrderPoints();
  const smallName = (point: InstanceType<typeof Point>): string => {
    const order = smallOrder(point);
    return order === 1 ? 'the identity' : `order ${order}, ${hex(point.toRawBytes())}`;
  };
  // Non-canonical encodings of small-order points: y >= p (p is 0, p + 1 is 1) and the sign bit set on x = 0.
  const nonCanonicalSmall: [string, Uint8Array][] = [
    ['identity with the sign bit set (x = 0 is never negative)', flip(le(1n), 31, 0x80)],
    ['order 2 (y = -1) with the sign bit set', flip(le(p - 1n), 31, 0x80)],
    ['y = p (that is 0: order 4)', le(p)],
    ['y = p, sign bit set', flip(le(p), 31, 0x80)],
    ['y = p + 1 (that is 1: the identity)', le(p + 1n)],
    ['y = p + 1, sign bit set', flip(le(p + 1n), 31, 0x80)],
  ];
  /** The point an encoding means with y taken mod p (how a lax decoder reads it). */
  const laxPoint = (enc: Uint8Array): InstanceType<typeof Point> => {
    const y = fromLe(flip(enc, 31, enc[31]! & 0x80)) % p;
    const canonical = le(y);
    canonical[31]! |= enc[31]! & 0x80;
    try {
      return Point.fromHex(hex(canonical));
    } catch {
      // x = 0 with the sign bit set: a lax decoder takes x = 0.
      canonical[31]! &= 0x7f;
      return Point.fromHex(hex(canonical));
    }
  };

  // A of small order: R = [r]B and S = r, so [S]B = R + [k]A holds exactly when [k]A = 0; the
  // message is chosen (counting) so that it does, and RFC 8032's equation accepts the signature.
  const smallA = (name: string, what: string, enc: Uint8Array, point: InstanceType<typeof Point>): void => {
    const order = BigInt(smallOrder(point));
    const r = scalarOf(`nonce-${name}`);
    const R = Point.BASE.multiply(r).toRawBytes();
    for (let i = 0; i < 1000; i++) {
      const m = utf8(`small-order public key ${i}`);
      if (challenge(R, enc, m) % order === 0n) return add(name, what, enc, m, concat(R, le(r)), false);
    }
    throw new Error(`${name}: no message found`);
  };
  small.forEach((point, i) => {
    const enc = point.toRawBytes();
    const name = enc.every((b) => b === 0) ? 'a-all-zero' : `a-small-order-${i}`;
    smallA(name, `public key of small order: ${enc.every((b) => b === 0) ? 'the all-zero key, ' : ''}${smallName(point)}; a signature RFC 8032's equation accepts ([k]A = 0)`, enc, point);
  });
  nonCanonicalSmall.forEach(([words, enc], i) => smallA(`a-non-canonical-small-order-${i}`, `public key non-canonical and of small order: ${words}; a signature the equation accepts`, enc, laxPoint(enc)));
  add('a-non-canonical', 'public key y = p + 3 (a point, y = 3, written non-canonically), signed as if by a', le(p + 3n), utf8('plugin-license'), signWith(scalarOf('nonce-1'), a, le(p + 3n), utf8('plugin-license')), false);
  add('a-not-a-point', 'public key y = 2, which is on no point of the curve', le(2n), utf8('plugin-license'), signWith(scalarOf('nonce-2'), a, le(2n), utf8('plugin-license')), false);

  // A of mixed order: A = [a]B + T, T of order 8. S = r + k a gives [S]B = R + [k]A - [k]T:
  // cofactorless it verifies only when k is a multiple of 8 (libsodium and OpenSSL accept it
  // then, since A is not of small order); a cofactored verifier ([8][S]B = [8]R + [8][k]A)
  // would accept both.
  const T8 = small[1]!;
  const Amixed = A.add(T8).toRawBytes();
  const mixed = (want: boolean): void => {
    for (let i = 0; i < 1000; i++) {
      const r = scalarOf(`mixed-${i}`);
      const R = Point.BASE.multiply(r).toRawBytes();
      const m = utf8('mixed-order public key');
      const k = challenge(R, Amixed, m);
      if ((k % 8n === 0n) === want) {
        return add(
          want ? 'a-mixed-order-k-multiple-of-8' : 'a-mixed-order-k-not-multiple-of-8',
          `public key of mixed order ([a]B + a point of order 8), k ${want ? 'a multiple of 8: the cofactorless equation holds' : 'not a multiple of 8: only a cofactored verifier would accept'}`,
          Amixed,
          m,
          concat(R, le((r + k * a) % L)),
          want,
        );
      }
    }
    throw new Error('no nonce found');
  };
  mixed(true);
  mixed(false);

  // R of small order, with S = k a: [S]B = R + [k]A holds exactly when R is the identity.
  const m = utf8('small-order R');
  const smallR = (name: string, what: string, R: Uint8Array): void => add(name, what, Abytes, m, concat(R, le((challenge(R, Abytes, m) * a) % L)), false);
  small.forEach((point, i) => smallR(`r-small-order-${i}`, `R of small order: ${smallName(point)}, S = k a${i === 0 ? ' (RFC 8032\'s equation accepts it)' : ''}`, point.toRawBytes()));
  nonCanonicalSmall.forEach(([words, enc], i) => smallR(`r-non-canonical-small-order-${i}`, `R non-canonical and of small order: ${words}, S = k a`, enc));
  {
    const r = scalarOf('nonce-mixed-r');
    add('r-mixed-order', 'R of mixed order ([r]B + a point of order 8), S = r + k a: only a cofactored verifier would accept', Abytes, m, signWith(r, a, Abytes, m, Point.BASE.multiply(r).add(T8)), false);
  }
  add('r-non-canonical', 'R with y = p + 3 (a point written non-canonically), S = k a', Abytes, m, concat(le(p + 3n), le((challenge(le(p + 3n), Abytes, m) * a) % L)), false);
  add('r-not-a-point', 'R with y = 2, on no point of the curve', Abytes, m, concat(le(2n), le(scalarOf('s'))), false);

  // The trivial forgery: A and R the identity, S = 0; RFC 8032's equation holds for every message.
  add('identity-key-identity-r-zero-s', 'public key and R the identity, S = 0: RFC 8032\'s equation holds for any message', le(1n), utf8('any message at all'), concat(le(1n), le(0n)), false);

  return {
    about:
      'Ed25519 vectors of docs/signed-ticket.md, made by packages/licensing/test/ed25519-vectors.ts: RFC 8032 section 7.1 (TEST 1, 2, 3, 1024, SHA(abc)) and edge cases from fixed seeds. Each case: public key, message, signature (lowercase hex), the verdict by the rule, and what node:crypto alone answers.',
    rule: 'libsodium crypto_sign_verify_detached: refuse S >= L; refuse A or R with y >= p (y = the 255 low bits, little-endian); refuse A or R whose y (sign bit ignored) is that of a point of small order (0, 1, p - 1, and the two of order 8); then RFC 8032 verification, cofactorless: encode([S]B - [k]A) == R, k = SHA-512(R || A || M) mod L; an A that is not a point is refused.',
    cases,
  };
}

/** Writes the vectors file. */
export function writeEd25519Vectors(file = ED25519_VECTORS_FILE): void {
  writeFileSync(file, `${JSON.stringify(makeEd25519Vectors(), null, 2)}\n`);
}

/** The checked-in vectors. */
export function readEd25519Vectors(file = ED25519_VECTORS_FILE): Ed25519Vectors {
  return JSON.parse(readFileSync(file, 'utf8')) as Ed25519Vectors;
}
