import { LicenseError } from './errors.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Every number of the licensing rules, in milliseconds. All are tunable; see {@link DEFAULT_POLICY}. */
export interface LicensePolicy {
  /** How long after the last online success the cache keeps a license valid offline. */
  graceMs: number;
  /** How far the clock may sit behind the highest time ever seen before it counts as tampered. */
  clockToleranceMs: number;
  /** Background revalidation period (the agent's schedule). */
  revalidateIntervalMs: number;
  /** Spread (plus or minus) added to each revalidation so machines don't call in step. */
  revalidateJitterMs: number;
  /** `validate()` answers from memory when the service answered for this code more recently than this. */
  minRevalidateIntervalMs: number;
  /**
   * A plugin load prompts one early online check when the service has not been asked about the
   * license for this long (`loadCheckDue`); so a revocation reaches a plugin opened after a quiet
   * time without waiting for the next scheduled check.
   */
  loadCheckQuietMs: number;
  /** First back-off after a transport failure; doubles per failure. */
  backoffMinMs: number;
  /** Back-off ceiling. */
  backoffMaxMs: number;
  /** A cache-only `validate()` persists the highest time seen when it advanced this much, bounding how far a clock can be rolled back unnoticed. */
  clockCheckpointMs: number;
  /** Time-out of one request to the service. */
  requestTimeoutMs: number;
  /** A cache lock older than this is taken over (its holder died); proper-lockfile's floor is 2 s. */
  lockStaleMs: number;
}

/**
 * The defaults: 30 days of grace, 1 h clock tolerance, revalidation every 24 h +/- 1 h, never
 * more often than every 5 min, an early check at a plugin load after 1 h without a request,
 * back-off from 1 min to 1 h.
 *
 * @example
 * new License({ projectId, baseUrl, policy: { graceMs: 7 * 24 * 3600_000 } });
 */
export const DEFAULT_POLICY: Readonly<LicensePolicy> = Object.freeze({
  graceMs: 30 * DAY,
  clockToleranceMs: HOUR,
  revalidateIntervalMs: DAY,
  revalidateJitterMs: HOUR,
  minRevalidateIntervalMs: 5 * MINUTE,
  loadCheckQuietMs: HOUR,
  backoffMinMs: MINUTE,
  backoffMaxMs: HOUR,
  clockCheckpointMs: 10 * MINUTE,
  requestTimeoutMs: 10_000,
  lockStaleMs: 10_000,
});

/**
 * Merges overrides into {@link DEFAULT_POLICY}, rejecting anything that is not a finite number >= 0.
 *
 * @example
 * resolvePolicy({ graceMs: 0 }).graceMs; // 0
 */
export function resolvePolicy(overrides: Partial<LicensePolicy> = {}): LicensePolicy {
  const policy: LicensePolicy = { ...DEFAULT_POLICY };
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_POLICY)) {
      throw new LicenseError('invalid_argument', `unknown policy option '${key}'; known options: ${Object.keys(DEFAULT_POLICY).join(', ')}`);
    }
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new LicenseError('invalid_argument', `policy option '${key}' must be a finite number of milliseconds >= 0, got ${String(value)}`);
    }
    (policy as unknown as Record<string, number>)[key] = value;
  }
  if (policy.backoffMaxMs < policy.backoffMinMs) {
    throw new LicenseError('invalid_argument', `policy backoffMaxMs (${policy.backoffMaxMs}) must be >= backoffMinMs (${policy.backoffMinMs})`);
  }
  return policy;
}
