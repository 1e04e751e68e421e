import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatSignedTicket, signedTicketMessage, ticketKeyId, type SignedTicketClaims } from '@plugin-license/api/signed-ticket';
import { encodeTicket, machineIdOf, ticketKeyOf, type TicketFields } from '../src/index.js';

/**
 * The signed ticket's test vectors (docs/signed-ticket.md, "The reader"): pairs of files as they lie
 * in `DATA/tickets/` (`ID.ticket`, the HMAC ticket of docs/license-ticket.md, and `ID.signed`),
 * with the reader's inputs and the one verdict every reader reaches: the library's
 * `judgeSignedTicket` and plc's (`plc-ticket --key`). Made from FIXED seeds (the keys are
 * SHA-256 of a label), so the files are the same on every run. `signed-ticket.test.ts`
 * regenerates them and fails when the checked-in set differs;
 * `UPDATE_SIGNED_TICKET_VECTORS=1 pnpm exec vitest run packages/licensing/test/signed-ticket.test.ts`
 * rewrites them.
 *
 * `manifest.json`:
 * ```
 * { about, rule, machine_id, keys: { NAME: { public_key, kid } },   (the keys used, for reference)
 *   cases: [ {
 *     name,            unique
 *     what,            in words
 *     ticket,          file name of the .ticket to place as DATA/tickets/ID.ticket, or null: none there
 *     signed,          file name of the .signed to place as DATA/tickets/ID.signed, or null: none there
 *     app,             the reader's namespace
 *     project_id,      the reader's project id (any case; the files are named by its lowercase form)
 *     raw_machine_id,  the raw id as the OS gives it (normalised by the reader: lowercase, no - { } or white space)
 *     machine_id,      what the reader derives from it (the library's one derivation, see `machine_id` above)
 *     now,             the reader's clock, Unix seconds
 *     keys,            the vendor's public keys as configured ("ed25519:" + 43 base64url), [] = none (the old rules)
 *     expected: { verdict, reason, source?, code_hint?, valid_until? }
 *   } ] }
 * ```
 * `verdict` is one of plc's and `judgeTicket`'s: `valid`, `not_licensed`, `none`, `tampered`,
 * `expired`, `clock`; `reason` the protocol's (`unsigned` for a valid ticket without a signed
 * one, `cache_invalid` for every signed ticket that fails a rule, `grace_expired`, `clock_tampered`,
 * or the `.ticket`'s own), null when valid or none. A valid verdict also gives the signed ticket's
 * `source`, `code_hint` and `valid_until`.
 */

export const SIGNED_VECTORS_DIR = join(import.meta.dirname, 'signed-ticket-vectors');

export const VECTOR_APP = 'acme-audio';
export const VECTOR_PROJECT = '123e4567-e89b-12d3-a456-426614174000';
/** The raw machine id of the reader, as the OS would give it. */
export const VECTOR_RAW = '0123456789abcdef0123456789abcdef';
const OTHER_RAW = 'fedcba9876543210fedcba9876543210';
const OTHER_PROJECT = '00000000-0000-4000-8000-000000000000';
const ISSUED = 1_768_478_400; // 2026-01-15T12:00:00Z
const DAY = 86_400;
/** The signed ticket's life (the relay's ticket_days). */
const UNTIL = ISSUED + 30 * DAY;
const HINT = '3f2a…b601';

export interface SignedVectorCase {
  name: string;
  what: string;
  ticket: string | null;
  signed: string | null;
  app: string;
  project_id: string;
  raw_machine_id: string;
  machine_id: string;
  now: number;
  keys: string[];
  expected: { verdict: 'valid' | 'not_licensed' | 'none' | 'tampered' | 'expired' | 'clock'; reason: string | null; source?: string; code_hint?: string; valid_until?: number };
}

export interface SignedVectors {
  manifest: { about: string; rule: string; machine_id: string; keys: Record<string, { public_key: string; kid: string }>; cases: SignedVectorCase[] };
  files: Map<string, Buffer>;
}

interface VectorKey {
  privateKey: KeyObject;
  text: string;
  kid: string;
}

/** An Ed25519 key from a fixed seed: SHA-256 of the label. */
function keyOf(label: string): VectorKey {
  const seed = createHash('sha256').update(`signed-ticket-vectors/${label}`).digest();
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  const raw = Buffer.from((createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string }).x, 'base64url');
  return { privateKey, text: `ed25519:${raw.toString('base64url')}`, kid: ticketKeyId(raw, (b) => createHash('sha256').update(b).digest()) };
}

export function makeSignedVectors(): SignedVectors {
  const key1 = keyOf('vendor-key-1');
  const key2 = keyOf('vendor-key-2');
  const stranger = keyOf('someone-else');
  const KEYS = [key1.text, key2.text];
  const machineId = machineIdOf(VECTOR_RAW, VECTOR_APP);

  const files = new Map<string, Buffer>();
  const cases: SignedVectorCase[] = [];
  const file = (name: string, bytes: Buffer | string): string => {
    const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    const known = files.get(name);
    if (known !== undefined && !known.equals(b)) throw new Error(`two different files named ${name}`);
    files.set(name, b);
    return name;
  };
  const add = (c: Omit<SignedVectorCase, 'app' | 'project_id' | 'raw_machine_id' | 'machine_id' | 'now' | 'keys'> & Partial<SignedVectorCase>): void => {
    if (cases.some((x) => x.name === c.name)) throw new Error(`two cases named ${c.name}`);
    const app = c.app ?? VECTOR_APP;
    const raw = c.raw_machine_id ?? VECTOR_RAW;
    cases.push({
      name: c.name,
      what: c.what,
      ticket: c.ticket,
      signed: c.signed,
      app,
      project_id: c.project_id ?? VECTOR_PROJECT,
      raw_machine_id: raw,
      machine_id: machineIdOf(raw, app),
      now: c.now ?? ISSUED + 60,
      keys: c.keys ?? KEYS,
      expected: c.expected,
    });
  };

  // The .ticket files (HMAC, docs/license-ticket.md), keyed for the reader's raw id and app. The
  // valid one was written a day before the signed ticket and lasts 60 days (the offline grace),
  // so the signed ticket's own clock and expiry rules are what a case at its edges meets.
  const baseTicket: TicketFields = { v: 1, app: VECTOR_APP, project_id: VECTOR_PROJECT, valid: true, reason: null, source: 'online', code_hint: HINT, issued_at: ISSUED - DAY, valid_until: ISSUED + 60 * DAY };
  const ticket = (fields: Partial<TicketFields>, raw = VECTOR_RAW, app = VECTOR_APP): string => encodeTicket(ticketKeyOf(raw, app), { ...baseTicket, ...fields });
  const validTicket = file('valid.ticket', ticket({}));
  const offlineTicket = file('offline.ticket', ticket({ source: 'offline', valid_until: ISSUED + 90 * DAY }));

  // The signed tickets.
  const claims: SignedTicketClaims = { app: VECTOR_APP, project_id: VECTOR_PROJECT, machine_id: machineId, code_hint: HINT, source: 'online', issued_at: ISSUED, valid_until: UNTIL };
  const signedBy = (key: VectorKey, change: Partial<SignedTicketClaims> = {}): string => formatSignedTicket({ ...claims, ...change }, key.kid, (m) => sign(null, m, key.privateKey));
  /** Line 1 exactly as given, signed by key 1 (for what the writer would never write). */
  const signLine = (line1: string, key = key1): string => `${line1}\ned25519:${key.kid}:${sign(null, signedTicketMessage(line1), key.privateKey).toString('base64url')}\n`;
  const online = signedBy(key1);
  const line1 = online.slice(0, online.indexOf('\n'));
  const withFields = (change: Record<string, unknown>): string => JSON.stringify({ ...JSON.parse(line1), ...change });
  const validSigned = file('valid-online.signed', online);
  const valid = (c: Partial<SignedVectorCase['expected']> = {}): SignedVectorCase['expected'] => ({ verdict: 'valid', reason: null, source: 'online', code_hint: HINT, valid_until: UNTIL, ...c });
  const refused = { verdict: 'tampered', reason: 'cache_invalid' } as const;

  add({ name: 'valid-online', what: 'a ticket and a signed ticket by the first key, read a minute after issued_at', ticket: validTicket, signed: validSigned, expected: valid() });
  add({ name: 'valid-offline', what: 'an offline activation: signed with source offline, valid 90 days', ticket: offlineTicket, signed: file('valid-offline.signed', signedBy(key1, { source: 'offline', valid_until: ISSUED + 90 * DAY })), now: ISSUED + 80 * DAY, expected: valid({ source: 'offline', valid_until: ISSUED + 90 * DAY }) });
  add({ name: 'rotation-second-key', what: 'signed by the second configured key (key rotation)', ticket: validTicket, signed: file('second-key.signed', signedBy(key2)), expected: valid() });
  add({ name: 'rotation-only-new-key', what: 'signed by the first key, only the second configured (the old key retired)', ticket: validTicket, signed: validSigned, keys: [key2.text], expected: refused });
  add({ name: 'unknown-key', what: 'signed by a key the reader does not know, its kid in both lines', ticket: validTicket, signed: file('unknown-key.signed', signedBy(stranger)), expected: refused });
  add({ name: 'unknown-key-claims-known-kid', what: "signed by an unknown key, but both lines name the first key's kid", ticket: validTicket, signed: file('stranger-claims-key-1.signed', formatSignedTicket(claims, key1.kid, (m) => sign(null, m, stranger.privateKey))), expected: refused });
  const sig = online.slice(online.lastIndexOf(':') + 1, -1);
  const otherSig = Buffer.from(sig, 'base64url');
  otherSig[0]! ^= 0x01;
  add({ name: 'bad-signature', what: 'a bit of the signature flipped (still canonical base64url)', ticket: validTicket, signed: file('bad-signature.signed', online.replace(sig, otherSig.toString('base64url'))), expected: refused });
  add({ name: 'edited-valid-until', what: 'valid_until moved a year later after signing', ticket: validTicket, signed: file('edited-valid-until.signed', online.replace(`"valid_until":${UNTIL}`, `"valid_until":${UNTIL + 365 * DAY}`)), now: UNTIL + DAY, expected: refused });
  const sBytes = Buffer.from(sig, 'base64url');
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sBytes[i]!);
  s += L;
  for (let i = 32; i < 64; i++, s >>= 8n) sBytes[i] = Number(s & 0xffn);
  add({ name: 'malleated-signature', what: 'the signature with S + L in place of S (the same value mod L)', ticket: validTicket, signed: file('s-plus-l.signed', online.replace(sig, sBytes.toString('base64url'))), expected: refused });
  add({ name: 'kid-mismatch', what: "line 1 names the second key, line 2 the first (which signed it)", ticket: validTicket, signed: file('kid-mismatch.signed', signLine(withFields({ kid: key2.kid }))), expected: refused });
  add({ name: 'kid-mismatch-line2', what: "line 1 names the first key (which signed it), line 2 the second", ticket: validTicket, signed: file('kid-mismatch-line2.signed', online.replace(`ed25519:${key1.kid}:`, `ed25519:${key2.kid}:`)), expected: refused });
  add({ name: 'extra-field', what: 'an extra field "valid": true, correctly signed', ticket: validTicket, signed: file('extra-field.signed', signLine(withFields({ valid: true }))), expected: refused });
  add({ name: 'missing-field', what: 'code_hint missing, correctly signed', ticket: validTicket, signed: file('missing-field.signed', signLine(line1.replace(/,"code_hint":"[^"]*"/, ''))), expected: refused });
  add({ name: 'duplicate-field', what: 'valid_until twice (the last a year later), correctly signed', ticket: validTicket, signed: file('duplicate-field.signed', signLine(line1.replace('}', `,"valid_until":${UNTIL + 365 * DAY}}`))), expected: refused });
  add({ name: 'wrong-type-time', what: 'valid_until a string, correctly signed', ticket: validTicket, signed: file('wrong-type-time.signed', signLine(withFields({ valid_until: String(UNTIL) }))), expected: refused });
  add({ name: 'wrong-type-hint', what: 'code_hint null, correctly signed', ticket: validTicket, signed: file('wrong-type-hint.signed', signLine(withFields({ code_hint: null }))), expected: refused });
  add({ name: 'wrong-source', what: 'source "cache" (a signed ticket is online or offline), correctly signed', ticket: validTicket, signed: file('wrong-source.signed', signLine(withFields({ source: 'cache' }))), expected: refused });
  add({ name: 'float-time', what: 'valid_until with a fraction, correctly signed', ticket: validTicket, signed: file('float-time.signed', signLine(line1.replace(`"valid_until":${UNTIL}`, `"valid_until":${UNTIL}.5`))), expected: refused });
  add({ name: 'zero-fraction-time', what: 'valid_until with a zero fraction (an integer value, not written as digits only), correctly signed', ticket: validTicket, signed: file('zero-fraction-time.signed', signLine(line1.replace(`"valid_until":${UNTIL}`, `"valid_until":${UNTIL}.0`))), expected: refused });
  add({ name: 'exponent-time', what: 'issued_at in exponent notation, correctly signed', ticket: validTicket, signed: file('exponent-time.signed', signLine(line1.replace(`"issued_at":${ISSUED}`, '"issued_at":17684784e2'))), expected: refused });
  add({ name: 'version-2', what: 'v 2, correctly signed', ticket: validTicket, signed: file('version-2.signed', signLine(withFields({ v: 2 }))), expected: refused });
  add({ name: 'other-app', what: 'signed for another namespace (app other-vendor)', ticket: validTicket, signed: file('other-app.signed', signedBy(key1, { app: 'other-vendor' })), expected: refused });
  add({ name: 'other-project', what: 'signed for another project', ticket: validTicket, signed: file('other-project.signed', signedBy(key1, { project_id: OTHER_PROJECT })), expected: refused });
  add({ name: 'other-machine', what: "signed for another computer's machine id, copied here", ticket: validTicket, signed: file('other-machine.signed', signedBy(key1, { machine_id: machineIdOf(OTHER_RAW, VECTOR_APP) })), expected: refused });
  add({ name: 'read-on-other-machine', what: 'the valid pair, read on another computer (its own .ticket key refuses the .ticket first)', ticket: validTicket, signed: validSigned, raw_machine_id: OTHER_RAW, expected: refused });
  add({ name: 'upper-case-project-in-file', what: 'project_id written in upper case in line 1, correctly signed (the file says it in lower case)', ticket: validTicket, signed: file('upper-case-project.signed', signLine(withFields({ project_id: VECTOR_PROJECT.toUpperCase() }))), expected: refused });
  add({ name: 'upper-case-project-reader', what: "the reader's project id in upper case", ticket: validTicket, signed: validSigned, project_id: VECTOR_PROJECT.toUpperCase(), expected: valid() });
  add({ name: 'raw-id-as-the-os-shows-it', what: 'the raw id with braces, dashes, capitals and white space: normalised', ticket: validTicket, signed: validSigned, raw_machine_id: ' {01234567-89AB-CDEF-0123-456789ABCDEF}\n', expected: valid() });
  add({ name: 'clock-at-slack', what: 'read one hour before issued_at exactly (the slack)', ticket: validTicket, signed: validSigned, now: ISSUED - 3600, expected: valid() });
  add({ name: 'clock-before-slack', what: 'read more than an hour before the signed issued_at (the .ticket, a day older, still fine)', ticket: validTicket, signed: validSigned, now: ISSUED - 3601, expected: { verdict: 'clock', reason: 'clock_tampered' } });
  add({ name: 'at-valid-until', what: 'read at valid_until exactly', ticket: validTicket, signed: validSigned, now: UNTIL, expected: valid() });
  add({ name: 'expired', what: 'read a second after the signed valid_until (the .ticket, 60 days, still fine)', ticket: validTicket, signed: validSigned, now: UNTIL + 1, expected: { verdict: 'expired', reason: 'grace_expired' } });
  add({ name: 'unsigned', what: 'a valid .ticket and no signed ticket', ticket: validTicket, signed: null, expected: { verdict: 'not_licensed', reason: 'unsigned' } });
  add({ name: 'forged-ticket', what: 'a forged .ticket (its MAC computed as anyone can, valid ten years) and no signed ticket', ticket: file('forged.ticket', ticket({ issued_at: ISSUED, valid_until: ISSUED + 3650 * DAY })), signed: null, expected: { verdict: 'not_licensed', reason: 'unsigned' } });
  add({ name: 'forged-ticket-stranger-signed', what: 'the forged .ticket beside a signed ticket by an unknown key', ticket: 'forged.ticket', signed: 'unknown-key.signed', expected: refused });
  add({ name: 'not-licensed-wins', what: 'a .ticket that says revoked beside a valid signed ticket', ticket: file('revoked.ticket', ticket({ valid: false, reason: 'code_revoked', issued_at: ISSUED + 30, valid_until: ISSUED + 30 })), signed: validSigned, expected: { verdict: 'not_licensed', reason: 'code_revoked' } });
  add({ name: 'tampered-ticket-wins', what: 'a .ticket whose MAC fails beside a valid signed ticket', ticket: file('tampered.ticket', validTicketBytesWithMacFlipped(ticket({}))), signed: validSigned, expected: refused });
  add({ name: 'expired-ticket-wins', what: 'a .ticket past its valid_until beside a signed ticket still valid', ticket: file('expired.ticket', ticket({ valid_until: ISSUED })), signed: validSigned, expected: { verdict: 'expired', reason: 'grace_expired' } });
  add({ name: 'ticket-missing', what: 'no .ticket, a valid signed ticket: it decides', ticket: null, signed: validSigned, expected: valid() });
  add({ name: 'ticket-missing-bad-signed', what: 'no .ticket, a signed ticket by an unknown key', ticket: null, signed: 'unknown-key.signed', expected: refused });
  add({ name: 'neither', what: 'neither file: unknown', ticket: null, signed: null, expected: { verdict: 'none', reason: null } });
  add({ name: 'too-large', what: 'a correctly signed ticket over 4096 bytes (a long code_hint)', ticket: validTicket, signed: file('too-large.signed', signedBy(key1, { code_hint: 'x'.repeat(4096) })), expected: refused });
  add({ name: 'crlf', what: 'the valid signed ticket with CRLF line ends', ticket: validTicket, signed: file('crlf.signed', online.replace(/\n/g, '\r\n')), expected: refused });
  add({ name: 'no-final-newline', what: 'the valid signed ticket without its final newline', ticket: validTicket, signed: file('no-final-newline.signed', online.slice(0, -1)), expected: refused });
  add({ name: 'trailing-data', what: 'the valid signed ticket with a third line', ticket: validTicket, signed: file('trailing-data.signed', `${online}extra\n`), expected: refused });
  add({ name: 'trailing-newline', what: 'the valid signed ticket with an empty third line', ticket: validTicket, signed: file('trailing-newline.signed', `${online}\n`), expected: refused });
  add({ name: 'bom', what: 'a byte order mark before the valid signed ticket', ticket: validTicket, signed: file('bom.signed', `\uFEFF${online}`), expected: refused });
  add({ name: 'bom-signed', what: 'a byte order mark inside the signed line 1 (not JSON), correctly signed', ticket: validTicket, signed: file('bom-signed.signed', signLine(`\uFEFF${line1}`)), expected: refused });
  add({ name: 'empty', what: 'an empty signed ticket', ticket: validTicket, signed: file('empty.signed', ''), expected: refused });
  add({ name: 'line1-only', what: 'line 1 only', ticket: validTicket, signed: file('line1-only.signed', `${line1}\n`), expected: refused });
  add({ name: 'not-canonical-base64', what: 'the signature with a trailing bit set (the same bytes to a lax decoder)', ticket: validTicket, signed: file('non-canonical-base64.signed', online.replace(`${sig}\n`, `${trailingBitSet(sig)}\n`)), expected: refused });
  add({ name: 'padded-base64', what: 'the signature padded with ==', ticket: validTicket, signed: file('padded-base64.signed', online.replace(`${sig}\n`, `${sig}==\n`)), expected: refused });
  add({ name: 'upper-case-kid', what: 'line 2 with the kid in upper-case hex', ticket: validTicket, signed: file('upper-case-kid.signed', online.replace(`ed25519:${key1.kid}:`, `ed25519:${key1.kid.toUpperCase()}:`)), expected: refused });
  const shuffled = `{ "valid_until": ${UNTIL}, "issued_at": ${ISSUED}, "source": "online", "code_hint": "${HINT}", "machine_id": "${machineId}", "project_id": "${VECTOR_PROJECT}", "app": "acme\\u002daudio", "kid": "${key1.kid}", "v": 1 }`;
  add({ name: 'any-order-and-spacing', what: 'line 1 in another field order, with spaces and a \\u escape, correctly signed', ticket: validTicket, signed: file('any-order.signed', signLine(shuffled)), expected: valid() });
  add({ name: 'escaped-key', what: 'the field name "v" written as "\\u0076" in line 1, correctly signed: the same name to a JSON reader', ticket: validTicket, signed: file('escaped-key.signed', signLine(line1.replace('"v":1', '"\\u0076":1'))), expected: valid() });
  add({ name: 'json-white-space', what: 'line 1 with JSON white space before it and a carriage return at its end, correctly signed (the signature covers them)', ticket: validTicket, signed: file('json-white-space.signed', signLine(` \t${line1}\r`)), expected: valid() });
  const hostile = '…"$\\\n\'*é';
  add({ name: 'hostile-hint', what: 'code_hint with quotes, $, a backslash, a newline and non-ASCII (JSON-escaped)', ticket: validTicket, signed: file('hostile-hint.signed', signedBy(key1, { code_hint: hostile })), expected: valid({ code_hint: hostile }) });
  add({ name: 'keys-without-prefix', what: 'the keys configured without "ed25519:" (it is optional)', ticket: validTicket, signed: validSigned, keys: KEYS.map((k) => k.slice('ed25519:'.length)), expected: valid() });
  add({ name: 'no-keys-old-rules', what: 'no keys configured: the .ticket alone decides (license-ticket.md), a valid one is valid', ticket: validTicket, signed: null, keys: [], expected: { verdict: 'valid', reason: null, source: 'online', code_hint: HINT, valid_until: ISSUED + 60 * DAY } });
  add({ name: 'no-keys-forged', what: 'no keys configured: the forged .ticket is valid (what the signature is for)', ticket: 'forged.ticket', signed: 'unknown-key.signed', keys: [], expected: { verdict: 'valid', reason: null, source: 'online', code_hint: HINT, valid_until: ISSUED + 3650 * DAY } });
  add({ name: 'no-keys-neither', what: 'no keys configured, a signed ticket but no .ticket: unknown, as before', ticket: null, signed: validSigned, keys: [], expected: { verdict: 'none', reason: null } });

  const keyInfo = (k: VectorKey) => ({ public_key: k.text, kid: k.kid });
  return {
    manifest: {
      about:
        'Signed-ticket test vectors of docs/signed-ticket.md, made by packages/licensing/test/signed-ticket-vectors.ts (its header says every field). Place `ticket` as DATA/tickets/ID.ticket and `signed` as DATA/tickets/ID.signed (null: no such file), judge for app, project_id, raw_machine_id, now and keys, and reach `expected`.',
      rule: 'With keys: 1. the .ticket (license-ticket.md) readable and not valid (not_licensed, tampered, expired, clock) is the answer. 2. Otherwise the signed ticket decides: no .signed is none when there is no .ticket either, else not_licensed/unsigned; format (at most 4096 bytes, two lines each ending in \\n, exactly the fields with their types, kid of line 1 = line 2), kid one of the keys, the Ed25519 signature (ed25519-vectors.json rule) over "plugin-license/signed-ticket/v1" NUL LINE1, app, project_id (lowercase = the reader\'s lowercased), machine_id: any failure is tampered/cache_invalid; then now < issued_at - 3600 is clock/clock_tampered, now > valid_until expired/grace_expired, else valid with source, code_hint, valid_until. Without keys: the .ticket alone, as license-ticket.md says.',
      machine_id: '"m1_" + lowercase hex HMAC-SHA256(key = app as UTF-8, message = the normalised raw id as ASCII)',
      keys: { 'vendor-key-1': keyInfo(key1), 'vendor-key-2': keyInfo(key2), 'someone-else': keyInfo(stranger) },
      cases,
    },
    files,
  };
}

function validTicketBytesWithMacFlipped(text: string): string {
  const last = text.length - 2;
  return text.slice(0, last) + (text[last] === '0' ? '1' : '0') + text.slice(last + 1);
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
function trailingBitSet(text: string): string {
  return text.slice(0, -1) + ALPHABET[ALPHABET.indexOf(text.at(-1)!) | 1]!;
}

/** Writes the vectors (replacing the folder's files and manifest). */
export function writeSignedVectors(dir = SIGNED_VECTORS_DIR): void {
  const { manifest, files } = makeSignedVectors();
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) rmSync(join(dir, name));
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}
