import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { readOnlyFolder, rejection } from '@plugin-license/test-utils';
import { describe, expect, it } from 'vitest';
import { AgentClient, isAgentError, resolveAgentConfig } from '../src/index.js';
import { MAX_SUBSCRIPTIONS } from '../src/methods.js';
import { RawClient, shortDir, startTestAgent, useTestService } from './helpers.js';

const { service, cleanups } = useTestService();

async function agent(options: Parameters<typeof startTestAgent>[1] = {}) {
  const t = await startTestAgent(service, options);
  cleanups.push(() => t.cleanup());
  const client = await AgentClient.connect({ socketPath: t.socketPath, connectTimeoutMs: 2000 });
  cleanups.push(() => client.close());
  return { t, client };
}

const slots = async (code: string): Promise<number> => {
  const res = await fetch(`${service.emulator.baseUrl}/plugin-activation/status/${code}`);
  return ((await res.json()) as { activations: number }).activations;
};

describe('storage that refuses', () => {
  it('a read-only licenses folder: activate answers -32004 at once, and the service is asked nothing', async (ctx) => {
    const { t, client } = await agent();
    const dir = join(t.home, 'data', 'licenses');
    mkdirSync(dir, { recursive: true });
    const ro = readOnlyFolder(dir);
    if (!ro.ok) return ctx.skip(ro.reason);
    cleanups.push(ro.undo);
    const code = await service.code(2);
    const e = await rejection(client.activate(service.emulator.projectId, code), isAgentError);
    expect(e).toMatchObject({ code: 'storage_failed', rpcCode: -32004, path: dir, data: { code: 'EROFS', path: dir } });
    expect(e.message).toMatch(/nothing was asked of the service/);
    expect(e.message).not.toContain(code);
    expect(await slots(code)).toBe(0);
    expect(await client.check(service.emulator.projectId)).toMatchObject({ valid: false, reason: 'not_activated' });
  }, 5_000);
});

describe('socket behaviour', () => {
  it('a client that half-closes after its request still receives the answer of a slow activation', async () => {
    const { t } = await agent();
    const code = await service.code(2);
    await service.control.faults({ mode: 'hold', count: 1 });
    cleanups.push(async () => void (await service.control.faults({ mode: 'none' })));
    const raw = await RawClient.connect(t.socketPath);
    cleanups.push(() => raw.close());
    raw.request({ jsonrpc: '2.0', id: 1, method: 'activate', params: { project_id: service.emulator.projectId, code } });
    raw.request({ jsonrpc: '2.0', id: 2, method: 'check', params: { project_id: service.emulator.projectId } });
    raw.socket.end(); // what `echo ... | socat - UNIX-CONNECT:...` does
    // The service holds the activation until the check has been answered and the client has half-closed.
    await service.control.held(1);
    expect(await raw.next(1)).toMatchObject([{ id: 2, result: { valid: false } }]);
    await service.control.releaseHeld();
    expect(await raw.next(1)).toMatchObject([{ id: 1, result: { valid: true, source: 'online' } }]);
    await raw.waitClosed();
  });

  it(`subscriptions per connection are capped at ${MAX_SUBSCRIPTIONS}: the next one is -32003`, async () => {
    const { client } = await agent();
    const id = (n: number): string => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    await Promise.all(Array.from({ length: MAX_SUBSCRIPTIONS }, (_, n) => client.request('subscribe', { project_id: id(n) })));
    const e = await rejection(client.request('subscribe', { project_id: id(MAX_SUBSCRIPTIONS) }), isAgentError);
    expect(e).toMatchObject({ rpcCode: -32003, limit: 'subscriptions' });
    expect(await client.request('subscribe', { project_id: id(0) })).toEqual({ subscribed: true }); // already followed
    expect(await client.request('subscribe', {})).toEqual({ subscribed: true }); // all projects: always allowed
  });

  it('a code placed in hello.client is never logged', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) });
    const { client } = await agent({ logger: pino({ level: 'debug' }, sink) });
    const code = await service.code(2);
    await client.request('hello', { client: `MyPlugin 1.2 code=${code}` });
    await client.check(service.emulator.projectId);
    const log = lines.join('');
    expect(log).toContain('"msg":"hello"');
    expect(log).toContain('MyPlugin 1.2');
    expect(log).not.toContain(code);
  });
});

describe('configuration', () => {
  it('a reload to a base URL the agent would refuse later is refused, and the current one is kept', async () => {
    const { t } = await agent();
    const before = t.agent.config().baseUrl;
    await expect(t.agent.reload({ baseUrl: 'http://127.0.0.1:1' })).rejects.toMatchObject({ code: 'config_invalid', message: expect.stringMatching(/functions\/v1/) });
    await expect(t.agent.reload({ baseUrl: 'http://service.example/functions/v1' })).rejects.toMatchObject({ code: 'config_invalid' });
    expect(t.agent.config().baseUrl).toBe(before);
  });

  it('beforeProxy is called only when a proxy will carry the requests: not for a direct route, then on the reload that sets one', async () => {
    let calls = 0;
    const { t, client } = await agent({ beforeProxy: () => void (calls += 1) });
    await client.check(service.emulator.projectId);
    expect(calls).toBe(0);
    mkdirSync(join(t.home, 'config'), { recursive: true });
    writeFileSync(join(t.home, 'config', 'config.json'), JSON.stringify({ proxy: 'http://127.0.0.1:9' }));
    await t.agent.reload();
    expect(t.agent.config().proxy).toBe('http://127.0.0.1:9/');
    expect(calls).toBe(1);
  });

  it('reads a config.json saved with a UTF-8 byte-order mark (Windows editors)', () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    mkdirSync(join(d.dir, 'config'), { recursive: true });
    writeFileSync(join(d.dir, 'config', 'config.json'), `\uFEFF${JSON.stringify({ base_url: 'https://licenses.example/functions/v1' })}`);
    expect(resolveAgentConfig({ home: d.dir }, {}).baseUrl).toBe('https://licenses.example/functions/v1');
  });
});
