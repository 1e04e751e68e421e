import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startService, type control } from '@plugin-license/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient, type LicenseState } from '../src/index.js';
import { startTestAgent } from './helpers.js';

// `refresh` is the explicit "ask the service now": it passes the library's 5-minute floor, shares
// one request among concurrent callers, and answers from the cache when the service (or the
// agent's one budget) says wait. Requests reaching the service are counted with a zero-latency
// fault whose `remaining` the emulator decrements for every service request.

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setUp(rateLimits: { activation: number }): Promise<{ emulator: Emulator; client: AgentClient; code: string; ctl: ReturnType<typeof control> }> {
  const service = await startService(startEmulator, { rateLimits });
  cleanups.push(() => service.close());
  const { emulator, control: ctl } = service;
  const t = await startTestAgent(service);
  cleanups.push(() => t.cleanup());
  const client = await AgentClient.connect({ socketPath: t.socketPath, connectTimeoutMs: 2000 });
  cleanups.push(() => client.close());
  return { emulator, client, code: await service.code(2), ctl };
}

async function countRequests(ctl: ReturnType<typeof control>, fn: () => Promise<unknown>): Promise<number> {
  const start = 1_000_000;
  await ctl.faults({ mode: 'latency', latency_ms: 0, count: start });
  await fn();
  const state = (await ctl.state()) as { faults: { remaining: number | null; mode: string } };
  await ctl.faults({ mode: 'none' });
  return state.faults.mode === 'none' ? start : start - (state.faults.remaining ?? 0);
}

describe('refresh', () => {
  it('asks the service at once, inside the 5-minute floor: a revocation right after activation is seen and pushed', async () => {
    const { emulator, client, code, ctl } = await setUp({ activation: 100_000 });
    await client.activate(emulator.projectId, code);
    const sub = await client.subscribe(emulator.projectId);
    const pushed = new Promise<LicenseState>((resolve) => sub.on('changed', (s: LicenseState) => s.reason === 'code_revoked' && resolve(s)));
    await ctl.revoke(code);
    expect(await client.refresh(emulator.projectId)).toMatchObject({ valid: false, reason: 'code_revoked', source: 'online' });
    expect(await pushed).toMatchObject({ valid: false, reason: 'code_revoked' });
    expect(await client.check(emulator.projectId)).toMatchObject({ valid: false, reason: 'code_revoked' });
  });

  it('offline: answers from the cache, valid within grace, source cache', async () => {
    const { emulator, client, code, ctl } = await setUp({ activation: 100_000 });
    await client.activate(emulator.projectId, code);
    await ctl.faults({ mode: 'offline' });
    const s = await client.refresh(emulator.projectId);
    expect(s).toMatchObject({ valid: true, reason: null, source: 'cache' });
    expect(s.graceUntil!.getTime()).toBeGreaterThan(Date.now() + 29 * 24 * 3600_000);
  });

  it('many concurrent refreshes of one project share one request', async () => {
    const { emulator, client, code, ctl } = await setUp({ activation: 100_000 });
    await client.activate(emulator.projectId, code);
    const other = await AgentClient.connect({ socketPath: client.socketPath, connectTimeoutMs: 2000 });
    cleanups.push(() => other.close());
    let answers: LicenseState[] = [];
    const n = await countRequests(ctl, async () => {
      answers = await Promise.all([...Array.from({ length: 8 }, () => client.refresh(emulator.projectId)), ...Array.from({ length: 8 }, () => other.refresh(emulator.projectId))]);
    });
    expect(answers).toHaveLength(16);
    for (const a of answers) expect(a).toMatchObject({ valid: true, source: 'online' });
    expect(n).toBe(1);
  });

  it("the service's last request of the window pauses the agent's one budget: refresh then answers from the cache without a request", async () => {
    // activate (1) + refresh (2) use the window of 2; the answer says 0 remaining.
    const { emulator, client, code, ctl } = await setUp({ activation: 2 });
    await client.activate(emulator.projectId, code);
    expect(await client.refresh(emulator.projectId)).toMatchObject({ valid: true, source: 'online' });
    let s: LicenseState | undefined;
    const n = await countRequests(ctl, async () => {
      s = await client.refresh(emulator.projectId);
    });
    expect(n).toBe(0);
    expect(s).toMatchObject({ valid: true, reason: null });
  });
});
