import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_POLICY, earliestRequestAt, loadCheckDue, resolvePolicy, retryAfterFailure, revalidationDelay, revalidationDueAt, type LoadCheckState, type ScheduleState } from '../src/index.js';

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
      loadCheckQuietMs: HOUR,
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

  const now = 1_000_000_000_000;
  const state = (over: Partial<ScheduleState>): ScheduleState => ({ answeredAt: null, attemptedAt: null, failures: 0, retryAt: null, nextCheckAt: null, ...over });

  it('retryAfterFailure: the back-off, or the wait the service asked for when longer', () => {
    expect(retryAfterFailure(DEFAULT_POLICY, now, 3, undefined, () => 1)).toBe(now + 4 * MIN);
    expect(retryAfterFailure(DEFAULT_POLICY, now, 1, 30 * MIN, () => 1)).toBe(now + 30 * MIN);
  });

  it('earliestRequestAt: the minimum interval after an answer, or retryAt if later', () => {
    expect(earliestRequestAt(DEFAULT_POLICY, state({ answeredAt: 0, attemptedAt: 0 }), now)).toBe(5 * MIN);
    expect(earliestRequestAt(DEFAULT_POLICY, state({ answeredAt: 0, attemptedAt: 0, retryAt: HOUR }), now)).toBe(HOUR);
    expect(earliestRequestAt(DEFAULT_POLICY, state({}), now)).toBe(0);
  });

  it('earliestRequestAt: times stamped by a clock that has since gone back hold nothing back', () => {
    // Answered with the clock 40 days fast; the clock is right now.
    const fast = now + 40 * 24 * HOUR;
    expect(earliestRequestAt(DEFAULT_POLICY, state({ answeredAt: fast, attemptedAt: fast, retryAt: fast + HOUR }), now)).toBe(now);
    // Then one attempt failed with the right clock: only its back-off counts, not the fast answer.
    expect(earliestRequestAt(DEFAULT_POLICY, state({ answeredAt: fast, attemptedAt: now, failures: 1, retryAt: now + MIN }), now)).toBe(now + MIN);
  });

  it('revalidationDueAt: the stored plan, but at once for a tampered clock or a clock set back', () => {
    const answered = state({ answeredAt: now - HOUR, attemptedAt: now - HOUR, nextCheckAt: now + 23 * HOUR });
    expect(revalidationDueAt(DEFAULT_POLICY, answered, now, false)).toBe(now + 23 * HOUR);
    expect(revalidationDueAt(DEFAULT_POLICY, answered, now, true)).toBe(now);
    // Tampered but asked a minute ago: within the 5-minute floor.
    const recent = state({ answeredAt: now - MIN, attemptedAt: now - MIN, nextCheckAt: now + 24 * HOUR });
    expect(revalidationDueAt(DEFAULT_POLICY, recent, now, true)).toBe(now + 4 * MIN);
    // The clock went back 3 hours behind the last attempt: due now, whatever the plan said.
    const ahead = state({ answeredAt: now + 3 * HOUR, attemptedAt: now + 3 * HOUR, nextCheckAt: now + 27 * HOUR });
    expect(revalidationDueAt(DEFAULT_POLICY, ahead, now, false)).toBe(now);
  });
  it('loadCheckDue: a load prompts a check only after the quiet time, never offline, never held by the back-off', () => {
    const load = (over: Partial<LoadCheckState>): LoadCheckState => ({ ...state({}), active: true, offline: false, askedAt: null, ...over });
    const quiet = { answeredAt: now - HOUR, attemptedAt: now - HOUR, nextCheckAt: now + 23 * HOUR };
    const table: Array<[string, LoadCheckState, boolean]> = [
      ['answered exactly the quiet time ago', load(quiet), true],
      ['answered a day ago (overdue plan)', load({ answeredAt: now - 25 * HOUR, attemptedAt: now - 25 * HOUR }), true],
      ['never stamped (no answer on record)', load({}), true],
      ['answered a millisecond less than the quiet time ago', load({ answeredAt: now - HOUR + 1, attemptedAt: now - HOUR + 1 }), false],
      ['answered long ago, but an attempt failed 10 min ago', load({ answeredAt: now - 5 * HOUR, attemptedAt: now - 10 * MIN, failures: 1, retryAt: now - 9 * MIN }), false],
      ['answered long ago, but this process asked 10 min ago (no usable answer)', load({ ...quiet, askedAt: now - 10 * MIN }), false],
      ['quiet, but the back-off holds requests for a minute more', load({ ...quiet, failures: 7, retryAt: now + MIN }), false],
      ['quiet, and the back-off is over', load({ ...quiet, failures: 7, retryAt: now }), true],
      ['an offline activation', load({ ...quiet, offline: true }), false],
      ['revoked (stored invalid)', load({ ...quiet, active: false }), false],
      ['the clock went back behind the last attempt (the plan checks at once)', load({ answeredAt: now + 3 * HOUR, attemptedAt: now + 3 * HOUR }), false],
      ['a wild last attempt far in the future', load({ answeredAt: now - HOUR, attemptedAt: Number.MAX_SAFE_INTEGER }), false],
    ];
    for (const [label, input, due] of table) expect([label, loadCheckDue(DEFAULT_POLICY, input, now)]).toEqual([label, due]);
    // A shorter quiet time never goes under the minimum interval between requests.
    const eager = { ...DEFAULT_POLICY, loadCheckQuietMs: 0 };
    expect(loadCheckDue(eager, load({ answeredAt: now - MIN, attemptedAt: now - MIN }), now)).toBe(false);
    expect(loadCheckDue(eager, load({ answeredAt: now - 5 * MIN, attemptedAt: now - 5 * MIN }), now)).toBe(true);
  });
});
