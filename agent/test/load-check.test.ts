// When a revocation reaches a plugin: a plugin load (a client's first `check` or `subscribe` of a
// project) after an hour with no request to the service about it prompts one early check in the
// background. Real agent on a real socket, the emulator as the HTTP service, time injected
// (ManualScheduler); requests are counted at the emulator.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answerOfflineRequest, DEFAULT_POLICY, offlineText } from '@plugin-license/licensing';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startService as startSharedService } from '@plugin-license/test-utils';
import { AgentClient, ManualScheduler, type LicenseState } from '../src/index.js';
import { shortDir, startTestAgent, UNKNOWN_PROJECT, type Cleanup, type TestService } from './helpers.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const QUIET = DEFAULT_POLICY.loadCheckQuietMs;

// The emulator's own clock stands still, so its one-minute rate-limit window never rolls over
// and its count of activation-endpoint requests is every request the agent made (the agent's
// time is its ManualScheduler; the emulator's clock only dates answers).
const service = {} as TestService;
const cleanups: Cleanup[] = [];
beforeAll(async () => {
  const frozen = Date.now();
  Object.assign(service, await startSharedService<Emulator>((o) => startEmulator({ ...o, now: () => frozen })));
});
afterAll(async () => {
  await service.close?.();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await service.control.reset();
});

/** Requests the agents made to the activation endpoints (activate, validate, status), as the emulator counted them. */
async function requests(): Promise<number> {
  const state = (await service.control.state()) as { rate_limits: { windows: Record<string, { count: number }> } };
  return Object.entries(state.rate_limits.windows)
    .filter(([key]) => key.startsWith('activation|ip:'))
    .reduce((n, [, w]) => n + w.count, 0);
}

async function agentOn(clock: ManualScheduler, at?: { home: string; socketPath: string }) {
  const dirs = at ? undefined : shortDir();
  const where = at ?? { home: `${dirs!.dir}/home`, socketPath: `${dirs!.dir}/s/agent.sock` };
  if (dirs) cleanups.push(dirs.cleanup);
  const t = await startTestAgent(service, { scheduler: clock, random: () => 0.5 }, where);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await t.agent.close();
  };
  cleanups.push(stop);
  /** A plugin host: a new connection that loads the project (`check`, as plc::Monitor does first). */
  const load = async (projectId: string, how: 'check' | 'subscribe' = 'check'): Promise<{ client: AgentClient; state: LicenseState }> => {
    const client = await AgentClient.connect({ socketPath: where.socketPath, connectTimeoutMs: 2000 });
    cleanups.push(() => client.close());
    if (how === 'subscribe') await client.subscribe(projectId);
    return { client, state: await client.check(projectId) };
  };
  return { where, load, stop };
}

/** The open plugin: subscribed (exempt from the idle time-out), collecting every change. */
async function openPlugin(client: AgentClient, projectId: string) {
  const changes: LicenseState[] = [];
  const sub = await client.subscribe(projectId);
  sub.on('changed', (s: LicenseState) => changes.push(s));
  const next = (match: (s: LicenseState) => boolean): Promise<LicenseState> =>
    new Promise((resolve) => {
      const found = changes.find(match);
      if (found) return resolve(found);
      sub.on('changed', (s: LicenseState) => match(s) && resolve(s));
    });
  return { changes, next };
}

/** An agent on a manual clock, and the open plugin: activated online, subscribed, collecting changes. */
async function activatedPlugin() {
  const clock = new ManualScheduler(Date.now());
  const { load } = await agentOn(clock);
  const projectId = service.emulator.projectId;
  const code = await service.code(2);
  const { client: open } = await load(projectId);
  expect(await open.activate(projectId, code)).toMatchObject({ valid: true, source: 'online' });
  const plugin = await openPlugin(open, projectId);
  return { clock, load, projectId, code, open, plugin };
}

/**
 * After this resolves, every request the agent started for `projectId` before it has been
 * answered: a refresh is one more request, queued behind any check of the project in flight.
 */
async function settled(client: AgentClient, projectId: string): Promise<void> {
  await client.refresh(projectId);
}

describe('a plugin load after a quiet hour prompts one early check', () => {
  it('a revocation made after the last check reaches the open plugin when another loads after the quiet time, not before', async () => {
    const { clock, load, projectId, code, plugin } = await activatedPlugin();
    await service.control.revoke(code);
    const before = await requests();

    // Within the quiet time: a load is answered from memory and asks nothing.
    await clock.advance(QUIET - MIN);
    expect((await load(projectId)).state).toMatchObject({ valid: true });
    expect((await load(projectId.toUpperCase(), 'subscribe')).state).toMatchObject({ valid: true });

    // Past it: the load is answered at once from memory (still valid), and the check it
    // prompted tells every open instance within the agent's push.
    await clock.advance(2 * MIN);
    expect((await load(projectId)).state).toMatchObject({ valid: true, reason: null });
    expect(await plugin.next((s) => !s.valid)).toMatchObject({ valid: false, reason: 'code_revoked', source: 'online' });
    expect(await requests()).toBe(before + 1);
    expect(plugin.changes.map((c) => c.reason)).toEqual(['code_revoked']);
  });

  it('at most once per project per quiet time: loads within it ask nothing, the first after it asks once', async () => {
    const { clock, load, projectId, open, plugin } = await activatedPlugin();

    await clock.advance(QUIET);
    const before = await requests();
    // A DAW opening a session: twenty plugin hosts load the project at once.
    const hosts = await Promise.all(Array.from({ length: 20 }, () => load(projectId)));
    expect(hosts.every((h) => h.state.valid)).toBe(true);
    await settled(open, projectId);
    expect(await requests()).toBe(before + 2); // the one load check, then the refresh

    const afterFirst = await requests();
    await clock.advance(QUIET - MIN); // within the quiet time of the last request (the refresh)
    await load(projectId);
    await load(projectId, 'subscribe');
    expect(await requests()).toBe(afterFirst);
    await clock.advance(MIN); // a quiet time after it
    await load(projectId);
    await settled(open, projectId);
    expect(await requests()).toBe(afterFirst + 2);
    expect(plugin.changes.every((c) => c.valid)).toBe(true);
  });

  it('a connection that asked about a project before is not a new load', async () => {
    const clock = new ManualScheduler(Date.now());
    const { load } = await agentOn(clock);
    const projectId = service.emulator.projectId;
    // Subscribed, so the agent keeps this connection open however long it is quiet.
    const { client } = await load(projectId, 'subscribe');
    await client.activate(projectId, await service.code(2));
    await clock.advance(2 * QUIET);
    const before = await requests();
    await client.check(projectId);
    await client.subscribe(projectId);
    await client.check(projectId);
    await load(UNKNOWN_PROJECT);
    await settled(client, projectId);
    expect(await requests()).toBe(before + 1); // the refresh only
  });

  for (const order of ['the load first', 'the start check first'] as const) {
    it(`an agent started with a check overdue is asked once, whatever comes first (${order})`, async () => {
      const t0 = Date.now();
      const first = await agentOn(new ManualScheduler(t0));
      const projectId = service.emulator.projectId;
      const { client } = await first.load(projectId);
      await client.activate(projectId, await service.code(2));
      client.close();
      await first.stop();

      const clock = new ManualScheduler(t0 + DAY + 2 * HOUR); // past next_check_at (24 h): due at start
      const again = await agentOn(clock, first.where);
      const before = await requests();
      if (order === 'the start check first') {
        await clock.advance(0);
        await expect.poll(requests).toBe(before + 1);
      }
      const { client: plugin } = await again.load(projectId);
      await clock.advance(0);
      await settled(plugin, projectId);
      expect(await requests()).toBe(before + 2); // one check, then the refresh
    });
  }

  it('an offline activation never goes online for a load', async () => {
    const clock = new ManualScheduler(Date.now());
    const { load } = await agentOn(clock);
    const projectId = service.emulator.projectId;
    const { client } = await load(projectId, 'subscribe');
    const made = await client.offlineRequest(projectId, await service.code(2));
    const response = await answerOfflineRequest(made.document, { baseUrl: service.emulator.baseUrl, validDays: 30, offlineMaxDays: 365 });
    expect(await client.offlineImport(offlineText(response))).toMatchObject({ valid: true, source: 'offline' });
    await clock.advance(2 * QUIET);
    const before = await requests();
    expect((await load(projectId)).state).toMatchObject({ valid: true, source: 'offline' });
    expect((await load(projectId, 'subscribe')).state).toMatchObject({ valid: true, source: 'offline' });
    await settled(client, projectId);
    expect(await requests()).toBe(before + 1); // the refresh only
  });
});

describe('during a service outage a load adds nothing beyond the back-off', () => {
  for (const status of [503, 429] as const) {
    it(`answers ${status}: the first load after the quiet time is the one attempt, then only the back-off's own retries`, async () => {
      // A 429 carries the wait to the end of the emulator's one-minute rate-limit window, and the
      // client sits out a wait of a second or less inside the call (one more request). So the
      // emulator's clock starts a window here: the first load's 429 asks for most of a minute,
      // whatever second of the real minute the test runs in.
      const { now_ms } = await service.control.clock({ advance_ms: 0 });
      await service.control.clock({ advance_ms: 60_000 - (now_ms % 60_000) });
      const { clock, load, projectId, open, plugin } = await activatedPlugin();
      await service.control.faults({ mode: 'error', status, count: 1_000_000 });
      await clock.advance(QUIET);
      const before = await requests();
      // HTTP requests of one attempt: the client's one quick retry inside a call after a 5xx; a
      // 429 whose wait is longer than a second fails the call at once.
      const attempts = async (): Promise<number> => ((await requests()) - before) / (status === 503 ? 2 : 1);

      await load(projectId);
      expect(await plugin.next((s) => s.source === 'cache')).toMatchObject({ valid: true, source: 'cache' });
      expect(await attempts()).toBe(1);
      // The back-off (1 min, equal jitter at 0.5: 45 s), or the wait the service asked for when longer.
      const retryAt = (await open.check(projectId)).nextCheckAt!.getTime();
      expect(retryAt - clock.now()).toBeGreaterThanOrEqual(45_000);

      // Loads while the back-off holds: none asks.
      for (let i = 0; i < 5; i++) await load(projectId);
      await clock.set(retryAt - 1);
      await load(projectId);
      expect(await attempts()).toBe(1);

      // The back-off's own retry, and loads right after it: one attempt in all.
      await clock.set(retryAt);
      await expect.poll(attempts).toBe(2);
      await expect.poll(async () => (await open.check(projectId)).nextCheckAt!.getTime()).toBeGreaterThan(retryAt);
      for (let i = 0; i < 5; i++) await load(projectId);
      await settled(open, projectId);
      expect(await attempts()).toBe(3); // the refresh, answered from the cache

      // Back online: the next retry of the back-off, not a load, brings it online again.
      await service.control.faults({ mode: 'none' });
      await load(projectId);
      await clock.set((await open.check(projectId)).nextCheckAt!.getTime());
      expect(await plugin.next((s) => s.source === 'online')).toMatchObject({ valid: true, source: 'online' });
      expect(await attempts()).toBe(3 + 1 / (status === 503 ? 2 : 1));
    });
  }
});
