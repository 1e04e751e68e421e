import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import type { LookupFunction } from 'node:net';
import { ServiceClient } from '@plugin-license/api';
import { Agent, MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import type { CallOptions, LicenseError } from '../src/index.js';
import { cacheFilePath, getMachineId, isLicenseError, listCachedProjects, License, type LicenseOptions, type LicenseStatus } from '../src/index.js';
import { FIXED_NOW, RAW_A, RAW_B, startService, useLicenses } from './helpers.js';
import { rejection } from '@plugin-license/test-utils';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const MIN = 60_000;

const { service, home, clock, license, open } = useLicenses({ clockStart: FIXED_NOW });

function cacheFile(): string {
  return cacheFilePath(service.emulator.projectId, { home: home.dir });
}

describe('activate, validate, check, deactivate (happy paths)', () => {
  it('activates, stores the state, and check() answers from memory', async () => {
    const code = await service.code(3);
    const l = license();
    expect(l.check()).toMatchObject({ valid: false, reason: 'not_activated', source: 'cache', codeHint: null });

    const changes: LicenseStatus[] = [];
    l.on('change', (s) => changes.push(s));
    const status = await l.activate(`  ${code}\n`);
    expect(status).toMatchObject({
      projectId: service.emulator.projectId,
      valid: true,
      reason: null,
      source: 'online',
      codeHint: `${code.slice(0, 4)}…${code.slice(-4)}`,
      activations: 1,
      maxActivations: 3,
    });
    expect(status.validatedAt?.getTime()).toBe(clock.now());
    expect(status.graceUntil?.getTime()).toBe(clock.now() + 30 * DAY);
    expect(status.nextCheckAt?.getTime()).toBe(clock.now() + DAY);
    expect(changes.at(-1)).toBe(status);
    expect(l.check()).toBe(status);

    // The file keeps the full code (needed after a restart) and never the raw OS id.
    const text = readFileSync(cacheFile(), 'utf8');
    expect(text).toContain(code);
    expect(text).not.toContain(RAW_A);

    // A new object (a restart) loads it: valid, from the cache.
    const again = license();
    expect(again.check()).toMatchObject({ valid: true, source: 'cache', activations: 1, maxActivations: 3 });
  });

  it('validate() online, then within the minimum interval answers from memory without a request', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    clock.advance(10 * MIN);
    const v = await l.validate();
    expect(v).toMatchObject({ valid: true, source: 'online' });
    expect(v.validatedAt?.getTime()).toBe(clock.now());

    // Offline now, but within 5 min of the last answer: no request, previous state.
    await service.control.faults({ mode: 'offline' });
    clock.advance(MIN);
    const again = await l.validate();
    expect(again).toMatchObject({ valid: true, source: 'online' });
    expect(again.validatedAt?.getTime()).toBe(clock.now() - MIN);
  });

  it('deactivate() frees the slot and forgets the state', async () => {
    const code = await service.code(1);
    const l = license();
    await l.activate(code);
    expect(await l.status()).toEqual({ activations: 1, maxActivations: 1, available: 0, isRevoked: false });
    const status = await l.deactivate();
    expect(status).toMatchObject({ valid: false, reason: 'not_activated', source: 'online', codeHint: null });
    expect(existsSync(cacheFile())).toBe(false);
    expect(await l.status(code)).toEqual({ activations: 0, maxActivations: 1, available: 1, isRevoked: false });
    // The freed slot is usable by another machine.
    const other = license({ rawMachineIdProvider: () => RAW_B });
    expect((await other.activate(code)).valid).toBe(true);
  });

  it('deactivate() offline fails with unavailable and keeps the state, unused until the service says whether the slot was released', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    await service.control.faults({ mode: 'offline' });
    const e = await rejection(l.deactivate(), isLicenseError);
    expect(e.code).toBe('unavailable');
    expect(e.message).toMatch(/whether the slot was released is not known, so this computer does not use the license until the service answers/);
    expect(e.cause).toBeTruthy();
    expect(l.check()).toMatchObject({ valid: false, reason: 'deactivated', codeHint: expect.any(String) });
    expect(license().check()).toMatchObject({ valid: false, reason: 'deactivated' });
    await service.control.faults({ mode: 'none' });
    // The service still holds the slot (the request never reached it): the license is used again.
    expect(await l.validate()).toMatchObject({ valid: true, reason: null });
    expect(await l.deactivate()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(await l.status(code)).toMatchObject({ activations: 0 });
  });

  it('the service says "deactivated" once the slot was released elsewhere (support tool)', async () => {
    const code = await service.code(2);
    const l = license();
    await l.activate(code);
    const { id } = await getMachineId({ home: home.dir, rawMachineIdProvider: () => RAW_A });
    await service.admin.activation.deactivate({ code, machine_id: id });
    clock.advance(10 * MIN);
    expect(await l.validate()).toMatchObject({ valid: false, reason: 'deactivated', source: 'online', graceUntil: null });
    expect(license().check()).toMatchObject({ valid: false, reason: 'deactivated', source: 'cache' });
  });

  it('an answer arriving after another object deactivated does not resurrect the state', async () => {
    const code = await service.code(2);
    const a = license();
    await a.activate(code);
    await license().deactivate();
    clock.advance(10 * MIN);
    expect(await a.validate()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(existsSync(cacheFile())).toBe(false);
  });

  it('re-activating the same code on the same machine keeps one slot', async () => {
    const code = await service.code(1);
    const l = license();
    await l.activate(code);
    clock.advance(MIN);
    const s = await l.activate(code);
    expect(s).toMatchObject({ valid: true, activations: 1, maxActivations: 1 });
  });

  it('accepts a clock with fractional milliseconds (performance.timeOrigin + performance.now())', async () => {
    const code = await service.code();
    await license({ now: () => clock.now() + 0.25 }).activate(code);
    expect(license({ now: () => clock.now() + 0.75 }).check()).toMatchObject({ valid: true, source: 'cache' });
  });

  it('works with a caller-supplied machine id', async () => {
    const code = await service.code(2);
    const l = license({ machineId: 'studio-pc-7' });
    await l.activate(code);
    clock.advance(10 * MIN);
    expect(await l.validate()).toMatchObject({ valid: true, source: 'online' });
    const state = (await service.control.state()) as { codes: { code: string; slots: { machine_id: string }[] }[] };
    expect(state.codes.find((c) => c.code === code)?.slots.map((s) => s.machine_id)).toEqual(['studio-pc-7']);
  });
});

describe('activate errors', () => {
  it('invalid_code from the service for a malformed code', async () => {
    const e = await rejection(license().activate('not-a-code-at-all'), isLicenseError);
    expect(e).toMatchObject({ name: 'LicenseError', code: 'invalid_code', status: 400 });
    expect(e.message).toMatch(/check it for typos/);
  });

  it('code_not_found for an unknown code', async () => {
    const e = await rejection(license().activate('00000000-0000-4000-8000-000000000000'), isLicenseError);
    expect(e).toMatchObject({ code: 'code_not_found', status: 404 });
    expect(e.message).not.toContain('00000000-0000-4000-8000-000000000000');
  });

  it('code_revoked', async () => {
    const code = await service.code();
    await service.control.revoke(code);
    const e = await rejection(license().activate(code), isLicenseError);
    expect(e).toMatchObject({ code: 'code_revoked', status: 403 });
    expect(e.message).not.toContain(code);
    expect(e.message).toContain(`${code.slice(0, 4)}…${code.slice(-4)}`);
  });

  it('unauthorized when the service refuses the request (401; MockAgent: the emulator takes no token on these endpoints)', async () => {
    const mock = new MockAgent();
    mock.disableNetConnect();
    const origin = new URL(service.emulator.baseUrl).origin;
    const body = { error: 'unauthorized', message: 'missing or invalid token', details: {} };
    mock.get(origin).intercept({ path: '/functions/v1/plugin-activation/activate', method: 'POST' }).reply(401, body, { headers: { 'content-type': 'application/json' } });
    const code = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    const l = license({ dispatcher: mock, token: 'secret-token-value' });
    const e = await rejection(l.activate(code), isLicenseError);
    expect(e).toMatchObject({ name: 'LicenseError', code: 'unauthorized', status: 401 });
    expect(e.message).toMatch(/check the token/);
    expect(e.message).not.toContain(code);
    expect(e.message).not.toContain('secret-token-value');
    expect(l.check()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(existsSync(cacheFile())).toBe(false);
    await mock.close();
  });

  it('max_activations_reached with activations and max', async () => {
    const code = await service.code(1);
    await license({ rawMachineIdProvider: () => RAW_B }).activate(code);
    const e = await rejection(license().activate(code), isLicenseError);
    expect(e).toMatchObject({ code: 'max_activations_reached', activations: 1, maxActivations: 1, status: 403 });
    expect(e.message).toMatch(/deactivate it on a machine you no longer use/);
  });

  it('rate_limited with retryAt', async () => {
    const limited = await startService({ rateLimits: { activation: 2 } });
    try {
      const code = await limited.code(); // uses one request of the window
      const l = new License({
        projectId: limited.emulator.projectId,
        baseUrl: limited.emulator.baseUrl,
        home: home.dir,
        now: clock.now,
        dispatcher: limited.dispatcher,
        rawMachineIdProvider: () => RAW_A,
      });
      open.push(l);
      let e: LicenseError | undefined;
      for (let i = 0; i < 5 && !e; i++) {
        try {
          await l.activate(code);
        } catch (error) {
          if (!isLicenseError(error)) throw error;
          e = error;
        }
      }
      expect(e).toMatchObject({ code: 'rate_limited', status: 429 });
      expect(e?.retryAt).toBeInstanceOf(Date);
      expect(e!.retryAt!.getTime()).toBeGreaterThan(Date.now() - 1000);
    } finally {
      await limited.close();
    }
  });

  it('unavailable when offline, with the cause, and nothing stored', async () => {
    const code = await service.code();
    await service.control.faults({ mode: 'offline' });
    const l = license();
    const e = await rejection(l.activate(code), isLicenseError);
    expect(e.code).toBe('unavailable');
    expect(e.cause).toBeTruthy();
    expect(e.message).toMatch(/^activate: could not reach POST \/plugin-activation\/activate at .*; check the network connection and the base URL$/);
    expect(l.check()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(existsSync(cacheFile())).toBe(false);
  });

  it('unavailable on a 5xx answer', async () => {
    const code = await service.code();
    await service.control.faults({ mode: 'error', status: 503, count: 1 });
    const e = await rejection(license().activate(code), isLicenseError);
    expect(e).toMatchObject({ code: 'unavailable', status: 503 });
  });

  it('a failing new code does not touch a valid stored license', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    await rejection(l.activate('00000000-0000-4000-8000-000000000000'), isLicenseError);
    expect(l.check()).toMatchObject({ valid: true });
    expect(license().check()).toMatchObject({ valid: true });
  });
});

describe('bad input: a clear error before any network I/O', () => {
  it('rejects empty, control-character and over-long codes locally, and trims padding', async () => {
    await service.control.faults({ mode: 'error', status: 500, count: 1000 });
    const l = license();
    for (const bad of ['', '   ', '\t\n', 'abc\u0000def', 'abc\u001bdef', 'a'.repeat(257), 42 as unknown as string]) {
      const e = await rejection(l.activate(bad), isLicenseError);
      expect(e.code).toBe('invalid_code');
    }
    // None of those reached the service: the error fault is still fully armed.
    const state = (await service.control.state()) as { faults: { remaining: number } };
    expect(state.faults.remaining).toBe(1000);
    await service.control.faults({ mode: 'none' });
    const code = await service.code();
    expect((await l.activate(`\t ${code}  `)).valid).toBe(true);
  });

  it('rejects a base URL without /functions/v1 or http:// to a remote host, and a non-UUID project id', () => {
    const base = { projectId: service.emulator.projectId, baseUrl: service.emulator.baseUrl, home: home.dir };
    const cases: Array<[Partial<LicenseOptions>, RegExp]> = [
      [{ baseUrl: service.emulator.origin }, /does not end in \/functions\/v1/],
      [{ baseUrl: 'http://licenses.example.com/functions/v1' }, /http:\/\/.*https/],
      [{ baseUrl: 'not a url' }, /not a valid URL/],
      [{ baseUrl: '' }, /no service base URL: pass baseUrl, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in .*config.json/],
      [{ projectId: 'my-plugin' }, /not a UUID/],
      [{ projectId: '' }, /not a UUID/],
      [{ namespace: '../escape' }, /not usable as a folder name/],
      [{ policy: { graceMs: -1 } }, /graceMs/],
      [{ policy: { gracems: 5 } as never }, /unknown policy option/],
      [{ machineId: '  ' }, /machineId/],
      [{ token: '' }, /token/],
      [{ now: 5 as never }, /now must be a function/],
    ];
    for (const [override, message] of cases) {
      let error: unknown;
      try {
        new License({ ...base, ...override });
      } catch (e) {
        error = e;
      }
      expect(isLicenseError(error), String(message)).toBe(true);
      expect((error as LicenseError).code).toBe('invalid_argument');
      expect((error as LicenseError).message).toMatch(message);
    }
  });

  it('status() of a code checks it locally and maps service errors', async () => {
    const l = license();
    expect((await rejection(l.status(' '), isLicenseError)).code).toBe('invalid_code');
    expect((await rejection(l.status('00000000-0000-4000-8000-000000000000'), isLicenseError)).code).toBe('code_not_found');
    const code = await service.code(4);
    expect(await l.status(code)).toEqual({ activations: 0, maxActivations: 4, available: 4, isRevoked: false });
  });

  it('deactivate and status without a stored code say not_activated', async () => {
    const l = license();
    expect((await rejection(l.deactivate(), isLicenseError)).code).toBe('not_activated');
    expect((await rejection(l.status(), isLicenseError)).code).toBe('not_activated');
  });

  it('honours an AbortSignal', async () => {
    const code = await service.code();
    await service.control.faults({ mode: 'hold', count: 1 });
    const l = license();
    const ac = new AbortController();
    const pending = l.activate(code, { signal: ac.signal });
    await service.control.held(1); // the request is at the service, which holds it until the test ends
    ac.abort(new Error('user cancelled'));
    await expect(pending).rejects.toThrow('user cancelled');
    expect(l.check().reason).toBe('not_activated');
    await expect(l.validate({ signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow('already');
  });
});

describe('abort and clock input', () => {
  it('a call waiting behind a running one rejects as soon as its signal aborts', async () => {
    const code = await service.code();
    const l = license({ policy: { requestTimeoutMs: 120_000 } });
    await l.activate(code);
    clock.advance(10 * MIN);
    await service.control.faults({ mode: 'hold' }); // nothing is answered until the test says so
    const first = new AbortController();
    let firstSettled = false;
    const running = l.validate({ signal: first.signal }).finally(() => {
      firstSettled = true;
    });
    running.catch(() => undefined);
    const second = new AbortController();
    const queued = l.deactivate({ signal: second.signal });
    second.abort(new Error('gave up waiting'));
    await expect(queued).rejects.toThrow('gave up waiting');
    expect(firstSettled).toBe(false);
    first.abort(new Error('closing'));
    await expect(running).rejects.toThrow('closing');
    // The given-up call never ran: the state is kept, and the queue still works.
    await service.control.faults({ mode: 'none' });
    expect(await l.validate({ force: true })).toMatchObject({ valid: true, source: 'online' });
  });

  it('call options that are not an object or carry no AbortSignal fail before any request', async () => {
    const code = await service.code();
    const l = license();
    const bad = [null, 5, { signal: 'soon' }, { signal: { aborted: false } }] as unknown as CallOptions[];
    for (const options of bad) {
      for (const call of [() => l.activate(code, options), () => l.validate(options), () => l.deactivate(options), () => l.status(code, options)]) {
        const e = await rejection(call(), isLicenseError);
        expect(e.code, JSON.stringify(options)).toBe('invalid_argument');
      }
    }
    expect(await l.status(code)).toMatchObject({ activations: 0 });
  });

  it('a now() that returns no finite number fails clearly and leaves the cache intact', async () => {
    const code = await service.code();
    await license().activate(code);
    clock.advance(10 * MIN);
    for (const now of [() => Number.NaN, () => new Date() as unknown as number]) {
      const broken = license({ now });
      expect(() => broken.check()).toThrow(/now\(\) option returned (NaN|a Date)/);
      expect((await rejection(broken.validate({ force: true }), isLicenseError)).code).toBe('invalid_argument');
      expect((await rejection(broken.activate(code), isLicenseError)).code).toBe('invalid_argument');
    }
    expect(license().check()).toMatchObject({ valid: true, source: 'cache' });
  });
});

describe('revocation', () => {
  it('seen online ends validity at once, and offline afterwards', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    await service.control.revoke(code);
    clock.advance(6 * MIN);
    const changes: LicenseStatus[] = [];
    l.on('change', (s) => changes.push(s));
    const v = await l.validate();
    expect(v).toMatchObject({ valid: false, reason: 'code_revoked', source: 'online', graceUntil: null });
    expect(changes.map((c) => c.reason)).toEqual(['code_revoked']);
    expect(l.check()).toBe(v);

    // Offline, and a restart: still revoked, from the cache.
    await service.control.faults({ mode: 'offline' });
    clock.advance(DAY);
    const restarted = license();
    expect(restarted.check()).toMatchObject({ valid: false, reason: 'code_revoked', source: 'cache' });
    expect(await restarted.validate()).toMatchObject({ valid: false, reason: 'code_revoked', source: 'cache' });
  });

  it('a code_revoked activation error about the stored code updates the cache', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    await service.control.revoke(code);
    expect((await rejection(l.activate(code), isLicenseError)).code).toBe('code_revoked');
    expect(l.check()).toMatchObject({ valid: false, reason: 'code_revoked' });
    expect(license().check()).toMatchObject({ valid: false, reason: 'code_revoked' });
  });
});

describe('offline grace', () => {
  it('valid from the cache within grace, grace_expired past it, valid again once back online', async () => {
    const code = await service.code();
    const l = license();
    const activatedAt = clock.now();
    await l.activate(code);

    await service.control.faults({ mode: 'offline' });
    clock.advance(10 * DAY);
    const offline = await l.validate();
    expect(offline).toMatchObject({ valid: true, reason: null, source: 'cache' });
    expect(offline.validatedAt?.getTime()).toBe(activatedAt);
    expect(offline.graceUntil?.getTime()).toBe(activatedAt + 30 * DAY);
    // The failure schedules a back-off: next check after 1 min (random 0.5 → 45 s .. 60 s band).
    expect(offline.nextCheckAt!.getTime() - clock.now()).toBe(45_000);

    // A restarted process offline, still within grace.
    clock.advance(19 * DAY);
    const restarted = license();
    expect(restarted.check()).toMatchObject({ valid: true, source: 'cache' });
    expect(await restarted.validate()).toMatchObject({ valid: true, source: 'cache' });

    // Past grace.
    clock.advance(1 * DAY + 1);
    expect(l.check()).toMatchObject({ valid: false, reason: 'grace_expired', source: 'cache' });
    expect(await restarted.validate()).toMatchObject({ valid: false, reason: 'grace_expired', source: 'cache' });

    // Back online (after the back-off): valid again.
    await service.control.faults({ mode: 'none' });
    clock.advance(HOUR);
    const back = await restarted.validate();
    expect(back).toMatchObject({ valid: true, reason: null, source: 'online' });
    expect(back.validatedAt?.getTime()).toBe(clock.now());
  });

  it('5xx and time-outs also fall back to the cache; back-off grows and caps', async () => {
    const code = await service.code();
    // The activation must beat the time-out (1 s, room for a loaded machine); the time-out
    // below is met by a request the service holds, so its length only sets how long it takes.
    const l = license({ policy: { requestTimeoutMs: 1_000 } });
    await l.activate(code);
    await service.control.faults({ mode: 'error', status: 502, count: 1000 });
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      clock.advance(2 * HOUR);
      const s = await l.validate();
      expect(s).toMatchObject({ valid: true, source: 'cache' });
      delays.push(s.nextCheckAt!.getTime() - clock.now());
    }
    // random 0.5 → 3/4 of each step: 1, 2, 4, 8, 16, 32, 60 (cap), 60 min.
    expect(delays).toEqual([1, 2, 4, 8, 16, 32, 60, 60].map((m) => m * MIN * 0.75));

    // A service that never answers: the client's 1 s time-out is what ends the call.
    await service.control.faults({ mode: 'hold' });
    clock.advance(2 * HOUR);
    expect(await l.validate()).toMatchObject({ valid: true, source: 'cache' });
  });

  it('within the back-off validate() makes no request; force: true does', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    // Two errors: the call and the client's one quick retry.
    await service.control.faults({ mode: 'error', status: 500, count: 2 });
    clock.advance(10 * MIN);
    expect(await l.validate()).toMatchObject({ source: 'cache' });
    // The armed errors are used up; a request now would succeed, but the back-off holds it.
    clock.advance(10_000);
    expect(await l.validate()).toMatchObject({ source: 'cache' });
    expect(await l.validate({ force: true })).toMatchObject({ valid: true, source: 'online' });
  });
});

describe('every transport failure class falls back to the cache', () => {
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('a refused connection and a failed DNS lookup: valid from the cache; activate says unavailable', async () => {
    const code = await service.code(3);
    await license().activate(code);
    clock.advance(DAY);
    const port = await closedPort();

    const refused = license({ baseUrl: `http://127.0.0.1:${port}/functions/v1` });
    expect(await refused.validate({ force: true })).toMatchObject({ valid: true, reason: null, source: 'cache' });
    const e1 = await rejection(refused.activate(code), isLicenseError);
    expect(e1.code).toBe('unavailable');
    expect(e1.message).not.toContain(code);

    // The real connector, with a resolver that doesn't know the host (no traffic leaves loopback).
    const lookup: LookupFunction = (hostname, _options, callback) =>
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname }), '', 4);
    const dns = new Agent({ connect: { lookup } });
    try {
      const unresolved = license({ baseUrl: `http://licenses.localhost:${port}/functions/v1`, dispatcher: dns });
      clock.advance(HOUR);
      expect(await unresolved.validate({ force: true })).toMatchObject({ valid: true, reason: null, source: 'cache' });
      const e2 = await rejection(unresolved.activate(code), isLicenseError);
      expect(e2.code).toBe('unavailable');
      expect(e2.message).toMatch(/could not reach/);
      await unresolved.close();
    } finally {
      await dns.close();
    }
    // Nothing definitive was heard: the stored state is untouched apart from the failure count.
    expect(license().check()).toMatchObject({ valid: true, source: 'cache' });
  });
});

describe('rate limits', () => {
  it('a 429 on validate falls back to the cache and holds requests until the reset', async () => {
    // The emulator's clock stands at the start of a minute: the window cannot roll over mid-test.
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const limited = await startService({ rateLimits: { activation: 3 }, now: () => minute });
    const client = new ServiceClient({ baseUrl: limited.emulator.baseUrl, dispatcher: limited.dispatcher, retry: false });
    try {
      const code = await limited.code();
      // Real clock here: the reset time comes from the service's X-RateLimit-Reset.
      const l = new License({
        projectId: limited.emulator.projectId,
        baseUrl: limited.emulator.baseUrl,
        home: home.dir,
        client,
        rawMachineIdProvider: () => RAW_A,
        policy: { minRevalidateIntervalMs: 0, backoffMinMs: 0, backoffMaxMs: 0 },
      });
      open.push(l);
      await l.activate(code);
      let status: LicenseStatus | undefined;
      for (let i = 0; i < 5 && status?.source !== 'cache'; i++) status = await l.validate({ force: true });
      expect(status).toMatchObject({ valid: true, source: 'cache' });
      const resetAt = status!.nextCheckAt!.getTime();
      expect(resetAt).toBeGreaterThan(Date.now());
      expect(resetAt).toBeLessThanOrEqual(Date.now() + 61_000);
      // Not forced: no request until the reset (an armed error fault stays unused).
      await limited.control.faults({ mode: 'error', status: 500, count: 1 });
      expect(await l.validate()).toMatchObject({ valid: true, source: 'cache' });
      const state = (await limited.control.state()) as { faults: { remaining: number } };
      expect(state.faults.remaining).toBe(1);
    } finally {
      await client.close();
      await limited.close();
    }
  });
});

describe('clock tamper', () => {
  it('a clock 2 h behind the highest time seen gives clock_tampered until an online success', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    clock.advance(3 * HOUR);
    expect(l.check().valid).toBe(true);

    clock.advance(-2 * HOUR - 3 * HOUR); // 2 h before the activation
    expect(l.check()).toMatchObject({ valid: false, reason: 'clock_tampered' });
    // Due at once, not at the plan made with the clock that was ahead.
    expect(l.check().nextCheckAt?.getTime()).toBe(clock.now());

    // Offline: the cache can't clear it; a restart can't either.
    await service.control.faults({ mode: 'offline' });
    const offline = await l.validate();
    expect(offline).toMatchObject({ valid: false, reason: 'clock_tampered', source: 'cache' });
    // The next try is the back-off after one failure, not a day away.
    expect(offline.nextCheckAt!.getTime() - clock.now()).toBeLessThanOrEqual(MIN);
    expect(license().check()).toMatchObject({ valid: false, reason: 'clock_tampered' });

    // Online success clears it, and the clock it saw becomes the reference.
    await service.control.faults({ mode: 'none' });
    clock.advance(MIN);
    const ok = await l.validate();
    expect(ok).toMatchObject({ valid: true, reason: null, source: 'online' });
    expect(l.check().valid).toBe(true);
    expect(license().check()).toMatchObject({ valid: true, source: 'cache' });
  });

  it('within the tolerance (1 h) a clock going back is fine', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    clock.advance(-59 * MIN);
    expect(l.check().valid).toBe(true);
  });

  it('a cache-only validate() persists the highest time seen, so a restart still detects a rollback', async () => {
    const code = await service.code();
    const l = license({ policy: { backoffMinMs: 2 * HOUR, backoffMaxMs: 4 * HOUR } });
    await l.activate(code);
    await service.control.faults({ mode: 'offline' });
    clock.advance(5 * DAY);
    expect(await l.validate()).toMatchObject({ valid: true, source: 'cache' });
    clock.advance(HOUR);
    await l.validate(); // within the back-off: no request, but a clock checkpoint (> 10 min later)
    // 1.5 h back from the highest time: only detectable because the checkpoint was written.
    clock.advance(-90 * MIN);
    expect(license().check()).toMatchObject({ valid: false, reason: 'clock_tampered' });
  });
});

describe('cache integrity', () => {
  async function activated(): Promise<string> {
    const code = await service.code();
    await license().activate(code);
    return code;
  }
  function asideFiles(): string[] {
    const dir = join(home.dir, 'data', 'licenses');
    return readdirSync(dir).filter((n) => n.includes('.invalid-'));
  }

  it('a hand-edited cache gives cache_invalid and is moved aside, not deleted', async () => {
    await activated();
    const text = readFileSync(cacheFile(), 'utf8');
    const edited = text.replace(/"validatedAt":\d+/, `"validatedAt":${clock.now() + 365 * DAY}`);
    expect(edited).not.toBe(text);
    writeFileSync(cacheFile(), edited);

    const l = license();
    const changes: LicenseStatus[] = [];
    l.on('change', (s) => changes.push(s));
    expect(l.check()).toMatchObject({ valid: false, reason: 'cache_invalid', codeHint: null });
    expect(existsSync(cacheFile())).toBe(false);
    const aside = asideFiles();
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(home.dir, 'data', 'licenses', aside[0]!), 'utf8')).toBe(edited);
    expect(await l.validate()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(changes.map((c) => c.reason)).toEqual(['cache_invalid']);
  });

  it('a truncated cache gives cache_invalid (async load path too)', async () => {
    await activated();
    const text = readFileSync(cacheFile(), 'utf8');
    writeFileSync(cacheFile(), text.slice(0, Math.floor(text.length / 2)));
    const l = license();
    expect(await l.validate()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(asideFiles()).toHaveLength(1);
  });

  it('an empty or garbage cache gives cache_invalid, never a crash', async () => {
    await activated();
    for (const content of ['', '\u0000\u0001\u0002', '[]', 'null', '{"format":1}', '{"format":1,"mac":"zz"}']) {
      writeFileSync(cacheFile(), content);
      expect(license().check(), JSON.stringify(content)).toMatchObject({ valid: false, reason: 'cache_invalid' });
    }
    expect(asideFiles()).toHaveLength(6);
  });

  it('a cache copied from another machine (different raw id) gives cache_invalid', async () => {
    await activated();
    const other = license({ rawMachineIdProvider: () => RAW_B });
    expect(other.check()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(asideFiles()).toHaveLength(1);
  });

  it('a cache bound to another caller machine id gives cache_invalid', async () => {
    const code = await service.code();
    await license({ machineId: 'pc-one' }).activate(code);
    expect(license({ machineId: 'pc-two' }).check()).toMatchObject({ valid: false, reason: 'cache_invalid' });
  });

  it('after cache_invalid a new activation works again', async () => {
    const code = await activated();
    writeFileSync(cacheFile(), '{}');
    const l = license();
    expect(l.check().reason).toBe('cache_invalid');
    expect(await l.activate(code)).toMatchObject({ valid: true, source: 'online' });
    expect(license().check()).toMatchObject({ valid: true });
  });
});

describe('listCachedProjects', () => {
  it('lists the projects with a cache file, not the files set aside', async () => {
    expect(await listCachedProjects({ home: home.dir })).toEqual([]);
    const code = await service.code();
    await license().activate(code);
    writeFileSync(join(home.dir, 'data', 'licenses', `${service.emulator.projectId}.json.invalid-x`), '{}');
    expect(await listCachedProjects({ home: home.dir })).toEqual([service.emulator.projectId]);
  });
});

describe('events', () => {
  it('emits change on every state change and not when nothing changed', async () => {
    const code = await service.code();
    const l = license();
    const seen: Array<string | null> = [];
    l.on('change', (s) => seen.push(s.reason));
    l.check();
    await l.activate(code);
    l.check();
    l.check();
    clock.advance(31 * DAY);
    l.check();
    l.check();
    await l.deactivate();
    // `deactivated` from before the service is asked to release until it answered.
    expect(seen).toEqual([null, 'grace_expired', 'deactivated', 'not_activated']);
  });
});
