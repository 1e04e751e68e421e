// The relay's behaviour, the same on every runtime: each runtime's test file runs this suite
// against one relay process of its own (started once per file), in front of the emulator as an
// HTTP server. Two keys throughout: the first signs, both are listed (a rotation in progress).
import { codeHint } from '@plugin-license/api';
import { parseTicketKeys, verifySignedTicket } from '@plugin-license/licensing';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startService, type TestService } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, makeKey, refusedStart, startRelay, verifiedTicket, type RelayProcess, type Runtime, type TestKey } from './helpers.js';

/** The RELAY_* environment for a relay in front of `service`, signing with `keys[0]`. */
export function relayEnv(service: TestService, keys: TestKey[], more: Record<string, string> = {}): Record<string, string> {
  return {
    RELAY_SIGNING_KEY: keys.map((k, i) => (i % 2 === 0 ? k.pem : k.seed)).join(','),
    RELAY_SERVICE_URL: service.emulator.baseUrl,
    RELAY_SERVICE_TOKEN: service.emulator.token,
    RELAY_APP: 'acme-audio',
    RELAY_PROJECTS: service.emulator.projectId.toUpperCase(),
    ...more,
  };
}

const DAY_S = 86_400;

export function relaySuite(runtime: Runtime): void {
  describe(`the relay on ${runtime}`, () => {
    let service: TestService<Emulator>;
    let relay: RelayProcess;
    const keys = [makeKey(), makeKey()];
    const codes: string[] = [];
    /** Every answer the relay gave, to look for secrets in. */
    const answers: string[] = [];
    let projectId: string;
    const machine = (n: number | string): string => `m1_${runtime}-machine-${n}`;

    const post = async (action: string, body: unknown) => {
      const r = await call('POST', `${relay.baseUrl}/plugin-activation/${action}`, body);
      answers.push(r.text);
      return r;
    };
    const request = (code: string, n: number | string, more: Record<string, unknown> = {}) => ({ code, machine_id: machine(n), project_id: projectId, ...more });
    const healthz = async () => (await call('GET', `${relay.origin}/healthz`)).body as { requests_in_flight: number; service_calls_in_flight: number };

    beforeAll(async () => {
      service = await startService(startEmulator);
      projectId = service.emulator.projectId;
      // Every code is made before the relay first lists the project's codes: a code made later is
      // not seen for 10 s (clock.test.ts proves that rule with an injected clock).
      for (let i = 0; i < 12; i++) codes.push(await service.code(8));
      relay = await startRelay(runtime, relayEnv(service, keys));
    });
    afterAll(async () => {
      await relay?.stop();
      await service?.close();
    });

    it('prints one start line: the base URL under /functions/v1 and every key, the signing one first', async () => {
      expect(relay.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/functions\/v1$/);
      expect(relay.info.keys).toEqual(keys.map((k) => ({ kid: k.kid, public_key: k.publicKey })));
      expect(relay.stdout().trim().split('\n')).toHaveLength(1);
      const listed = await call('GET', `${relay.origin}/.well-known/plugin-license-keys`);
      expect([listed.status, listed.body]).toEqual([200, { keys: relay.info.keys }]);
      expect((await call('GET', `${relay.origin}/healthz`)).status).toBe(200);
    });

    it('activate: the service answer plus a ticket signed by the first key for this app, project (lower case) and machine', async () => {
      const before = Math.floor(Date.now() / 1000);
      const r = await post('activate', request(codes[0]!, 1));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ success: true, activations: 1, max_activations: 8 });
      expect(r.headers.get('x-ratelimit-limit')).not.toBeNull();
      const fields = verifiedTicket(r.body.signed_ticket, keys[0]!.publicKey);
      expect(fields).toEqual({ v: 1, kid: keys[0]!.kid, app: 'acme-audio', project_id: projectId.toLowerCase(), machine_id: machine(1), code_hint: codeHint(codes[0]!), source: 'online', issued_at: expect.any(Number), valid_until: expect.any(Number) });
      expect(fields.issued_at).toBeGreaterThanOrEqual(before);
      expect(fields.issued_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      expect(fields.valid_until).toBe((fields.issued_at as number) + 30 * DAY_S);
      // The library's reader takes it, with the keys the start line lists.
      const reader = { keys: parseTicketKeys(relay.info.keys.map((k) => k.public_key)), app: 'acme-audio', projectId: projectId.toUpperCase(), machineId: machine(1), now: Math.floor(Date.now() / 1000) };
      expect(verifySignedTicket(r.body.signed_ticket as string, reader)).toEqual({ ok: true, fields });
      expect(verifySignedTicket(r.body.signed_ticket as string, { ...reader, machineId: machine(2) })).toMatchObject({ ok: false, reason: 'cache_invalid' });
      // The service's own answer, unchanged: it counted the slot.
      expect((await service.admin.activation.status(codes[0]!)).activations).toBe(1);
    });

    it('validate: a ticket when valid; none when not; a change through the relay is never hidden by its cache', async () => {
      const code = codes[1]!;
      const notYet = await post('validate', request(code, 2));
      expect([notYet.status, notYet.body]).toEqual([200, { valid: false, reason: 'not_activated' }]);
      expect((await post('activate', request(code, 2))).status).toBe(200);
      const valid = await post('validate', request(code, 2));
      expect(valid.body.valid).toBe(true);
      expect(verifiedTicket(valid.body.signed_ticket, keys[0]!.publicKey)).toMatchObject({ machine_id: machine(2), code_hint: codeHint(code) });
      const gone = await post('deactivate', request(code, 2));
      expect([gone.status, gone.body.success, gone.body.signed_ticket]).toEqual([200, true, undefined]);
      const after = await post('validate', request(code, 2));
      expect([after.body.valid, after.body.reason, after.body.signed_ticket]).toEqual([false, 'deactivated', undefined]);
    });

    it('validate answers are reused for a code and machine: the second asks nothing of the service, and is still signed', async () => {
      const code = codes[2]!;
      await post('activate', request(code, 3));
      const first = await post('validate', request(code, 3));
      expect(first.headers.get('cache-status')).toMatch(/fwd=miss/);
      await service.control.faults({ mode: 'offline' });
      try {
        const second = await post('validate', request(code, 3));
        expect([second.status, second.body.valid, second.headers.get('cache-status')]).toEqual([200, true, 'plugin-license-relay; hit']);
        verifiedTicket(second.body.signed_ticket, keys[0]!.publicKey);
        // Another machine's answer is its own: not cached, so the service (offline) is asked.
        expect((await post('validate', request(code, 'other'))).status).toBe(502);
      } finally {
        await service.control.faults({ mode: 'none' });
      }
    });

    it("the same routes without /functions/v1, as Supabase hands an Edge Function its path", async () => {
      const r = await call('POST', `${relay.origin}/plugin-activation/validate`, request(codes[0]!, 1));
      answers.push(r.text);
      expect([r.status, r.body.valid]).toEqual([200, true]);
      verifiedTicket(r.body.signed_ticket, keys[0]!.publicKey);
    });

    it('status is forwarded, found or not', async () => {
      const found = await call('GET', `${relay.baseUrl}/plugin-activation/status/${codes[0]}`);
      expect([found.status, found.body]).toEqual([200, { activations: 1, max_activations: 8, available: 7, is_revoked: false }]);
      const missing = await call('GET', `${relay.baseUrl}/plugin-activation/status/00000000-0000-4000-8000-000000000000`);
      expect([missing.status, missing.body.error]).toEqual([404, 'code_not_found']);
    });

    it('refuses 403 wrong_project a project it does not serve and a code that is not one of the project\'s, asking the service nothing', async () => {
      const other = await post('activate', request(codes[3]!, 4, { project_id: service.emulator.otherProjectId }));
      expect([other.status, other.body.error]).toEqual([403, 'wrong_project']);
      const foreign = await post('activate', request('00000000-0000-4000-8000-000000000000', 4));
      expect([foreign.status, foreign.body.error]).toEqual([403, 'wrong_project']);
      expect(other.body.message).toMatch(/does not serve project/);
      expect(foreign.body.message).not.toContain('00000000-0000-4000-8000-000000000000');
      expect((await service.admin.activation.status(codes[3]!)).activations).toBe(0);
    });

    it('identical concurrent requests share one call to the service', async () => {
      const body = request(codes[4]!, 5);
      await service.control.faults({ mode: 'hold' });
      let answers5: Awaited<ReturnType<typeof post>>[] = [];
      try {
        const pending = Promise.all(Array.from({ length: 5 }, () => post('activate', body)));
        await service.control.held(1);
        await expect.poll(healthz).toMatchObject({ requests_in_flight: 5, service_calls_in_flight: 1 });
        expect(await service.control.held()).toHaveLength(1);
        await service.control.releaseHeld();
        answers5 = await pending;
      } finally {
        await service.control.faults({ mode: 'none' });
      }
      for (const a of answers5) {
        expect([a.status, a.body.success, a.body.activations]).toEqual([200, true, 1]);
        verifiedTicket(a.body.signed_ticket, keys[0]!.publicKey);
      }
    });

    it("passes the service's 429 and its rate-limit headers through, and never retries past it", async () => {
      await service.control.faults({ mode: 'error', status: 429, count: 1 });
      const r = await post('activate', request(codes[5]!, 6));
      // A retry would have met no fault and succeeded.
      expect([r.status, r.body.error, r.body.signed_ticket]).toEqual([429, 'rate_limited', undefined]);
      for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'date']) expect(r.headers.get(h), h).not.toBeNull();
      expect((await service.admin.activation.status(codes[5]!)).activations).toBe(0);
    });

    it('a service that cannot be reached is a 502 in the service\'s error shape, never a valid answer', async () => {
      await service.control.faults({ mode: 'offline' });
      try {
        const r = await post('activate', request(codes[6]!, 7));
        expect([r.status, r.body.error, typeof r.body.message, r.body.signed_ticket]).toEqual([502, 'service_unreachable', 'string', undefined]);
      } finally {
        await service.control.faults({ mode: 'none' });
      }
    });

    it.each([
      ['not JSON', '{"code":', 'body'],
      ['an array', '[]', 'body'],
      ['no code', { machine_id: 'm1_x', project_id: 'P' }, 'code'],
      ['a number for a code', { code: 5, machine_id: 'm1_x', project_id: 'P' }, 'code'],
      ['an empty machine id', { code: 'C', machine_id: '', project_id: 'P' }, 'machine_id'],
      ['a machine id of 257 characters', { code: 'C', machine_id: 'm'.repeat(257), project_id: 'P' }, 'machine_id'],
      ['a control character', { code: 'C\u0007', machine_id: 'm1_x', project_id: 'P' }, 'code'],
      ['no project', { code: 'C', machine_id: 'm1_x' }, 'project_id'],
      ['an unknown field', { code: 'C', machine_id: 'm1_x', project_id: 'P', admin: true }, 'admin'],
      ['a plugin_id of another project', { code: 'C', machine_id: 'm1_x', project_id: 'P', plugin_id: 'Q' }, 'plugin_id'],
      ['__proto__', '{"__proto__":{"x":1},"code":"C","machine_id":"m","project_id":"P"}', '__proto__'],
    ])('a bad body (%s) is 400 bad_request naming the field', async (_, body, field) => {
      const fill = (v: unknown): unknown => (typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, x === 'C' ? codes[7] : x === 'P' ? projectId : x === 'Q' ? service.emulator.otherProjectId : x])) : v);
      const r = await post('activate', fill(body));
      expect([r.status, r.body.error, (r.body.details as { field?: string })?.field]).toEqual([400, 'bad_request', field]);
      expect(r.text).not.toContain(codes[7]);
    });

    it('a body over 16 KB is 413 payload_too_large, in the service\'s error shape', async () => {
      const r = await post('activate', { ...request(codes[7]!, 8), machine_id: 'm'.repeat(17 * 1024) });
      expect([r.status, r.body.error, r.body.details]).toEqual([413, 'payload_too_large', { limit_bytes: 16384 }]);
    });

    it('a chunked body (no Content-Length) over 16 KB is 413 too', async () => {
      const chunk = new TextEncoder().encode('x'.repeat(1024));
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          // 17 KB: over the limit, and small enough to sit whole in the socket's buffer, so the
          // client has sent it all before the relay's 413 (and the runtime closing the connection).
          if (sent++ < 17) controller.enqueue(chunk);
          else controller.close();
        },
      });
      const res = await fetch(`${relay.baseUrl}/plugin-activation/activate`, { method: 'POST', body, duplex: 'half' } as RequestInit);
      expect([res.status, ((await res.json()) as { error: string }).error]).toEqual([413, 'payload_too_large']);
    });

    it.each([
      ['GET', '/'],
      ['GET', '/functions/v1/builds'],
      ['POST', '/functions/v1/plugin-activation/generate'],
      ['GET', '/functions/v1/plugin-activation/project/PROJECT/keys'],
      ['POST', '/functions/v2/plugin-activation/activate'],
      ['GET', '/functions/v1/plugin-activation/activate'],
      ['GET', '/__emulator/state'],
      ['POST', '/__emulator/reset'],
    ])('%s %s is 404: nothing but the activation endpoints reaches the service, and no /__emulator', async (method, path) => {
      const r = await call(method as 'GET', `${relay.origin}${path.replace('PROJECT', projectId)}`, method === 'POST' ? {} : undefined);
      expect([r.status, r.body.error]).toEqual([404, 'not_found']);
      expect(r.text).not.toContain(service.emulator.token);
    });

    it('never prints or answers a full code, the token or a key; logs one line per request with a hint', async () => {
      const output = relay.stdout() + relay.stderr();
      const secrets = [service.emulator.token, ...codes, ...codes.map((c) => c.toUpperCase()), ...keys.flatMap((k) => [k.seed, ...k.pem.split('\n').filter((l) => l.length > 20)])];
      for (const secret of secrets) {
        expect(output.includes(secret), `a secret in the output: ${secret.slice(0, 8)}…`).toBe(false);
        for (const a of answers) expect(a.includes(secret), `a secret in an answer: ${secret.slice(0, 8)}…`).toBe(false);
      }
      const lines = relay.stderr().split('\n').filter((l) => l.startsWith('{'));
      const activate = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.route === 'POST /plugin-activation/activate' && l.status === 200);
      expect(activate).toMatchObject({ code_hint: expect.stringMatching(/^.{4}….{4}$/), ms: expect.any(Number), project_id: projectId.toLowerCase() });
    });

    it('SIGTERM: the request in flight is answered (and signed), then it exits 0', async () => {
      await service.control.faults({ mode: 'hold' });
      try {
        const pending = post('activate', request(codes[8]!, 9));
        await service.control.held(1);
        relay.child.kill('SIGTERM');
        await service.control.releaseHeld();
        const r = await pending;
        expect([r.status, r.body.success]).toEqual([200, true]);
        verifiedTicket(r.body.signed_ticket, keys[0]!.publicKey);
      } finally {
        await service.control.faults({ mode: 'none' });
      }
      expect(await relay.exited).toBe(0);
    });
  });
}

/** Start refusals: a missing or malformed variable ends the start with words and exit 2. */
export function refusalSuite(runtime: Runtime, cases: ReadonlyArray<readonly [string, Record<string, string | undefined>, RegExp]>): void {
  describe(`the relay on ${runtime} refuses to start`, () => {
    let service: TestService<Emulator>;
    const key = makeKey();
    beforeAll(async () => {
      service = await startService(startEmulator);
    });
    afterAll(async () => {
      await service?.close();
    });
    it.each(cases)('%s', async (_, change, words) => {
      const env: Record<string, string> = relayEnv(service, [key]);
      for (const [k, v] of Object.entries(change)) {
        if (v === undefined) delete env[k];
        else env[k] = v.replaceAll('SEED', key.seed).replaceAll('PROJECT', service.emulator.projectId);
      }
      const r = await refusedStart(runtime, env);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(words);
      expect(r.code).toBe(2);
      for (const secret of [service.emulator.token, key.seed, key.pem.split('\n')[1]!]) expect(r.stderr).not.toContain(secret);
    });
  });
}
