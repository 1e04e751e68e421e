import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_POLICY, earliestRequestAt, nextRevalidation, resolvePolicy, revalidationDelay } from '../src/index.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('policy', () => {
  it('has the documented defaults and merges overrides', () => {
    expect(DEFAULT_POLICY).toMatchObject({
      graceMs: 30 * 24 * HOUR,
      clockToleranceMs: HOUR,
      revalidateIntervalMs: 24 * HOUR,
      minRevalidateIntervalMs: 5 * MIN,
      backoffMinMs: MIN,
      backoffMaxMs: HOUR,
    });
    expect(Object.isFrozen(DEFAULT_POLICY)).toBe(true);
    expect(resolvePolicy({ graceMs: 0 }).graceMs).toBe(0);
    expect(() => resolvePolicy({ backoffMinMs: 10, backoffMaxMs: 5 })).toThrow(/backoffMaxMs/);
    expect(() => resolvePolicy({ graceMs: Number.NaN })).toThrow(/graceMs/);
  });
});

describe('schedule helpers', () => {
  it('backoffDelay doubles from the minimum, caps at the maximum, and jitters between half and all', () => {
    const full = (n: number) => backoffDelay(DEFAULT_POLICY, n, () => 1);
    expect([0, 1, 2, 3, 4, 5, 6, 7, 8, 100].map(full)).toEqual([0, 1, 2, 4, 8, 16, 32, 60, 60, 60].map((m) => m * MIN));
    expect(backoffDelay(DEFAULT_POLICY, 1, () => 0)).toBe(MIN / 2);
  });

  it('revalidationDelay spreads around the interval and never goes below the minimum', () => {
    expect(revalidationDelay(DEFAULT_POLICY, () => 0)).toBe(23 * HOUR);
    expect(revalidationDelay(DEFAULT_POLICY, () => 0.5)).toBe(24 * HOUR);
    expect(revalidationDelay(DEFAULT_POLICY, () => 1)).toBe(25 * HOUR);
    expect(revalidationDelay({ ...DEFAULT_POLICY, revalidateIntervalMs: MIN, revalidateJitterMs: 0 }, () => 0)).toBe(5 * MIN);
  });

  it('nextRevalidation: interval after an answer, back-off after failures, never before retryAt', () => {
    const now = 1_000_000_000_000;
    const random = () => 1;
    expect(nextRevalidation({ policy: DEFAULT_POLICY, now, failures: 0, lastAnswerAt: now, lastAttemptAt: now, random })).toBe(now + 25 * HOUR);
    expect(nextRevalidation({ policy: DEFAULT_POLICY, now, failures: 3, lastAttemptAt: now, random })).toBe(now + 4 * MIN);
    expect(nextRevalidation({ policy: DEFAULT_POLICY, now, failures: 1, lastAttemptAt: now, retryAt: now + 30 * MIN, random })).toBe(now + 30 * MIN);
    expect(nextRevalidation({ policy: DEFAULT_POLICY, now, failures: 0, random })).toBe(now);
  });

  it('earliestRequestAt: the minimum interval after an answer, or retryAt if later', () => {
    expect(earliestRequestAt({ policy: DEFAULT_POLICY, lastAnswerAt: 0 })).toBe(5 * MIN);
    expect(earliestRequestAt({ policy: DEFAULT_POLICY, lastAnswerAt: 0, retryAt: HOUR })).toBe(HOUR);
    expect(earliestRequestAt({ policy: DEFAULT_POLICY })).toBe(0);
  });
});
