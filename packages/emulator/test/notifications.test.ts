import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, type WebhookPayload } from '@plugin-license/api';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from './http.js';
import { useEmulator } from './helpers.js';

const T0 = Date.UTC(2030, 3, 10, 8, 0, 0);
const STEP = 1000;
const ALL = ['build.queued', 'build.started', 'build.success', 'build.failed', 'build.cancelled'];
const { emu, ctl } = useEmulator({ now: () => T0, rateLimits: { activation: 1000, builds: 1000, general: 1000, trigger: 1000 }, deliveryTimeoutMs: 300 }, { buildStepMs: STEP });

interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A receiver on loopback that records each POST and answers `status()` (or never, with `hang`). */
async function startReceiver(port = 0, options: { status?: () => number; hang?: boolean } = {}): Promise<{ url: string; port: number; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, body: Buffer.concat(chunks) });
    if (options.hang) return;
    res.writeHead(options.status?.() ?? 204).end();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const actual = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}/hooks/build`,
    port: actual,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const r = await startReceiver();
  await r.close();
  return r.port;
}

async function emulatorNow(): Promise<number> {
  return (await ctl.clock({ advance_ms: 0 })).now_ms;
}

async function verified(r: Received): Promise<WebhookPayload> {
  const now = await emulatorNow();
  return verifyWebhook({ body: r.body, headers: r.headers, secret: emu.webhookSecret, now: () => now }).payload;
}

const receivers: Array<{ close(): Promise<void> }> = [];
async function receiver(port = 0, options: { status?: () => number; hang?: boolean } = {}) {
  const r = await startReceiver(port, options);
  receivers.push(r);
  return r;
}

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function createBuild(body: Record<string, unknown> = {}): Promise<string> {
  const answer = await call(emu, 'POST', '/builds', { body: { project_id: emu.projectId, ...body } });
  expect(answer.status, answer.text).toBe(201);
  return answer.body.id as string;
}

describe('outgoing notifications', () => {
  it('sends each status change as a signed detailed delivery, artifacts with working download URLs', async () => {
    const r = await receiver();
    await ctl.notifications(emu.projectId, { url: r.url, events: ALL, form: 'detailed' });
    const id = await createBuild({ platforms: ['macos'], formats: ['vst3'] });
    expect(r.received).toHaveLength(0); // pending is not an event
    await ctl.clock({ advance_ms: 20 * STEP });

    // Deliveries go out concurrently, so arrival order is not guaranteed: order by event time.
    const payloads = (await Promise.all(r.received.map(verified))).sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(payloads.map((p) => p.event)).toEqual(['build.queued', 'build.started', 'build.success']);
    const success = payloads[2]!;
    if (success.event !== 'build.success') throw new Error('expected build.success');
    expect(success.timestamp).toBe(new Date(T0 + 8 * STEP).toISOString());
    expect(success.build).toMatchObject({ id, project_id: emu.projectId, version: '1.0.0', build_number: 2, status: 'success', platforms: ['macos'], formats: ['vst3'], duration_seconds: 6 });
    const [artifact] = success.build.artifacts ?? [];
    const file = await request(artifact!.download_url);
    const bytes = Buffer.from(await file.body.arrayBuffer());
    expect(bytes.length).toBe(artifact!.file_size);
    const listed = (await call(emu, 'GET', `/builds/${id}/artifacts`)).body.artifacts as Array<{ checksum_sha256: string }>;
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(listed[0]!.checksum_sha256);

    const headers = r.received[0]!.headers;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['x-service-timestamp']).toBe(String(Math.floor((T0 + 20 * STEP) / 1000)));
    expect(headers['x-service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    const { deliveries } = await ctl.deliveries();
    expect(deliveries.map((d) => [d.event, d.delivered, d.attempts.map((a) => a.status)])).toEqual([
      ['build.queued', true, [204]],
      ['build.started', true, [204]],
      ['build.success', true, [204]],
    ]);
  });

  it('sends the failed form for build.failed and build.cancelled on cancel, only for selected events', async () => {
    const r = await receiver();
    await ctl.notifications(emu.projectId, { url: r.url, events: ['build.failed', 'build.cancelled'] });
    await ctl.buildSettings({ fail_rate: 1, seed: 3 });
    const failing = await createBuild();
    await ctl.clock({ advance_ms: 20 * STEP });
    const cancelled = await createBuild();
    await call(emu, 'POST', `/builds/${cancelled}/cancel`);
    await ctl.deliveries(); // settles the attempt in flight

    const payloads = await Promise.all(r.received.map(verified));
    expect(payloads.map((p) => p.event)).toEqual(['build.failed', 'build.cancelled']);
    const failed = payloads[0]!;
    if (failed.event !== 'build.failed') throw new Error('expected build.failed');
    expect(failed.build).toMatchObject({ id: failing, status: 'failed' });
    expect(failed.build.error_message).toMatch(/failed/);
    expect(failed.build.error_logs).toContain(`[${failed.build.failed_at_step}]`);
    const b = (await call(emu, 'GET', `/builds/${failing}`)).body as { metadata: { current_step: string } };
    expect(failed.build.failed_at_step).toBe(b.metadata.current_step);
  });

  it('sends the flat form when configured so', async () => {
    const r = await receiver();
    await ctl.notifications(emu.projectId, { url: r.url, events: ['build.queued'], form: 'flat' });
    const trig = await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    await ctl.deliveries();
    const [payload] = await Promise.all(r.received.map(verified));
    expect(payload).toEqual({
      event: 'build.status',
      build_id: trig.body.build_id,
      status: 'queued',
      project_id: emu.projectId,
      version: '1.0.0',
      timestamp: new Date(T0).toISOString(),
    });
  });

  it('retries a receiver that is down on the documented schedule, and delivers every event once it is up', async () => {
    const port = await closedPort();
    await ctl.notifications(emu.projectId, { url: `http://127.0.0.1:${port}/hooks/build`, events: ALL });
    await ctl.buildSettings({ step_ms: 60 * 60_000 }); // the build stays queued while we watch the retries
    const trig = await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    expect(trig.status).toBe(201);

    let [d] = (await ctl.deliveries()).deliveries;
    expect(d).toMatchObject({ event: 'build.queued', delivered: false, next_attempt_at: new Date(T0 + 10_000).toISOString() });
    expect(d!.attempts).toEqual([expect.objectContaining({ status: null, error: 'connection refused' })]);

    await ctl.clock({ advance_ms: 9_999 });
    expect((await ctl.deliveries()).deliveries[0]!.attempts).toHaveLength(1);
    await ctl.clock({ advance_ms: 1 });
    [d] = (await ctl.deliveries()).deliveries;
    expect(d!.attempts).toHaveLength(2);
    expect(d!.next_attempt_at).toBe(new Date(T0 + 10_000 + 30_000).toISOString());

    const r = await receiver(port);
    await ctl.clock({ advance_ms: 30_000 });
    [d] = (await ctl.deliveries()).deliveries;
    expect(d).toMatchObject({ delivered: true, gave_up: false, next_attempt_at: null });
    expect(d!.attempts.map((a) => a.status)).toEqual([null, null, 204]);
    expect((await Promise.all(r.received.map(verified))).map((p) => p.event)).toEqual(['build.queued']);
  });

  it('retries non-2xx answers and time-outs, and gives up after nine attempts', async () => {
    let answers = [500, 503];
    const r = await receiver(0, { status: () => answers.shift() ?? 200 });
    await ctl.notifications(emu.projectId, { url: r.url, events: ['build.queued'] });
    await ctl.buildSettings({ step_ms: 24 * 60 * 60_000 });
    await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    await ctl.clock({ advance_ms: 10_000 });
    await ctl.clock({ advance_ms: 30_000 });
    let [d] = (await ctl.deliveries()).deliveries;
    expect(d!.attempts.map((a) => [a.status, a.error])).toEqual([
      [500, 'the receiver answered 500'],
      [503, 'the receiver answered 503'],
      [200, null],
    ]);

    const hanging = await receiver(0, { hang: true });
    await ctl.notifications(emu.projectId, { url: hanging.url, events: ['build.queued'] });
    await call(emu, 'POST', `/external-builds/${emu.projectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': emu.webhookSecret } });
    [, d] = (await ctl.deliveries()).deliveries;
    expect(d!.attempts[0]).toMatchObject({ status: null, error: 'no answer within 300 ms' });
    for (const delay of [10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000]) await ctl.clock({ advance_ms: delay });
    [, d] = (await ctl.deliveries()).deliveries;
    expect(d).toMatchObject({ delivered: false, gave_up: true, next_attempt_at: null });
    expect(d!.attempts).toHaveLength(9);
    answers = [];
  });
});
