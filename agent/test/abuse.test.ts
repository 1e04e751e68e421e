import { randomBytes, randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AgentClient, ManualScheduler, type LicenseState } from '../src/index.js';
import { RawClient, startTestAgent, UNKNOWN_PROJECT, type TestAgent, useTestService } from './helpers.js';

const { service, cleanups } = useTestService();

async function agent(options: Parameters<typeof startTestAgent>[1] = {}): Promise<TestAgent> {
  const t = await startTestAgent(service, options);
  cleanups.push(() => t.cleanup());
  return t;
}

async function raw(path: string): Promise<RawClient> {
  const c = await RawClient.connect(path);
  cleanups.push(() => c.close());
  return c;
}

async function wellBehaved(path: string): Promise<AgentClient> {
  const c = await AgentClient.connect({ socketPath: path, reconnect: false });
  cleanups.push(() => c.close());
  return c;
}

const check = (id: number | string) => ({ jsonrpc: '2.0', id, method: 'check', params: { project_id: UNKNOWN_PROJECT } });

describe('bad input', () => {
  it('random bytes: every line answered with an error, no crash, others served', async () => {
    const t = await agent();
    const good = await wellBehaved(t.socketPath);
    const c = await raw(t.socketPath);
    const noise = randomBytes(32 * 1024);
    // Make sure no line of noise is over the limit and count its lines.
    for (let i = 1000; i < noise.length; i += 1000) noise[i] = 0x0a;
    c.send(noise);
    c.send('\n');
    c.request(check('after-noise'));
    await expect.poll(() => c.lines.some((l) => l.includes('after-noise')) || c.closed, { message: 'the answer after the noise' }).toBe(true);
    expect(c.closed).toBe(false);
    const answers = c.lines.map((l) => JSON.parse(l));
    expect(answers.length).toBeGreaterThan(30);
    for (const a of answers.slice(0, -1)) expect([-32700, -32600]).toContain(a.error.code);
    expect(answers.at(-1)).toMatchObject({ id: 'after-noise', result: { valid: false } });
    expect(await good.check(UNKNOWN_PROJECT)).toMatchObject({ reason: 'not_activated' });
  });

  it('invalid JSON: -32700 with id null, and the connection stays open', async () => {
    const t = await agent();
    const c = await raw(t.socketPath);
    c.send('{"jsonrpc":"2.0","id":1,"method":\n');
    c.request(check(2));
    const [parse, ok] = await c.next(2);
    expect(parse).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    expect(ok).toMatchObject({ id: 2, result: { valid: false } });
  });

  it('blank lines and CRLF endings are no requests; a request split inside a UTF-8 character is read whole', async () => {
    const t = await agent();
    const c = await raw(t.socketPath);
    c.send('\n\r\n \n\t\r\n');
    c.send(JSON.stringify(check('crlf')) + '\r\n');
    const hello = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 'utf8', method: 'hello', params: { client: 'Café ☕ 𝄞' } }) + '\n');
    const cut = hello.indexOf('𝄞') + 2;
    c.send(hello.subarray(0, cut));
    // The agent has read the first part on its own (no sleep that a loaded machine could outrun).
    await expect.poll(() => t.agent.stats().pendingReadBytes, { message: 'the first part of the request read' }).toBe(cut);
    c.send(hello.subarray(cut));
    const answers = await c.next(2);
    expect(answers.map((a) => a.id)).toEqual(['crlf', 'utf8']);
    expect(answers[0]).toMatchObject({ result: { valid: false } });
    expect(answers[1]).toMatchObject({ result: { protocol: 1 } });
    c.request(check('last'));
    expect((await c.next(1))[0]).toMatchObject({ id: 'last' });
    expect(c.lines).toEqual([]);
  });

  it('invalid requests: -32600 (and the id when it is usable)', async () => {
    const t = await agent();
    const c = await raw(t.socketPath);
    c.send('[{"jsonrpc":"2.0","id":1,"method":"hello"}]\n"text"\n{"jsonrpc":"1.0","id":3,"method":"hello"}\n{"jsonrpc":"2.0","id":4}\n');
    const answers = await c.next(4);
    expect(answers.map((a) => [a.id, a.error.code])).toEqual([
      [null, -32600],
      [null, -32600],
      [3, -32600],
      [4, -32600],
    ]);
  });

  it('unknown methods -32601 and invalid params -32602; notifications get no answer', async () => {
    const t = await agent();
    const c = await raw(t.socketPath);
    c.request({ jsonrpc: '2.0', method: 'check', params: { project_id: UNKNOWN_PROJECT } });
    c.request({ jsonrpc: '2.0', id: 1, method: 'no_such_method' });
    c.request({ jsonrpc: '2.0', id: 2, method: 'check', params: ['positional'] });
    c.request({ jsonrpc: '2.0', id: 3, method: 'check', params: { project_id: 'x' } });
    c.request({ jsonrpc: '2.0', id: 4, method: 'hello', params: { future: true } });
    const answers = await c.next(4);
    expect(answers.map((a) => [a.id, a.error?.code ?? 'ok'])).toEqual([
      [1, -32601],
      [2, -32602],
      [3, -32602],
      [4, 'ok'],
    ]);
  });

  it('a 1 MiB line: -32600, then the connection is closed, never buffered', async () => {
    const t = await agent();
    const good = await wellBehaved(t.socketPath);
    const c = await raw(t.socketPath);
    c.send(Buffer.alloc(1024 * 1024, 0x61));
    await c.waitClosed();
    expect(c.lines.map((l) => JSON.parse(l))).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('65536 bytes'), data: { limit: 'line_bytes', max: 65536 } } }]);
    expect(t.agent.stats().pendingReadBytes).toBe(0);
    expect(await good.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false });
  });
});

describe('abuse and limits', () => {
  it('1,000 idle connections: the limit applies, the well-behaved client keeps being served', async () => {
    const fdLimit = Number(execFileSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim());
    // Each connection costs two descriptors in this process (client and agent side).
    const n = Number.isFinite(fdLimit) ? Math.min(1000, Math.floor((fdLimit - 300) / 2)) : 1000;
    if (n < 1000) console.log(`ulimit -n is ${fdLimit}: opening ${n} idle connections instead of 1000`);
    const max = Math.min(512, n - 100);
    const t = await agent({ limits: { maxConnections: max } });
    const good = await wellBehaved(t.socketPath);
    const sockets: Socket[] = [];
    cleanups.push(() => sockets.forEach((s) => s.destroy()));
    let refused = 0;
    const errors: string[] = [];
    await Promise.all(
      Array.from({ length: n }, () =>
        new Promise<void>((resolve) => {
          const s = createConnection(t.socketPath);
          sockets.push(s);
          let data = '';
          s.setEncoding('utf8');
          s.on('data', (d: string) => (data += d));
          s.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? 'unknown'));
          s.on('close', () => {
            if (data.includes('"limit":"connections"')) refused += 1;
          });
          s.once('connect', () => resolve());
          s.once('error', () => resolve());
        }),
      ),
    );
    expect(await good.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false });
    await expect.poll(() => refused, { message: 'refusals' }).toBe(n - (max - 1));
    expect(errors).toEqual([]);
    expect(t.agent.stats().connections).toBe(max);
    expect(await good.hello()).toMatchObject({ protocol: 1 });
  });

  it('a client sending one byte a second is dropped at the idle time-out (injected clock); subscribers are exempt', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await agent({ scheduler: clock, limits: { idleTimeoutMs: 5_000 } });
    const good = await wellBehaved(t.socketPath);
    await good.subscribe();
    const slow = await raw(t.socketPath);
    const text = JSON.stringify(check('slow')) + '\n';
    let sent = 0;
    for (; sent < 30 && !slow.closed; sent++) {
      slow.send(text[sent] as string);
      await expect.poll(() => t.agent.stats().pendingReadBytes >= sent + 1 || slow.closed, { message: 'the byte arrived' }).toBe(true);
      await clock.advance(1_000);
    }
    await slow.waitClosed();
    expect(sent).toBeLessThanOrEqual(6);
    expect(slow.lines).toEqual([]);
    expect(await good.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false });
    expect(t.agent.stats()).toMatchObject({ connections: 1, subscribers: 1 });
  });

  it('the idle sweep closes a silent connection between 1 and 1.1 time-outs after its last request, never before', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await agent({ scheduler: clock, limits: { idleTimeoutMs: 10_000 } });
    const silent = await raw(t.socketPath);
    const talker = await raw(t.socketPath);
    await expect.poll(() => t.agent.stats().connections, { message: 'both connections' }).toBe(2);
    await clock.advance(6_000);
    talker.request(check('at-6s'));
    await talker.next();
    await clock.advance(3_999); // 9.999 s
    expect(silent.closed).toBe(false);
    await clock.advance(1_001); // 11 s: the silent one is past 1.1 time-outs
    await silent.waitClosed();
    expect(talker.closed).toBe(false); // its last request was 5 s ago
    await clock.advance(11_000); // 22 s: 16 s after its request
    await talker.waitClosed();
    expect(t.agent.stats().connections).toBe(0);
  });

  it('per-connection request rate: -32003 {limit: request_rate} past the burst', async () => {
    const clock = new ManualScheduler(Date.now());
    const t = await agent({ scheduler: clock, limits: { requestRate: 10, requestBurst: 20 } });
    const c = await raw(t.socketPath);
    c.send(Array.from({ length: 25 }, (_, i) => JSON.stringify(check(i))).join('\n') + '\n');
    const answers = await c.next(25);
    expect(answers.filter((a) => a.result).length).toBe(20);
    expect(answers.slice(20).every((a) => a.error?.code === -32003 && a.error.data.limit === 'request_rate')).toBe(true);
    await clock.advance(1_000);
    c.request(check('later'));
    expect((await c.next())[0]).toMatchObject({ id: 'later', result: { valid: false } });
  });

  it('a client that never reads: the agent stops reading from it, its buffers stay bounded, others are served', async () => {
    const writeBufferBytes = 64 * 1024;
    const t = await agent({ limits: { writeBufferBytes, requestRate: 1_000_000, requestBurst: 1_000_000 } });
    const good = await wellBehaved(t.socketPath);
    const hog = createConnection(t.socketPath);
    cleanups.push(() => void hog.destroy());
    hog.on('error', () => undefined);
    await new Promise((r) => hog.once('connect', r));
    hog.pause();
    const line = JSON.stringify(check(1)) + '\n';
    const batch = line.repeat(1000);
    let maxAgentWrite = 0;
    // Keep writing until the agent has stopped reading (the kernel buffers then fill up).
    for (let i = 0; i < 2000 && t.agent.stats().pausedConnections === 0; i++) {
      if (!hog.write(batch)) await new Promise((r) => setTimeout(r, 5));
      maxAgentWrite = Math.max(maxAgentWrite, t.agent.stats().maxPendingWriteBytes);
    }
    const stats = t.agent.stats();
    expect(stats.pausedConnections).toBe(1);
    for (let i = 0; i < 200; i++) {
      expect(await good.check(UNKNOWN_PROJECT)).toMatchObject({ valid: false });
      maxAgentWrite = Math.max(maxAgentWrite, t.agent.stats().maxPendingWriteBytes);
    }
    // One chunk of requests (at most 64 KiB) turns into at most ~4x its size of answers past the cap.
    expect(maxAgentWrite).toBeLessThanOrEqual(writeBufferBytes * 4 + 512 * 1024);
    expect(t.agent.stats().pendingReadBytes).toBeLessThan(65_536 * 2);
    expect(t.agent.stats().connections).toBeLessThanOrEqual(2);
  });

  it('checks of thousands of distinct projects keep what the agent holds bounded; a project with an activation in flight is kept', async () => {
    const t = await agent({ limits: { requestRate: 1_000_000, requestBurst: 1_000_000 } });
    const client = await wellBehaved(t.socketPath);
    const projectId = service.emulator.projectId;
    const seen: LicenseState[] = [];
    // Subscribing loads the project first: it is the oldest entry when the flood starts.
    (await client.subscribe(projectId)).on('changed', (s) => seen.push(s));
    const code = await service.code(2);
    // The service holds the activation through the whole flood, however long the flood takes.
    await service.control.faults({ mode: 'hold', count: 1 });
    try {
      const activation = client.activate(projectId, code);
      await service.control.held(1);
      expect(t.agent.stats().inFlight).toBe(1);
      for (let round = 0; round < 6; round++) {
        const answers = await Promise.all(Array.from({ length: 500 }, () => client.check(randomUUID())));
        expect(answers.every((a) => a.reason === 'not_activated')).toBe(true);
      }
      expect(t.agent.stats().projects).toBeLessThanOrEqual(1024);
      expect(t.agent.stats().inFlight).toBe(1);
      await service.control.releaseHeld();
      expect(await activation).toMatchObject({ valid: true, source: 'online' });
      // Still the License that activated (a re-created one would rest on the cache).
      expect(await client.check(projectId)).toMatchObject({ valid: true, source: 'online' });
      await Promise.all(Array.from({ length: 1500 }, () => client.check(randomUUID())));
      expect(t.agent.stats().projects).toBeLessThanOrEqual(1024);
      expect(await client.check(projectId)).toMatchObject({ valid: true, source: 'online', codeHint: `${code.slice(0, 4)}…${code.slice(-4)}` });
      expect(seen.map((s) => [s.projectId, s.valid, s.source])).toEqual([[projectId, true, 'online']]);
    } finally {
      await service.control.faults({ mode: 'none' });
    }
    await client.deactivate(projectId);
  });
});
