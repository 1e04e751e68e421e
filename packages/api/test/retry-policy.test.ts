import { describe, expect, it } from 'vitest';
import { isConfigError } from '../src/index.js';
import { backoffDelay, createRetryPolicy } from '../src/retry-policy.js';

describe('retry policy', () => {
  it('uses full jitter under an exponential ceiling capped at maxDelayMs', () => {
    const policy = createRetryPolicy({ minDelayMs: 100, maxDelayMs: 1000 }, { random: () => 0.999999 });
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(policy, n, undefined))).toEqual([99, 199, 399, 799, 999, 999]);
    const low = createRetryPolicy({ minDelayMs: 100, maxDelayMs: 1000 }, { random: () => 0 });
    expect(backoffDelay(low, 3, undefined)).toBe(0);
  });

  it('never retries before the wait the service asked for', () => {
    const policy = createRetryPolicy({ minDelayMs: 10, maxDelayMs: 20 }, { random: () => 0.5 });
    expect(backoffDelay(policy, 0, 4_000)).toBe(4_000);
    expect(backoffDelay(policy, 0, 0)).toBe(5);
  });

  it('has documented defaults and `false` turns retries off', () => {
    const d = createRetryPolicy(undefined);
    expect([d.retries, d.minDelayMs, d.maxDelayMs, d.deadlineMs]).toEqual([2, 250, 5000, 30000]);
    expect(createRetryPolicy(false).retries).toBe(0);
  });

  it('rejects nonsense options', () => {
    for (const bad of [{ retries: -1 }, { minDelayMs: Number.NaN }, { minDelayMs: 10, maxDelayMs: 5 }]) {
      let caught: unknown;
      try {
        createRetryPolicy(bad);
      } catch (e) {
        caught = e;
      }
      expect(isConfigError(caught)).toBe(true);
    }
  });
});
