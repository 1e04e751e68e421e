import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient, ManualScheduler, isAgentError, type LicenseState } from '../src/index.js';
import { RawClient, startTestAgent, UNKNOWN_PROJECT, type TestAgent, useTestService } from './helpers.js';
import { rejection } from '@plugin-license/test-utils';

const DAY = 24 * 3600_000;

const { service, cleanups } = useTestService();

afterEach(async () => {
  await service.control.faults({ mode: 'none' });
});

async function agentAndClient(options: Parameters<typeof startTestAgent>[1] = {}): Promise<{ t: TestAgent; client: AgentClient }> {
  const t = await startTestAgent(service, options);
  cleanups.push(() => t.cleanup());
  const client = await AgentClient.connect({ socketPath: t.socketPath, connectTimeoutMs: 2000 });
  cleanups.push(() => client.close());
  return { t, client };
}

function nextChange(client: AgentClient, predicate: (s: LicenseState) => boolean): Promise<LicenseState> {
  return new Promise((resolve) => {
    const on = (s: LicenseState): void => {
      if (predicate(s)) {
        client.off('changed', on);
        resolve(s);
      }
    };
    client.on('changed', on);
  });
}

describe('protocol 1 methods through AgentClient', () => {
  it('hello names the protocol, version and namespace, and (additive) the data folder and connections', async () => {
    const { client } = await agentAndClient();
    expect(await client.hello()).toEqual({ protocol: 1, agent: expect.stringMatching(/^\d+\.\d+\.\d+/), namespace: 'agent-test', data_dir: expect.stringMatching(/\/data$/), connections: 1 });
  });

  it('check of an unknown project: not_activated, from memory', async () => {
    const { client } = await agentAndClient();
    const s = await client.check(UNKNOWN_PROJECT);
    expect(s).toMatchObject({ projectId: UNKNOWN_PROJECT, valid: false, reason: 'not_activated', codeHint: null, nextCheckAt: null });
  });

  it('activate → check → refresh → list → deactivate, with only a hint of the code on the socket', async () => {
    const { t, client } = await agentAndClient();
    const code = await service.code(2);
    const projectId = service.emulator.projectId;
    const activated = await client.activate(projectId, code);
    expect(activated).toMatchObject({ valid: true, reason: null, source: 'online', codeHint: `${code.slice(0, 4)}…${code.slice(-4)}`, activations: 1, maxActivations: 2 });
    expect(activated.graceUntil!.getTime() - activated.validatedAt!.getTime()).toBe(30 * DAY);
    expect(activated.nextCheckAt!.getTime()).toBeGreaterThan(activated.validatedAt!.getTime());
    expect(await client.check(projectId)).toEqual(activated);
    const refreshed = await client.refresh(projectId);
    expect(refreshed).toMatchObject({ valid: true, source: 'online' });
    // A project only checked, with nothing stored, is not a license: `list` leaves it out.
    expect(await client.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false, reason: 'not_activated' });
    expect((await client.list()).map((s) => s.projectId)).toEqual([projectId]);

    const raw = await RawClient.connect(t.socketPath);
    raw.request({ jsonrpc: '2.0', id: 'l', method: 'list' });
    const [answer] = await raw.next();
    expect(JSON.stringify(answer)).not.toContain(code);
    raw.close();

    const gone = await client.deactivate(projectId);
    expect(gone).toMatchObject({ valid: false, reason: 'not_activated', codeHint: null, nextCheckAt: null });
    expect(await client.deactivate(projectId)).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(await client.refresh(projectId)).toMatchObject({ valid: false, reason: 'not_activated' });

    await t.agent.close();
    const logDir = join(t.home, 'log');
    const logs = readdirSync(logDir).filter((f) => f.endsWith('.log')).map((f) => readFileSync(join(logDir, f), 'utf8')).join('');
    expect(logs).toContain('activation requested');
    expect(logs).not.toContain(code);
  });

  it('service refusals are -32001 with the service code and status', async () => {
    const { client } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const missing = await rejection(client.activate(projectId, 'ffffffff-ffff-4fff-8fff-ffffffffffff'), isAgentError);
    expect(missing).toMatchObject({ code: 'service_refused', rpcCode: -32001, serviceCode: 'code_not_found', status: 404 });
    const code = await service.code(1);
    await service.control.revoke(code);
    const revoked = await rejection(client.activate(projectId, code), isAgentError);
    expect(revoked).toMatchObject({ rpcCode: -32001, serviceCode: 'code_revoked', status: 403 });
    expect(revoked.message).not.toContain(code);
  });

  it('max_activations_reached is -32001 {code, status 403}', async () => {
    const code = await service.code(1);
    const projectId = service.emulator.projectId;
    const first = await agentAndClient();
    await first.client.activate(projectId, code);
    // A second machine: another namespace derives another machine id from the same OS id.
    const second = await agentAndClient({ namespace: 'agent-test-2' });
    const err = await rejection(second.client.activate(projectId, code), isAgentError);
    expect(err).toMatchObject({ rpcCode: -32001, serviceCode: 'max_activations_reached', status: 403 });
    await first.client.deactivate(projectId);
  });

  it('an unreachable service is -32002 for activate; refresh answers from the cache', async () => {
    const { client } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    await client.activate(projectId, code);
    await service.control.faults({ mode: 'offline' });
    const err = await rejection(client.activate(projectId, await service.code(2).catch(() => code)), isAgentError);
    expect(err).toMatchObject({ code: 'service_unavailable', rpcCode: -32002 });
    expect(await client.refresh(projectId)).toMatchObject({ valid: true, codeHint: `${code.slice(0, 4)}…${code.slice(-4)}` });
    await service.control.faults({ mode: 'none' });
    await client.deactivate(projectId);
  });

  it('check answers from memory while an activation waits on a slow service', async () => {
    const { client, t } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    // The service holds the activation until the test lets it go: no window of time to race.
    await service.control.faults({ mode: 'hold', count: 1 });
    let settled = false;
    const activation = client.activate(projectId, code).finally(() => {
      settled = true;
    });
    await service.control.held(1);
    expect(t.agent.stats().inFlight).toBe(1);
    const other = await AgentClient.connect({ socketPath: t.socketPath });
    cleanups.push(() => other.close());
    expect(await other.check(projectId)).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(await client.check(projectId)).toMatchObject({ valid: false });
    expect(settled).toBe(false);
    await service.control.releaseHeld();
    expect(await activation).toMatchObject({ valid: true });
    await client.deactivate(projectId);
  });

  it('many service calls queued on one project share the shutdown signal without a MaxListeners warning', async () => {
    const { client } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      await service.control.faults({ mode: 'latency', latency_ms: 30 });
      const answers = await Promise.all(Array.from({ length: 12 }, () => client.activate(projectId, code)));
      for (const a of answers) expect(a).toMatchObject({ valid: true });
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
      await service.control.faults({ mode: 'none' });
      await client.deactivate(projectId);
    }
  });

  it('invalid params are -32602; a project id must be a UUID', async () => {
    const { client } = await agentAndClient();
    expect(await rejection(client.check('not-a-uuid'), isAgentError)).toMatchObject({ code: 'invalid_params', rpcCode: -32602, message: expect.stringContaining('project_id must be a UUID') });
    expect(await rejection(client.request('activate', { project_id: service.emulator.projectId }), isAgentError)).toMatchObject({ rpcCode: -32602, message: expect.stringContaining('code') });
    expect(await rejection(client.request('activate', { project_id: service.emulator.projectId, code: '' }), isAgentError)).toMatchObject({ rpcCode: -32602 });
    expect(await rejection(client.request('subscribe', { project_id: 42 }), isAgentError)).toMatchObject({ rpcCode: -32602 });
    expect(await rejection(client.request('nope'), isAgentError)).toMatchObject({ code: 'method_not_found', rpcCode: -32601 });
  });

  it('a revocation is pushed to subscribers (background revalidation, injected clock)', async () => {
    const clock = new ManualScheduler(Date.now());
    const { client, t } = await agentAndClient({ scheduler: clock });
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    await client.activate(projectId, code);
    const watcher = await AgentClient.connect({ socketPath: t.socketPath });
    cleanups.push(() => watcher.close());
    const sub = await watcher.subscribe(projectId);
    const iterated = (async () => {
      for await (const s of sub) if (!s.valid) return s;
      return undefined;
    })();
    const pushed = nextChange(watcher, (s) => s.reason === 'code_revoked');
    await service.control.revoke(code);
    await clock.advance(26 * 3600_000);
    expect(await pushed).toMatchObject({ projectId, valid: false, reason: 'code_revoked', source: 'online' });
    expect(await iterated).toMatchObject({ reason: 'code_revoked' });
  });

  it('grace expiry is pushed at the deadline, without any request (injected clock)', async () => {
    const clock = new ManualScheduler(Date.now());
    // Revalidation far beyond the grace period, so only the grace timer acts.
    const { client } = await agentAndClient({ scheduler: clock, policy: { revalidateIntervalMs: 90 * DAY, revalidateJitterMs: 0 } });
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    const activated = await client.activate(projectId, code);
    const sub = await client.subscribe();
    const expired = new Promise<LicenseState>((resolve) => sub.on('changed', (s) => s.reason === 'grace_expired' && resolve(s)));
    await clock.advance(activated.graceUntil!.getTime() - clock.now() + 10);
    expect(await expired).toMatchObject({ projectId, valid: false, reason: 'grace_expired' });
    expect(await client.check(projectId)).toMatchObject({ reason: 'grace_expired' });
  });

  it('close (what SIGINT/SIGTERM do) stops accepting, finishes the activation in flight, then removes the socket', async () => {
    const { client, t } = await agentAndClient();
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    await service.control.faults({ mode: 'hold', count: 1 });
    const activation = client.activate(projectId, code);
    await service.control.held(1);
    expect(t.agent.stats().inFlight).toBe(1);
    let closed = false;
    const closing = t.agent.close().finally(() => {
      closed = true;
    });
    await expect(AgentClient.connect({ socketPath: t.socketPath, reconnect: false })).rejects.toMatchObject({ code: 'not_running' });
    expect(closed).toBe(false); // still waiting on the activation the service holds
    await service.control.releaseHeld();
    expect(await activation).toMatchObject({ projectId, valid: true, source: 'online' });
    await closing;
    expect(existsSync(t.socketPath)).toBe(false);
    // The activation was stored: a new agent on the same home holds it.
    const again = await startTestAgent(service, {}, { home: t.home, socketPath: t.socketPath });
    cleanups.push(() => again.agent.close());
    const next = await AgentClient.connect({ socketPath: t.socketPath, reconnect: false });
    cleanups.push(() => next.close());
    expect(await next.check(projectId)).toMatchObject({ valid: true, source: 'cache' });
    await next.deactivate(projectId);
  });

  it('restart: the agent comes back with the same states from the cache', async () => {
    const first = await startTestAgent(service);
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    let client = await AgentClient.connect({ socketPath: first.socketPath, reconnect: false });
    const before = await client.activate(projectId, code);
    client.close();
    await first.agent.close();
    const second = await startTestAgent(service, {}, { home: first.home, socketPath: first.socketPath });
    cleanups.push(() => second.cleanup().then(() => first.cleanup()));
    client = await AgentClient.connect({ socketPath: second.socketPath, reconnect: false });
    cleanups.push(() => client.close());
    const list = await client.list();
    expect(list).toEqual([{ ...before, source: 'cache', nextCheckAt: expect.any(Date) }]);
    expect(await client.check(projectId)).toMatchObject({ valid: true, codeHint: before.codeHint, source: 'cache' });
    await client.deactivate(projectId);
  });
});
