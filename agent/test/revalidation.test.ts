import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient, ManualScheduler, type LicenseState } from '../src/index.js';
import { shortDir, startTestAgent, useTestService } from './helpers.js';

// The agent has no schedule of its own: it checks at the next_check_at the licensing library
// plans, and that plan never locks a user out because a clock is wrong (docs/architecture.md).

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

const { service, cleanups } = useTestService();
afterEach(async () => {
  await service.control.reset();
});

async function agentOn(clock: ManualScheduler, at?: { home: string; socketPath: string }) {
  const dirs = at ? undefined : shortDir();
  const where = at ?? { home: `${dirs!.dir}/home`, socketPath: `${dirs!.dir}/s/agent.sock` };
  if (dirs) cleanups.push(dirs.cleanup);
  const t = await startTestAgent(service, { scheduler: clock, random: () => 0.5 }, where);
  const client = await AgentClient.connect({ socketPath: t.socketPath, connectTimeoutMs: 2000 });
  const stop = async (): Promise<void> => {
    client.close();
    await t.agent.close();
  };
  cleanups.push(stop);
  return { client, where, stop };
}

/** Subscribes (a subscriber is exempt from the idle time-out) and resolves with the first matching change. */
async function changed(client: AgentClient, projectId: string, match: (s: LicenseState) => boolean): Promise<{ next: Promise<LicenseState> }> {
  const sub = await client.subscribe(projectId);
  return { next: new Promise<LicenseState>((resolve) => sub.on('changed', (s: LicenseState) => match(s) && resolve(s))) };
}

describe('background checks follow the library’s plan', () => {
  it('at next_check_at (24 h after the answer), not before', async () => {
    const clock = new ManualScheduler(Date.now());
    const { client } = await agentOn(clock);
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    const activated = await client.activate(projectId, code);
    expect(activated.nextCheckAt!.getTime() - clock.now()).toBe(DAY);
    await service.control.revoke(code);
    const revoked = await changed(client, projectId, (s) => s.reason === 'code_revoked');
    await clock.advance(DAY - MIN);
    expect(await client.check(projectId)).toMatchObject({ valid: true });
    await clock.advance(2 * MIN);
    expect(await revoked.next).toMatchObject({ valid: false, reason: 'code_revoked', source: 'online' });
  });
});

describe('a clock that was ahead and is set right', () => {
  for (const [label, ahead] of [
    ['3 hours', 3 * HOUR],
    ['40 days', 40 * DAY],
  ] as const) {
    it(`${label}: clock_tampered is revalidated at once after a restart, not at the old plan`, async () => {
      const right = Date.now();
      const fast = await agentOn(new ManualScheduler(right + ahead));
      const projectId = service.emulator.projectId;
      await fast.client.activate(projectId, await service.code(2));
      await fast.stop();

      const clock = new ManualScheduler(right);
      const { client } = await agentOn(clock, fast.where);
      const first = await client.check(projectId);
      expect(first).toMatchObject({ valid: false, reason: 'clock_tampered' });
      expect(first.nextCheckAt?.getTime()).toBe(right);
      const cleared = await changed(client, projectId, (s) => s.valid);
      await clock.advance(0);
      expect(await cleared.next).toMatchObject({ valid: true, reason: null, source: 'online' });
      expect((await client.check(projectId)).nextCheckAt!.getTime() - clock.now()).toBe(DAY);
    });
  }
});

describe('a service whose clock runs 40 days ahead', () => {
  it('one 429 pauses the agent at most an hour; then the license is validated online again', async () => {
    const clock = new ManualScheduler(Date.now());
    const { client } = await agentOn(clock);
    const projectId = service.emulator.projectId;
    // 40 days ahead, 20 s into a rate-limit window: the reset is 40 s away on the service's clock
    // (a wait of a second or less would be sat out inside the call, and the answer be online).
    const { now_ms } = await service.control.clock({ advance_ms: 40 * DAY });
    await service.control.clock({ now: Math.floor(now_ms / 60_000) * 60_000 + 20_000 });
    await client.activate(projectId, await service.code(2));
    await service.control.faults({ mode: 'error', status: 429, count: 1 });
    const limited = await client.refresh(projectId);
    expect(limited).toMatchObject({ valid: true, source: 'cache' });
    expect(limited.nextCheckAt!.getTime() - clock.now()).toBeLessThanOrEqual(HOUR);
    const online = await changed(client, projectId, (s) => s.source === 'online');
    await clock.advance(HOUR + MIN);
    expect(await online.next).toMatchObject({ valid: true, source: 'online' });
    // The one budget was paused at most that hour too: a user call goes through.
    expect(await client.refresh(projectId)).toMatchObject({ valid: true, source: 'online' });
  });
});
