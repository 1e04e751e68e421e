import type { LicensePolicy } from './policy.js';

/** A source of uniform numbers in [0, 1); injectable so schedules are testable. */
export type Random = () => number;

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

export interface RevalidationInput {
  policy: LicensePolicy;
  /** Current time, epoch ms. */
  now: number;
  /** Consecutive transport failures since the last answer from the service. */
  failures: number;
  /** When the service last answered (definitively) for this code, epoch ms. */
  lastAnswerAt?: number | null;
  /** When the last request was attempted (answered or not), epoch ms. */
  lastAttemptAt?: number | null;
  /** Earliest time the service allows another request (429 / X-RateLimit-Reset), epoch ms. */
  retryAt?: number | null;
  random?: Random;
}

/**
 * When to call the service next, epoch ms: after failures, the back-off (never before
 * `retryAt`); otherwise the jittered interval after the last answer; never earlier than
 * minRevalidateIntervalMs after the last attempt. Pure: the agent calls it to schedule.
 *
 * @example
 * nextRevalidation({ policy: DEFAULT_POLICY, now, failures: 2, lastAttemptAt: now, random: () => 1 }); // now + 2 min
 */
export function nextRevalidation(input: RevalidationInput): number {
  const { policy, now, failures } = input;
  const random = input.random ?? Math.random;
  const lastAttemptAt = input.lastAttemptAt ?? null;
  let next: number;
  if (failures > 0) {
    next = (lastAttemptAt ?? now) + backoffDelay(policy, failures, random);
  } else if (input.lastAnswerAt != null) {
    next = input.lastAnswerAt + revalidationDelay(policy, random);
  } else {
    next = now;
  }
  if (input.retryAt != null) next = Math.max(next, input.retryAt);
  if (lastAttemptAt !== null && failures === 0) next = Math.max(next, lastAttemptAt + policy.minRevalidateIntervalMs);
  return next;
}

/**
 * The earliest time `validate()` may call the service again without `force`, epoch ms: the
 * minimum interval after the last answer, and `retryAt` (back-off after failures or the
 * service's rate-limit reset), whichever is later.
 *
 * @example
 * earliestRequestAt({ policy: DEFAULT_POLICY, lastAnswerAt: now }); // now + 5 min
 */
export function earliestRequestAt(input: {
  policy: Pick<LicensePolicy, 'minRevalidateIntervalMs'>;
  lastAnswerAt?: number | null;
  retryAt?: number | null;
}): number {
  let at = 0;
  if (input.lastAnswerAt != null) at = input.lastAnswerAt + input.policy.minRevalidateIntervalMs;
  if (input.retryAt != null) at = Math.max(at, input.retryAt);
  return at;
}

function clamp01(n: number): number {
  return n < 0 ? 0 : n > 1 ? 1 : n;
}
