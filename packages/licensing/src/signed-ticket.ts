import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import {
  formatSignedTicket,
  MAX_SIGNED_TICKET_BYTES,
  parsePublicKeyText,
  parseSignedTicket,
  SIGNED_TICKET_CONTEXT,
  ticketProjectId,
  type SignedTicketClaims,
  type SignedTicketFields,
} from '@plugin-license/api/signed-ticket';
import { LicenseError } from './errors.js';
import { machineIdOf } from './machine-id.js';
import { keyIdOf } from './offline-format.js';
import type { SmallFileRead } from './small-file.js';
import { judgeTicket, readTicketFile, TICKET_CLOCK_SLACK_S, type TicketVerdict } from './ticket.js';

/**
 * The signed ticket on Node (docs/signed-ticket.md): the vendor's public keys, writing one with
 * `node:crypto`, verifying one, and the reader's rule that composes the ticket's verdict with the
 * signed ticket. The text format itself is `@plugin-license/api/signed-ticket`'s (one place, the
 * relay's too); this module adds the cryptography and the rule.
 */

export { SIGNED_TICKET_CONTEXT, MAX_SIGNED_TICKET_BYTES };
export type { SignedTicketFields, SignedTicketClaims };

/** A vendor's public key that signed tickets must verify with, parsed once. */
export interface TicketKey {
  /** Its id: the first 8 bytes of the SHA-256 of `publicKey`, hex (`offline keygen`'s key_id). */
  kid: string;
  /** The raw 32 bytes. */
  publicKey: Buffer;
  /** The canonical text: unpadded base64url of the raw bytes, no prefix. */
  text: string;
}

/**
 * Parses the vendor's public keys as configured (`ticket_keys`, `PLUGIN_LICENSE_TICKET_KEYS`,
 * `--ticket-key`): a list, or one text of keys separated by commas; each the unpadded base64url
 * of its raw 32 bytes, `ed25519:` before it optional, white space around ignored, empty entries
 * skipped, a key given twice kept once. A key no signature can be trusted under (not a point of
 * the curve, of small order, written non-canonically: {@link ed25519KeyProblem}) is refused like a
 * malformed one: `LicenseError` `invalid_argument` naming the entry (`where[i]`).
 *
 * @example
 * const keys = parseTicketKeys(process.env.PLUGIN_LICENSE_TICKET_KEYS ?? '', 'PLUGIN_LICENSE_TICKET_KEYS');
 */
export function parseTicketKeys(list: readonly string[] | string, where = 'ticket_keys'): TicketKey[] {
  if (typeof list !== 'string' && !Array.isArray(list)) {
    throw new LicenseError('invalid_argument', `${where} must be a list of Ed25519 public keys (or one text of them separated by commas), as plugin-license offline keygen prints them`);
  }
  const entries = typeof list === 'string' ? list.split(',') : list;
  const keys: TicketKey[] = [];
  entries.forEach((entry, i) => {
    if (typeof entry === 'string' && entry.trim() === '') return;
    const name = typeof list === 'string' ? `${where} (key ${i + 1})` : `${where}[${i}]`;
    const parsed = typeof entry === 'string' ? parsePublicKeyText(entry) : { ok: false as const, problem: `a ${typeof entry}, not a text` };
    if (!parsed.ok) throw new LicenseError('invalid_argument', `${name} is not an Ed25519 public key: ${parsed.problem}`);
    const problem = ed25519KeyProblem(parsed.raw);
    if (problem !== undefined) throw new LicenseError('invalid_argument', `${name} is not a usable Ed25519 public key: ${problem}; use the public key plugin-license offline keygen printed`);
    const publicKey = Buffer.from(parsed.raw);
    const kid = keyIdOf(publicKey);
    if (!keys.some((k) => k.kid === kid)) keys.push({ kid, publicKey, text: parsed.text });
  });
  return keys;
}

/**
 * A signed ticket's whole text for `claims`, signed with `key` (an Ed25519 private key, as
 * `offline keygen` writes it: {@link parsePrivateKey}) through the one format. `kid`, when given,
 * must be the key's own.
 *
 * @example
 * const text = encodeSignedTicket({ app, project_id, machine_id, code_hint, source: 'offline', issued_at, valid_until }, { privateKey });
 */
export function encodeSignedTicket(claims: SignedTicketClaims, key: { privateKey: KeyObject; kid?: string }): string {
  if (key.privateKey.asymmetricKeyType !== 'ed25519') throw new LicenseError('invalid_argument', `a signed ticket is signed with an Ed25519 key, not ${key.privateKey.asymmetricKeyType ?? 'a symmetric one'}`);
  const raw = Buffer.from((createPublicKey(key.privateKey).export({ format: 'jwk' }) as { x?: string }).x ?? '', 'base64url');
  const kid = keyIdOf(raw);
  if (key.kid !== undefined && key.kid !== kid) throw new LicenseError('invalid_argument', `the key id ${key.kid} is not the signing key's (${kid})`);
  return formatSignedTicket(claims, kid, (message) => sign(null, message, key.privateKey));
}

// ---------------------------------------------------------------------------------------------
// Ed25519 with libsodium's refusals

/** edwards25519's field prime and group order (RFC 8032 section 5.1). */
const P = 2n ** 255n - 19n;
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
const D = 37095705934669439343138083508754565189542113879843219016388785533085940283555n;
/**
 * The y coordinates of the 8 points of small order (the identity, the point of order 2, the two
 * of order 4 with y = 0, the four of order 8 with one of two y): libsodium's blocklist, read with
 * the sign bit ignored. Written as the points' little-endian encodings.
 */
const SMALL_ORDER_Y = new Set([
  0n,
  1n,
  P - 1n,
  littleEndian(Buffer.from('26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05', 'hex')),
  littleEndian(Buffer.from('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a', 'hex')),
]);

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

function modPow(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = ((base % P) + P) % P;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
  }
  return result;
}

/** What an encoded point fails of the refusals, or undefined: y canonical (< p), not of small order. */
function pointProblem(encoding: Uint8Array, what: string): string | undefined {
  const y = littleEndian(encoding) & ((1n << 255n) - 1n);
  if (y >= P) return `${what} is not written canonically (y >= p)`;
  if (SMALL_ORDER_Y.has(y)) return `${what} is a point of small order`;
  return undefined;
}

/**
 * What makes a 32-byte public key unusable, in words, or undefined: the refusals of
 * {@link ed25519SignatureProblem} that concern A, and a y on no point of the curve (RFC 8032's
 * decoding: x² = (y² - 1) / (d y² + 1) must be a square). Checked once, when keys are configured.
 *
 * @example
 * ed25519KeyProblem(new Uint8Array(32)); // 'the key is a point of small order'
 */
export function ed25519KeyProblem(publicKey: Uint8Array): string | undefined {
  if (publicKey.length !== 32) return `${publicKey.length} bytes, not 32`;
  const problem = pointProblem(publicKey, 'the key');
  if (problem !== undefined) return problem;
  const y = littleEndian(publicKey) & ((1n << 255n) - 1n);
  const y2 = (y * y) % P;
  const x2 = ((y2 - 1n + P) % P) * modPow(D * y2 + 1n, P - 2n) % P;
  if (x2 !== 0n && modPow(x2, (P - 1n) / 2n) !== 1n) return 'the key is not a point of the curve';
  return undefined;
}

/**
 * The refusals a verifier makes before any curve arithmetic, as libsodium's
 * `crypto_sign_verify_detached` makes them: `S >= L` (a second encoding of one signature), a
 * public key A or an R written non-canonically (y >= p), or of small order (y one of the 8
 * small-order points', canonical or not, sign bit ignored). RFC 8032 alone accepts some of these,
 * and node:crypto (OpenSSL) accepts a public key or an R of small order and a non-canonical key:
 * with A of small order one signature verifies for many messages, with A and R the identity and
 * S = 0 for every message (`ed25519-vectors.json` has each case). Words, or undefined.
 *
 * @example
 * ed25519SignatureProblem(publicKey, signature); // undefined, or e.g. "the signature's R is a point of small order"
 */
export function ed25519SignatureProblem(publicKey: Uint8Array, signature: Uint8Array): string | undefined {
  if (publicKey.length !== 32) return `a public key of ${publicKey.length} bytes, not 32`;
  if (signature.length !== 64) return `a signature of ${signature.length} bytes, not 64`;
  if (littleEndian(signature.subarray(32)) >= L) return "the signature's S is not below the group order (a second encoding of a signature)";
  return pointProblem(publicKey, 'the public key') ?? pointProblem(signature.subarray(0, 32), "the signature's R");
}

/**
 * Ed25519 verification with libsodium's rule: {@link ed25519SignatureProblem}'s refusals first,
 * then node:crypto's RFC 8032 verification (cofactorless, R compared by its encoding, as
 * libsodium's). The refusals come first because node:crypto alone says yes to signatures
 * libsodium and plc refuse; one verdict in every reader. False for anything malformed; never throws.
 *
 * @example
 * verifyEd25519(key.publicKey, message, signature); // true or false
 */
export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (ed25519SignatureProblem(publicKey, signature) !== undefined) return false;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey.buffer, publicKey.byteOffset, publicKey.length).toString('base64url') }, format: 'jwk' });
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The reader

/** Whose signed ticket a reader takes, and when. */
export interface SignedTicketReader {
  /** The vendor's public keys ({@link parseTicketKeys}). */
  keys: readonly TicketKey[];
  /** The namespace. */
  app: string;
  /** The reader's project id (any case). */
  projectId: string;
  /** This computer's machine id as sent to the service (`machineIdOf(raw, app)`). */
  machineId: string;
  /** The reader's clock, Unix seconds. */
  now: number;
}

/** A signed ticket's check: its fields, or the reason and words why not (and the signer's key id once line 2 was read). */
export type SignedTicketCheck =
  | { ok: true; fields: SignedTicketFields }
  | { ok: false; reason: 'cache_invalid'; problem: string; kid?: string }
  | { ok: false; reason: 'clock_tampered' | 'grace_expired'; problem: string; kid: string; fields: SignedTicketFields };

/**
 * A signed ticket's rules after its format (`parseSignedTicket`): line 2's key one of `keys` and
 * the signature verifying with it ({@link verifyEd25519}), `app`, `project_id` (compared by
 * `ticketProjectId`: the file says it in lower case) and `machine_id` this reader's; any failure
 * is `cache_invalid`. Then the time: before `issued_at - 3600` is `clock_tampered`, after
 * `valid_until` `grace_expired`. Never throws.
 *
 * @example
 * const check = verifySignedTicket(text, { keys, app: 'acme-audio', projectId, machineId, now: Math.floor(Date.now() / 1000) });
 * if (check.ok) console.log(`signed by the vendor until ${new Date(check.fields.valid_until * 1000).toISOString()}`);
 */
export function verifySignedTicket(text: string | Uint8Array, reader: SignedTicketReader): SignedTicketCheck {
  const parsed = parseSignedTicket(text);
  if (!parsed.ok) return { ok: false, reason: 'cache_invalid', problem: parsed.problem, ...(parsed.kid === undefined ? {} : { kid: parsed.kid }) };
  const { fields, kid, message, signature } = parsed.ticket;
  const bad = (problem: string): SignedTicketCheck => ({ ok: false, reason: 'cache_invalid', problem, kid });
  const key = reader.keys.find((k) => k.kid === kid);
  if (key === undefined) {
    return bad(`signed by key ${kid}, which is not one this reader trusts (${reader.keys.map((k) => k.kid).join(', ') || 'none'})`);
  }
  const refusal = ed25519SignatureProblem(key.publicKey, signature);
  if (refusal !== undefined) return bad(`the signature is refused: ${refusal}`);
  if (!verifyEd25519(key.publicKey, message, signature)) return bad(`the signature does not verify with key ${kid} (changed after it was signed)`);
  if (fields.app !== reader.app) return bad(`signed for another app (${JSON.stringify(fields.app.slice(0, 64))})`);
  if (fields.project_id !== ticketProjectId(reader.projectId)) return bad('signed for another project');
  if (fields.machine_id !== reader.machineId) return bad('signed for another computer (its machine_id is not this one)');
  if (reader.now < fields.issued_at - TICKET_CLOCK_SLACK_S) {
    return { ok: false, reason: 'clock_tampered', problem: `the clock is more than an hour before the signed ticket's issued_at (${iso(fields.issued_at)})`, kid, fields };
  }
  if (reader.now > fields.valid_until) return { ok: false, reason: 'grace_expired', problem: `the signed ticket ended at ${iso(fields.valid_until)}`, kid, fields };
  return { ok: true, fields };
}

function iso(seconds: number): string {
  const d = new Date(seconds * 1000);
  return Number.isNaN(d.getTime()) ? String(seconds) : d.toISOString();
}

/** What the reader's rule answers when the signed ticket decides. */
export type SignedVerdict =
  | { verdict: 'valid'; reason: null; signed: SignedTicketFields }
  | { verdict: 'not_licensed'; reason: 'unsigned'; problem: string }
  | { verdict: 'tampered'; reason: 'cache_invalid'; problem: string; kid?: string }
  | { verdict: 'expired'; reason: 'grace_expired'; problem: string; signed: SignedTicketFields }
  | { verdict: 'clock'; reason: 'clock_tampered'; problem: string; signed: SignedTicketFields };

/** An answer the rule composes with: `judgeTicket`'s verdict, or an agent's answer put in the same words. */
export interface LicenseAnswer {
  verdict: TicketVerdict['verdict'];
  reason: string | null;
}

/**
 * The signed ticket as a reader holds it: its text (an agent's `signed_ticket`) or bytes, a read
 * of the file ({@link readSignedTicketFile}), or undefined when there is none.
 */
export type SignedTicketInput = string | Uint8Array | SmallFileRead | undefined;

/**
 * The reader's rule (docs/signed-ticket.md, "The reader"), the one place it is written in
 * TypeScript: with no keys, `answer` as it is (docs/license-ticket.md's rules). With keys:
 * 1. `answer` (the `.ticket`'s verdict, or the agent's answer) not licensed in any way
 *    (`not_licensed`, `tampered`, `expired`, `clock`) is the answer.
 * 2. Otherwise the signed ticket decides ({@link verifySignedTicket}): valid with its fields, or
 *    `tampered`/`cache_invalid`, `clock`/`clock_tampered`, `expired`/`grace_expired`.
 * 3. No signed ticket: `none` when `answer` is none (unknown, as before), else
 *    `not_licensed`/`unsigned`: a valid ticket or agent answer without the vendor's signature is
 *    not enough. A signed ticket that cannot be read (not a regular file, too large, not the
 *    user's) is `tampered`.
 *
 * @example
 * const v = judgeLicense({ answer: judgeTicket(ticketFile, reader), signed: readSignedTicketFile(signedFile), keys, app, projectId, machineId, now });
 * if (v.verdict === 'valid') play();
 */
export function judgeLicense<T extends LicenseAnswer>(o: SignedTicketReader & { answer: T; signed: SignedTicketInput }): T | SignedVerdict {
  if (o.keys.length === 0) return o.answer;
  if (o.answer.verdict !== 'valid' && o.answer.verdict !== 'none') return o.answer;
  let text: string | Uint8Array;
  if (o.signed === undefined || (typeof o.signed === 'object' && 'kind' in o.signed && o.signed.kind === 'missing')) {
    if (o.answer.verdict === 'none') return o.answer;
    return { verdict: 'not_licensed', reason: 'unsigned', problem: 'no ticket signed by the vendor beside a valid one' };
  } else if (typeof o.signed === 'object' && 'kind' in o.signed) {
    if (o.signed.kind === 'bad') return { verdict: 'tampered', reason: 'cache_invalid', problem: `the signed ticket ${o.signed.problem}` };
    text = o.signed.bytes;
  } else {
    text = o.signed;
  }
  const check = verifySignedTicket(text, o);
  if (check.ok) return { verdict: 'valid', reason: null, signed: check.fields };
  if (check.reason === 'clock_tampered') return { verdict: 'clock', reason: 'clock_tampered', problem: check.problem, signed: check.fields };
  if (check.reason === 'grace_expired') return { verdict: 'expired', reason: 'grace_expired', problem: check.problem, signed: check.fields };
  return { verdict: 'tampered', reason: 'cache_invalid', problem: `the signed ticket: ${check.problem}`, ...(check.kid === undefined ? {} : { kid: check.kid }) };
}

/**
 * Reads a signed ticket, `DATA/tickets/ID.signed`, by the tickets' one rule ({@link readTicketFile}:
 * the user's own folders, a regular file of the user's own, at most 4 KB, never blocking).
 *
 * @example
 * const read = readSignedTicketFile(signedTicketPath({ namespace: 'acme-audio' }, projectId));
 */
export function readSignedTicketFile(file: string): SmallFileRead {
  return readTicketFile(file);
}

/** The signed ticket beside a ticket: `ID.ticket` → `ID.signed`. */
export function signedTicketFileOf(ticketFile: string): string {
  if (!ticketFile.endsWith('.ticket')) throw new LicenseError('invalid_argument', `${ticketFile} is not a ticket's path (DATA/tickets/ID.ticket)`);
  return `${ticketFile.slice(0, -'.ticket'.length)}.signed`;
}

/**
 * A plugin's whole decision from the files (what plc does in C): the ticket at `ticketFile`
 * ({@link judgeTicket}) and, with keys, the signed ticket beside it, judged by
 * {@link judgeLicense} for this computer's raw machine id. Never throws for what is on disk.
 *
 * @example
 * const v = judgeLicenseFiles(ticketPath({ namespace: 'acme-audio' }, projectId), { app: 'acme-audio', projectId, rawMachineId, now: Math.floor(Date.now() / 1000), keys });
 */
export function judgeLicenseFiles(ticketFile: string, o: { keys: readonly TicketKey[]; app: string; projectId: string; rawMachineId: string; now: number }): TicketVerdict | SignedVerdict {
  const answer = judgeTicket(ticketFile, { app: o.app, projectId: o.projectId, now: o.now, rawMachineId: o.rawMachineId });
  if (o.keys.length === 0) return answer;
  return judgeLicense({ answer, signed: readSignedTicketFile(signedTicketFileOf(ticketFile)), keys: o.keys, app: o.app, projectId: o.projectId, machineId: machineIdOf(o.rawMachineId, o.app), now: o.now });
}
