// One deadline for a whole piece of work (issue 27 item 8): every attempt and every retry wait of
// every call given it ends by it, on a direct connection and through a proxy, and the time-out
// names it. Real loopback servers: one that accepts and never answers, one that answers 503 at
// once, one that asks for a wait (429); the clock is injected where only the logic is under test.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Deadline, ServiceClient, isConfigError, isNetworkError, isServiceError, isTimeoutError, type TimeoutError } from '../src/index.js';
import { rejection, startSilentServer, type SilentServer } from '@plugin-license/test-utils';

const code = 'C0DE1234-ABCD-4EF0-9876-FEDCBA987654';
const projectId = '0e5f2d6c-9a8b-4c7d-8e6f-5a4b3c2d1e0f';
const statusBody = JSON.stringify({ activations: 0, max_activations: 2, available: 2, is_revoked: false });
/** Slack for a process on a loaded two-core machine; the behaviour is "ends by the deadline". */
const SLACK_MS = 2500;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A server that never answers (a hung service or proxy), closed after the test. */
async function silent(): Promise<SilentServer> {
  const server = await startSilentServer();
  closers.push(() => server.close());
  return server;
}

async function answering(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ baseUrl: string; requests: () => number }> {
  let requests = 0;
  const server: HttpServer = createHttpServer((req, res) => {
    requests += 1;
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  return { baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}/functions/v1`, requests: () => requests };
}

function client(baseUrl: string, extra: Partial<ConstructorParameters<typeof ServiceClient>[0]> = {}): ServiceClient {
  const c = new ServiceClient({ baseUrl, token: 'tok.en.value', proxy: false, ...extra });
  closers.push(() => c.close());
  return c;
}

describe('a shared deadline ends every call by it, retries included', () => {
  // Each row: how the request is carried, and the calls of one piece of work.
  const ways = [
    { way: 'direct', setup: async () => ({ baseUrl: `${(await silent()).url}/functions/v1`, options: {} }) },
    {
      way: 'through a proxy that never answers',
      setup: async () => ({ baseUrl: 'http://127.0.0.1:9/functions/v1', options: { proxy: (await silent()).url } }),
    },
  ];
  for (const { way, setup } of ways) {
    it(`${way}: three calls, safe and unsafe, all end by one 1 s deadline, each message naming it`, async () => {
      const { baseUrl, options } = await setup();
      // The client's own per-attempt time-out and call budget are far longer: the deadline wins.
      const c = client(baseUrl, { ...options, timeoutMs: 10_000, retry: { retries: 5, deadlineMs: 60_000 } });
      const deadline = new Deadline(1000, { name: 'PLUGIN_LICENSE_TIMEOUT' });
      const started = Date.now();
      const errors = await Promise.all([
        rejection(c.activation.status(code, { deadline })),
        rejection(c.activation.validate({ code, machine_id: 'm1', plugin_id: projectId }, { deadline })),
        rejection(c.activation.activate({ code, machine_id: 'm1', plugin_id: projectId }, { deadline })),
      ]);
      expect(Date.now() - started).toBeLessThan(1000 + SLACK_MS);
      for (const e of errors) {
        expect(isTimeoutError(e), String(e)).toBe(true);
        expect(e.message).toMatch(/^no answer from the service within 1 s \(PLUGIN_LICENSE_TIMEOUT\) \((GET|POST) \/[^)]*\); check the network/);
        expect(e.message).toContain('raise PLUGIN_LICENSE_TIMEOUT');
        expect(e.message).not.toContain(code);
        expect((e as TimeoutError).timeoutMs).toBe(1000);
      }
      // Spent: the next call of the same piece of work fails at once, without a request.
      const again = Date.now();
      const late = await rejection(c.builds.usage({ deadline }));
      expect(late.message).toMatch(/within 1 s \(PLUGIN_LICENSE_TIMEOUT\) \(GET \/builds\/usage\)/);
      expect(Date.now() - again).toBeLessThan(500);
    });
  }

  it("the client's deadline option: one shared by every call, or a new one per call", async () => {
    const { url } = await silent();
    const shared = new Deadline(800, { name: 'the step' });
    const c = client(`${url}/functions/v1`, { deadline: shared });
    const first = await rejection(c.activation.status(code));
    expect(first.message).toContain('within 0.8 s (the step)');
    const spent = Date.now();
    await rejection(c.activation.status(code));
    expect(Date.now() - spent).toBeLessThan(500); // the same deadline, already spent

    const perCall = client(`${url}/functions/v1`, { deadline: () => new Deadline(600) });
    for (let i = 0; i < 2; i++) {
      const started = Date.now();
      const e = await rejection(perCall.activation.status(code));
      const took = Date.now() - started;
      expect(took).toBeGreaterThanOrEqual(550); // a fresh deadline each time
      expect(took).toBeLessThan(600 + SLACK_MS);
      expect(e.message).toMatch(/within 0\.6 s \(GET .*or give it more time/);
    }
  });

  it('retries a failing service inside the deadline, and stops when the next back-off would pass it', async () => {
    const s = await answering((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"internal_error","message":"down"}'));
    let now = 0;
    const sleeps: number[] = [];
    const c = new ServiceClient(
      { baseUrl: s.baseUrl, proxy: false, retry: { retries: 10, minDelayMs: 400, maxDelayMs: 400, deadlineMs: 60_000 } },
      { random: () => 1, now: () => now, sleep: async (ms) => void (sleeps.push(ms), (now += ms)) },
    );
    closers.push(() => c.close());
    const e = await rejection(c.activation.status(code, { deadline: new Deadline(1000, { now: () => now }) }));
    // 0 → 400 → 800; a third back-off would end at 1200, past the deadline: the 503 is the answer.
    expect(isServiceError(e) && e.status).toBe(503);
    expect(sleeps).toEqual([400, 400]);
    expect(s.requests()).toBe(3);
  });

  it('a wait the service asks for (429) is not counted: the deadline moves by it', async () => {
    let calls = 0;
    const s = await answering((_req, res) => {
      calls += 1;
      if (calls === 1) res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '5' }).end('{"error":"rate_limited","message":"slow down"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(statusBody);
    });
    let now = 0;
    const c = new ServiceClient(
      { baseUrl: s.baseUrl, proxy: false, retry: { retries: 2, deadlineMs: 90_000 } },
      { random: () => 0, now: () => now, sleep: async (ms) => void (now += ms) },
    );
    closers.push(() => c.close());
    const deadline = new Deadline(1000, { now: () => now });
    await expect(c.activation.status(code, { deadline })).resolves.toMatchObject({ available: 2 });
    expect(deadline.at).toBe(6000);
    expect(deadline.remainingMs()).toBe(1000);
  });

  it("a deadline's signal interrupts a safe call's wait at once, but not a call that changes something", async () => {
    const { url } = await silent();
    const c = client(`${url}/functions/v1`);
    const interrupt = new AbortController();
    const deadline = new Deadline(1500, { name: 'PLUGIN_LICENSE_TIMEOUT', signal: interrupt.signal });
    const safe = rejection(c.activation.status(code, { deadline }));
    const unsafe = rejection(c.activation.activate({ code, machine_id: 'm1' }, { deadline }));
    const started = Date.now();
    await new Promise((r) => setTimeout(r, 100));
    interrupt.abort();
    const stopped = await safe;
    expect(stopped.name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(1000);
    const ended = await unsafe; // runs to its deadline: its outcome is then known to be "no answer"
    expect(isTimeoutError(ended)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });

  it('without a deadline, nothing changes: each attempt has timeoutMs and says so', async () => {
    const { url } = await silent();
    const c = client(`${url}/functions/v1`, { timeoutMs: 300, retry: false });
    const e = await rejection(c.activation.status(code));
    expect(e.message).toMatch(/no answer from GET \/plugin-activation\/status\/:code within 300 ms/);
  });

  it('bound(): an answer that comes another way waits no longer than the deadline, and Ctrl-C ends it', async () => {
    const never = new Promise<never>(() => undefined);
    const d = new Deadline(300, { name: 'PLUGIN_LICENSE_TIMEOUT' });
    const started = Date.now();
    const e = await rejection(d.bound(never, 'asked through the agent'));
    expect(Date.now() - started).toBeLessThan(300 + SLACK_MS);
    expect(e.message).toMatch(/^no answer from the service within 0\.3 s \(PLUGIN_LICENSE_TIMEOUT\) \(asked through the agent\); .*raise PLUGIN_LICENSE_TIMEOUT/);
    await expect(d.bound(Promise.resolve(1), 'x')).rejects.toThrow(/within 0\.3 s/); // spent: at once
    const interrupt = new AbortController();
    const long = new Deadline(60_000, { signal: interrupt.signal });
    const waiting = rejection(long.bound(never, 'x'));
    interrupt.abort();
    expect((await waiting).name).toBe('AbortError');
    await expect(new Deadline(60_000).bound(Promise.resolve('answer'), 'x')).resolves.toBe('answer');
  });

  it('the activation calls (no async wrapper on the hot path) still reject, never throw, on a body that is not an object', async () => {
    const c = client('http://127.0.0.1:9/functions/v1');
    for (const call of [c.activation.activate, c.activation.deactivate, c.activation.validate]) {
      let thrown: unknown;
      let returned: Promise<unknown> | undefined;
      try {
        returned = call(null as never);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeUndefined();
      const e = await rejection(returned as Promise<unknown>);
      expect(isConfigError(e) && e.message).toMatch(/body must be an object/);
    }
  });

  it('refuses what is not a deadline, with words', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '1000' as unknown as number]) {
      expect(() => new Deadline(bad)).toThrow(/a deadline must be a positive number of milliseconds/);
    }
    const e = (() => {
      try {
        client('http://127.0.0.1:9/functions/v1', { deadline: 1000 as unknown as Deadline });
      } catch (err) {
        return err;
      }
      return undefined;
    })();
    expect(isConfigError(e) && e.message).toMatch(/deadline must be a Deadline/);
    expect(isNetworkError(e)).toBe(false);
  });
});
