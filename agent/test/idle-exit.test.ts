import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { AgentClient, ManualScheduler, resolveAgentConfig } from '../src/index.js';
import { parseIdleExitMinutes } from '../src/config.js';
import { LicenseRegistry } from '../src/license-registry.js';
import { silentLogger } from '../src/logger.js';
import { RawClient, shortDir, startTestAgent, useTestService } from './helpers.js';

const CLI = join(__dirname, '..', 'bin', 'plugin-license-agent.js');
const { service, cleanups } = useTestService();

/** Settles with true when the agent has closed, false while it still runs (no real wait: the clock is manual). */
async function hasClosed(closed: Promise<void>): Promise<boolean> {
  let done = false;
  void closed.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
}

describe('idle_exit_minutes: flag and config.json', () => {
  it.each(['0', '10', '0.5', '0.01', '1440'])('--idle-exit-minutes %s is accepted', (text) => {
    expect(parseIdleExitMinutes(text)).toBe(Number(text));
  });

  it.each(['', ' ', '-1', '+1', '1e3', '0x10', 'Infinity', 'NaN', 'ten', '1 0', "1'", '"1"', '$HOME', '1\\', '1\n', '１', '*', '.5', '5.'])('--idle-exit-minutes %j is refused with words', (text) => {
    expect(() => parseIdleExitMinutes(text)).toThrow(/--idle-exit-minutes must be a number of minutes, 0 or more/);
  });

  it('defaults to 10; config.json sets it; the flag wins; a bad config value is refused with the file named', () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const env = { PLUGIN_LICENSE_HOME: d.dir };
    const file = join(d.dir, 'config', 'config.json');
    expect(resolveAgentConfig({}, env).idleExitMinutes).toBe(10);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ idle_exit_minutes: 0.25 }));
    const config = resolveAgentConfig({}, env);
    if (config.configFile !== file) writeFileSync(config.configFile, JSON.stringify({ idle_exit_minutes: 0.25 }));
    expect(resolveAgentConfig({}, env).idleExitMinutes).toBe(0.25);
    expect(resolveAgentConfig({ idleExitMinutes: 0 }, env).idleExitMinutes).toBe(0);
    for (const bad of [-1, '10', null, true, [1]]) {
      writeFileSync(config.configFile, JSON.stringify({ idle_exit_minutes: bad }));
      expect(() => resolveAgentConfig({}, env)).toThrow(/idle_exit_minutes/);
    }
  });
});

describe('the agent exits when idle (injected clock)', () => {
  it('with no client it exits after the idle time, not before, and removes its socket', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await startTestAgent(service, { scheduler: clock, idleExitMinutes: 1 });
    cleanups.push(() => t.cleanup());
    await clock.advance(59_000);
    expect(await hasClosed(t.agent.closed)).toBe(false);
    await clock.advance(1_000);
    await t.agent.closed;
    expect(existsSync(t.socketPath)).toBe(false);
  });

  it('0 stays', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await startTestAgent(service, { scheduler: clock, idleExitMinutes: 0 });
    cleanups.push(() => t.cleanup());
    await clock.advance(30 * 24 * 3600_000);
    expect(await hasClosed(t.agent.closed)).toBe(false);
  });

  it('a connected client keeps it; the idle time counts from when the last one left', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await startTestAgent(service, { scheduler: clock, idleExitMinutes: 1, limits: { idleTimeoutMs: 24 * 3600_000 } });
    cleanups.push(() => t.cleanup());
    const client = await AgentClient.connect({ socketPath: t.socketPath, namespace: 'agent-test', reconnect: false });
    await client.hello();
    await clock.advance(10 * 60_000);
    expect(await hasClosed(t.agent.closed)).toBe(false);
    client.close();
    await expect.poll(() => t.agent.stats().connections).toBe(0);
    await clock.advance(30_000);
    expect(await hasClosed(t.agent.closed)).toBe(false);
    await clock.advance(30_000);
    await t.agent.closed;
  });

  it('a request in flight keeps it after its client is gone; it exits the idle time after the answer', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await startTestAgent(service, { scheduler: clock, idleExitMinutes: 1 });
    cleanups.push(() => t.cleanup());
    const code = await service.code(2);
    await service.control.faults({ mode: 'hold', count: 1 });
    cleanups.push(async () => void (await service.control.faults({ mode: 'none' })));
    const raw = await RawClient.connect(t.socketPath);
    raw.request({ jsonrpc: '2.0', id: 1, method: 'activate', params: { project_id: service.emulator.projectId, code } });
    await service.control.held(1);
    raw.socket.destroy();
    await clock.advance(5 * 60_000);
    expect(await hasClosed(t.agent.closed)).toBe(false);
    await service.control.releaseHeld();
    await expect.poll(() => t.agent.stats()).toMatchObject({ inFlight: 0, connections: 0 });
    await clock.advance(59_000);
    expect(await hasClosed(t.agent.closed)).toBe(false);
    await clock.advance(1_000);
    await t.agent.closed;
  });

  it('an agent that stops leaves alone the socket another agent bound on its path while it finished a request', async () => {
    const a = await startTestAgent(service, { idleExitMinutes: 0 });
    cleanups.push(() => a.cleanup());
    const code = await service.code(2);
    await service.control.faults({ mode: 'hold', count: 1 });
    cleanups.push(async () => void (await service.control.faults({ mode: 'none' })));
    const raw = await RawClient.connect(a.socketPath);
    cleanups.push(() => raw.close());
    raw.request({ jsonrpc: '2.0', id: 1, method: 'activate', params: { project_id: service.emulator.projectId, code } });
    await service.control.held(1);
    const closing = a.agent.close(); // stops accepting at once; the activation still runs
    await expect.poll(() => existsSync(a.socketPath)).toBe(false);
    const b = await startTestAgent(service, { idleExitMinutes: 0 }, { home: a.home, socketPath: a.socketPath });
    cleanups.push(() => b.agent.close());
    await service.control.releaseHeld();
    await closing;
    expect(existsSync(b.socketPath)).toBe(true);
    const client = await AgentClient.connect({ socketPath: b.socketPath, namespace: 'agent-test', reconnect: false });
    expect((await client.hello()).namespace).toBe('agent-test');
    client.close();
  });
});

describe('what holds off the idle exit', () => {
  // The watcher reloads a cache file whenever it changes, the agent's own writes included (an
  // activation's): that local read is no request, intent or revalidation. Counted as one, a reload
  // still running when the idle time ran out held the exit off and restarted the count when it ended.
  it('a service call does, and its end is the activity the time counts from; a reload of the cache file does not', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const registry = new LicenseRegistry({ licenseOptions: { baseUrl: service.emulator.baseUrl, home: d.dir, namespace: 'agent-test' }, logger: silentLogger() });
    cleanups.push(() => registry.close());
    const quiet = vi.fn();
    registry.on('quiet', quiet);
    const id = randomUUID();
    registry.state(id);

    const release = registry.hold(id);
    expect(registry.inUse).toBe(true);
    release();
    release(); // once only
    expect(registry.inUse).toBe(false);
    expect(quiet).toHaveBeenCalledTimes(1);

    const reloading = registry.reload(id);
    expect(registry.inUse).toBe(false);
    await reloading;
    expect(registry.inUse).toBe(false);
    expect(quiet).toHaveBeenCalledTimes(1);

    // A reload ending while a service call runs does not end it either.
    const call = registry.hold(id);
    await registry.reload(id);
    expect(registry.inUse).toBe(true);
    expect(quiet).toHaveBeenCalledTimes(1);
    call();
    expect(quiet).toHaveBeenCalledTimes(2);
  });
});

describe('the agent exits when idle (real process)', () => {
  it('with --idle-exit-minutes 0.01 it stays while a client is connected and exits after it left, leaving no socket', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 's', 'agent.sock');
    const child = spawn(process.execPath, [CLI, 'run', '--socket', socket, '--idle-exit-minutes', '0.01'], {
      env: { PATH: process.env.PATH, PLUGIN_LICENSE_HOME: join(d.dir, 'home'), PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    cleanups.push(() => void child.kill('SIGKILL'));
    await new Promise<void>((resolve, reject) => {
      child.stdout.once('data', () => resolve());
      child.once('exit', () => reject(new Error('the agent exited before it was ready')));
    });
    const raw = await RawClient.connect(socket);
    // Many times the idle time (600 ms) with the client connected: it must still answer.
    for (let i = 0; i < 8; i++) {
      raw.request({ jsonrpc: '2.0', id: i, method: 'hello', params: {} });
      expect(await raw.next(1)).toMatchObject([{ id: i, result: { protocol: 1 } }]);
      await new Promise((r) => setTimeout(r, 250));
    }
    raw.socket.end();
    await raw.waitClosed();
    expect(await exited).toBe(0); // within the test's time-out
    expect(existsSync(socket)).toBe(false);
    await expect(new Promise((resolve, reject) => createConnection(socket).once('connect', resolve).once('error', reject))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 20_000);
});
