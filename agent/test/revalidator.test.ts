import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '@plugin-license/licensing';
import { Revalidator, type Outcome } from '../src/revalidator.js';
import { ManualScheduler } from '../src/scheduler.js';
import { ServiceBudget } from '../src/service-budget.js';
import type { LicenseStatusLike } from '../src/license-handle.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-11-22T10:00:00Z');

function status(projectId: string, over: Partial<LicenseStatusLike> = {}): LicenseStatusLike {
  return { projectId, valid: true, reason: null, source: 'cache', codeHint: 'abcd…wxyz', activations: 1, maxActivations: 2, validatedAt: new Date(T0), graceUntil: new Date(T0 + 30 * DAY), nextCheckAt: null, ...over };
}

function setup(outcome: (id: string, n: number) => Outcome = () => ({ kind: 'answered' }), perMinute = 30, reserve = 10) {
  const clock = new ManualScheduler(T0);
  const budget = new ServiceBudget({ perMinute, reserve, now: () => clock.now() });
  const calls: Array<{ id: string; at: number }> = [];
  const graces: Array<{ id: string; at: number }> = [];
  const r = new Revalidator({
    scheduler: clock,
    budget,
    policy: DEFAULT_POLICY,
    random: () => 0.5,
    validate: async (id) => {
      calls.push({ id, at: clock.now() });
      return outcome(id, calls.filter((c) => c.id === id).length);
    },
    onGraceDeadline: (id) => graces.push({ id, at: clock.now() }),
  });
  return { clock, budget, calls, graces, r };
}

describe('Revalidator', () => {
  it('checks every 24 h (with jitter) after an answer, and not at all without a code', async () => {
    const { clock, calls, r } = setup();
    r.track('a', status('a', { nextCheckAt: new Date(T0 + DAY) }));
    r.track('none', status('none', { codeHint: null, valid: false, reason: 'not_activated', graceUntil: null, validatedAt: null }));
    expect(r.nextCheckAt('a')?.getTime()).toBe(T0 + DAY);
    expect(r.nextCheckAt('none')).toBeNull();
    await clock.advance(DAY);
    expect(calls).toEqual([{ id: 'a', at: T0 + DAY }]);
    // random 0.5 → no jitter offset: the next check is 24 h later.
    expect(r.nextCheckAt('a')?.getTime()).toBe(T0 + 2 * DAY);
    r.stop();
  });

  it('spreads the 24 h rhythm by up to ±1 h of jitter', async () => {
    for (const [random, offset] of [
      [0, -HOUR],
      [0.25, -HOUR / 2],
      [0.75, HOUR / 2],
    ] as const) {
      const clock = new ManualScheduler(T0);
      const r = new Revalidator({ scheduler: clock, budget: new ServiceBudget({ perMinute: 30, reserve: 5, now: () => clock.now() }), policy: DEFAULT_POLICY, random: () => random, validate: async () => ({ kind: 'answered' }), onGraceDeadline: () => undefined });
      // No plan from the library: the agent plans from the last answer, and after its own answers.
      r.track('a', status('a', { validatedAt: new Date(T0), nextCheckAt: null }));
      expect(r.nextCheckAt('a')?.getTime()).toBe(T0 + DAY + offset);
      await clock.advance(DAY + offset);
      expect(r.nextCheckAt('a')?.getTime()).toBe(T0 + 2 * DAY + 2 * offset);
      r.stop();
    }
  });

  it('keeps the whole agent under its budget however many projects are due', async () => {
    const { clock, calls, r } = setup(() => ({ kind: 'answered' }), 30, 5);
    for (let i = 0; i < 200; i++) r.track(`p${i}`, status(`p${i}`, { nextCheckAt: new Date(T0) }));
    await clock.advance(10 * MIN);
    expect(calls.length).toBe(200);
    // Any 60-second window holds at most burst (15) + a minute of refill (30) = 45, under the service's 60.
    for (const c of calls) {
      const inWindow = calls.filter((d) => d.at >= c.at && d.at < c.at + MIN).length;
      expect(inWindow).toBeLessThanOrEqual(45);
    }
    // Background leaves the reserve for users: the first burst is 15 - 5 = 10 calls.
    expect(calls.filter((c) => c.at === T0).length).toBe(10);
    r.stop();
  });

  it('backs off 1 min → 1 h after failures, then returns to the 24 h rhythm', async () => {
    const { clock, calls, r } = setup((_, n) => (n <= 8 ? { kind: 'failed' } : { kind: 'answered' }));
    r.track('a', status('a', { nextCheckAt: new Date(T0) }));
    await clock.advance(6 * HOUR);
    const gaps = calls.slice(1).map((c, i) => c.at - (calls[i] as { at: number }).at);
    // Equal jitter with random 0.5: 3/4 of 1, 2, 4, … minutes, capped at 1 h.
    expect(gaps).toEqual([0.75 * MIN, 1.5 * MIN, 3 * MIN, 6 * MIN, 12 * MIN, 24 * MIN, 45 * MIN, 45 * MIN]);
    expect(r.nextCheckAt('a')?.getTime()).toBe((calls.at(-1) as { at: number }).at + DAY);
    r.stop();
  });

  it('honours the service retry time and pauses the whole budget after a 429', async () => {
    const retryAt = T0 + 2 * HOUR;
    const { clock, budget, calls, r } = setup((id, n) => (id === 'a' && n === 1 ? { kind: 'rate_limited', retryAt } : { kind: 'answered' }));
    r.track('a', status('a', { nextCheckAt: new Date(T0) }));
    await clock.advance(1);
    expect(r.nextCheckAt('a')?.getTime()).toBe(retryAt);
    expect(budget.take('user')).toBe(false);
    r.track('b', status('b', { nextCheckAt: new Date(T0 + MIN) }));
    await clock.advance(HOUR);
    expect(calls.map((c) => c.id)).toEqual(['a']);
    await clock.advance(2 * HOUR);
    expect(calls.filter((c) => c.at >= retryAt).map((c) => c.id).sort()).toEqual(['a', 'b']);
    r.stop();
  });

  it('never checks a code within 5 min of the last attempt', async () => {
    const { clock, calls, r } = setup();
    r.track('a', status('a', { nextCheckAt: new Date(T0) }));
    await clock.advance(1);
    r.record('a', { kind: 'answered', nextAt: T0 + MIN }, status('a'));
    expect(r.nextCheckAt('a')?.getTime()).toBe(T0 + 1 + 5 * MIN);
    await clock.advance(10 * MIN);
    expect(calls.map((c) => c.at)).toEqual([T0, T0 + 1 + 5 * MIN]);
    r.stop();
  });

  it('arms a timer at the grace deadline', async () => {
    const { clock, graces, r } = setup();
    r.track('a', status('a', { nextCheckAt: new Date(T0 + 60 * DAY), graceUntil: new Date(T0 + 3 * DAY) }));
    await clock.advance(3 * DAY);
    expect(graces).toEqual([]);
    await clock.advance(1);
    expect(graces).toEqual([{ id: 'a', at: T0 + 3 * DAY + 1 }]);
    r.stop();
  });
});
