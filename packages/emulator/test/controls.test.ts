import { ErrorBody } from '@plugin-license/api';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { control, generateCode } from '@plugin-license/test-utils';
import { startEmulator } from '../src/index.js';
import { call } from './http.js';
import { useEmulator } from './helpers.js';

const T0 = Date.UTC(2031, 5, 15, 12, 0, 0);
const { emu, ctl } = useEmulator({ now: () => T0, rateLimits: { activation: 10_000, builds: 10_000, general: 10_000, trigger: 10_000 } }, { reset: true });

describe('faults', () => {
  it('error answers the next `count` service requests with the status and the error body, then recovers', async () => {
    expect(await ctl.faults({ mode: 'error', status: 503, count: 2 })).toMatchObject({ mode: 'error', status: 503, remaining: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await call(emu, 'GET', '/sdk/status');
      expect(res.status).toBe(503);
      expect(ErrorBody.parse(res.json)).toMatchObject({ error: 'internal_error', details: { fault: 'error' } });
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
    }
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);

    await ctl.faults({ mode: 'error', status: 429 });
    const limited = await call(emu, 'POST', '/plugin-activation/validate', { body: { code: 'x', machine_id: 'm' }, token: null });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate_limited');
    expect(limited.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);
  });

  it('offline destroys the connection of service requests but not of controls', async () => {
    await ctl.faults({ mode: 'offline' });
    await expect(request(`${emu.baseUrl}/sdk/status`, { headers: { authorization: `Bearer ${emu.token}` } })).rejects.toMatchObject({
      code: expect.stringMatching(/UND_ERR_SOCKET|ECONNRESET/),
    });
    expect(((await ctl.state()).faults as { mode: string }).mode).toBe('offline');
    await expect(request(`${emu.baseUrl}/plugin-activation/validate`, { method: 'POST', body: '{}' })).rejects.toThrow();
    await ctl.faults({ mode: 'none' });
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);

    await ctl.faults({ mode: 'offline', count: 1 });
    await expect(request(`${emu.baseUrl}/sdk/status`)).rejects.toThrow();
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);
  });

  it('latency holds service requests back, so a client time-out fires', async () => {
    const dispatcher = new Agent({ headersTimeout: 100, keepAliveTimeout: 10 });
    try {
      await ctl.faults({ mode: 'latency', latency_ms: 30_000 });
      await expect(request(`${emu.baseUrl}/sdk/status`, { dispatcher })).rejects.toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
      // controls are not delayed
      const state = await request(`${emu.origin}/__emulator/state`, { dispatcher });
      expect(state.statusCode).toBe(200);
      await state.body.dump();
      await ctl.faults({ mode: 'none' });
      const ok = await request(`${emu.baseUrl}/sdk/status`, { dispatcher, headers: { authorization: `Bearer ${emu.token}` } });
      expect(ok.statusCode).toBe(200);
      await ok.body.dump();
    } finally {
      await dispatcher.close();
    }
  });

  it('latency with a count delays only that many requests and still answers', async () => {
    await ctl.faults({ mode: 'latency', latency_ms: 1, count: 1 });
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);
    expect(((await ctl.state()).faults as { mode: string }).mode).toBe('none');
  });

  describe('hold: service requests wait for the test to release them, never for a window of time', () => {
    const activate = (code: string, machine_id: string, signal?: AbortSignal) =>
      request(`${emu.baseUrl}/plugin-activation/activate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code, machine_id }),
        ...(signal ? { signal } : {}),
      });
    const slots = async (code: string): Promise<number> =>
      ((await call(emu, 'GET', `/plugin-activation/status/${code}`)).body as { activations: number }).activations;

    it('holds each request until released, lists it with the code hidden, and a release answers once it was answered', async () => {
      const code = await generateCode(emu.baseUrl, emu.token, emu.projectId);
      expect(await ctl.faults({ mode: 'hold' })).toMatchObject({ mode: 'hold', remaining: null });
      let answered = false;
      const pending = call(emu, 'GET', `/plugin-activation/status/${code}`).then((r) => ((answered = true), r));
      const held = await ctl.held(1);
      expect(held).toEqual([{ method: 'GET', path: expect.stringMatching(/^\/functions\/v1\/plugin-activation\/status\/[0-9a-f]{4}…[0-9a-f]{4}$/), arrived_at: new Date(T0).toISOString() }]);
      expect(JSON.stringify(await ctl.state())).not.toContain(`status/${code}`);
      // Controls are never held; the request stays held whatever else the test does.
      await ctl.clock({ advance_ms: 0 });
      expect(answered).toBe(false);
      const { released, held: left } = await ctl.releaseHeld();
      expect(released).toHaveLength(1);
      expect(left).toEqual([]);
      expect((await pending).status).toBe(200);
      // Still in force for the next request, until changed.
      const again = call(emu, 'GET', '/sdk/status');
      expect(await ctl.held(1)).toHaveLength(1);
      await ctl.faults({ mode: 'none' }); // none lets it go
      expect((await again).status).toBe(200);
      expect(await ctl.held()).toEqual([]);
    });

    it('with a count holds only that many; the oldest are released first', async () => {
      const codes = [await generateCode(emu.baseUrl, emu.token, emu.projectId, 1), await generateCode(emu.baseUrl, emu.token, emu.projectId, 1)];
      await ctl.faults({ mode: 'hold', count: 2 });
      const first = activate(codes[0]!, 'machine-one');
      expect(await ctl.held(1)).toHaveLength(1);
      const second = activate(codes[1]!, 'machine-two');
      expect(await ctl.held(2)).toHaveLength(2);
      expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200); // the third is not held
      expect(((await ctl.state()).faults as { mode: string }).mode).toBe('none');
      const one = await ctl.releaseHeld(1);
      expect(one.released).toHaveLength(1);
      expect(one.held).toHaveLength(1);
      expect(await slots(codes[0]!)).toBe(1);
      expect(await slots(codes[1]!)).toBe(0);
      await ctl.releaseHeld();
      expect(await slots(codes[1]!)).toBe(1);
      for (const res of [await first, await second]) {
        expect(res.statusCode).toBe(200);
        await res.body.dump();
      }
    });

    it('a request whose caller has gone is still handled when released, as a real service would', async () => {
      const code = await generateCode(emu.baseUrl, emu.token, emu.projectId);
      await ctl.faults({ mode: 'hold' });
      const caller = new AbortController();
      const gone = activate(code, 'machine-gone', caller.signal).catch((e: unknown) => e);
      await ctl.held(1);
      caller.abort();
      expect(await gone).toBeInstanceOf(Error);
      expect(await ctl.releaseHeld()).toMatchObject({ released: [{ method: 'POST', path: '/functions/v1/plugin-activation/activate' }] });
      await ctl.faults({ mode: 'none' });
      expect(await slots(code)).toBe(1);
    });

    it('a fault set while a request is held hits the next ones, not the held one', async () => {
      const code = await generateCode(emu.baseUrl, emu.token, emu.projectId);
      await ctl.faults({ mode: 'hold', count: 1 });
      const held = activate(code, 'machine-held');
      await ctl.held(1);
      await ctl.faults({ mode: 'error', status: 503 });
      await ctl.releaseHeld();
      const res = await held;
      expect(res.statusCode).toBe(200);
      await res.body.dump();
      expect((await call(emu, 'GET', '/sdk/status')).status).toBe(503);
    });

    it('held waits for the requests to arrive, and answers with what is held after wait_ms', async () => {
      await ctl.faults({ mode: 'hold' });
      const waiting = ctl.held(2);
      const a = call(emu, 'GET', '/sdk/status');
      const b = call(emu, 'GET', '/sdk/status');
      expect(await waiting).toHaveLength(2);
      const short = await call(emu, 'GET', '/__emulator/held?at_least=3&wait_ms=0');
      expect(short.status).toBe(200);
      expect((short.body.held as unknown[]).length).toBe(2);
      await ctl.reset(); // reset lets them go too
      expect([(await a).status, (await b).status]).toEqual([200, 200]);
    });

    it('closing the emulator with requests held ends them at once', async () => {
      const other = await startEmulator();
      try {
        await control(other.origin).faults({ mode: 'hold' });
        const res = request(`${other.baseUrl}/sdk/status`).catch((e: unknown) => e);
        await control(other.origin).held(1);
        await other.close();
        expect(await res).toBeInstanceOf(Error);
      } finally {
        await other.close();
      }
    });

    it('refuses malformed held queries and release bodies, naming the field', async () => {
      for (const query of ['at_least=-1', 'at_least=x', 'wait_ms=600001', 'wait_ms=1.5', 'later=1']) {
        const res = await call(emu, 'GET', `/__emulator/held?${query}`);
        expect(res.status, query).toBe(400);
        expect(res.body.error, query).toBe('bad_request');
      }
      for (const body of [{ count: 0 }, { count: 'all' }, { everything: true }, []]) {
        const res = await call(emu, 'POST', '/__emulator/held/release', { body });
        expect(res.status, JSON.stringify(body)).toBe(400);
        expect(res.body.error).toBe('bad_request');
      }
      expect((await call(emu, 'POST', '/__emulator/faults', { body: { mode: 'hold', count: 0 } })).status).toBe(400);
    });
  });

  it('refuses malformed fault bodies', async () => {
    for (const body of [{ mode: 'latency' }, { mode: 'error', status: 200 }, { mode: 'error', count: 0 }, {}]) {
      const res = await call(emu, 'POST', '/__emulator/faults', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('bad_request');
    }
  });
});

describe('clock', () => {
  it('moves by advance_ms, jumps to now (ISO or epoch ms), and resets', async () => {
    expect(await ctl.clock({ advance_ms: 90_000 })).toMatchObject({ now_ms: T0 + 90_000, offset_ms: 90_000 });
    expect(await ctl.clock({ now: '2032-02-29T00:00:00Z' })).toMatchObject({ now: '2032-02-29T00:00:00.000Z' });
    expect((await call(emu, 'GET', '/builds/usage')).body).toMatchObject({ period: '2032-02', reset_at: '2032-03-01T00:00:00.000Z' });
    expect(await ctl.clock({ now: T0 - 1000 })).toMatchObject({ now_ms: T0 - 1000 });
    for (const body of [{ advance_ms: 1, now: 1 }, { later: 1 }, { now: 'soon' }]) {
      expect((await call(emu, 'POST', '/__emulator/clock', { body })).status).toBe(400);
    }
    await ctl.reset();
    expect(((await ctl.state()).clock as { now_ms: number }).now_ms).toBe(T0);
  });

  it("answers with a Date header on its own clock, so a service whose clock is off is simulated whole", async () => {
    await ctl.clock({ advance_ms: 40 * 86_400_000 });
    const res = await call(emu, 'GET', '/sdk/status');
    const date = Date.parse(String(res.headers.date));
    expect(date).toBe(Math.floor((T0 + 40 * 86_400_000) / 1000) * 1000);
    const reset = Number(res.headers['x-ratelimit-reset']) * 1000;
    expect(reset - date).toBeGreaterThan(0);
    expect(reset - date).toBeLessThanOrEqual(60_000);
    const control = await call(emu, 'GET', '/__emulator/state');
    expect(Date.parse(String(control.headers.date))).toBe(date);
  });

  it('refuses to move the clock outside 1970..9999 and keeps it where it was', async () => {
    await ctl.clock({ now: '9999-12-31T00:00:00Z' });
    for (const body of [{ advance_ms: 1e13 }, { now: 8.64e15 }, { now: '+275760-09-13T00:00:00Z' }, { now: -1 }]) {
      const res = await call(emu, 'POST', '/__emulator/clock', { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(ErrorBody.parse(res.json).error).toBe('bad_request');
    }
    await ctl.clock({ now: 0 });
    const back = await call(emu, 'POST', '/__emulator/clock', { body: { advance_ms: -1 } });
    expect(back.status).toBe(400);
    expect(back.body.details).toMatchObject({ field: 'advance_ms' });
    expect(((await ctl.state()).clock as { now_ms: number }).now_ms).toBe(0);
    const usage = await call(emu, 'GET', '/builds/usage');
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({ period: '1970-01' });
  });

  it('stamps activation and generation times with the emulator clock', async () => {
    await ctl.clock({ now: '2033-01-01T00:00:00Z' });
    const res = await call(emu, 'POST', '/plugin-activation/generate', { body: { project_id: emu.projectId, max_activations: 1 } });
    expect(res.body.created_at).toBe('2033-01-01T00:00:00.000Z');
  });
  it('expires the token on the emulator clock (ten-year lifetime)', async () => {
    await ctl.clock({ advance_ms: 11 * 366 * 24 * 3600 * 1000 });
    const stale = await call(emu, 'GET', '/sdk/status');
    expect(stale.status).toBe(401);
    expect(stale.body.message).toContain('expired');
    expect(stale.text).not.toContain(emu.token);
  });
});

describe('reset and state', () => {
  it('reset drops codes and builds but keeps the token and demo project', async () => {
    const code = await generateCode(emu.baseUrl, emu.token, emu.projectId, 1);
    await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId } });
    await ctl.faults({ mode: 'error', count: 5 });
    let state = await ctl.state();
    expect((state.codes as Array<{ code: string }>).map((c) => c.code)).toContain(code);
    expect(state.builds).toHaveLength(2);
    expect(JSON.stringify(state)).not.toContain('signing_key');

    await ctl.reset();
    state = await ctl.state();
    expect(state.codes).toEqual([]);
    expect(state.builds).toHaveLength(1);
    expect(state.faults).toMatchObject({ mode: 'none' });
    expect(state.account).toMatchObject({ project_id: emu.projectId, token: emu.token, other_project_id: emu.otherProjectId });
    expect((await call(emu, 'GET', `/plugin-activation/status/${code}`)).status).toBe(404);
    expect((await call(emu, 'GET', `/plugin-activation/project/${emu.projectId}/keys`)).status).toBe(200);
  });
});
