// ServiceClient against the real emulator over loopback: every endpoint, every documented error
// code, rate limits, retries, time-outs, abort and offline through the /__emulator controls.
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { rejection } from '@plugin-license/test-utils';
import {
  ServiceClient,
  isNetworkError,
  isServiceError,
  isTimeoutError,
  signTrigger,
  type ServiceClientOptions,
} from '@plugin-license/api';

let emu: Emulator;
let client: ServiceClient;
const extraClients: ServiceClient[] = [];
const controlAgent = new Agent({ keepAliveTimeout: 100 });
const noSleep = { sleep: async () => undefined };

interface EmulatorState {
  faults: { mode: string; remaining: number | null };
}

async function control(path: string, body?: unknown): Promise<EmulatorState> {
  const res = await request(`${emu.origin}/__emulator${path}`, {
    method: body === undefined && path === '/state' ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: controlAgent,
  });
  const data = await res.body.json();
  if (res.statusCode !== 200) throw new Error(`control ${path} answered ${res.statusCode}: ${JSON.stringify(data)}`);
  return data as EmulatorState;
}

function makeClient(options: Partial<ServiceClientOptions> = {}, hooks = {}): ServiceClient {
  const c = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, ...options }, hooks);
  extraClients.push(c);
  return c;
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0, rateLimits: { activation: 100_000, builds: 100_000, general: 100_000, trigger: 100_000 } });
  client = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token });
});

beforeEach(async () => {
  await control('/reset', {});
});

afterEach(async () => {
  await Promise.all(extraClients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await client?.close();
  await controlAgent.close();
  await emu?.close();
});

async function newCode(max = 2): Promise<string> {
  return (await client.activation.generate({ project_id: emu.projectId, max_activations: max, notes: 'test' })).code;
}

describe('builds', () => {
  it('create, get, list with filters and paging, cancel, usage', async () => {
    const created = await client.builds.create({ project_id: emu.projectId, platforms: ['macos'], formats: ['vst3'], release_type: 'patch' });
    expect(created).toMatchObject({ project_id: emu.projectId, status: 'pending', platforms: ['macos'], formats: ['vst3'] });

    const build = await client.builds.get(created.id);
    expect(build.id).toBe(created.id);
    expect(typeof build.metadata.current_step).toBe('string');

    const pending = await client.builds.list({ project_id: emu.projectId, status: 'pending' });
    expect(pending.builds.map((b) => b.id)).toContain(created.id);
    expect(pending.builds.every((b) => b.status === 'pending')).toBe(true);
    const all = await client.builds.list();
    const page = await client.builds.list({ limit: 1, offset: 1 });
    expect(page).toMatchObject({ limit: 1, offset: 1, total: all.total });
    expect(page.builds).toHaveLength(Math.min(1, all.total - 1));

    expect(await client.builds.cancel(created.id)).toMatchObject({ id: created.id, status: 'cancelled' });
    expect((await client.builds.get(created.id)).status).toBe('cancelled');
    const again = await rejection(client.builds.cancel(created.id), isServiceError);
    expect([again.status, again.code]).toEqual([400, 'bad_request']);

    const usage = await client.builds.usage();
    expect(usage.period).toMatch(/^\d{4}-\d{2}$/);
    expect(usage.used).toBeGreaterThanOrEqual(1);
  });

  it('artifacts and download links of a finished build', async () => {
    const [done] = (await client.builds.list({ status: 'success' })).builds;
    expect(done).toBeDefined();
    const { artifacts } = await client.builds.artifacts(done!.id);
    expect(artifacts.length).toBeGreaterThan(0);
    const link = await client.builds.download(done!.id, artifacts[0]!.id);
    expect(link.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(Date.parse(link.expires_at ?? '')).toBeGreaterThan(0);
  });

  it('a 302 download answer gives the same DownloadLink and is not followed', async () => {
    const redirecting = await startEmulator({ port: 0, downloadRedirect: true });
    const c = new ServiceClient({ baseUrl: redirecting.baseUrl, token: redirecting.token });
    try {
      const [done] = (await c.builds.list({ status: 'success' })).builds;
      const { artifacts } = await c.builds.artifacts(done!.id);
      const before = artifacts[0]!.download_count;
      const link = await c.builds.download(done!.id, artifacts[0]!.id);
      expect(link.expires_at).toBeNull();
      expect(link.url).toContain(`${redirecting.origin}/`);
      // Following the 302 would have fetched the file's bytes and failed JSON parsing; one call was counted.
      const after = (await c.builds.artifacts(done!.id)).artifacts[0]!.download_count;
      expect(after).toBe(before + 1);
    } finally {
      await c.close();
      await redirecting.close();
    }
  });

  it('not_found for an unknown build, bad_request for a bad body', async () => {
    const missing = await rejection(client.builds.get('00000000-0000-4000-8000-000000000000'), isServiceError);
    expect([missing.status, missing.code, missing.endpoint]).toEqual([404, 'not_found', 'GET /builds/:id']);
    const bad = await rejection(client.builds.create({ project_id: 'not-a-uuid' }), isServiceError);
    expect([bad.status, bad.code]).toEqual([400, 'bad_request']);
    expect(JSON.stringify(bad.details)).toContain('project_id');
    // The service said what to do: its words are the advice, and nothing is added to them.
    expect(bad.message).toMatch(/400 bad_request: invalid request body: project_id: .*; fix that field and send the request again$/);
  });
});

describe('manual trigger', () => {
  it('accepts X-Webhook-Secret and an X-Signature over the raw body', async () => {
    const bySecret = await client.trigger(emu.projectId, { ref: 'refs/heads/main', commit_sha: 'abc1234' }, { webhookSecret: emu.webhookSecret });
    expect(bySecret.status).toBe('queued');
    const bySignature = await client.trigger(emu.projectId, { ref: 'refs/tags/v1.2.3', platforms: ['windows'] }, { signingSecret: emu.webhookSecret });
    expect(bySignature.status).toBe('queued');
    expect((await client.builds.get(bySignature.build_id)).platforms).toEqual(['windows']);
  });

  it('refuses a wrong secret and a wrong signing key without echoing either secret', async () => {
    const wrong = 'wrong-secret-wrong-secret';
    for (const auth of [{ webhookSecret: wrong }, { signingSecret: wrong }]) {
      const e = await rejection(client.trigger(emu.projectId, { ref: 'refs/heads/main' }, auth), isServiceError);
      expect([e.status, e.code]).toEqual([401, 'unauthorized']);
      expect(e.message).not.toContain(wrong);
      expect(e.message).not.toContain(emu.webhookSecret);
    }
  });

  it('signs exactly the bytes sent (bare request with signTrigger agrees with the service)', async () => {
    const raw = '{"ref":"refs/heads/main",  "commit_sha":"abcdef1"}';
    const res = await request(`${emu.baseUrl}/external-builds/${emu.projectId}/trigger`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': signTrigger(raw, emu.webhookSecret) },
      body: raw,
      dispatcher: controlAgent,
    });
    const answer = (await res.body.json()) as { status?: string };
    expect([res.statusCode >= 200 && res.statusCode < 300, answer.status]).toEqual([true, 'queued']);
  });
});

describe('plugin activation', () => {
  it('generate, keys, activate, validate, status, deactivate', async () => {
    const generated = await client.activation.generate({ project_id: emu.projectId, max_activations: 2, notes: 'studio' });
    expect(generated).toMatchObject({ max_activations: 2 });
    const { keys } = await client.activation.keys(emu.projectId);
    expect(keys.find((k) => k.code === generated.code)).toMatchObject({ current_activations: 0, is_revoked: false, notes: 'studio' });

    const request = { code: generated.code, machine_id: 'm1_machine-a', plugin_id: emu.projectId };
    expect(await client.activation.activate(request)).toMatchObject({ success: true, activations: 1, max_activations: 2, remaining: 1 });
    expect(await client.activation.validate(request)).toMatchObject({ valid: true });
    expect(await client.activation.status(generated.code)).toMatchObject({ activations: 1, max_activations: 2, available: 1, is_revoked: false });
    expect(await client.activation.deactivate(request)).toMatchObject({ success: true, activations: 0, max_activations: 2 });
    expect(await client.activation.validate(request)).toMatchObject({ valid: false, reason: 'deactivated' });
  });

  it('validate reports not_activated, code_revoked and code_not_found in the body', async () => {
    const code = await newCode();
    expect(await client.activation.validate({ code, machine_id: 'm1_never' })).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(await client.activation.validate({ code: '00000000-0000-4000-8000-000000000000', machine_id: 'm1_x' })).toMatchObject({
      valid: false,
      reason: 'code_not_found',
    });
    await client.activation.activate({ code, machine_id: 'm1_a' });
    await control(`/codes/${code}/revoke`, {});
    expect(await client.activation.validate({ code, machine_id: 'm1_a' })).toMatchObject({ valid: false, reason: 'code_revoked' });
  });

  it('activate errors: invalid_code, code_not_found, code_revoked, max_activations_reached; no full code in messages', async () => {
    const code = await newCode(1);
    const cases: [Promise<unknown>, number, string, string][] = [];
    const invalid = 'this-is-not-a-code-at-all';
    cases.push([client.activation.activate({ code: invalid, machine_id: 'm1_a' }), 400, 'invalid_code', invalid]);
    const unknown = '12345678-aaaa-4bbb-8ccc-1234567890ab';
    cases.push([client.activation.activate({ code: unknown, machine_id: 'm1_a' }), 404, 'code_not_found', unknown]);
    for (const [promise, status, errorCode, secret] of cases) {
      const e = await rejection(promise, isServiceError);
      expect([e.status, e.code]).toEqual([status, errorCode]);
      expect(JSON.stringify({ m: e.message, d: e.details, s: e.stack })).not.toContain(secret);
    }

    await client.activation.activate({ code, machine_id: 'm1_a' });
    const full = await rejection(client.activation.activate({ code, machine_id: 'm1_b' }), isServiceError);
    expect([full.status, full.code]).toEqual([403, 'max_activations_reached']);
    expect(full.message).toMatch(/has no free slot \(1 of 1 used\); deactivate another machine first$/);
    expect(JSON.stringify({ m: full.message, d: full.details, s: full.stack })).not.toContain(code);

    const wrongProduct = await rejection(client.activation.activate({ code, machine_id: 'm1_a', plugin_id: emu.otherProjectId }), isServiceError);
    expect(wrongProduct.code).toBe('code_not_found');

    await control(`/codes/${code}/revoke`, {});
    const revoked = await rejection(client.activation.activate({ code, machine_id: 'm1_a' }), isServiceError);
    expect([revoked.status, revoked.code]).toEqual([403, 'code_revoked']);
    expect(revoked.message).not.toContain(code);
  });

  it('status of an unknown code is not_found without the code in the error', async () => {
    const unknown = '12345678-aaaa-4bbb-8ccc-1234567890ab';
    const e = await rejection(client.activation.status(unknown), isServiceError);
    expect(e.status).toBe(404);
    expect(e.endpoint).toBe('GET /plugin-activation/status/:code');
    expect(JSON.stringify({ m: e.message, d: e.details, s: e.stack })).not.toContain(unknown);
  });

  it('generate and keys need a token (401) and permission on the project (403)', async () => {
    const anonymous = makeClient({ token: undefined });
    const e401 = await rejection(anonymous.activation.generate({ project_id: emu.projectId, max_activations: 1 }), isServiceError);
    expect([e401.status, e401.code]).toEqual([401, 'unauthorized']);
    const e403 = await rejection(client.activation.keys(emu.otherProjectId), isServiceError);
    expect([e403.status, e403.code]).toEqual([403, 'forbidden']);
    const badToken = makeClient({ token: 'not.a.jwt' });
    const e401b = await rejection(badToken.sdk.status(), isServiceError);
    expect(e401b.code).toBe('unauthorized');
    expect(e401b.message).not.toContain('not.a.jwt');
  });
});

describe('code hosting, repositories, SDK', () => {
  it('hosting status and disconnect', async () => {
    expect((await client.hosting.status()).connected).toBe(true);
    expect((await client.hosting.disconnect()).success).toBe(true);
    expect((await client.hosting.status()).connected).toBe(false);
  });

  it('discover, link, unlink, create-and-link', async () => {
    const { repos } = await client.repos.discover();
    expect(repos.length).toBeGreaterThan(0);
    const repo = repos[0]!;
    const linked = await client.repos.link({ project_id: emu.projectId, repo_full_name: repo.full_name, branch: repo.default_branch });
    expect(linked).toMatchObject({ success: true, project_id: emu.projectId });
    expect((await client.repos.unlink({ project_id: emu.projectId })).success).toBe(true);
    const created = await client.repos.createAndLink({ repo_full_name: 'acme/new-delay', name: 'New Delay', description: 'tape delay', visibility: 'private' });
    expect(created).toMatchObject({ name: 'New Delay' });
    const forbidden = await rejection(client.repos.link({ project_id: emu.otherProjectId, repo_full_name: repo.full_name, branch: 'main' }), isServiceError);
    expect(forbidden.code).toBe('forbidden');
  });

  it('sdk status and download', async () => {
    const sdk = await client.sdk.status();
    expect(typeof sdk.available).toBe('boolean');
    const download = await client.sdk.download();
    expect(download.version).toBe(sdk.version);
  });
});

describe('rate limits', () => {
  it('exposes the headers of every response', async () => {
    const c = makeClient();
    expect(c.rateLimit).toBeUndefined();
    await c.sdk.status();
    const first = c.rateLimit!;
    expect(first.limit).toBe(100_000);
    expect(first.resetAt).toBeInstanceOf(Date);
    await c.sdk.status();
    // Fixed one-minute windows on the wall clock: the second answer may open the next window.
    const second = c.rateLimit!;
    const sameWindow = Math.abs(second.resetAt.getTime() - first.resetAt.getTime()) < 30_000;
    expect(second.remaining).toBe(sameWindow ? first.remaining - 1 : first.limit - 1);
  });

  it('a real 429 carries rate_limited, retryAt and the window; retrying waits for the reset', async () => {
    const base = Date.UTC(2026, 0, 1, 12, 0, 0);
    const limited = await startEmulator({ port: 0, now: () => base, rateLimits: { activation: 2 } });
    const waits: number[] = [];
    let offset = 0;
    const hooks = {
      now: () => base + offset,
      // Instead of sleeping, move the emulator's clock forward by the wait the client asked for.
      sleep: async (ms: number) => {
        waits.push(ms);
        offset += ms;
        const res = await request(`${limited.origin}/__emulator/clock`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ advance_ms: ms }),
          dispatcher: controlAgent,
        });
        await res.body.dump();
      },
    };
    const noRetry = new ServiceClient({ baseUrl: limited.baseUrl, token: limited.token, retry: false });
    const retrying = new ServiceClient({ baseUrl: limited.baseUrl, token: limited.token, retry: { retries: 2, deadlineMs: 120_000 } }, hooks);
    try {
      const body = { code: '12345678-aaaa-4bbb-8ccc-1234567890ab', machine_id: 'm1_a' };
      await noRetry.activation.validate(body);
      await noRetry.activation.validate(body);
      expect(noRetry.rateLimit).toMatchObject({ limit: 2, remaining: 0 });
      const e = await rejection(noRetry.activation.validate(body), isServiceError);
      expect([e.status, e.code]).toEqual([429, 'rate_limited']);
      // The emulator's clock (2026-01) is far from this machine's: the wait is read against its Date header.
      expect(e.retryAfterMs).toBeGreaterThan(0);
      expect(e.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(e.retryAt).toBeInstanceOf(Date);
      expect(Math.abs(e.retryAt!.getTime() - (Date.now() + e.retryAfterMs!))).toBeLessThan(5_000);
      expect(e.rateLimit).toMatchObject({ limit: 2, remaining: 0, resetInMs: e.retryAfterMs });
      // One time to wait in the message: the service's (the wait itself is retryAt, on this machine's clock).
      expect(e.message).toMatch(/429 rate_limited: too many activation requests: the limit is 2 per minute; retry after \S+$/);
      expect(e.message).not.toContain('wait until');

      // activate is never retried: the 429 comes straight back.
      const activate429 = await rejection(retrying.activation.activate(body), isServiceError);
      expect(activate429.code).toBe('rate_limited');
      expect(waits).toEqual([]);

      // validate waits until X-RateLimit-Reset, then goes through.
      expect(await retrying.activation.validate(body)).toMatchObject({ valid: false, reason: 'code_not_found' });
      expect(waits).toHaveLength(1);
      expect(waits[0]).toBeGreaterThan(0);
      expect(waits[0]).toBeLessThanOrEqual(60_000);
    } finally {
      await noRetry.close();
      await retrying.close();
      await limited.close();
    }
  });
});

describe('retries through the fault control', () => {
  it('validate succeeds after two injected 503s (three attempts)', async () => {
    const waits: number[] = [];
    const c = makeClient({ retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 } }, { sleep: async (ms: number) => void waits.push(ms) });
    const code = await newCode();
    await control('/faults', { mode: 'error', status: 503, count: 2 });
    expect(await c.activation.validate({ code, machine_id: 'm1_a' })).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(waits).toHaveLength(2);
    expect((await control('/state')).faults.mode).toBe('none');
  });

  it('GETs give up after the configured retries with the last 5xx', async () => {
    const c = makeClient({ retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2 } }, noSleep);
    await control('/faults', { mode: 'error', status: 500, count: 5 });
    const e = await rejection(c.sdk.status(), isServiceError);
    expect([e.status, e.code]).toEqual([500, 'internal_error']);
    expect((await control('/state')).faults.remaining).toBe(3);
  });

  it('activate, deactivate, generate, builds.create, cancel and trigger are sent once, never retried', async () => {
    const c = makeClient({ retry: { retries: 3, minDelayMs: 1, maxDelayMs: 2 } }, noSleep);
    const code = await newCode();
    const created = await c.builds.create({ project_id: emu.projectId });
    const calls: [string, () => Promise<unknown>][] = [
      ['activate', () => c.activation.activate({ code, machine_id: 'm1_a' })],
      ['deactivate', () => c.activation.deactivate({ code, machine_id: 'm1_a' })],
      ['generate', () => c.activation.generate({ project_id: emu.projectId, max_activations: 1 })],
      ['builds.create', () => c.builds.create({ project_id: emu.projectId })],
      ['builds.cancel', () => c.builds.cancel(created.id)],
      ['trigger', () => c.trigger(emu.projectId, { ref: 'refs/heads/main' }, { webhookSecret: emu.webhookSecret })],
    ];
    for (const [name, call] of calls) {
      await control('/faults', { mode: 'error', status: 503, count: 10 });
      const e = await rejection(call(), isServiceError);
      expect([name, e.status]).toEqual([name, 503]);
      expect([name, (await control('/state')).faults.remaining]).toEqual([name, 9]);
    }
  });

  it('offline: a NetworkError, after retries for safe calls, at once for activate', async () => {
    const waits: number[] = [];
    const c = makeClient({ retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 } }, { sleep: async (ms: number) => void waits.push(ms) });
    await control('/faults', { mode: 'offline' });
    const e = await rejection(c.activation.validate({ code: '12345678-aaaa-4bbb-8ccc-1234567890ab', machine_id: 'm1_a' }));
    expect(isNetworkError(e)).toBe(true);
    expect(e.message).toMatch(/check the network connection/);
    expect(e.message).not.toContain('12345678-aaaa-4bbb-8ccc-1234567890ab');
    expect(waits).toHaveLength(2);
    waits.length = 0;
    expect(isNetworkError(await rejection(c.activation.activate({ code: '12345678-aaaa-4bbb-8ccc-1234567890ab', machine_id: 'm1_a' })))).toBe(true);
    expect(waits).toHaveLength(0);
    await control('/faults', { mode: 'none' });
    expect((await c.sdk.status()).version).toBeTruthy();
  });

  it('a connection refused is a NetworkError', async () => {
    const closed = await startEmulator({ port: 0 });
    const baseUrl = closed.baseUrl;
    await closed.close();
    const c = makeClient({ baseUrl, retry: false });
    const e = await rejection(c.sdk.status());
    expect(isNetworkError(e)).toBe(true);
    expect(e.cause).toBeDefined();
  });
});

describe('time-outs and abort', () => {
  it('an attempt slower than timeoutMs is a TimeoutError', async () => {
    await control('/faults', { mode: 'hold' }); // never answered (the next test's reset lets them go)
    const c = makeClient({ timeoutMs: 50, retry: false });
    const e = await rejection(c.sdk.status());
    expect(isTimeoutError(e)).toBe(true);
    expect(e).toMatchObject({ timeoutMs: 50, endpoint: 'GET /sdk/status' });
    const perCall = await rejection(client.sdk.status({ timeoutMs: 30 }));
    expect(isTimeoutError(perCall)).toBe(true);
  });

  it('time-outs of safe calls are retried within the deadline', async () => {
    await control('/faults', { mode: 'hold', count: 1 }); // the first attempt is never answered
    const waits: number[] = [];
    const c = makeClient({ timeoutMs: 50, retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2 } }, { sleep: async (ms: number) => void waits.push(ms) });
    expect((await c.sdk.status()).version).toBeTruthy();
    expect(waits).toHaveLength(1);
  });

  it('an AbortSignal cancels the call in flight with its reason', async () => {
    await control('/faults', { mode: 'hold' });
    const controller = new AbortController();
    const pending = client.activation.validate({ code: '12345678-aaaa-4bbb-8ccc-1234567890ab', machine_id: 'm1_a' }, { signal: controller.signal });
    setImmediate(() => controller.abort());
    const e = await rejection(pending);
    expect(e.name).toBe('AbortError');
  });

  it('an already aborted signal sends nothing', async () => {
    const reason = new Error('user closed the dialog');
    const e = await rejection(client.sdk.status({ signal: AbortSignal.abort(reason) }));
    expect(e).toBe(reason);
    expect(client.rateLimit).toBeDefined();
  });

  it('abort during a retry wait stops the retries', async () => {
    const controller = new AbortController();
    const c = makeClient(
      { retry: { retries: 5, minDelayMs: 60_000, maxDelayMs: 60_000, deadlineMs: 600_000 } },
      {
        sleep: (ms: number, signal?: AbortSignal) =>
          new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, ms);
            signal?.addEventListener('abort', () => {
              clearTimeout(timer);
              reject(signal.reason);
            });
            controller.abort();
          }),
      },
    );
    await control('/faults', { mode: 'error', status: 503, count: 10 });
    const e = await rejection(c.sdk.status({ signal: controller.signal }));
    expect(e.name).toBe('AbortError');
    expect((await control('/state')).faults.remaining).toBe(9);
  });
});

it("internal_error from the service is a ServiceError in the service's words", async () => {
  await control('/faults', { mode: 'error', status: 500, count: 1 });
  const e = await rejection(makeClient({ retry: false }).sdk.status(), isServiceError);
  expect([e.status, e.code]).toEqual([500, 'internal_error']);
  expect(e.message).toBe('GET /sdk/status failed with 500 internal_error: injected fault: the emulator answers 500; POST /__emulator/faults {"mode":"none"} to stop');
});
