import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cacheFilePath, type License, type LicenseStatus } from '../src/index.js';
import { startService, useLicenses } from './helpers.js';

// Clocks that are wrong, here or at the service, never lock a user out while the service answers
// (docs/architecture.md, licensing semantics).

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const { service, home, clock, license } = useLicenses();

function storedNextCheckAt(): number {
  const text = readFileSync(cacheFilePath(service.emulator.projectId, { home: home.dir }), 'utf8');
  return (JSON.parse(text) as { license: { nextCheckAt: number } }).license.nextCheckAt;
}

describe('a clock that was ahead and is set right', () => {
  for (const [label, ahead] of [
    ['3 hours (a dual-boot machine before network time)', 3 * HOUR],
    ['40 days', 40 * DAY],
  ] as const) {
    it(`${label}: clock_tampered is due for revalidation at once, and an online success clears it, across restarts`, async () => {
      const right = clock.now();
      clock.set(right + ahead);
      const code = await service.code();
      await license().activate(code);

      clock.set(right);
      const l = license();
      expect(l.check()).toMatchObject({ valid: false, reason: 'clock_tampered' });
      expect(l.check().nextCheckAt?.getTime()).toBe(right);
      // A restart sees the same: due now, not at the plan made with the clock that was ahead.
      expect(license().check().nextCheckAt?.getTime()).toBe(right);

      const ok = await l.validate();
      expect(ok).toMatchObject({ valid: true, reason: null, source: 'online' });
      expect(ok.nextCheckAt!.getTime() - right).toBeLessThanOrEqual(25 * HOUR);
      expect(license().check()).toMatchObject({ valid: true, reason: null });
    });
  }
});

/**
 * A forced validation the service answers 429, with its clock (`serviceNow`, in its own time) put
 * 20 s into a rate-limit window, so the reset is 40 s away: a window about to end would let the
 * call wait it out and succeed (a test that failed whenever it ran in the last second of a minute).
 */
async function validateRateLimited(l: License, serviceNow: number): Promise<LicenseStatus> {
  await service.control.clock({ now: Math.floor(serviceNow / 60_000) * 60_000 + 20_000 });
  await service.control.faults({ mode: 'error', status: 429, count: 1 });
  return l.validate({ force: true });
}

describe('a wait the service asks for', () => {
  it('is read against its Date header when its clock runs 40 days ahead, capped, and never persisted beyond an hour', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    const { now_ms } = await service.control.clock({ advance_ms: 40 * DAY });
    const limited = await validateRateLimited(l, now_ms);
    expect(limited).toMatchObject({ valid: true, source: 'cache' });
    expect(limited.nextCheckAt!.getTime() - clock.now()).toBeLessThanOrEqual(HOUR);
    expect(storedNextCheckAt() - clock.now()).toBeLessThanOrEqual(HOUR);

    // The service is healthy again: the license is validated online within that hour.
    clock.advance(HOUR);
    expect(await l.validate()).toMatchObject({ valid: true, source: 'online' });
  });

  it('is the same when this machine’s clock runs 40 days slow', async () => {
    clock.set(Date.now() - 40 * DAY);
    const code = await service.code();
    const l = license();
    await l.activate(code);
    const { now_ms } = await service.control.clock({ advance_ms: 0 });
    const limited = await validateRateLimited(l, now_ms);
    expect(limited).toMatchObject({ valid: true, source: 'cache' });
    expect(limited.nextCheckAt!.getTime() - clock.now()).toBeLessThanOrEqual(HOUR);
    expect(storedNextCheckAt() - clock.now()).toBeLessThanOrEqual(HOUR);
  });

  it('a window with no requests left pauses at most until its reset, read the same way', async () => {
    const limited = await startService({ rateLimits: { activation: 1 } });
    try {
      await limited.control.clock({ advance_ms: 40 * DAY });
      const code = await limited.code();
      const l = license({ projectId: limited.emulator.projectId, baseUrl: limited.emulator.baseUrl, dispatcher: limited.dispatcher });
      const status = await l.activate(code); // the window's only request: remaining 0
      expect(status.valid).toBe(true);
      const text = readFileSync(cacheFilePath(limited.emulator.projectId, { home: home.dir }), 'utf8');
      const retryAt = (JSON.parse(text) as { license: { retryAt: number | null } }).license.retryAt;
      expect(retryAt).not.toBeNull();
      expect(retryAt! - clock.now()).toBeGreaterThan(0);
      expect(retryAt! - clock.now()).toBeLessThanOrEqual(60_000);
    } finally {
      await limited.close();
    }
  });
});
