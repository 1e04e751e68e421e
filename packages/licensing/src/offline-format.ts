import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import * as z from 'zod';
import { MAX_SIGNED_TICKET_BYTES, ticketKeyId } from '@plugin-license/api/signed-ticket';
import { MAX_STATE_FILE_BYTES } from './cache-file.js';
import { LicenseError } from './errors.js';

/**
 * The files of the offline exchange (docs/offline-activation.md), one definition for the library, the
 * CLI and the agent: a request (the offline machine asks), a response (an online computer
 * answers), a release proof (the offline machine gave its slot up). Each is a small JSON
 * document with a `type` and a `version`, and each can travel as one line of text:
 * `base64url(JSON) + "." + base64url(first 6 bytes of SHA-256(JSON))`, so a line cut short or
 * mistyped is caught instead of read as something else.
 */

export const OFFLINE_VERSION = 1;

/**
 * An ISO 8601 UTC time that names a real instant: Date.parse reads 2027-02-30 as 2 March, so the
 * date and time are read back and must be the ones written.
 */
const Iso = z.string().refine(isRealUtcTime, 'an ISO 8601 UTC time of a real date (like 2027-02-28T12:00:00Z)');

function isRealUtcTime(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$/.exec(s);
  if (!m) return false;
  const t = Date.parse(s);
  if (!Number.isFinite(t)) return false;
  const d = new Date(t);
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() + 1 === Number(m[2]) && d.getUTCDate() === Number(m[3]) && d.getUTCHours() === Number(m[4]) && d.getUTCMinutes() === Number(m[5]) && d.getUTCSeconds() === Number(m[6]);
}
const Uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'a UUID');
const Text = z.string().min(1).max(256);
const Nonce = z.string().regex(/^[A-Za-z0-9_-]{22,64}$/, 'a nonce of 22-64 base64url characters');
const Count = z.number().int().nonnegative().nullable();

/** Written on the offline machine: what it asks an online computer to do for it. */
export const OfflineRequest = z.strictObject({
  type: z.literal('offline_request'),
  version: z.literal(OFFLINE_VERSION),
  project_id: Uuid,
  machine_id: Text,
  /** The hostname, for support (which computer is this?). */
  machine_name: z.string().max(256),
  /** The code to activate, when the customer typed it on the offline machine. */
  code: Text.nullable(),
  /** True: validate the code already held (no slot taken) and extend `valid_until`. */
  renew: z.boolean(),
  nonce: Nonce,
  created_at: Iso,
});
export type OfflineRequest = z.infer<typeof OfflineRequest>;

export const OfflineSignature = z.strictObject({
  alg: z.literal('Ed25519'),
  key_id: z.string().regex(/^[0-9a-f]{16}$/, '16 hex digits'),
  value: z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'a base64url Ed25519 signature'),
});
export type OfflineSignature = z.infer<typeof OfflineSignature>;

/** Written by the online step: the service's answer for the request's machine id. */
export const OfflineResponse = z.strictObject({
  type: z.literal('offline_response'),
  version: z.literal(OFFLINE_VERSION),
  project_id: Uuid,
  machine_id: Text,
  machine_name: z.string().max(256),
  nonce: Nonce,
  code: Text,
  renew: z.boolean(),
  /** What the service said: only `true` is ever written; anything else is refused at import. */
  valid: z.boolean(),
  activations: Count,
  max_activations: Count,
  validated_at: Iso,
  valid_until: Iso,
  /**
   * A ticket signed by the vendor's key for the request's machine (docs/signed-ticket.md), added
   * by `offline activate --sign-key`: the import verifies it with the ticket keys and stores it
   * beside the ticket. Covered by the response's signature like every other field.
   */
  signed_ticket: z.string().min(1).max(MAX_SIGNED_TICKET_BYTES).optional(),
  signature: OfflineSignature.optional(),
});
export type OfflineResponse = z.infer<typeof OfflineResponse>;

/** Written on the offline machine when it gives its slot up (it has already forgotten the license). */
export const OfflineRelease = z.strictObject({
  type: z.literal('offline_release'),
  version: z.literal(OFFLINE_VERSION),
  project_id: Uuid,
  machine_id: Text,
  machine_name: z.string().max(256),
  code: Text,
  nonce: Nonce,
  released_at: Iso,
});
export type OfflineRelease = z.infer<typeof OfflineRelease>;

export type OfflineDocument = OfflineRequest | OfflineResponse | OfflineRelease;
export type OfflineDocumentType = OfflineDocument['type'];

const SCHEMAS = { offline_request: OfflineRequest, offline_response: OfflineResponse, offline_release: OfflineRelease } as const;

const NAMES: Record<OfflineDocumentType, string> = {
  offline_request: 'an offline request',
  offline_response: 'an offline response',
  offline_release: 'a release proof',
};

/** What each kind of file is for, said when the wrong one is given. */
const WHAT_TO_DO: Record<OfflineDocumentType, string> = {
  offline_request: 'a request is answered on a computer that is online',
  offline_response: 'a response is imported on the offline machine it was made for',
  offline_release: 'a release proof is confirmed on a computer that is online',
};

/** The largest offline file read (they are well under 2 KiB): a bigger one is not one. */
export const MAX_OFFLINE_FILE_BYTES = MAX_STATE_FILE_BYTES;

/** The JSON text of a document as written to a file (pretty, one trailing newline). */
export function offlineJson(doc: OfflineDocument): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * The file name to suggest for a document as text: `NAMESPACE-request-1a2b3c4d.txt` (the kind,
 * then the first 8 characters of the project id), for the agent's `offline_request` and the
 * license manager's downloads alike.
 *
 * @example
 * offlineFileName('acme-audio', request); // acme-audio-request-3f6c1b2a.txt
 */
export function offlineFileName(namespace: string, doc: OfflineDocument): string {
  return `${namespace}-${doc.type.replace(/^offline_/, '')}-${doc.project_id.slice(0, 8)}.txt`;
}

/**
 * A document as one line of text: `base64url(JSON)` + `.` + a checksum, for customers who can
 * paste text but cannot move files.
 *
 * @example
 * console.log(offlineText(request)); // eyJ0eXBlIjoib2ZmbGluZV9yZXF1ZXN0Ii….k3Jx9QaB
 */
export function offlineText(doc: OfflineDocument): string {
  const json = Buffer.from(JSON.stringify(doc), 'utf8');
  return `${json.toString('base64url')}.${checksum(json)}`;
}

function checksum(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest().subarray(0, 6).toString('base64url');
}

/**
 * Reads an offline document from a file's content or a pasted line: JSON, or the one-line text
 * form. Checks the `type` (when `expected` is given), the `version` and every field. Throws
 * `invalid_offline_file` saying what is wrong (truncated, mangled, the wrong kind of file).
 *
 * @example
 * const response = parseOfflineDocument(text, 'offline_response');
 */
export function parseOfflineDocument<T extends OfflineDocumentType>(input: string | OfflineDocument, expected?: T): Extract<OfflineDocument, { type: T }> {
  // A document object is checked by the same rules as its text.
  if (typeof input === 'object' && input !== null) return parseOfflineDocument(JSON.stringify(input), expected);
  if (typeof input !== 'string') throw bad('an offline file must be given as text or as the document object');
  if (Buffer.byteLength(input, 'utf8') > MAX_OFFLINE_FILE_BYTES) throw bad(`this is ${Buffer.byteLength(input, 'utf8')} bytes, far larger than an offline file (at most ${MAX_OFFLINE_FILE_BYTES}); it is not one`);
  const text = input.replace(/^\uFEFF/, '').trim();
  if (text === '') throw bad('the offline file is empty');
  let value: unknown;
  if (text.startsWith('{')) {
    try {
      value = JSON.parse(text);
    } catch {
      throw bad('the offline file is not complete JSON (cut short or edited); copy the whole file again');
    }
  } else {
    value = decodeLine(text);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('this is not a plugin-license offline file (not a JSON object)');
  const { type, version } = value as { type?: unknown; version?: unknown };
  if (typeof type !== 'string' || !(type in SCHEMAS)) {
    throw bad(`this is not a plugin-license offline file (type ${typeof type === 'string' ? `'${type.slice(0, 40)}'` : 'missing'}; expected ${expected ? `'${expected}'` : "'offline_request', 'offline_response' or 'offline_release'"})`);
  }
  const kind = type as OfflineDocumentType;
  if (expected !== undefined && kind !== expected) {
    throw bad(`this is ${NAMES[kind]}, not ${NAMES[expected]}; ${WHAT_TO_DO[kind]}`);
  }
  if (version !== OFFLINE_VERSION) {
    throw bad(`${NAMES[kind]} of version ${typeof version === 'number' ? version : 'unknown'}; this version reads version ${OFFLINE_VERSION} (update the program that reads it, or make the file again with this one)`);
  }
  const parsed = SCHEMAS[kind].safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw bad(`${NAMES[kind]} with a bad field '${issue?.path.join('.') || '(top level)'}': ${issue?.message ?? 'unexpected'}`);
  }
  return parsed.data as Extract<OfflineDocument, { type: T }>;
}

function decodeLine(text: string): unknown {
  const line = text.replace(/\s+/g, '');
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{8})$/.exec(line);
  if (!m) {
    throw bad(/^[A-Za-z0-9_.-]+$/.test(line) ? 'the offline line is incomplete (its checksum part is missing); copy the whole line, up to its last character' : 'this is neither an offline file (JSON) nor an offline line (letters, digits, - and _); copy the whole line or give the file');
  }
  const bytes = Buffer.from(m[1]!, 'base64url');
  if (checksum(bytes) !== m[2]) throw bad('the offline line is damaged or incomplete (its checksum does not match); copy the whole line again');
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw bad('the offline line does not hold a JSON document; copy the whole line again');
  }
}

function bad(message: string): LicenseError {
  return new LicenseError('invalid_offline_file', message);
}

// ---------------------------------------------------------------------------------------------
// Signatures

/**
 * Domain separation: the signed bytes start with this line, so a signature over a response can
 * never be taken for a signature over anything else.
 */
export const SIGNED_PREFIX = 'plugin-license offline response v1\n';

/**
 * The exact bytes an Ed25519 signature covers: {@link SIGNED_PREFIX}, then the response without
 * its `signature` field as JSON with keys sorted by UTF-16 code units and no whitespace, in UTF-8.
 *
 * @example
 * verify(null, canonicalResponseBytes(response), publicKey, signature);
 */
export function canonicalResponseBytes(response: OfflineResponse): Buffer {
  const { signature: _signature, ...rest } = response;
  const sorted = Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return Buffer.from(SIGNED_PREFIX + JSON.stringify(sorted), 'utf8');
}

/** A vendor's signing key pair: the private key as PKCS#8 PEM, the public key as base64url of its 32 raw bytes. */
export interface OfflineKeyPair {
  privateKeyPem: string;
  publicKey: string;
  keyId: string;
}

/**
 * Makes an Ed25519 key pair for signing offline responses (`plugin-license offline keygen`).
 * Keep the private key on the vendor's support machines; configure the public key in the apps
 * (`offlinePublicKeys`).
 *
 * @example
 * const { privateKeyPem, publicKey, keyId } = generateOfflineKeyPair();
 */
export function generateOfflineKeyPair(): OfflineKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = rawPublicKey(publicKey);
  return { privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey: raw.toString('base64url'), keyId: keyIdOf(raw) };
}

/** The key id of a public key: the first 8 bytes of the SHA-256 of its 32 raw bytes, in hex. */
export function keyIdOf(raw: Uint8Array): string {
  return ticketKeyId(raw, (bytes) => createHash('sha256').update(bytes).digest());
}

function rawPublicKey(key: KeyObject): Buffer {
  const jwk = key.export({ format: 'jwk' }) as { x?: string };
  return Buffer.from(jwk.x ?? '', 'base64url');
}

/** A configured public key, parsed once. */
export interface OfflinePublicKey {
  keyId: string;
  key: KeyObject;
}

/**
 * Parses configured public keys (base64url of the 32 raw bytes, as `keygen` prints them).
 * Throws `invalid_argument` naming the bad entry.
 */
export function parsePublicKeys(keys: readonly string[] | undefined, where = 'offlinePublicKeys'): OfflinePublicKey[] {
  if (keys === undefined) return [];
  if (!Array.isArray(keys)) throw new LicenseError('invalid_argument', `${where} must be a list of public keys, as plugin-license offline keygen prints them`);
  return keys.map((k, i) => {
    const text = typeof k === 'string' ? k.trim() : '';
    const raw = /^[A-Za-z0-9_-]{43}$/.test(text) ? Buffer.from(text, 'base64url') : undefined;
    if (raw === undefined || raw.length !== 32) {
      throw new LicenseError('invalid_argument', `${where}[${i}] is not an Ed25519 public key (43 base64url characters, as plugin-license offline keygen prints it)`);
    }
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    return { keyId: keyIdOf(raw), key };
  });
}

/**
 * Reads a private key (PKCS#8 PEM, as `keygen` writes it). Throws `invalid_argument` when it is
 * not an Ed25519 private key.
 */
export function parsePrivateKey(pem: string, where: string): { key: KeyObject; keyId: string } {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new LicenseError('invalid_argument', `${where} is not a private key in PEM form (as plugin-license offline keygen writes it)`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new LicenseError('invalid_argument', `${where} is a ${key.asymmetricKeyType ?? 'non-asymmetric'} key; offline responses are signed with Ed25519 (plugin-license offline keygen)`);
  return { key, keyId: keyIdOf(rawPublicKey(createPublicKey(key))) };
}

/** The response with its signature by `key` (replacing any). */
export function signResponse(response: OfflineResponse, signer: { key: KeyObject; keyId: string }): OfflineResponse {
  const value = sign(null, canonicalResponseBytes(response), signer.key).toString('base64url');
  return { ...response, signature: { alg: 'Ed25519', key_id: signer.keyId, value } };
}

/**
 * Checks a response's signature against configured keys: the key id that verified it, or a
 * `offline_refused` error saying why not (unsigned, unknown key, does not verify). With no keys
 * configured, returns null (unsigned responses are accepted; see the threat model).
 */
export function verifyResponse(response: OfflineResponse, keys: readonly OfflinePublicKey[]): string | null {
  if (keys.length === 0) return null;
  const s = response.signature;
  if (s === undefined) throw new LicenseError('offline_refused', 'the response is not signed, and this application accepts only responses signed by its vendor; ask the vendor for a signed response');
  const key = keys.find((k) => k.keyId === s.key_id);
  if (key === undefined) throw new LicenseError('offline_refused', `the response is signed by key ${s.key_id}, which this application does not know (known: ${keys.map((k) => k.keyId).join(', ')}); ask the vendor for a response signed with a current key`);
  if (!verify(null, canonicalResponseBytes(response), key.key, Buffer.from(s.value, 'base64url'))) {
    throw new LicenseError('offline_refused', 'the response signature does not verify: the file was changed after it was signed; ask for the response again');
  }
  return key.keyId;
}
