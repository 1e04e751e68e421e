// The relay's rules in time, with an injected clock: the handler served by its Node adapter in
// this process (the same code the processes run), in front of the emulator as an HTTP server.
import { startEmulator } from '@plugin-license/emulator';
import { startService, type TestService } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createRelay, loadRelayConfig, type Relay } from '../src/index.js';
import { serveRelay, type RelayServer } from '../src/node.js';
import { answerHoldingProxy, call, makeKey, verifiedTicket } from './helpers.js';
import { relayEnv } from './suite.js';

const key = makeKey();
const T0 = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('the relay in time (injected clock)', () => {
  let service: TestService;
  let nowMs = T0;
  const running: RelayServer[] = [];

  beforeAll(async () => {
    service = await startService(startEmulator);
  });
  afterEach(async () => {
    await service.control.faults({ mode: 'none' });
    for (const s of running.splice(0)) await s.close();
  });
  afterAll(async () => {
    await service?.close();
  });

  /** A relay on a port of its own whose clock is `nowMs`. */
  async function relayAt(more: Record<string, string> = {}): Promise<{ relay: Relay; url: string; origin: string }> {
    nowMs = T0;
    const relay = createRelay(await loadRelayConfig(relayEnv(service, [key], more)), { now: () => nowMs });
    const server = await serveRelay(relay, { port: 0 });
    running.push(server);
    return { relay, url: `${server.origin}/functions/v1/plugin-activation`, origin: server.origin };
  }
  const body = (code: string, machine = 'm1_clock') => ({ code, machine_id: machine, project_id: service.emulator.projectId });

  it('a code the list lacks is looked for again at most once every 10 s per project', async () => {
    const { url } = await relayAt();
    expect((await call('POST', `${url}/validate`, body(await service.code()))).status).toBe(200); // lists the codes at T0
    const later = await service.code();
    // With the service offline, a new listing would be a 502: the 403 says none was tried.
    await service.control.faults({ mode: 'offline' });
    nowMs = T0 + 5_000;
    expect((await call('POST', `${url}/validate`, body(later))).body.error).toBe('wrong_project');
    nowMs = T0 + 9_999;
    expect((await call('POST', `${url}/validate`, body(later))).body.error).toBe('wrong_project');
    await service.control.faults({ mode: 'none' });
    nowMs = T0 + 10_000;
    const found = await call('POST', `${url}/validate`, body(later));
    expect([found.status, found.body]).toEqual([200, { valid: false, reason: 'not_activated' }]);
  });

  it('the requests waiting for a listing share it, and a listing that failed is said as the failure, not as "not this project\'s"', async () => {
    const { url, origin } = await relayAt();
    const codes = [await service.code(), await service.code(), await service.code()];
    await service.control.faults({ mode: 'hold', count: 1 });
    const pending = Promise.all(codes.map((c) => call('POST', `${url}/validate`, body(c))));
    const held = await service.control.held(1);
    expect(held[0]!.path).toMatch(/\/plugin-activation\/project\/[^/]+\/keys$/);
    await expect.poll(async () => (await call('GET', `${origin}/healthz`)).body).toMatchObject({ requests_in_flight: 3, code_lists_in_flight: 1 });
    await service.control.releaseHeld();
    for (const r of await pending) expect([r.status, r.body.reason]).toEqual([200, 'not_activated']);
    // A listing the service refuses (429) at the next miss: that answer, with its headers.
    nowMs += 10_000;
    await service.control.faults({ mode: 'error', status: 429, count: 1 });
    const limited = await call('POST', `${url}/validate`, body('00000000-0000-4000-8000-000000000001'));
    expect([limited.status, limited.body.error, limited.headers.get('x-ratelimit-limit') !== null]).toEqual([429, 'rate_limited', true]);
    // Within its 10 s, the failure stands for every miss; a known code still goes through.
    expect((await call('POST', `${url}/validate`, body('00000000-0000-4000-8000-000000000002'))).status).toBe(429);
    expect((await call('POST', `${url}/validate`, body(codes[0]!))).status).toBe(200);
  });

  it('a validate answer is reused until validate_cache_s has passed, so a revocation reaches new tickets within it', async () => {
    const { url } = await relayAt({ RELAY_VALIDATE_CACHE_S: '300' });
    const code = await service.code();
    await call('POST', `${url}/activate`, body(code));
    expect((await call('POST', `${url}/validate`, body(code))).body.valid).toBe(true);
    await service.control.revoke(code);
    nowMs = T0 + 299_999;
    const reused = await call('POST', `${url}/validate`, body(code));
    expect([reused.body.valid, reused.headers.get('cache-status')]).toEqual([true, 'plugin-license-relay; hit']);
    expect(verifiedTicket(reused.body.signed_ticket, key.publicKey).issued_at).toBe(Math.floor(nowMs / 1000));
    nowMs = T0 + 300_000;
    const fresh = await call('POST', `${url}/validate`, body(code));
    expect([fresh.body.valid, fresh.body.reason, fresh.body.signed_ticket]).toEqual([false, 'code_revoked', undefined]);
  });

  it('RELAY_VALIDATE_CACHE_S=0 asks the service every time', async () => {
    const { url } = await relayAt({ RELAY_VALIDATE_CACHE_S: '0' });
    const code = await service.code();
    await call('POST', `${url}/activate`, body(code));
    expect((await call('POST', `${url}/validate`, body(code))).body.valid).toBe(true);
    await service.control.faults({ mode: 'offline' });
    expect((await call('POST', `${url}/validate`, body(code))).status).toBe(502);
  });

  it('a validate answer that was in flight while the machine was deactivated through the relay is not kept', async () => {
    // The emulator handles a held request only when released; a service that answered before
    // the deactivation but whose answer arrived after it is a proxy holding the answer.
    const proxy = await answerHoldingProxy(service.emulator.baseUrl);
    try {
      const { url } = await relayAt({ RELAY_SERVICE_URL: proxy.baseUrl });
      const code = await service.code();
      await call('POST', `${url}/activate`, body(code));
      const answered = proxy.holdNext('/plugin-activation/validate');
      const validating = call('POST', `${url}/validate`, body(code));
      await answered;
      expect((await call('POST', `${url}/deactivate`, body(code))).body.success).toBe(true);
      proxy.release();
      expect((await validating).body.valid).toBe(true); // what the service said before the deactivation
      const after = await call('POST', `${url}/validate`, body(code));
      expect([after.body.valid, after.body.reason, after.headers.get('cache-status')]).toEqual([false, 'deactivated', 'plugin-license-relay; fwd=miss']);
    } finally {
      await proxy.close();
    }
  });

  it('tickets are issued now on the relay\'s clock and live RELAY_TICKET_DAYS days', async () => {
    const { url } = await relayAt({ RELAY_TICKET_DAYS: '7' });
    nowMs = T0 + 1_999;
    const r = await call('POST', `${url}/activate`, body(await service.code()));
    const fields = verifiedTicket(r.body.signed_ticket, key.publicKey);
    expect([fields.issued_at, fields.valid_until]).toEqual([T0 / 1000 + 1, T0 / 1000 + 1 + 7 * 86_400]);
  });
});

describe("the service's own rate limiter through the relay", () => {
  it('its 429, Retry-After and X-RateLimit-* reach the client; the relay sends nothing more', async () => {
    const service = await startService(startEmulator, { rateLimits: { activation: 2 } });
    const relay = createRelay(await loadRelayConfig(relayEnv(service, [key])));
    const server = await serveRelay(relay, { port: 0 });
    try {
      const url = `${server.origin}/functions/v1/plugin-activation/activate`;
      const code = await service.code(10);
      const answers = [];
      for (const n of [1, 2, 3]) answers.push(await call('POST', url, { code, machine_id: `m1_rate-${n}`, project_id: service.emulator.projectId }));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
      const limited = answers[2]!;
      expect(limited.body.error).toBe('rate_limited');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect([limited.headers.get('x-ratelimit-limit'), limited.headers.get('x-ratelimit-remaining')]).toEqual(['2', '0']);
    } finally {
      await server.close();
      await service.close();
    }
  });
});
