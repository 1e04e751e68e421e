import type { LicensePolicy } from './policy.js';

/**
 * Every wait and back-off of revalidation, for the library and the agent alike: the agent
 * schedules at the `nextCheckAt` these functions produce and has no formula of its own. Waits
 * the service asks for arrive already relative and capped (`@plugin-license/api`'s
 * `serviceWaitMs`).
 */

/** A source of uniform numbers in [0, 1); injectable so schedules are testable. */
export type Random = () => number;

/** The times of a stored license that the schedule reads (epoch ms of the injected clock). */
export interface ScheduleState {
  /** Last definitive answer of the service. */
  answeredAt: number | null;
  /** Last request, answered or not. */
  attemptedAt: number | null;
  /** Consecutive transport failures since the last answer. */
  failures: number;
  /** No request before this time (back-off, or the wait the service asked for). */
  retryAt: number | null;
  /** When the next background revalidation is due. */
  nextCheckAt: number | null;
}

/**
 * Back-off after `failures` consecutive transport failures (1 → backoffMinMs, doubling, capped
 * at backoffMaxMs), with "equal jitter": between half and all of that step.
 *
 * @example
 * backoffDelay(DEFAULT_POLICY, 3, () => 1); // 240_000 (4 min)
 */
export function backoffDelay(policy: Pick<LicensePolicy, 'backoffMinMs' | 'backoffMaxMs'>, failures: number, random: Random = Math.random): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 52);
  const step = Math.min(policy.backoffMaxMs, policy.backoffMinMs * 2 ** exponent);
  return Math.round(step / 2 + (step / 2) * clamp01(random()));
}

/**
 * Delay until the next scheduled revalidation after an answer from the service:
 * revalidateIntervalMs plus or minus revalidateJitterMs, never below minRevalidateIntervalMs.
 *
 * @example
 * revalidationDelay(DEFAULT_POLICY, () => 0.5); // 86_400_000 (24 h)
 */
export function revalidationDelay(
  policy: Pick<LicensePolicy, 'revalidateIntervalMs' | 'revalidateJitterMs' | 'minRevalidateIntervalMs'>,
  random: Random = Math.random,
): number {
  const jitter = (clamp01(random()) * 2 - 1) * policy.revalidateJitterMs;
  return Math.max(policy.minRevalidateIntervalMs, Math.round(policy.revalidateIntervalMs + jitter));
}

/**
 * When to try again after the `failures`-th consecutive transport failure at `now`: the
 * back-off, or the wait the service asked for (`serviceWaitMs`, relative and capped) if longer.
 *
 * @example
 * retryAfterFailure(DEFAULT_POLICY, now, 1, 30_000, () => 1); // now + 60_000
 */
export function retryAfterFailure(
  policy: Pick<LicensePolicy, 'backoffMinMs' | 'backoffMaxMs'>,
  now: number,
  failures: number,
  serviceWaitMs: number | undefined,
  random: Random = Math.random,
): number {
  return now + Math.max(backoffDelay(policy, failures, random), serviceWaitMs ?? 0);
}

/**
 * The earliest time `validate()` may call the service again without `force`, epoch ms: the
 * minimum interval after the last answer, and `retryAt`, whichever is later. A clock that went
 * back behind the last attempt (or the last answer) makes those times unmeasurable, so they hold nothing back.
 *
 * @example
 * earliestRequestAt(DEFAULT_POLICY, { answeredAt: now, attemptedAt: now, failures: 0, retryAt: null, nextCheckAt: null }, now); // now + 5 min
 */
export function earliestRequestAt(policy: Pick<LicensePolicy, 'minRevalidateIntervalMs'>, state: ScheduleState, now: number): number {
  if (state.attemptedAt !== null && now < state.attemptedAt) return now;
  let at = 0;
  // An answer dated after now was stamped by a clock that has since gone back: not a floor.
  if (state.answeredAt !== null && state.answeredAt <= now) at = state.answeredAt + policy.minRevalidateIntervalMs;
  if (state.retryAt !== null) at = Math.max(at, state.retryAt);
  return at;
}

/**
 * When the service should next be asked, epoch ms: the stored plan; but a license whose clock
 * reads as tampered is due at once (within the minimum interval and any back-off), so an
 * online success can clear it, and a clock set back behind the last attempt is due now.
 *
 * @example
 * revalidationDueAt(DEFAULT_POLICY, state, Date.now(), status.reason === 'clock_tampered');
 */
export function revalidationDueAt(policy: Pick<LicensePolicy, 'minRevalidateIntervalMs'>, state: ScheduleState, now: number, tampered: boolean): number | null {
  if (state.attemptedAt !== null && now < state.attemptedAt) return now;
  if (tampered) return Math.max(now, earliestRequestAt(policy, state, now));
  return state.nextCheckAt;
}

/** What {@link loadCheckDue} reads of a stored license besides its schedule. */
export interface LoadCheckState extends ScheduleState {
  /** Stored as active; an answer that made it invalid (revoked, not found) is not asked again for a load. */
  active: boolean;
  /** Rests on an imported offline activation: a load never takes it online. */
  offline: boolean;
  /** When this process last sent a validation for it (one that got no usable answer stamps nothing on disk). */
  askedAt: number | null;
}

/**
 * Whether a plugin load should prompt one early online check now: the license is active and was
 * activated online, nobody asked the service about it (answered or not: this process, another
 * one, a scheduled check, the agent's start) for `loadCheckQuietMs`, and a request may go now
 * (the minimum interval, the back-off, the wait the service asked for). A clock set back behind
 * the last request says no: the plan already checks such a license at once.
 *
 * @example
 * loadCheckDue(DEFAULT_POLICY, { ...state, active: true, offline: false, askedAt: null }, now); // true 1 h after the last request
 */
export function loadCheckDue(policy: Pick<LicensePolicy, 'loadCheckQuietMs' | 'minRevalidateIntervalMs'>, state: LoadCheckState, now: number): boolean {
  if (!state.active || state.offline) return false;
  const last = Math.max(state.answeredAt ?? -Infinity, state.attemptedAt ?? -Infinity, state.askedAt ?? -Infinity);
  if (now < last || now - last < policy.loadCheckQuietMs) return false;
  return now >= earliestRequestAt(policy, state, now);
}

function clamp01(n: number): number {
  return n < 0 ? 0 : n > 1 ? 1 : n;
}
