/**
 * The signed ticket's text format (docs/signed-ticket.md), written once for every runtime: the
 * license relay (on Node, Deno and Cloudflare Workers, signing with `crypto.subtle`) and the
 * licensing library (on Node, verifying with `node:crypto`). Pure code on the web platform's
 * `TextEncoder`, `TextDecoder` and `Uint8Array`: no Node module, no `Buffer`. The signature and
 * the SHA-256 of a key id are injected by the caller, so this file holds no cryptography, only the
 * rules of the bytes.
 *
 * A signed ticket is two lines of UTF-8, each ending with "\n":
 * `LINE1 "\n" "ed25519:" KID ":" SIG "\n"`, where LINE1 is a JSON object of exactly
 * {@link SIGNED_TICKET_FIELDS} and SIG the unpadded base64url Ed25519 signature of
 * {@link signedTicketMessage}(LINE1).
 *
 * Published as `@plugin-license/api/signed-ticket`.
 */

/** The domain-separation prefix of the signed bytes: `CONTEXT "\0" LINE1`. */
export const SIGNED_TICKET_CONTEXT = 'plugin-license/signed-ticket/v1';
/** The only version of line 1. */
export const SIGNED_TICKET_VERSION = 1;
/** Largest signed ticket a reader takes (bytes, both lines); a larger file is not one. */
export const MAX_SIGNED_TICKET_BYTES = 4096;
/** Line 1's fields, in the order the writer writes them; a reader demands exactly these, in any order. */
export const SIGNED_TICKET_FIELDS = ['v', 'kid', 'app', 'project_id', 'machine_id', 'code_hint', 'source', 'issued_at', 'valid_until'] as const;
/** A key id: the first 8 bytes of the SHA-256 of the raw 32-byte public key, lowercase hex. */
export const KEY_ID_PATTERN = /^[0-9a-f]{16}$/;

/** Line 1 of a signed ticket. */
export interface SignedTicketFields {
  v: 1;
  /** Id of the key that signed it (equal to line 2's KID). */
  kid: string;
  /** The namespace (vendor). */
  app: string;
  /** Lowercase project id (by {@link ticketProjectId}). */
  project_id: string;
  /** The machine id the license is activated for, exactly as sent to the service (`m1_…`). */
  machine_id: string;
  code_hint: string;
  source: 'online' | 'offline';
  /** Unix seconds, the signer's clock. */
  issued_at: number;
  /** Unix seconds: the vendor allows use without asking again until then. */
  valid_until: number;
}

/** What a signer states: line 1 without `v` and `kid`, which the writer adds. */
export type SignedTicketClaims = Omit<SignedTicketFields, 'v' | 'kid'>;

/** A signed ticket taken apart, its format checked (not its signature: see the caller's verifier). */
export interface ParsedSignedTicket {
  fields: SignedTicketFields;
  /** The exact bytes of line 1 (without its newline). */
  line1: Uint8Array;
  /** The bytes the signature covers: {@link signedTicketMessage} of line 1. */
  message: Uint8Array;
  /** Line 2's key id (equal to `fields.kid`). */
  kid: string;
  /** The 64-byte Ed25519 signature. */
  signature: Uint8Array;
}

/** A parse's answer: the ticket, or what is wrong in words (and line 2's key id when it was readable). */
export type SignedTicketParse = { ok: true; ticket: ParsedSignedTicket } | { ok: false; problem: string; kid?: string };

const encoder = new TextEncoder();
const NL = 0x0a;

/**
 * The one comparison rule of project ids in tickets (plc's `project_id_key`): ASCII letters in
 * lower case, every other character as it is. `toLowerCase()` would fold U+212A KELVIN SIGN to
 * `k`, U+0130 to `i̇` and fullwidth letters to theirs, which plc does not: one id, one answer.
 *
 * @example
 * ticketProjectId('123E4567-E89B-12D3-A456-426614174000'); // '123e4567-e89b-12d3-a456-426614174000'
 */
export function ticketProjectId(id: string): string {
  return id.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * True when every number in a JSON text is written as digits only: the tickets' times are Unix
 * seconds, and a fraction or an exponent (1.5, 1e3, 1.0000000000000001) would be read one way by
 * a double and another by plc's int64 reader, so neither reader takes one. `json` must be JSON
 * that `JSON.parse` took.
 *
 * @example
 * jsonIntegersOnly('{"t":1768478400}'); // true
 * jsonIntegersOnly('{"t":1.0}'); // false
 */
export function jsonIntegersOnly(json: string): boolean {
  const numbers = withoutStrings(json).match(/-?\d[\d.eE+-]*/g) ?? [];
  return numbers.every((n) => /^-?\d+$/.test(n));
}

function withoutStrings(json: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"/g, '""');
}

// ---------------------------------------------------------------------------------------------
// base64url (RFC 4648 section 5), unpadded

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

/**
 * Unpadded base64url of bytes.
 *
 * @example
 * base64UrlEncode(new Uint8Array([0xfb, 0xff])); // '-_8'
 */
export function base64UrlEncode(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!;
  }
  return out;
}

/**
 * The bytes of an unpadded base64url text, or `undefined` when it is not exactly one: only the
 * URL alphabet (no `+`, `/`, `=` or white space), no length that leaves a lone character, and the
 * unused bits of the last character zero, so one byte string has one text and a signature or a
 * key cannot be written two ways.
 *
 * @example
 * base64UrlDecode('-_8'); // Uint8Array [0xfb, 0xff]
 * base64UrlDecode('-_9'); // undefined (non-zero trailing bits)
 */
export function base64UrlDecode(text: string): Uint8Array | undefined {
  if (text.length % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const v = c < 128 ? VALUES[c]! : -1;
    if (v < 0) return undefined;
    acc = ((acc << 6) | v) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Keys

/** A public key's text parsed: its raw 32 bytes, and its canonical text (base64url, no prefix). */
export type PublicKeyTextParse = { ok: true; raw: Uint8Array; text: string } | { ok: false; problem: string };

/**
 * Reads a vendor's public key as it is given anywhere (configuration, a flag, a relay's answer):
 * the unpadded base64url of its raw 32 bytes (43 characters), optionally prefixed `ed25519:`,
 * white space around it ignored. Only the text is checked here; whether the 32 bytes are a point
 * a verifier accepts is the verifier's rule.
 *
 * @example
 * parsePublicKeyText('ed25519:11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo'); // { ok: true, raw: Uint8Array(32), text: '11qY…URo' }
 */
export function parsePublicKeyText(input: string): PublicKeyTextParse {
  if (typeof input !== 'string') return { ok: false, problem: 'not a text' };
  const trimmed = input.trim();
  const text = trimmed.startsWith('ed25519:') ? trimmed.slice('ed25519:'.length) : trimmed;
  if (text.length !== 43) {
    return { ok: false, problem: `${text.length} characters; an Ed25519 public key is 43 base64url characters (optionally after "ed25519:"), as plugin-license offline keygen prints it` };
  }
  const raw = base64UrlDecode(text);
  if (raw === undefined) return { ok: false, problem: 'not canonical unpadded base64url (letters, digits, - and _ only, as plugin-license offline keygen prints it)' };
  return { ok: true, raw, text };
}

/**
 * A key's id (the `kid` of line 1 and line 2, `offline keygen`'s `key_id`): the first 8 bytes of
 * the SHA-256 of its raw 32 bytes, in lowercase hex. `sha256` is injected: `node:crypto`'s
 * `createHash` (synchronous) or `crypto.subtle.digest` (a promise), and the answer follows it.
 *
 * @example
 * ticketKeyId(raw, (b) => createHash('sha256').update(b).digest()); // '3f9c0a7d1e2b4c5d'
 * await ticketKeyId(raw, async (b) => new Uint8Array(await crypto.subtle.digest('SHA-256', b)));
 */
export function ticketKeyId(raw: Uint8Array, sha256: (bytes: Uint8Array) => Uint8Array): string;
export function ticketKeyId(raw: Uint8Array, sha256: (bytes: Uint8Array) => Promise<Uint8Array>): Promise<string>;
export function ticketKeyId(raw: Uint8Array, sha256: (bytes: Uint8Array) => Uint8Array | Promise<Uint8Array>): string | Promise<string> {
  if (raw.length !== 32) throw new TypeError(`a public key is 32 bytes, not ${raw.length}`);
  const digest = sha256(raw);
  return isPromise(digest) ? digest.then(keyIdOfDigest) : keyIdOfDigest(digest);
}

function keyIdOfDigest(digest: Uint8Array): string {
  if (digest.length !== 32) throw new TypeError(`a SHA-256 digest is 32 bytes, not ${digest.length}`);
  return hex(digest.subarray(0, 8));
}

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * Line 1 of a signed ticket: the fields as JSON in {@link SIGNED_TICKET_FIELDS}' order, no spaces.
 * Throws a `TypeError` naming the field when one would not pass a reader (the writer never writes
 * what a reader refuses).
 *
 * @example
 * signedTicketLine1({ v: 1, kid, app: 'acme-audio', project_id, machine_id, code_hint: '3f2a…b601', source: 'online', issued_at, valid_until });
 */
export function signedTicketLine1(fields: SignedTicketFields): string {
  const problem = fieldsProblem(fields as unknown as Record<string, unknown>);
  if (problem !== undefined) throw new TypeError(`cannot write this signed ticket: ${problem}`);
  if (fields.project_id !== ticketProjectId(fields.project_id)) throw new TypeError('cannot write this signed ticket: project_id must be in lower case');
  return JSON.stringify(Object.fromEntries(SIGNED_TICKET_FIELDS.map((name) => [name, fields[name]])));
}

/**
 * The bytes an Ed25519 signature of a signed ticket covers: UTF-8 of
 * `"plugin-license/signed-ticket/v1" + "\0" + LINE1` (line 1 without its newline).
 *
 * @example
 * const signature = sign(null, signedTicketMessage(line1), privateKey);
 */
export function signedTicketMessage(line1: string | Uint8Array): Uint8Array {
  const body = typeof line1 === 'string' ? encoder.encode(line1) : line1;
  const prefix = encoder.encode(`${SIGNED_TICKET_CONTEXT}\0`);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

/**
 * Line 2 of a signed ticket (without its newline): `ed25519:KID:SIG`.
 *
 * @example
 * signedTicketLine2('3f9c0a7d1e2b4c5d', signature); // 'ed25519:3f9c0a7d1e2b4c5d:q0u…'
 */
export function signedTicketLine2(kid: string, signature: Uint8Array): string {
  if (!KEY_ID_PATTERN.test(kid)) throw new TypeError('a key id is 16 lowercase hex digits');
  if (signature.length !== 64) throw new TypeError(`an Ed25519 signature is 64 bytes, not ${signature.length}`);
  return `ed25519:${kid}:${base64UrlEncode(signature)}`;
}

/** Signs the message bytes: `node:crypto`'s `sign(null, bytes, key)` or `crypto.subtle.sign('Ed25519', key, bytes)`. */
export type SignedTicketSigner = (message: Uint8Array) => Uint8Array | Promise<Uint8Array>;

/**
 * The whole text of a signed ticket for `claims`, signed by the key `kid` through `sign` (the
 * caller's Ed25519: synchronous gives a string, a promise gives a promise). The project id is
 * written in lower case ({@link ticketProjectId}); a field a reader would refuse throws a
 * `TypeError` naming it.
 *
 * @example
 * // Node
 * const text = formatSignedTicket(claims, kid, (m) => sign(null, m, privateKey));
 * // Web platform (the relay)
 * const text = await formatSignedTicket(claims, kid, async (m) => new Uint8Array(await crypto.subtle.sign('Ed25519', key, m)));
 */
export function formatSignedTicket(claims: SignedTicketClaims, kid: string, sign: (message: Uint8Array) => Uint8Array): string;
export function formatSignedTicket(claims: SignedTicketClaims, kid: string, sign: (message: Uint8Array) => Promise<Uint8Array>): Promise<string>;
export function formatSignedTicket(claims: SignedTicketClaims, kid: string, sign: SignedTicketSigner): string | Promise<string>;
export function formatSignedTicket(claims: SignedTicketClaims, kid: string, sign: SignedTicketSigner): string | Promise<string> {
  const line1 = signedTicketLine1({
    v: 1,
    kid,
    app: claims.app,
    project_id: typeof claims.project_id === 'string' ? ticketProjectId(claims.project_id) : claims.project_id,
    machine_id: claims.machine_id,
    code_hint: claims.code_hint,
    source: claims.source,
    issued_at: claims.issued_at,
    valid_until: claims.valid_until,
  });
  const signature = sign(signedTicketMessage(line1));
  const finish = (sig: Uint8Array): string => `${line1}\n${signedTicketLine2(kid, new Uint8Array(sig))}\n`;
  return isPromise(signature) ? signature.then(finish) : finish(signature);
}

// ---------------------------------------------------------------------------------------------
// Reading

const LINE2 = /^ed25519:([0-9a-f]{16}):([A-Za-z0-9_-]{86})$/;

/**
 * Takes a signed ticket apart by the format's rules: at most {@link MAX_SIGNED_TICKET_BYTES}
 * bytes; exactly two lines, each ending with "\n", nothing after; line 2 `ed25519:KID:SIG` (KID
 * 16 lowercase hex, SIG the canonical unpadded base64url of 64 bytes); line 1 UTF-8 (a byte order
 * mark is not JSON) holding a JSON object of exactly {@link SIGNED_TICKET_FIELDS} (none missing,
 * none extra, none twice) with their types (`v` 1; `kid` a key id equal to line 2's; `source`
 * `online` or `offline`; times safe integers written as digits; the rest strings). Any order of
 * fields and any JSON spacing: the signature covers line 1's exact bytes. Checks no signature
 * and no app, project, machine or time: that is the verifier's. Never throws.
 *
 * @example
 * const parsed = parseSignedTicket(text);
 * if (!parsed.ok) console.log(parsed.problem); // e.g. 'line 1 has an unknown field "valid"'
 */
export function parseSignedTicket(input: string | Uint8Array): SignedTicketParse {
  // A text of more UTF-16 units than the limit has more UTF-8 bytes too: refused before encoding it.
  if (typeof input === 'string' && input.length > MAX_SIGNED_TICKET_BYTES) return { ok: false, problem: `more than a signed ticket's ${MAX_SIGNED_TICKET_BYTES} bytes` };
  const bytes = typeof input === 'string' ? encoder.encode(input) : input;
  if (bytes.length > MAX_SIGNED_TICKET_BYTES) return { ok: false, problem: `${bytes.length} bytes, more than a signed ticket's ${MAX_SIGNED_TICKET_BYTES}` };
  const first = bytes.indexOf(NL);
  if (first < 0) return { ok: false, problem: bytes.length === 0 ? 'empty' : 'one line; a signed ticket is two lines' };
  const second = bytes.indexOf(NL, first + 1);
  if (second < 0) return { ok: false, problem: first === bytes.length - 1 ? 'one line; a signed ticket is two lines' : 'line 2 does not end with a newline' };
  if (second !== bytes.length - 1) return { ok: false, problem: 'something after line 2; a signed ticket is two lines' };
  const line2 = latin1(bytes.subarray(first + 1, second));
  const m = LINE2.exec(line2);
  if (m === null) {
    return { ok: false, problem: line2.endsWith('\r') ? 'line ends are CRLF; a signed ticket\'s lines end with "\\n" alone' : 'line 2 is not "ed25519:KEY_ID:SIGNATURE" (16 lowercase hex digits, 86 base64url characters)' };
  }
  const kid = m[1]!;
  const signature = base64UrlDecode(m[2]!);
  if (signature === undefined) return { ok: false, problem: 'the signature is not canonical base64url (its last character has bits set that no signature has)', kid };
  const line1 = bytes.subarray(0, first);
  let json: string;
  let value: unknown;
  try {
    json = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(line1);
    value = JSON.parse(json);
  } catch {
    return { ok: false, problem: 'line 1 is not JSON in UTF-8', kid };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, problem: 'line 1 is not a JSON object', kid };
  const fields = value as Record<string, unknown>;
  const problem = fieldsProblem(fields) ?? (jsonIntegersOnly(json) ? undefined : 'a number in line 1 is not written as digits only (times are whole Unix seconds)');
  if (problem !== undefined) return { ok: false, problem: `line 1 ${problem}`, kid };
  const keyCount = withoutStrings(json).match(/""\s*:/g)?.length ?? 0;
  if (keyCount !== SIGNED_TICKET_FIELDS.length) return { ok: false, problem: 'line 1 has a field twice', kid };
  if (fields.kid !== kid) return { ok: false, problem: `line 1 names key ${String(fields.kid)}, line 2 key ${kid}`, kid };
  const ticket = fields as unknown as SignedTicketFields;
  return { ok: true, ticket: { fields: ticket, line1, message: signedTicketMessage(line1), kid, signature } };
}

/**
 * What is wrong with line 1's fields, in words, or undefined: exactly the fields, with their types.
 * The reader's rule and the writer's check, in one place.
 */
function fieldsProblem(f: Record<string, unknown>): string | undefined {
  for (const name of Object.keys(f)) {
    if (!(SIGNED_TICKET_FIELDS as readonly string[]).includes(name)) return `has an unknown field ${JSON.stringify(name.slice(0, 40))}`;
  }
  for (const name of SIGNED_TICKET_FIELDS) if (!(name in f)) return `has no field "${name}"`;
  if (f.v !== SIGNED_TICKET_VERSION) return `is of version ${JSON.stringify(f.v)?.slice(0, 20)}; this reader reads version ${SIGNED_TICKET_VERSION}`;
  if (typeof f.kid !== 'string' || !KEY_ID_PATTERN.test(f.kid)) return 'has a "kid" that is not 16 lowercase hex digits';
  for (const name of ['app', 'project_id', 'machine_id', 'code_hint'] as const) {
    if (typeof f[name] !== 'string') return `has a "${name}" that is not a string`;
  }
  if (f.source !== 'online' && f.source !== 'offline') return 'has a "source" that is neither "online" nor "offline"';
  for (const name of ['issued_at', 'valid_until'] as const) {
    if (!Number.isSafeInteger(f[name])) return `has a "${name}" that is not a whole number of Unix seconds`;
  }
  return undefined;
}

function latin1(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

function hex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
