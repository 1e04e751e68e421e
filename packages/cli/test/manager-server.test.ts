import { request, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ManagerServer, type ManagerBackend, type Timers } from '../src/manager/server.js';
import { bearer, notTheSession, raw, session, type Manager } from './manager-helpers.js';

// The manager's server from source, its timers injected: when it stops for idleness, with no
// time waited. The browser tests drive the same server in the built CLI.

/** Timers run by hand: `fire()` runs what is due as if its time had come. */
function manualTimers(): Timers & { armed: () => number; fire: () => void } {
  const pending = new Map<number, () => void>();
  let next = 1;
  return {
    setTimeout: (fn) => {
      pending.set(next, fn);
      return next++;
    },
    clearTimeout: (h) => void pending.delete(h as number),
    armed: () => pending.size,
    fire: () => {
      const due = [...pending.values()];
      pending.clear();
      for (const fn of due) fn();
    },
  };
}

/** How many times the `counted` action ran. */
let ran = 0;
const backend: ManagerBackend = {
  snapshot: () => ({ licenses: [] }),
  onChange: () => () => undefined,
  actions: {
    echo: async (body) => body,
    counted: async () => ({ ran: ++ran }),
    fails: async () => {
      throw new Error('no');
    },
  },
  fail: (err) => ({ status: 502, code: 'failed', message: (err as Error).message }),
};

let server: ManagerServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function started(timers: Timers, onIdle: () => void = () => undefined): Promise<Pick<Manager, 'port' | 'origin' | 'token'>> {
  server = new ManagerServer({ port: 0, idleMs: 15 * 60_000, backend, onIdle, timers });
  const { url } = await server.listen();
  const u = new URL(url);
  return { port: Number(u.port), origin: u.origin, token: u.hash.replace('#token=', '') };
}

describe('the manager server', () => {
  it('stops when the idle time passes with no page connected, and not while one is', async () => {
    const timers = manualTimers();
    let idle = 0;
    const m = await started(timers, () => idle++);
    expect(timers.armed()).toBe(1);
    const s = await session(m);

    // A page connects: the count stops; it closes: the count starts again.
    const stream = await new Promise<IncomingMessage>((resolve) => request({ host: '127.0.0.1', port: m.port, path: '/api/events', headers: { host: `127.0.0.1:${m.port}`, ...bearer(s) } }, resolve).end());
    expect(stream.statusCode).toBe(200);
    await expect.poll(() => server!.pages).toBe(1);
    expect(timers.armed()).toBe(0);
    stream.destroy();
    await expect.poll(() => server!.pages).toBe(0);
    expect(timers.armed()).toBe(1);
    expect(idle).toBe(0);
    timers.fire();
    expect(idle).toBe(1);
  });

  it('refuses a body that is not a JSON object, or too large, and says a failed action in the backend\'s words', async () => {
    const m = await started(manualTimers());
    const s = await session(m);
    const headers = { ...bearer(s), origin: m.origin, 'content-type': 'application/json' };
    expect(JSON.parse((await raw(m.port, 'POST', '/api/echo', headers, '{"a":1}')).body)).toEqual({ a: 1 });
    for (const [body, status] of [['{', 400], ['[1]', 400], ['"x"', 400], [`{"a":"${'x'.repeat(200 * 1024)}"}`, 413]] as const) {
      const r = await raw(m.port, 'POST', '/api/echo', headers, body);
      expect(r.status, body.slice(0, 10)).toBe(status);
      expect(JSON.parse(r.body).error.message).toMatch(/JSON|larger than 128 KiB/);
    }
    expect((await raw(m.port, 'POST', '/api/echo', { ...headers, 'content-type': 'text/plain' }, '{}')).status).toBe(415);
    const failed = await raw(m.port, 'POST', '/api/fails', headers, '{}');
    expect(failed.status).toBe(502);
    expect(JSON.parse(failed.body)).toEqual({ error: { code: 'failed', message: 'no' } });
    // Only what the backend names: not its prototype, not a GET.
    expect((await raw(m.port, 'POST', '/api/constructor', headers, '{}')).status).toBe(404);
    expect((await raw(m.port, 'GET', '/api/echo', bearer(s))).status).toBe(404);
    expect((await raw(m.port, 'GET', '/nothing-here')).status).toBe(404);
  });

  it('takes the session from its header alone (Authorization: Bearer), sets no cookie, and refuses anything else with 401 before any route runs', async () => {
    const m = await started(manualTimers());
    ran = 0;
    const exchanged = await raw(m.port, 'POST', '/api/session', { origin: m.origin, 'content-type': 'application/json' }, JSON.stringify({ token: m.token }));
    expect(exchanged.status).toBe(200);
    expect(exchanged.headers['set-cookie']).toBeUndefined();
    expect(exchanged.headers['cache-control']).toBe('no-store');
    const s = (JSON.parse(exchanged.body) as { session: string }).session;
    expect(s).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s).not.toBe(m.token);

    const json = { origin: m.origin, 'content-type': 'application/json' };
    for (const [label, headers, query] of notTheSession(s, m.token)) {
      for (const [method, path] of [['GET', '/api/events'], ['POST', '/api/counted'], ['POST', '/api/nothing']] as const) {
        const r = await raw(m.port, method, `${path}${query}`, method === 'POST' ? { ...json, ...headers } : headers, method === 'POST' ? '{}' : undefined);
        expect(r.status, `${label}: ${method} ${path}`).toBe(401);
        expect(JSON.parse(r.body).error.code).toBe('no_session');
        expect(r.headers['www-authenticate']).toBe('Bearer realm="license manager"');
        expect(r.headers['set-cookie'], label).toBeUndefined();
        expect(r.body).not.toContain(s);
      }
    }
    expect(ran).toBe(0);
    // The scheme's case does not matter (RFC 7235); the session does.
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const r = await raw(m.port, 'POST', '/api/counted', { ...json, authorization: `${scheme} ${s}` }, '{}');
      expect(r.status, scheme).toBe(200);
      expect(r.headers['set-cookie']).toBeUndefined();
    }
    expect(ran).toBe(3);
    const stream = await raw(m.port, 'GET', '/api/events', bearer(s));
    expect(stream.status).toBe(200);
    expect(stream.body).toMatch(/^retry: 2000\n\nevent: state\ndata: \{"licenses":\[\]\}\n\n/);
    for (const r of [exchanged, stream, await raw(m.port, 'GET', '/'), await raw(m.port, 'GET', '/app.js')]) {
      expect(r.headers['set-cookie']).toBeUndefined();
      expect(Object.keys(r.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
  });
});
