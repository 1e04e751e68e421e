import { createHmac, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import * as z from 'zod';

/**
 * Newest version of the file layout this version reads; a newer one is left alone (never moved
 * aside). Format 2 is format 1 plus `offline` (an imported offline activation); a state without
 * it is still written as format 1, byte for byte as before.
 */
export const CACHE_FORMAT = 2;

/**
 * Largest file we read (a cache file is under 1 KiB): a bigger one is not ours, and reading it
 * whole would block the event loop and hold its size in memory.
 */
export const MAX_STATE_FILE_BYTES = 64 * 1024;

const ServiceReason = z.enum(['not_activated', 'code_revoked', 'code_not_found', 'deactivated']);
// Whatever the injected clock gives (finite numbers; JSON round-trips them exactly).
const Millis = z.number();

/** An offline activation the state rests on (docs/offline-activation.md), until an online answer replaces it. */
export const OfflineGrant = z.strictObject({
  /** Valid until this time (the response's `valid_until`). */
  validUntil: Millis,
  /** The request's nonce the response answered. */
  nonce: z.string().max(64),
  /** The computer the response was made for (its hostname then), for support. */
  machineName: z.string().max(256),
  /** The configured public key that verified the signature at import; null when none was configured. */
  keyId: z.string().max(64).nullable(),
  /** The response as imported (compact JSON), so a configured key can verify it again at every load. */
  response: z.string().max(8192),
});
export type OfflineGrant = z.infer<typeof OfflineGrant>;

/** What the cache keeps for one project. Times are epoch ms of the injected clock. */
export const StoredLicense = z.strictObject({
  code: z.string().min(1).max(256),
  status: z.enum(['active', 'invalid']),
  reason: ServiceReason.nullable(),
  activations: z.number().int().nullable(),
  maxActivations: z.number().int().nullable(),
  activatedAt: Millis,
  /** Last online success. */
  validatedAt: Millis.nullable(),
  /** Last definitive answer of the service (success or a reason). */
  answeredAt: Millis.nullable(),
  /** Last request, answered or not. */
  attemptedAt: Millis.nullable(),
  /** Consecutive transport failures since the last answer. */
  failures: z.number().int().nonnegative(),
  /** No request before this time (back-off or the service's rate-limit reset). */
  retryAt: Millis.nullable(),
  /** When the next background revalidation is due. */
  nextCheckAt: Millis.nullable(),
  /** Highest wall time ever seen; a clock far behind it is tampered. */
  maxSeenAt: Millis,
  /** Incremented by every write; lets concurrent writers be checked for lost updates. */
  revision: z.number().int().nonnegative(),
  /** Set while the state rests on an imported offline activation. */
  offline: OfflineGrant.optional(),
});
export type StoredLicense = z.infer<typeof StoredLicense>;

const CacheBody = z.strictObject({
  format: z.union([z.literal(1), z.literal(2)]),
  projectId: z.string(),
  machineId: z.string(),
  license: StoredLicense,
});
type CacheBody = z.infer<typeof CacheBody>;

export type CacheRead =
  | { kind: 'missing' }
  | { kind: 'ok'; license: StoredLicense }
  | { kind: 'invalid'; problem: string; text: string }
  | { kind: 'newer'; format: number };

export interface CacheIdentity {
  projectId: string;
  machineId: string;
  cacheKey: Buffer;
}

/** Serialises a state with its HMAC. The MAC covers the exact JSON text of everything else. */
export function encodeCache(identity: CacheIdentity, license: StoredLicense): string {
  const body: CacheBody = { format: license.offline === undefined ? 1 : 2, projectId: identity.projectId, machineId: identity.machineId, license: pick(license) };
  const text = JSON.stringify(body);
  const mac = createHmac('sha256', identity.cacheKey).update(text).digest('hex');
  return `${text.slice(0, -1)},"mac":"${mac}"}\n`;
}

/** Parses and authenticates a cache file's text; any mismatch is `invalid`, never a throw. */
export function decodeCache(identity: CacheIdentity, text: string): CacheRead {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: 'invalid', problem: 'not JSON (truncated or edited)', text };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'invalid', problem: 'not a JSON object', text };
  const { mac, ...rest } = parsed as Record<string, unknown>;
  if (typeof rest.format === 'number' && rest.format > CACHE_FORMAT) return { kind: 'newer', format: rest.format };
  if (typeof mac !== 'string' || !/^[0-9a-f]{64}$/.test(mac)) return { kind: 'invalid', problem: 'no authentication tag', text };
  const expected = createHmac('sha256', identity.cacheKey).update(JSON.stringify(rest)).digest();
  if (!timingSafeEqual(expected, Buffer.from(mac, 'hex'))) {
    return { kind: 'invalid', problem: 'authentication tag does not match (edited, or written on another machine)', text };
  }
  const body = CacheBody.safeParse(rest);
  if (!body.success) return { kind: 'invalid', problem: `unexpected content at ${body.error.issues[0]?.path.join('.') || 'top level'}`, text };
  if (body.data.projectId !== identity.projectId) return { kind: 'invalid', problem: 'belongs to another project', text };
  if (body.data.machineId !== identity.machineId) return { kind: 'invalid', problem: 'bound to another machine id', text };
  return { kind: 'ok', license: body.data.license };
}

/** Reads a cache file synchronously (the first `check()`). */
export function readCacheSync(file: string, identity: CacheIdentity): CacheRead {
  const read = readCappedSync(file);
  if (read.kind !== 'text') return read.kind === 'missing' ? read : { kind: 'invalid', problem: read.problem, text: '' };
  return decodeCache(identity, read.text);
}

export async function readCache(file: string, identity: CacheIdentity): Promise<CacheRead> {
  const read = await readCapped(file);
  if (read.kind !== 'text') return read.kind === 'missing' ? read : { kind: 'invalid', problem: read.problem, text: '' };
  return decodeCache(identity, read.text);
}

/** A small state file's text, or why it could not be taken as one. */
export type CappedRead = { kind: 'missing' } | { kind: 'text'; text: string } | { kind: 'too_large'; problem: string };

function tooLarge(size: number): CappedRead {
  return { kind: 'too_large', problem: `${size} bytes, far larger than a license file (at most ${MAX_STATE_FILE_BYTES}); not read` };
}

/** Reads a file of at most {@link MAX_STATE_FILE_BYTES}; a larger one is not read at all. */
export function readCappedSync(file: string): CappedRead {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_STATE_FILE_BYTES) return tooLarge(size);
    const buffer = Buffer.alloc(MAX_STATE_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > MAX_STATE_FILE_BYTES) return tooLarge(length);
    }
    return { kind: 'text', text: buffer.toString('utf8', 0, length) };
  } finally {
    closeSync(fd);
  }
}

export async function readCapped(file: string): Promise<CappedRead> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw e;
  }
  try {
    const size = (await handle.stat()).size;
    if (size > MAX_STATE_FILE_BYTES) return tooLarge(size);
    const buffer = Buffer.alloc(MAX_STATE_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_STATE_FILE_BYTES) return tooLarge(length);
    }
    return { kind: 'text', text: buffer.toString('utf8', 0, length) };
  } finally {
    await handle.close();
  }
}

// Writes exactly the known fields in a fixed order, so the MAC input is stable.
function pick(l: StoredLicense): StoredLicense {
  return {
    code: l.code,
    status: l.status,
    reason: l.reason,
    activations: l.activations,
    maxActivations: l.maxActivations,
    activatedAt: l.activatedAt,
    validatedAt: l.validatedAt,
    answeredAt: l.answeredAt,
    attemptedAt: l.attemptedAt,
    failures: l.failures,
    retryAt: l.retryAt,
    nextCheckAt: l.nextCheckAt,
    maxSeenAt: l.maxSeenAt,
    revision: l.revision,
    ...(l.offline === undefined
      ? {}
      : { offline: { validUntil: l.offline.validUntil, nonce: l.offline.nonce, machineName: l.offline.machineName, keyId: l.offline.keyId, response: l.offline.response } }),
  };
}
