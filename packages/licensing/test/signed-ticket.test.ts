// The signed ticket (docs/signed-ticket.md): the checked-in vectors judged by the reader's one rule
// from the files (the plugin's way) and from bytes and text (an agent's answer), the vendor's keys,
// writing a signed ticket, and hostile things at the signed ticket's path.
import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, webcrypto } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parsePublicKeyText, ticketKeyId } from '@plugin-license/api/signed-ticket';
import {
  encodeSignedTicket,
  isLicenseError,
  judgeLicense,
  judgeLicenseFiles,
  judgeTicket,
  keyIdOf,
  machineIdOf,
  parseTicketKeys,
  readSignedTicketFile,
  signedTicketPath,
  ticketPath,
  verifySignedTicket,
  type SignedVerdict,
  type TicketVerdict,
} from '../src/index.js';
import { makeSignedVectors, SIGNED_VECTORS_DIR, VECTOR_APP, VECTOR_PROJECT, VECTOR_RAW, writeSignedVectors, type SignedVectorCase } from './signed-ticket-vectors.js';
import { tempHome } from './helpers.js';

/** A verdict as the manifest states it: valid ones with the signed ticket's (or, without keys, the ticket's) source, hint and end. */
function outcome(v: TicketVerdict | SignedVerdict): SignedVectorCase['expected'] {
  if (v.verdict !== 'valid') return { verdict: v.verdict, reason: v.reason };
  const f = 'signed' in v ? v.signed : v.ticket;
  return { verdict: 'valid', reason: null, source: f.source, code_hint: f.code_hint ?? undefined, valid_until: f.valid_until } as SignedVectorCase['expected'];
}

describe('the checked-in signed-ticket vectors', () => {
  if (process.env.UPDATE_SIGNED_TICKET_VECTORS === '1') writeSignedVectors();
  const { manifest, files } = makeSignedVectors();
  const onDisk = (name: string): Buffer => readFileSync(join(SIGNED_VECTORS_DIR, name));

  it('are exactly what the generator makes today (regenerate: UPDATE_SIGNED_TICKET_VECTORS=1)', () => {
    expect(JSON.parse(readFileSync(join(SIGNED_VECTORS_DIR, 'manifest.json'), 'utf8'))).toEqual(manifest);
    expect(readdirSync(SIGNED_VECTORS_DIR).filter((n) => n !== 'manifest.json').sort()).toEqual([...files.keys()].sort());
    for (const [name, bytes] of files) expect(onDisk(name).equals(bytes), name).toBe(true);
  });

  it('state the machine id the library derives, and the key ids it computes', () => {
    for (const c of manifest.cases) expect(c.machine_id).toBe(machineIdOf(c.raw_machine_id, c.app));
    for (const k of Object.values(manifest.keys)) expect(parseTicketKeys([k.public_key])[0]!.kid).toBe(k.kid);
  });

  // Each case in its own DATA/tickets/ of a private home (0700 folders, 0600 files), as a plugin finds them.
  let home: { dir: string; cleanup: () => void };
  beforeAll(() => {
    home = tempHome();
  });
  afterAll(() => home.cleanup());

  it.each(manifest.cases.map((c): [string, SignedVectorCase] => [`${c.name}: ${c.what}`, c]))('%s', (_, c) => {
    const data = join(home.dir, c.name, 'data');
    mkdirSync(join(data, 'tickets'), { recursive: true, mode: 0o700 });
    chmodSync(data, 0o700);
    const ticketFile = join(data, 'tickets', `${c.project_id.toLowerCase()}.ticket`);
    if (c.ticket !== null) writeFileSync(ticketFile, onDisk(c.ticket), { mode: 0o600 });
    if (c.signed !== null) writeFileSync(ticketFile.replace(/\.ticket$/, '.signed'), onDisk(c.signed), { mode: 0o600 });
    const keys = parseTicketKeys(c.keys);
    // From the files (plc's way).
    expect(outcome(judgeLicenseFiles(ticketFile, { keys, app: c.app, projectId: c.project_id, rawMachineId: c.raw_machine_id, now: c.now }))).toEqual(c.expected);
    // From bytes and text (the agent's `signed_ticket`): the same verdict.
    const answer: TicketVerdict = c.ticket === null ? { verdict: 'none', reason: null } : judgeTicket(onDisk(c.ticket), { app: c.app, projectId: c.project_id, now: c.now, rawMachineId: c.raw_machine_id });
    const reader = { keys, app: c.app, projectId: c.project_id, machineId: c.machine_id, now: c.now };
    expect(outcome(judgeLicense({ ...reader, answer, signed: c.signed === null ? undefined : onDisk(c.signed).toString('utf8') }))).toEqual(c.expected);
  });
});

describe("the reader's rule on an agent's answer", () => {
  const { manifest } = makeSignedVectors();
  const keys = parseTicketKeys(Object.values(manifest.keys).slice(0, 2).map((k) => k.public_key));
  const reader = { keys, app: VECTOR_APP, projectId: VECTOR_PROJECT, machineId: machineIdOf(VECTOR_RAW, VECTOR_APP), now: 1_768_478_460 };
  const signed = readFileSync(join(SIGNED_VECTORS_DIR, 'valid-online.signed'), 'utf8');

  it("an agent's valid without a signed ticket is not enough: unsigned; with one, the signed ticket decides", () => {
    const agentValid = { verdict: 'valid' as const, reason: null };
    expect(judgeLicense({ ...reader, answer: agentValid, signed: undefined })).toMatchObject({ verdict: 'not_licensed', reason: 'unsigned' });
    expect(judgeLicense({ ...reader, answer: agentValid, signed })).toMatchObject({ verdict: 'valid', signed: { source: 'online', valid_until: 1_771_070_400 } });
    expect(judgeLicense({ ...reader, answer: agentValid, signed: signed.replace('"online"', '"offline"') })).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid', kid: keys[0]!.kid });
  });

  it("an agent's not licensed is the answer, whatever signed ticket there is", () => {
    const agentNo = { verdict: 'not_licensed' as const, reason: 'deactivated' };
    expect(judgeLicense({ ...reader, answer: agentNo, signed })).toBe(agentNo);
  });

  it('without keys, the answer is as it was (license-ticket.md)', () => {
    const agentValid = { verdict: 'valid' as const, reason: null };
    expect(judgeLicense({ ...reader, keys: [], answer: agentValid, signed: undefined })).toBe(agentValid);
  });

  it('refusals say why in words, naming the signer and the trusted ids (never a key itself)', () => {
    const stranger = readFileSync(join(SIGNED_VECTORS_DIR, 'unknown-key.signed'), 'utf8');
    const check = verifySignedTicket(stranger, reader);
    const strangerKid = manifest.keys['someone-else']!.kid;
    expect(check).toMatchObject({ ok: false, reason: 'cache_invalid', kid: strangerKid });
    expect(check.ok ? '' : check.problem).toBe(`signed by key ${strangerKid}, which is not one this reader trusts (${keys.map((k) => k.kid).join(', ')})`);
    for (const k of Object.values(manifest.keys)) expect(check.ok ? '' : check.problem).not.toContain(k.public_key.slice('ed25519:'.length));
    expect(verifySignedTicket(signed, { ...reader, now: 1_771_070_401 })).toMatchObject({ ok: false, reason: 'grace_expired', problem: 'the signed ticket ended at 2026-02-14T12:00:00.000Z' });
    expect(verifySignedTicket(signed, { ...reader, machineId: 'm1_other' })).toMatchObject({ ok: false, problem: 'signed for another computer (its machine_id is not this one)' });
  });
});

describe('the keys a vendor configures', () => {
  const pairs = [generateKeyPairSync('ed25519'), generateKeyPairSync('ed25519')];
  const texts = pairs.map((p) => (p.publicKey.export({ format: 'jwk' }) as { x: string }).x);

  it('a list, or one text separated by commas; ed25519: optional; spaces and empty entries ignored; a key twice kept once', () => {
    const fromList = parseTicketKeys([texts[0]!, `ed25519:${texts[1]}`]);
    const fromText = parseTicketKeys(` ed25519:${texts[0]} ,${texts[1]}, ,ed25519:${texts[0]}`);
    expect(fromText).toEqual(fromList);
    expect(fromList.map((k) => k.text)).toEqual(texts);
    expect(fromList.map((k) => k.publicKey.toString('base64url'))).toEqual(texts);
    expect(parseTicketKeys('')).toEqual([]);
  });

  it('the key id is keyIdOf\'s (offline keygen), and WebCrypto computes the same from the same raw bytes (the relay)', async () => {
    for (const key of parseTicketKeys(texts)) {
      expect(key.kid).toBe(keyIdOf(key.publicKey));
      expect(key.kid).toBe(createHash('sha256').update(key.publicKey).digest('hex').slice(0, 16));
      const raw = parsePublicKeyText(key.text);
      expect(raw.ok && (await ticketKeyId(raw.raw, async (b) => new Uint8Array(await webcrypto.subtle.digest('SHA-256', b))))).toBe(key.kid);
    }
  });

  it.each([
    ['a short key', [texts[0]!.slice(1)], /ticket_keys\[0\] is not an Ed25519 public key: 42 characters/],
    ['padding', [`${texts[0]}=`], /ticket_keys\[0\] is not an Ed25519 public key/],
    ['a PEM', ['-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----'], /ticket_keys\[0\] is not an Ed25519 public key/],
    ['a number', [7 as unknown as string], /ticket_keys\[0\] is not an Ed25519 public key: a number, not a text/],
    ['not a list', 7 as unknown as string, /ticket_keys must be a list/],
    ['the second of a text', `${texts[0]},nope`, /ticket_keys \(key 2\) is not an Ed25519 public key/],
  ])('refuses %s: invalid_argument naming the entry', (_, given, words) => {
    let error: unknown;
    try {
      parseTicketKeys(given);
    } catch (e) {
      error = e;
    }
    expect(isLicenseError(error) && error.code).toBe('invalid_argument');
    expect((error as Error).message).toMatch(words);
  });
});

describe('writing a signed ticket (offline activate --sign-key)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const keys = parseTicketKeys([(publicKey.export({ format: 'jwk' }) as { x: string }).x]);
  const claims = { app: VECTOR_APP, project_id: VECTOR_PROJECT.toUpperCase(), machine_id: machineIdOf(VECTOR_RAW, VECTOR_APP), code_hint: '3f2a…b601', source: 'offline' as const, issued_at: 1_768_478_400, valid_until: 1_776_254_400 };

  it('is read back valid by the reader, the project id written in lower case', () => {
    const text = encodeSignedTicket(claims, { privateKey, kid: keys[0]!.kid });
    expect(text).toContain(`"project_id":"${VECTOR_PROJECT}"`);
    expect(verifySignedTicket(text, { keys, app: VECTOR_APP, projectId: VECTOR_PROJECT, machineId: claims.machine_id, now: 1_768_478_460 })).toEqual({
      ok: true,
      fields: { v: 1, kid: keys[0]!.kid, ...claims, project_id: VECTOR_PROJECT },
    });
  });

  it('refuses a kid that is not the key\'s, and a key that is not Ed25519', () => {
    expect(() => encodeSignedTicket(claims, { privateKey, kid: '0123456789abcdef' })).toThrow(/not the signing key's/);
    expect(() => encodeSignedTicket(claims, { privateKey: generateKeyPairSync('x25519').privateKey })).toThrow(/Ed25519 key, not x25519/);
  });
});

describe("what is at the signed ticket's path", () => {
  let home: { dir: string; cleanup: () => void };
  const { manifest } = makeSignedVectors();
  const keys = parseTicketKeys(Object.values(manifest.keys).slice(0, 2).map((k) => k.public_key));
  const o = { keys, app: VECTOR_APP, projectId: VECTOR_PROJECT, rawMachineId: VECTOR_RAW, now: 1_768_478_460 };
  const vector = (name: string): Buffer => readFileSync(join(SIGNED_VECTORS_DIR, name));
  let ticket: string;
  let signed: string;
  beforeEach(() => {
    home = tempHome();
    ticket = ticketPath({ home: home.dir, namespace: VECTOR_APP }, VECTOR_PROJECT);
    signed = signedTicketPath({ home: home.dir, namespace: VECTOR_APP }, VECTOR_PROJECT.toUpperCase());
    mkdirSync(join(home.dir, 'data', 'tickets'), { recursive: true, mode: 0o700 });
    chmodSync(join(home.dir, 'data'), 0o700);
    writeFileSync(ticket, vector('valid.ticket'), { mode: 0o600 });
  });
  afterEach(() => home.cleanup());

  it('is DATA/tickets/ID.signed, lowercase id, beside the ticket; a valid one there is valid', () => {
    expect(signed).toBe(join(home.dir, 'data', 'tickets', `${VECTOR_PROJECT}.signed`));
    writeFileSync(signed, vector('valid-online.signed'), { mode: 0o600 });
    expect(judgeLicenseFiles(ticket, o).verdict).toBe('valid');
  });

  it.each([
    ['a FIFO with no writer (never waited on)', (f: string) => execFileSync('mkfifo', [f])],
    ['a folder', (f: string) => mkdirSync(f)],
    ['a link to a valid signed ticket elsewhere', (f: string) => symlinkSync(join(SIGNED_VECTORS_DIR, 'valid-online.signed'), f)],
    ['a link to /dev/zero', (f: string) => symlinkSync('/dev/zero', f)],
    ['a valid signed ticket others may write (0666)', (f: string) => {
      writeFileSync(f, vector('valid-online.signed'));
      chmodSync(f, 0o666);
    }],
    ['a valid signed ticket over 4096 bytes of padding', (f: string) => writeFileSync(f, Buffer.concat([vector('valid-online.signed'), Buffer.alloc(4096, 0x20)]), { mode: 0o600 })],
  ])('%s: tampered (cache_invalid), never valid and never none', (_, make) => {
    make(signed);
    expect(readSignedTicketFile(signed).kind).toBe('bad');
    expect(judgeLicenseFiles(ticket, o)).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid' });
  });

  it('a valid pair in a tickets folder others may write: not trusted (the ticket first says so)', () => {
    writeFileSync(signed, vector('valid-online.signed'), { mode: 0o600 });
    chmodSync(join(home.dir, 'data', 'tickets'), 0o777);
    expect(judgeLicenseFiles(ticket, o)).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid' });
    expect(readSignedTicketFile(signed)).toMatchObject({ kind: 'bad', problem: expect.stringMatching(/tickets folder .* is writable by others/) });
  });
});
