// Replies a real emulator cannot make (broken shapes, non-JSON, proxies), via undici's MockAgent.
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceClient, isNetworkError, isSchemaError, isServiceError, type SchemaError, type ServiceError } from '../src/index.js';
import { rejection } from '@plugin-license/test-utils';

const origin = 'http://127.0.0.1:9';
const base = `${origin}/functions/v1`;
const buildId = '6b0f7f1e-1d2c-4c3b-8a9a-0c1d2e3f4a5b';
const projectId = '0e5f2d6c-9a8b-4c7d-8e6f-5a4b3c2d1e0f';
const code = 'C0DE1234-ABCD-4EF0-9876-FEDCBA987654';
const token = 'eyJhbGciOiJIUzI1NiJ9.secret-token-body.signature';

let mock: MockAgent;
let client: ServiceClient;
const sleeps: number[] = [];

beforeEach(() => {
  mock = new MockAgent();
  mock.disableNetConnect();
  sleeps.length = 0;
  client = new ServiceClient(
    { baseUrl: base, token, dispatcher: mock, retry: { retries: 3, minDelayMs: 100, maxDelayMs: 1000, deadlineMs: 120_000 } },
    { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms), now: () => 1_767_225_600_000 },
  );
});

afterEach(async () => {
  await client.close();
  await mock.close();
});

const pool = () => mock.get(origin);

const goodBuild = {
  id: buildId,
  project_id: projectId,
  status: 'running',
  version_number: '1.0.0',
  build_number: 3,
  platforms: ['macos'],
  formats: ['vst3'],
  metadata: { current_step: 'compile', step_progress: 0.5 },
  queued_at: '2026-01-01T00:00:00Z',
};

describe('schema errors', () => {
  it('names the endpoint and the field path of a missing required field', async () => {
    const { metadata: _m, ...noMetadata } = goodBuild;
    pool().intercept({ path: `/functions/v1/builds/${buildId}`, method: 'GET' }).reply(200, noMetadata);
    const e = await rejection(client.builds.get(buildId));
    expect(isSchemaError(e)).toBe(true);
    expect((e as SchemaError).endpoint).toBe('GET /builds/:id');
    expect((e as SchemaError).path).toBe('metadata');
    expect(e.message).toMatch(/GET \/builds\/:id.*"metadata"/);
  });

  it('names nested array paths of mistyped fields', async () => {
    pool()
      .intercept({ path: '/functions/v1/builds?limit=5', method: 'GET' })
      .reply(200, { builds: [{ ...goodBuild, status: 'exploded' }], total: 1, limit: 5, offset: 0 });
    const e = (await rejection(client.builds.list({ limit: 5 }))) as SchemaError;
    expect(e.path).toBe('builds[0].status');
    expect(e.issues.length).toBeGreaterThan(0);
  });

  it('keeps unknown fields (lenient parsing)', async () => {
    pool().intercept({ path: `/functions/v1/builds/${buildId}`, method: 'GET' }).reply(200, { ...goodBuild, shiny_new_field: 42 });
    expect(await client.builds.get(buildId)).toMatchObject({ shiny_new_field: 42 });
  });

  it('reports a non-JSON success body as a schema error and does not retry it', async () => {
    pool().intercept({ path: '/functions/v1/sdk/status', method: 'GET' }).reply(200, '<html>login</html>', { headers: { 'content-type': 'text/html' } });
    const e = await rejection(client.sdk.status());
    expect(isSchemaError(e)).toBe(true);
    expect(e.message).toMatch(/not JSON/);
    expect(sleeps).toEqual([]);
  });
});

describe('error answers', () => {
  it('maps a proxy error without the service body to a status-derived code', async () => {
    const c = new ServiceClient({ baseUrl: base, dispatcher: mock, retry: false });
    pool().intercept({ path: '/functions/v1/sdk/download', method: 'GET' }).reply(502, 'Bad Gateway');
    const e = (await rejection(c.sdk.download())) as ServiceError;
    expect(e).toMatchObject({ name: 'ServiceError', status: 502, code: 'internal_error', endpoint: 'GET /sdk/download' });
    await c.close();
  });

  it('never puts the full code or token in messages, details or endpoint labels, even when the service echoes them', async () => {
    pool()
      .intercept({ path: `/functions/v1/plugin-activation/status/${code}`, method: 'GET' })
      .reply(404, { error: 'code_not_found', message: `code ${code} not found (token ${token})`, details: { code, nested: [code] } });
    const e = (await rejection(client.activation.status(code))) as ServiceError;
    const everything = JSON.stringify({ message: e.message, details: e.details, endpoint: e.endpoint, stack: e.stack });
    expect(everything).not.toContain(code);
    expect(everything).not.toContain(token);
    expect(e.message).toContain('C0DE…7654');
    expect(e.endpoint).toBe('GET /plugin-activation/status/:code');
    expect(e.details).toEqual({ code: 'C0DE…7654', nested: ['C0DE…7654'] });
  });

  it('hides a code the service echoes in another case (it compares codes case-insensitively)', async () => {
    const lower = code.toLowerCase();
    pool()
      .intercept({ path: '/functions/v1/plugin-activation/activate', method: 'POST' })
      .reply(403, { error: 'code_revoked', message: `code ${lower} was revoked`, details: { code: lower, machine: 'm1_abc' } });
    const e = (await rejection(client.activation.activate({ code, machine_id: 'm1_abc' }))) as ServiceError;
    const everything = JSON.stringify({ message: e.message, details: e.details }).toLowerCase();
    expect(everything).not.toContain(lower);
    expect(e.message).toContain('C0DE…7654');
    expect(e.details).toEqual({ code: 'C0DE…7654', machine: 'm1_abc' });
  });
});

describe('downloads', () => {
  it('returns a 302 as the same DownloadLink shape without following it', async () => {
    const artifactId = '11111111-2222-4333-8444-555555555555';
    pool()
      .intercept({ path: `/functions/v1/builds/${buildId}/download/${artifactId}`, method: 'GET' })
      .reply(302, '', { headers: { location: 'https://files.example/artifact.zip?sig=abc' } });
    // No interceptor exists for files.example: following the redirect would fail with disableNetConnect.
    expect(await client.builds.download(buildId, artifactId)).toEqual({ url: 'https://files.example/artifact.zip?sig=abc', expires_at: null });
  });

  it('resolves a relative Location against the request URL', async () => {
    pool().intercept({ path: `/functions/v1/builds/${buildId}/download/a1`, method: 'GET' }).reply(302, '', { headers: { location: '/files/a1.zip' } });
    expect((await client.builds.download(buildId, 'a1')).url).toBe(`${origin}/files/a1.zip`);
  });
});

describe('retry timing (injected sleep and clock)', () => {
  const now = 1_767_225_600_000;

  it('waits until X-RateLimit-Reset after a 429, then succeeds', async () => {
    const reset = now / 1000 + 42;
    pool()
      .intercept({ path: '/functions/v1/builds/usage', method: 'GET' })
      .reply(429, { error: 'rate_limited', message: 'slow down', details: {} }, {
        headers: { 'x-ratelimit-limit': '10', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      });
    pool()
      .intercept({ path: '/functions/v1/builds/usage', method: 'GET' })
      .reply(200, { period: '2026-01', used: 1, limit: 10, remaining: 9, extra_builds: 0, reset_at: '2026-02-01T00:00:00Z' });
    expect((await client.builds.usage()).remaining).toBe(9);
    expect(sleeps).toEqual([42_000]);
  });

  it('honours Retry-After on a 503', async () => {
    pool().intercept({ path: '/functions/v1/sdk/status', method: 'GET' }).reply(503, { error: 'internal_error', message: 'maintenance' }, { headers: { 'retry-after': '7' } });
    pool()
      .intercept({ path: '/functions/v1/sdk/status', method: 'GET' })
      .reply(200, { available: true, version: '1.0.0', documentation_url: 'https://docs.example/sdk', distribution_type: 'zip', github_connected: false });
    await client.sdk.status();
    expect(sleeps).toEqual([7_000]);
  });

  it('backs off exponentially with full jitter between network failures', async () => {
    for (let i = 0; i < 3; i++) pool().intercept({ path: '/functions/v1/github-app-callback/status', method: 'GET' }).replyWithError(new Error('socket hang up'));
    pool().intercept({ path: '/functions/v1/github-app-callback/status', method: 'GET' }).reply(200, { connected: false });
    expect(await client.hosting.status()).toEqual({ connected: false });
    expect(sleeps).toEqual([50, 100, 200]); // random 0.5 × min(1000, 100 × 2^n)
  });

  it('gives up at once when the service asks to wait beyond the deadline', async () => {
    const c = new ServiceClient(
      { baseUrl: base, dispatcher: mock, retry: { retries: 3, deadlineMs: 10_000 } },
      { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms), now: () => now },
    );
    pool()
      .intercept({ path: '/functions/v1/sdk/status', method: 'GET' })
      .reply(429, '', {
        headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 60) },
      });
    const e = (await rejection(c.sdk.status())) as ServiceError;
    expect(e.code).toBe('rate_limited');
    expect(e.retryAt).toEqual(new Date(now + 60_000));
    expect(e.retryAfterMs).toBe(60_000);
    // No words of the service's: the wait is ours to say.
    expect(e.message).toContain(`wait until ${new Date(now + 60_000).toISOString()}`);
    expect(sleeps).toEqual([]);
    await c.close();
  });

  it('with maxServiceWaitMs, a longer wait the service asks for fails the call at once; a shorter one is sat out', async () => {
    const c = new ServiceClient(
      { baseUrl: base, dispatcher: mock, retry: { retries: 3, deadlineMs: 120_000, maxServiceWaitMs: 1000 } },
      { random: () => 0.5, sleep: async (ms) => void sleeps.push(ms), now: () => now },
    );
    pool()
      .intercept({ path: '/functions/v1/sdk/status', method: 'GET' })
      .reply(429, { error: 'rate_limited', message: 'slow down' }, {
        headers: { 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now / 1000 + 30) },
      });
    const e = (await rejection(c.sdk.status())) as ServiceError;
    expect(e.code).toBe('rate_limited');
    expect(e.retryAfterMs).toBe(30_000);
    expect(sleeps).toEqual([]);
    pool().intercept({ path: '/functions/v1/sdk/status', method: 'GET' }).reply(503, { error: 'internal_error', message: 'busy' }, { headers: { 'retry-after': '1' } });
    pool()
      .intercept({ path: '/functions/v1/sdk/status', method: 'GET' })
      .reply(200, { available: true, version: '1.0.0', documentation_url: 'https://docs.example/sdk', distribution_type: 'zip', github_connected: false });
    await c.sdk.status();
    expect(sleeps).toEqual([1000]);
    await c.close();
  });

  it('stops after the configured number of retries with the last error', async () => {
    for (let i = 0; i < 4; i++) pool().intercept({ path: '/functions/v1/plugin-repos/discover', method: 'GET' }).replyWithError(new Error('ECONNRESET'));
    const e = await rejection(client.repos.discover());
    expect(isNetworkError(e)).toBe(true);
    expect(sleeps).toHaveLength(3);
  });

  it('does not retry a 4xx other than 429', async () => {
    pool().intercept({ path: '/functions/v1/sdk/status', method: 'GET' }).reply(401, { error: 'unauthorized', message: 'bad token' });
    const e = await rejection(client.sdk.status());
    expect(isServiceError(e) && e.code).toBe('unauthorized');
    expect(sleeps).toEqual([]);
  });
});

describe('requests', () => {
  it('sends the bearer token, JSON content type and user agent; no token on activation calls', async () => {
    const seen: Record<string, unknown>[] = [];
    pool()
      .intercept({ path: '/functions/v1/plugin-activation/generate', method: 'POST' })
      .reply(201, (opts) => {
        seen.push({ headers: opts.headers, body: opts.body });
        return { code, key_type: 'project_test', max_activations: 2, created_at: '2026-01-01T00:00:00Z' };
      });
    pool()
      .intercept({ path: '/functions/v1/plugin-activation/activate', method: 'POST' })
      .reply(200, (opts) => {
        seen.push({ headers: opts.headers, body: opts.body });
        return { success: true, activations: 1, max_activations: 2, remaining: 1 };
      });
    await client.activation.generate({ project_id: projectId, max_activations: 2 });
    await client.activation.activate({ code, machine_id: 'm1_abc', plugin_id: projectId });
    const [gen, act] = seen as { headers: Record<string, string>; body: string }[];
    expect(gen?.headers.authorization).toBe(`Bearer ${token}`);
    expect(gen?.headers['content-type']).toBe('application/json');
    expect(gen?.headers['user-agent']).toMatch(/^plugin-license-api\/\d/);
    expect(act?.headers.authorization).toBeUndefined();
    expect(JSON.parse(act?.body ?? '')).toEqual({ code, machine_id: 'm1_abc', plugin_id: projectId });
  });

  it('rejects empty ids before sending anything', async () => {
    const e = await rejection(client.builds.get(''));
    expect(e.name).toBe('ConfigError');
    expect(e.message).toMatch(/id must be a non-empty string/);
  });

  it('rejects a nonsense per-call time-out before sending anything', async () => {
    for (const timeoutMs of [0, -5, Number.NaN]) {
      const e = await rejection(client.sdk.status({ timeoutMs }));
      expect([e.name, (e as { option?: string }).option]).toEqual(['ConfigError', 'timeoutMs']);
    }
  });

  it('refuses calls after close()', async () => {
    const c = new ServiceClient({ baseUrl: base, dispatcher: mock });
    await c.close();
    await c.close();
    expect((await rejection(c.sdk.status())).name).toBe('ConfigError');
  });
});
