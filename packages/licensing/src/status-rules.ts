import { codeHint } from '@plugin-license/api';
import type { StoredLicense } from './cache-file.js';
import type { LicenseStatus, Reason } from './license-status.js';
import type { LicensePolicy } from './policy.js';
import { revalidationDueAt } from './schedule.js';

/**
 * The one rule from a stored state and the clock to a {@link LicenseStatus}: `License` applies
 * it on every `check()` (recomputing only when the bucket moves), and `readCachedStatus()` to a
 * file read without touching it.
 */

/** Decision buckets of a stored state; a status changes only when its bucket moves. */
export const VALID = 0;
export const TAMPERED = 1;
export const EXPIRED = 2;
export const STATIC = 3;
export type Bucket = typeof VALID | typeof TAMPERED | typeof EXPIRED | typeof STATIC;

/**
 * The one rule of a release in progress: while this machine is giving back the slot of the
 * stored code (a deactivation recorded before the service is asked, its outcome not yet stored),
 * that license is not used here. It reads as invalid with reason `deactivated` for `check()`, the
 * agent, `readCachedStatus` and the ticket alike, from before the service is asked until the
 * release is settled: then the state says what the service did (removed when the slot is free,
 * as it was when the service still holds it). `releasing` is the codes of this machine's pending
 * deactivation intents for the project.
 *
 * @example
 * whileReleasing(stored, ['3f2a9c1e-…']); // { ...stored, status: 'invalid', reason: 'deactivated' }
 */
export function whileReleasing(s: StoredLicense | null, releasing: readonly string[]): StoredLicense | null {
  if (s === null || !releasing.includes(s.code)) return s;
  return { ...s, status: 'invalid', reason: 'deactivated' };
}

/** Where an active license stands at `t`: valid, clock behind the highest time seen, or past its grace. */
export function bucketOf(s: StoredLicense | null, t: number, maxSeen: number, tolerance: number, validUntil: number): Bucket {
  if (s === null || s.status !== 'active') return STATIC;
  if (t < maxSeen - tolerance) return TAMPERED;
  if (t > validUntil) return EXPIRED;
  return VALID;
}

/**
 * The last moment an active stored state is valid without the service: an offline activation's
 * `valid_until`, else the last online success + grace; -Infinity when it can't be valid.
 */
export function validUntilOf(s: StoredLicense | null, policy: Pick<LicensePolicy, 'graceMs'>): number {
  if (!s || s.status !== 'active') return -Infinity;
  if (s.offline !== undefined) return s.offline.validUntil;
  return s.validatedAt !== null ? s.validatedAt + policy.graceMs : -Infinity;
}

export function statusOf(
  projectId: string,
  s: StoredLicense | null,
  bucket: Bucket,
  t: number,
  policy: LicensePolicy,
  source: LicenseStatus['source'],
  cacheInvalid: boolean,
): LicenseStatus {
  if (s === null) {
    const reason: Reason = cacheInvalid ? 'cache_invalid' : 'not_activated';
    return Object.freeze({
      projectId,
      valid: false,
      reason,
      source,
      codeHint: null,
      activations: null,
      maxActivations: null,
      validatedAt: null,
      checkedAt: null,
      graceUntil: null,
      nextCheckAt: null,
      signedTicket: null,
    });
  }
  let reason: Reason | null;
  if (s.status === 'invalid') reason = s.reason ?? 'not_activated';
  else if (bucket === TAMPERED) reason = 'clock_tampered';
  else if (bucket === EXPIRED) reason = 'grace_expired';
  else reason = null;
  const due = revalidationDueAt(policy, s, t, bucket === TAMPERED);
  const validUntil = validUntilOf(s, policy);
  return Object.freeze({
    projectId,
    valid: reason === null,
    reason,
    // An offline activation is the source until an online answer replaces it.
    source: s.offline !== undefined ? 'offline' : source,
    codeHint: codeHint(s.code),
    activations: s.activations,
    maxActivations: s.maxActivations,
    validatedAt: s.validatedAt === null ? null : new Date(s.validatedAt),
    checkedAt: s.answeredAt === null ? null : new Date(s.answeredAt),
    graceUntil: Number.isFinite(validUntil) ? new Date(validUntil) : null,
    nextCheckAt: due === null ? null : new Date(due),
    // The signed ticket and its rule are added by `signedStatus` (signed-status.ts).
    signedTicket: null,
  });
}
