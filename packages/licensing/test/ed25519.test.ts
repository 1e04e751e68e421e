// Ed25519 verification of signed tickets (docs/signed-ticket.md): the checked-in vectors (RFC 8032
// and the edge cases where libsodium refuses what RFC 8032 or node:crypto accept), the keys a
// vendor may configure, and random keys and messages against node:crypto.
import { createPublicKey, generateKeyPairSync, randomBytes, randomInt, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ed25519KeyProblem, ed25519SignatureProblem, isLicenseError, parseTicketKeys, verifyEd25519 } from '../src/index.js';
import { ED25519_VECTORS_FILE, makeEd25519Vectors, readEd25519Vectors, writeEd25519Vectors, type Ed25519Case } from './ed25519-vectors.js';

const unhex = (s: string): Buffer => Buffer.from(s, 'hex');

function nodeVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verify(null, message, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') }, format: 'jwk' }), signature);
  } catch {
    return false;
  }
}

describe('the checked-in Ed25519 vectors', () => {
  if (process.env.UPDATE_ED25519_VECTORS === '1') writeEd25519Vectors();
  const vectors = readEd25519Vectors();

  it('are exactly what the generator makes today (regenerate: UPDATE_ED25519_VECTORS=1)', () => {
    expect(JSON.parse(readFileSync(ED25519_VECTORS_FILE, 'utf8'))).toEqual(makeEd25519Vectors());
  });

  it.each(vectors.cases.map((c): [string, Ed25519Case] => [`${c.name}: ${c.what}`, c]))('%s', (_, c) => {
    const [key, message, signature] = [unhex(c.public_key), unhex(c.message), unhex(c.signature)];
    expect(verifyEd25519(key, message, signature)).toBe(c.valid);
    // node:crypto alone never refuses what the rule accepts; where it accepts what the rule refuses
    // (which cases depends on the Node's OpenSSL), the refusals decide and say why.
    const node = nodeVerify(key, message, signature);
    if (c.valid) expect(node).toBe(true);
    if (node && !c.valid) expect(ed25519SignatureProblem(key, signature)).toMatch(/small order|canonically|group order/);
  });

  // The cases RFC 8032's equation accepts and the rule refuses: the refusals name each of them on
  // their own, whatever this Node's OpenSSL answers (Node 20's accepts them, Node 24's some).
  const refusedByEncoding = vectors.cases.filter((c) => /^(a-small-order|a-all-zero|a-non-canonical-small-order|r-small-order|identity-key)/.test(c.name));
  it('the equation accepts a dozen cases that only the refusals turn down, and the refusals name each', () => {
    expect(refusedByEncoding.length).toBeGreaterThan(10);
    for (const c of refusedByEncoding) {
      expect(c.valid).toBe(false);
      expect(ed25519SignatureProblem(unhex(c.public_key), unhex(c.signature)), c.name).toMatch(/small order|canonically/);
    }
  });
});

describe('the keys a vendor configures', () => {
  const vectors = readEd25519Vectors();
  const keyOf = (name: string): Buffer => unhex(vectors.cases.find((c) => c.name === name)!.public_key);

  it.each([
    ['the all-zero key', 'a-all-zero', /small order/],
    ['the identity', 'a-small-order-0', /small order/],
    ['a point of order 8', 'a-small-order-1', /small order/],
    ['a non-canonical key of small order', 'a-non-canonical-small-order-4', /canonically/],
    ['a non-canonical key', 'a-non-canonical', /canonically/],
    ['a y on no point', 'a-not-a-point', /not a point/],
  ])('%s is refused with words, naming the entry', (_, name, words) => {
    const raw = keyOf(name);
    expect(ed25519KeyProblem(raw)).toMatch(words);
    const good = generateKeyPairSync('ed25519').publicKey;
    const goodText = (good.export({ format: 'jwk' }) as { x: string }).x;
    const error = (() => {
      try {
        parseTicketKeys([goodText, `ed25519:${raw.toString('base64url')}`], 'ticket_keys');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isLicenseError(error) && error.code).toBe('invalid_argument');
    expect((error as Error).message).toMatch(/^ticket_keys\[1\] is not a usable Ed25519 public key: /);
    expect((error as Error).message).toMatch(words);
  });

  it('every RFC 8032 key and a mixed-order key are usable (a mixed-order key is not refused by an encoding rule)', () => {
    for (const c of vectors.cases.filter((x) => x.name.startsWith('rfc8032-') || x.name.startsWith('a-mixed-order'))) expect(ed25519KeyProblem(unhex(c.public_key)), c.name).toBeUndefined();
  });
});

describe('random keys and messages, against node:crypto', () => {
  // Honest keys and signatures never meet a refusal: on them the verdict is node:crypto's, for
  // the signature as made and for one byte of the signature, the message or the key changed.
  it('agrees with node:crypto on 300 random cases', () => {
    for (let i = 0; i < 300; i++) {
      const { privateKey, publicKey } = generateKeyPairSync('ed25519');
      const raw = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url');
      const message = randomBytes(randomInt(0, 300));
      const signature = sign(null, message, privateKey);
      expect(ed25519KeyProblem(raw)).toBeUndefined();
      expect(verifyEd25519(raw, message, signature)).toBe(true);
      const [key, msg, sig] = [Buffer.from(raw), Buffer.from(message), Buffer.from(signature)];
      const target = [key, msg, sig][i % 3]!;
      if (target.length > 0) target[randomInt(0, target.length)]! ^= 1 << randomInt(0, 8);
      expect(verifyEd25519(key, msg, sig)).toBe(nodeVerify(key, msg, sig));
    }
  });
});
