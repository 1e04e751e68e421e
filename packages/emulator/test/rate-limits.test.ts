import { ErrorBody } from '@plugin-license/api';
import { describe, expect, it } from 'vitest';
import { generateCode } from '@plugin-license/test-utils';
import { DEFAULT_RATE_LIMITS, startEmulator } from '../src/index.js';
import { call } from './http.js';
import { useEmulator } from './helpers.js';

// A frozen base clock: time only moves through /__emulator/clock, so windows are exact.
const T0 = Date.UTC(2030, 0, 1, 0, 0, 10);
const WINDOW_END_S = Date.UTC(2030, 0, 1, 0, 1, 0) / 1000;
const { emu, ctl } = useEmulator({ now: () => T0, rateLimits: { activation: 3, builds: 2, general: 2, trigger: 2 } }, { reset: true });

const validate = () => call(emu, 'POST', '/plugin-activation/validate', { body: { code: 'x', machine_id: 'm' }, token: null });

describe('rate limits', () => {
  it('sends the three headers and answers 429 rate_limited past the limit until the window ends on the emulator clock', async () => {
    for (const remaining of [2, 1, 0]) {
      const res = await validate();
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe('3');
      expect(res.headers['x-ratelimit-remaining']).toBe(String(remaining));
      expect(res.headers['x-ratelimit-reset']).toBe(String(WINDOW_END_S));
    }
    const limited = await validate();
    expect(limited.status).toBe(429);
    expect(ErrorBody.parse(limited.json)).toMatchObject({ error: 'rate_limited', details: { scope: 'activation', limit: 3 } });
    expect(limited.headers['x-ratelimit-remaining']).toBe('0');
    expect(limited.headers['x-ratelimit-reset']).toBe(String(WINDOW_END_S));
    expect(limited.headers['retry-after']).toBe('50');

    await ctl.clock({ advance_ms: 49_000 });
    expect((await validate()).status).toBe(429);

    await ctl.clock({ advance_ms: 1_000 });
    const fresh = await validate();
    expect(fresh.status).toBe(200);
    expect(fresh.headers['x-ratelimit-remaining']).toBe('2');
    expect(fresh.headers['x-ratelimit-reset']).toBe(String(WINDOW_END_S + 60));
  });

  it('counts each scope apart and puts the headers on error answers too', async () => {
    for (let i = 0; i < 2; i++) expect((await call(emu, 'GET', '/builds/usage')).status).toBe(200);
    expect((await call(emu, 'GET', '/builds/usage')).status).toBe(429);
    const general = await call(emu, 'GET', '/sdk/status');
    expect(general.status).toBe(200);
    expect(general.headers['x-ratelimit-limit']).toBe('2');
    for (const res of [await call(emu, 'GET', '/nope', { token: null }), await call(emu, 'GET', '/plugin-activation/activate', { token: null })]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers['x-ratelimit-limit']).toBeDefined();
      expect(res.headers['x-ratelimit-reset']).toBe(String(WINDOW_END_S));
    }
    const controlAnswer = await call(emu, 'GET', '/__emulator/state');
    expect(controlAnswer.headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('keys clients by token subject when the bearer is valid, else by address', async () => {
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(200);
    expect((await call(emu, 'GET', '/sdk/status')).status).toBe(429);
    // the same machine without a token (or with a bad one) has its own counter
    const anonymous = await call(emu, 'GET', '/sdk/status', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['x-ratelimit-remaining']).toBe('1');
    expect((await call(emu, 'GET', '/sdk/status', { token: 'bad' })).headers['x-ratelimit-remaining']).toBe('0');
    expect((await call(emu, 'GET', '/sdk/status', { token: 'bad' })).status).toBe(429);
  });

  it('limits manual triggers per project, whoever calls', async () => {
    const send = (projectId: string, secret: string) =>
      call(emu, 'POST', `/external-builds/${projectId}/trigger`, { body: { ref: 'refs/heads/main' }, token: null, headers: { 'x-webhook-secret': secret } });
    expect((await send(emu.projectId, emu.webhookSecret)).status).toBe(201);
    expect((await send(emu.projectId, 'wrong')).status).toBe(401);
    const limited = await send(emu.projectId, emu.webhookSecret);
    expect(limited.status).toBe(429);
    expect(limited.body.details).toMatchObject({ scope: 'trigger', limit: 2 });
    // The wrongly signed request used up the minute as much as the good one, and the 429 says so.
    expect(limited.body.message).toMatch(/per minute per project, and every request counts, unauthenticated or wrongly signed ones too/);
    // another project has its own window
    expect((await send(emu.otherProjectId, 'wrong')).status).toBe(401);
  });

  it('raised limits let load through, and the defaults are those of the interface', async () => {
    expect(DEFAULT_RATE_LIMITS).toEqual({ activation: 60, builds: 10, general: 100, trigger: 10 });
    const fast = await startEmulator({ now: () => T0, rateLimits: { activation: 500 } });
    try {
      const code = await generateCode(fast.baseUrl, fast.token, fast.projectId, 1);
      for (let i = 0; i < 200; i++) {
        const res = await call(fast, 'POST', '/plugin-activation/validate', { body: { code, machine_id: 'm' }, token: null });
        expect(res.status).toBe(200);
      }
      expect((await call(fast, 'GET', '/sdk/status')).headers['x-ratelimit-limit']).toBe('100');
    } finally {
      await fast.close();
    }
  });

  it('refuses limits that are not positive whole numbers', async () => {
    await expect(startEmulator({ rateLimits: { builds: 0 } })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(startEmulator({ rateLimits: { general: 1.5 } })).rejects.toMatchObject({ code: 'invalid_option' });
  });
});
