// The signed ticket's format (docs/signed-ticket.md), the pure part shared by the relay and the
// library: base64url, key texts and ids, writing line 1 and line 2, and taking a ticket apart.
// Signatures here are node:crypto's and WebCrypto's, injected as the two callers inject them.
import { createHash, generateKeyPairSync, randomBytes, sign, verify, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  base64UrlDecode,
  base64UrlEncode,
  formatSignedTicket,
  jsonIntegersOnly,
  MAX_SIGNED_TICKET_BYTES,
  parsePublicKeyText,
  parseSignedTicket,
  SIGNED_TICKET_FIELDS,
  signedTicketLine1,
  signedTicketMessage,
  ticketKeyId,
  ticketProjectId,
  type SignedTicketClaims,
  type SignedTicketFields,
} from '@plugin-license/api/signed-ticket';

const claims: SignedTicketClaims = {
  app: 'acme-audio',
  project_id: '123e4567-e89b-12d3-a456-426614174000',
  machine_id: `m1_${'ab'.repeat(32)}`,
  code_hint: '3f2a…b601',
  source: 'online',
  issued_at: 1_768_478_400,
  valid_until: 1_768_478_400 + 30 * 86_400,
};

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** The canonical text with the lowest unused bit of its last character set: the same bytes to a lax decoder. */
const trailingBitSet = (text: string): string => text.slice(0, -1) + ALPHABET[ALPHABET.indexOf(text.at(-1)!) | 1]!;

const nodeSha256 = (b: Uint8Array): Uint8Array => createHash('sha256').update(b).digest();
const subtleSha256 = async (b: Uint8Array): Promise<Uint8Array> => new Uint8Array(await webcrypto.subtle.digest('SHA-256', b));

function nodeKey(): { kid: string; sign: (m: Uint8Array) => Uint8Array; raw: Uint8Array; publicKey: ReturnType<typeof generateKeyPairSync>['publicKey'] } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url'));
  return { kid: ticketKeyId(raw, nodeSha256), sign: (m) => sign(null, m, privateKey), raw, publicKey };
}

describe('base64url', () => {
  it('encodes as Buffer does and decodes back, every length to 70', () => {
    for (let n = 0; n <= 70; n++) {
      const bytes = randomBytes(n);
      const text = base64UrlEncode(bytes);
      expect(text).toBe(bytes.toString('base64url'));
      expect(Buffer.from(base64UrlDecode(text)!).equals(bytes)).toBe(true);
    }
  });

  it.each([
    ['padding', 'AA=='],
    ['padding after a full group', 'AAAA='],
    ['the standard alphabet (+)', 'a+b_'],
    ['the standard alphabet (/)', 'a/b_'],
    ['white space', 'AA AA'],
    ['a newline', 'AAAA\n'],
    ['a lone last character', 'AAAAA'],
    ['non-zero trailing bits (1 byte)', 'AB'],
    ['non-zero trailing bits (2 bytes)', 'AAB'],
    ['non-ASCII', 'AAÀA'],
    ['a fullwidth letter', 'ＡＡ'],
  ])('refuses %s', (_, text) => {
    expect(base64UrlDecode(text)).toBeUndefined();
  });
});

describe('public key text', () => {
  const raw = randomBytes(32);
  const text = raw.toString('base64url');

  it('takes 43 characters with or without "ed25519:", white space around', () => {
    for (const given of [text, `ed25519:${text}`, `  ed25519:${text}\n`]) {
      const parsed = parsePublicKeyText(given);
      expect(parsed.ok && Buffer.from(parsed.raw).equals(raw) && parsed.text === text).toBe(true);
    }
  });

  it.each([
    ['empty', ''],
    ['too short', text.slice(0, 42)],
    ['too long', `${text}A`],
    ['padded', `${text}=`],
    ['another prefix', `ssh-ed25519:${text}`],
    ['the prefix in capitals', `ED25519:${text}`],
    ['the standard alphabet', text.slice(0, 42).replace(/./, '+') + 'A'],
    ['non-canonical trailing bits', trailingBitSet(text)],
    ['a PEM', '-----BEGIN PUBLIC KEY-----'],
    ['hex', raw.toString('hex')],
  ])('refuses %s, in words', (_, given) => {
    const parsed = parsePublicKeyText(given);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toMatch(/characters|base64url/);
  });

  it('the key id is the first 8 bytes of SHA-256, hex: the same with node:crypto and WebCrypto', async () => {
    const expected = createHash('sha256').update(raw).digest().subarray(0, 8).toString('hex');
    expect(ticketKeyId(raw, nodeSha256)).toBe(expected);
    await expect(ticketKeyId(raw, subtleSha256)).resolves.toBe(expected);
    expect(() => ticketKeyId(raw.subarray(0, 31), nodeSha256)).toThrow(/32 bytes/);
  });
});

describe('writing', () => {
  it('line 1 is JSON in the fixed field order without spaces; line 2 ed25519:KID:SIG; the signature covers CONTEXT NUL LINE1', () => {
    const key = nodeKey();
    const text = formatSignedTicket({ ...claims, project_id: claims.project_id.toUpperCase() }, key.kid, key.sign);
    const [line1, line2, rest] = text.split('\n');
    expect(rest).toBe('');
    expect(Object.keys(JSON.parse(line1!))).toEqual([...SIGNED_TICKET_FIELDS]);
    expect(line1).toBe(JSON.stringify({ v: 1, kid: key.kid, ...claims }));
    expect(line1).not.toMatch(/ /);
    const m = /^ed25519:([0-9a-f]{16}):([A-Za-z0-9_-]{86})$/.exec(line2!);
    expect(m?.[1]).toBe(key.kid);
    const message = Buffer.concat([Buffer.from('plugin-license/signed-ticket/v1\0', 'utf8'), Buffer.from(line1!, 'utf8')]);
    expect(Buffer.from(signedTicketMessage(line1!)).equals(message)).toBe(true);
    expect(verify(null, message, key.publicKey, Buffer.from(m![2]!, 'base64url'))).toBe(true);
  });

  it('a WebCrypto signer (the relay) gives a promise of the same text', async () => {
    const pair = (await webcrypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
    const raw = new Uint8Array(await webcrypto.subtle.exportKey('raw', pair.publicKey));
    const kid = await ticketKeyId(raw, subtleSha256);
    const pending = formatSignedTicket(claims, kid, async (m) => new Uint8Array(await webcrypto.subtle.sign('Ed25519', pair.privateKey, m)));
    expect(pending).toBeInstanceOf(Promise);
    const text = await pending;
    const parsed = parseSignedTicket(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(await webcrypto.subtle.verify('Ed25519', pair.publicKey, parsed.ticket.signature, parsed.ticket.message)).toBe(true);
    expect(parsed.ticket.fields).toEqual({ v: 1, kid, ...claims });
  });

  it.each([
    ['a fractional time', { valid_until: 1.5 }, /valid_until/],
    ['an unsafe time', { issued_at: 2 ** 53 }, /issued_at/],
    ['a time as text', { issued_at: '1768478400' }, /issued_at/],
    ['another source', { source: 'cache' }, /source/],
    ['a null hint', { code_hint: null }, /code_hint/],
    ['no machine id', { machine_id: undefined }, /machine_id/],
  ])('refuses to write %s (a reader would refuse it)', (_, change, words) => {
    const key = nodeKey();
    expect(() => formatSignedTicket({ ...claims, ...change } as unknown as SignedTicketClaims, key.kid, key.sign)).toThrow(words);
  });

  it('refuses a bad key id or a signature that is not 64 bytes', () => {
    expect(() => formatSignedTicket(claims, 'ABCDEF0123456789', () => new Uint8Array(64))).toThrow(/kid/);
    expect(() => formatSignedTicket(claims, '0123456789abcdef', () => new Uint8Array(63))).toThrow(/64 bytes/);
    expect(() => signedTicketLine1({ v: 1, kid: '0123456789abcdef', ...claims, project_id: 'ABC' })).toThrow(/lower case/);
    expect(() => signedTicketLine1({ v: 1, kid: '0123456789abcdef', ...claims, valid: true } as SignedTicketFields)).toThrow(/unknown field "valid"/);
  });
});

describe('reading', () => {
  const key = nodeKey();
  const good = formatSignedTicket(claims, key.kid, key.sign);
  const [line1, line2] = good.split('\n') as [string, string];
  const other = nodeKey();
  /** Line 1 as given, signed: the reader's format rules, not the signature, refuse these. */
  const signed = (l1: string): string => `${l1}\n${good.split('\n')[1]!.replace(/:[^:]*$/, ':' + Buffer.from(key.sign(signedTicketMessage(l1))).toString('base64url'))}\n`;

  it('takes the writer\'s text apart: fields, line 1 bytes, the signed message, kid, signature', () => {
    const parsed = parseSignedTicket(good);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.ticket.fields).toEqual({ v: 1, kid: key.kid, ...claims });
    expect(new TextDecoder().decode(parsed.ticket.line1)).toBe(line1);
    expect(parsed.ticket.kid).toBe(key.kid);
    expect(verify(null, parsed.ticket.message, key.publicKey, parsed.ticket.signature)).toBe(true);
    // From bytes, the same.
    expect(parseSignedTicket(new TextEncoder().encode(good))).toEqual(parsed);
  });

  it('any field order and JSON spacing (the signature covers the exact bytes)', () => {
    const shuffled = `{ "valid_until": ${claims.valid_until}, "issued_at": ${claims.issued_at}, "source": "online", "code_hint": "3f2a…b601", "machine_id": "${claims.machine_id}", "project_id": "${claims.project_id}", "app": "acme\\u002daudio", "kid": "${key.kid}", "v": 1 }`;
    const parsed = parseSignedTicket(signed(shuffled));
    expect(parsed.ok && parsed.ticket.fields).toEqual({ v: 1, kid: key.kid, ...claims });
  });

  const fields = JSON.parse(line1) as Record<string, unknown>;
  const withField = (change: Record<string, unknown>): string => JSON.stringify({ ...fields, ...change });
  const without = (name: string): string => JSON.stringify(Object.fromEntries(Object.entries(fields).filter(([k]) => k !== name)));
  const time = (name: string, text: string): string => line1.replace(new RegExp(`"${name}":\\d+`), `"${name}":${text}`);
  it.each([
    ['empty', '', /empty/],
    ['one line', `${line1}\n`, /one line/],
    ['one line without a newline', line1, /one line/],
    ['no final newline', good.slice(0, -1), /does not end with a newline/],
    ['a third line', `${good}x\n`, /after line 2/],
    ['an empty third line', `${good}\n`, /after line 2/],
    ['CRLF line ends', good.replace(/\n/g, '\r\n'), /CRLF/],
    ['a byte order mark before line 1', `\uFEFF${good}`, /not JSON/],
    ['a byte order mark signed with line 1', signed(`\uFEFF${line1}`), /not JSON/],
    ['too large', signed(withField({ code_hint: 'x'.repeat(MAX_SIGNED_TICKET_BYTES) })), /more than a signed ticket's 4096/],
    ['too large as bytes', new TextEncoder().encode(signed(withField({ code_hint: 'x'.repeat(MAX_SIGNED_TICKET_BYTES) }))), /4\d{3} bytes, more than a signed ticket's 4096/],
    ['too large in UTF-8 only (4096 characters, more bytes)', signed(withField({ code_hint: 'é'.repeat(2000) })), /\d+ bytes, more than a signed ticket's 4096/],
    ['line 2 with capital hex', good.replace(line2, line2.replace(/^ed25519:([0-9a-f]+)/, (_, k: string) => `ed25519:${k.toUpperCase()}`)), /line 2/],
    ['line 2 with another algorithm', good.replace('ed25519:', 'rsa:'), /line 2/],
    ['line 2 with a padded signature', good.replace(line2, `${line2}==`), /line 2/],
    ['line 2 with a short signature', good.replace(line2, line2.slice(0, -1)), /line 2/],
    ['a signature with non-zero trailing bits', good.replace(line2, trailingBitSet(line2)), /not canonical base64url/],
    ['line 1 not JSON', signed('{"v":1,}'), /not JSON/],
    ['line 1 an array', signed('[1]'), /not a JSON object/],
    ['line 1 invalid UTF-8', Buffer.concat([Buffer.from(line1.slice(0, -1)), Buffer.from([0x2c, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]), Buffer.from(`\n${line2}\n`)]), /not JSON in UTF-8/],
    ['an extra field', signed(withField({ valid: true })), /unknown field "valid"/],
    ['a missing field', signed(without('code_hint')), /no field "code_hint"/],
    ['a field twice', signed(line1.replace('}', `,"valid_until":${claims.valid_until + 86_400}}`)), /twice/],
    ['v 2', signed(withField({ v: 2 })), /version 2/],
    ['v "1"', signed(withField({ v: '1' })), /version "1"/],
    ['v 1.0', signed(line1.replace('"v":1', '"v":1.0')), /digits only/],
    ['kid not hex', signed(withField({ kid: 'K'.repeat(16) })), /kid/],
    ['kid of another key than line 2', signed(withField({ kid: other.kid })), new RegExp(`names key ${other.kid}, line 2 key ${key.kid}`)],
    ['app a number', signed(withField({ app: 7 })), /"app"/],
    ['project_id null', signed(withField({ project_id: null })), /"project_id"/],
    ['machine_id an array', signed(withField({ machine_id: [claims.machine_id] })), /"machine_id"/],
    ['code_hint null', signed(withField({ code_hint: null })), /"code_hint"/],
    ['source cache', signed(withField({ source: 'cache' })), /"source"/],
    ['valid_until as text', signed(withField({ valid_until: String(claims.valid_until) })), /"valid_until"/],
    ['valid_until with a fraction', signed(time('valid_until', `${claims.valid_until}.5`)), /"valid_until"/],
    ['valid_until with a zero fraction', signed(time('valid_until', `${claims.valid_until}.0`)), /digits only/],
    ['issued_at in exponent notation', signed(time('issued_at', '17684784e2')), /digits only/],
    ['valid_until past 2^53', signed(time('valid_until', '9007199254740993')), /"valid_until"/],
  ])('refuses %s, in words', (_, text, words) => {
    const parsed = parseSignedTicket(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.problem).toMatch(words);
  });

  it('names line 2\'s key in a refusal once line 2 was read', () => {
    const parsed = parseSignedTicket(signed(withField({ extra: 1 })));
    expect(parsed.ok ? undefined : parsed.kid).toBe(key.kid);
  });

  it('digits inside strings are no numbers', () => {
    expect(jsonIntegersOnly('{"a":"1.5e3","b":2}')).toBe(true);
    expect(jsonIntegersOnly('{"a":"x","b":-2.5}')).toBe(false);
  });

  it('project ids fold ASCII letters only', () => {
    expect(ticketProjectId('ABC-\u212A-\u0130-Ｚ')).toBe('abc-\u212A-\u0130-Ｚ');
  });
});
