// plc's Ed25519 (src/ed25519.c) and SHA-512 (src/sha512.c), compiled with the system compiler (and
// under ASan/UBSan where clang has them): every case of packages/licensing/test/ed25519-vectors.json
// (RFC 8032's and the edge cases libsodium refuses) with the library's verdict; SHA-512 known
// answers; a differential test against node:crypto on random keys and messages (honest signatures
// valid, one flipped bit invalid); the small-order list checked against [8]P; and the key parser.
import { spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseTicketKeys, verifyEd25519 } from '@plugin-license/licensing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEd25519Vectors } from '../../../../packages/licensing/test/ed25519-vectors.js';
import { compile, C_FLAGS, hasCc, hasTool } from './helpers/toolchain.js';

const SANITIZERS = ['-fsanitize=address,undefined', '-fno-sanitize-recover=all', '-g', '-O1'];
const hasSanitizers =
  hasTool('clang') &&
  spawnSync('clang', [...SANITIZERS, '-x', 'c', '-', '-o', '/dev/null'], { input: 'int main(void) { return 0; }\n', stdio: ['pipe', 'ignore', 'ignore'] }).status === 0;

const hex = (b: Uint8Array): string => (b.length === 0 ? '-' : Buffer.from(b).toString('hex'));
const rawPublic = (key: ReturnType<typeof createPublicKey>): Buffer => Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url');
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const PKCS8_SEED_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

describe.skipIf(!hasCc)('plc\'s Ed25519 and SHA-512', () => {
  let dir: string;
  let kat: string;
  /** One line of answer per command line (test/ed25519-kat.c). */
  const ask = (commands: string[]): string[] => {
    const r = spawnSync(kat, { input: `${commands.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(commands.length);
    return lines;
  };
  const verifyLine = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): string => `verify ${hex(publicKey)} ${hex(message)} ${hex(signature)}`;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-ed25519-'));
    kat = join(dir, 'ed25519-kat');
    compile(hasSanitizers ? 'clang' : 'cc', [...C_FLAGS, ...(hasSanitizers ? SANITIZERS : []), 'test/ed25519-kat.c', '-o', kat]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers every case of ed25519-vectors.json as its rule says, and as the library\'s verifyEd25519', () => {
    const { cases } = readEd25519Vectors();
    expect(cases.length).toBeGreaterThan(40);
    const buf = (h: string) => Buffer.from(h, 'hex');
    const answers = ask(cases.map((c) => verifyLine(buf(c.public_key), buf(c.message), buf(c.signature))));
    const differ = cases
      .map((c, i) => ({ name: c.name, rule: c.valid, plc: answers[i] === '1', library: verifyEd25519(buf(c.public_key), buf(c.message), buf(c.signature)) }))
      .filter((x) => x.plc !== x.rule || x.library !== x.rule);
    expect(differ).toEqual([]);
    // Both verdicts are in the file: what plc accepts and what it refuses.
    expect(cases.some((c) => c.valid)).toBe(true);
    expect(cases.filter((c) => !c.valid).length).toBeGreaterThan(20);
  });

  it('computes SHA-512 as FIPS 180-4 (and node:crypto) does, across the block boundaries and for a million a', () => {
    const messages = [Buffer.from('abc'), Buffer.alloc(0), Buffer.from('abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu')];
    for (const n of [1, 55, 63, 64, 110, 111, 112, 113, 119, 127, 128, 129, 239, 240, 255, 256, 257, 1000, 4127]) messages.push(randomBytes(n));
    const answers = ask([...messages.map((m) => `sha512 ${hex(m)}`), 'sha512-a 1000000']);
    expect(answers).toEqual([...messages.map((m) => createHash('sha512').update(m).digest('hex')), createHash('sha512').update(Buffer.alloc(1_000_000, 'a')).digest('hex')]);
    // FIPS 180-4's own answer for "abc", not only node's.
    expect(answers[0]).toBe('ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f');
  });

  it('agrees with node:crypto on 400 random keys and messages: the honest signature valid, any one flipped bit invalid', () => {
    const commands: string[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 400; i++) {
      const { publicKey, privateKey } = generateKeyPairSync('ed25519');
      const pk = rawPublic(publicKey);
      const message = randomBytes(i % 3 === 0 ? i : i % 97);
      const signature = sign(null, message, privateKey);
      commands.push(verifyLine(pk, message, signature));
      expected.push('1');
      // One bit flipped in the signature, the message or the key: node:crypto says no, and so does plc.
      const flip = (b: Buffer, bit: number): Buffer => {
        const c = Buffer.from(b);
        c[bit >> 3]! ^= 1 << (bit & 7);
        return c;
      };
      const badSig = flip(signature, i % 512);
      const badKey = flip(pk, (i * 7) % 256);
      expect(verify(null, message, publicKey, badSig)).toBe(false);
      commands.push(verifyLine(pk, message, badSig), verifyLine(badKey, message, signature));
      expected.push('0', '0');
      if (message.length > 0) {
        commands.push(verifyLine(pk, flip(message, (i * 13) % (8 * message.length)), signature));
        expected.push('0');
      }
    }
    expect(ask(commands)).toEqual(expected);
  });

  it('its test signer (fuzz/ed25519-sign.h, used by the fuzzer) writes node:crypto\'s signatures and keys byte for byte', () => {
    const seeds = Array.from({ length: 100 }, () => randomBytes(32));
    const messages = seeds.map((_, i) => randomBytes(i * 5));
    const expected = seeds.map((seed, i) => {
      const key = createPrivateKey({ key: Buffer.concat([PKCS8_SEED_PREFIX, seed]), format: 'der', type: 'pkcs8' });
      return `${sign(null, messages[i]!, key).toString('hex')} ${rawPublic(createPublicKey(key)).toString('hex')}`;
    });
    expect(ask(seeds.map((seed, i) => `sign ${hex(seed)} ${hex(messages[i]!)}`))).toEqual(expected);
  });

  it('refuses exactly the points of small order: each listed y (sign 0) has [8]P the identity, random keys do not', () => {
    const listed = [
      '0000000000000000000000000000000000000000000000000000000000000000',
      '0100000000000000000000000000000000000000000000000000000000000000',
      'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
      '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
      'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    ];
    const random = Array.from({ length: 20 }, () => rawPublic(generateKeyPairSync('ed25519').publicKey).toString('hex'));
    expect(ask([...listed, ...random].map((h) => `order8 ${h}`))).toEqual([...listed.map(() => '1'), ...random.map(() => '0')]);
    // And each is refused as a key, sign bit set or not.
    const withSign = listed.map((h) => `${h.slice(0, 62)}${(parseInt(h.slice(62), 16) | 0x80).toString(16)}`);
    const answers = ask([...listed, ...withSign].map((h) => `key ${Buffer.from(h, 'hex').toString('base64url')}`));
    for (const a of answers) expect(a).toMatch(/^refused .*small order/);
  });

  it('parses a public key as the library does: the same kid, the same refusals', () => {
    const good = rawPublic(generateKeyPairSync('ed25519').publicKey).toString('base64url');
    const texts = [
      good,
      `ed25519:${good}`,
      `  ed25519:${good}\n`,
      good.slice(1), // 42 characters
      `${good}=`, // padding
      `${good.slice(0, 42)}${B64URL[B64URL.indexOf(good[42]!) ^ 1]}`, // one of the two unused bits set
      'A'.repeat(43), // the all-zero key
      `${good.slice(0, 10)}+${good.slice(11)}`, // not base64url
      Buffer.from('ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f', 'hex').toString('base64url'), // y >= p
      Buffer.from('0200000000000000000000000000000000000000000000000000000000000000', 'hex').toString('base64url'), // y = 2: no point of the curve
      'ED25519:' + good,
      '',
    ];
    const answers = ask(texts.map((t) => `key ${t.trim() === '' ? '-' : t.replace(/\s/g, '')}`));
    texts.forEach((t, i) => {
      let library: string;
      try {
        library = `ok ${parseTicketKeys([t.trim() === '' ? '-' : t])[0]!.kid}`;
      } catch {
        library = 'refused';
      }
      expect({ t, plc: answers[i]!.startsWith('ok') ? answers[i] : 'refused' }).toEqual({ t, plc: library });
    });
    expect(answers[0]).toBe(`ok ${createHash('sha256').update(Buffer.from(good, 'base64url')).digest('hex').slice(0, 16)}`);
  });
});
