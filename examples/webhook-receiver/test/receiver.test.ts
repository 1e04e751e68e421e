// End to end on the build side: a push matching a trigger starts a build that runs through its
// steps as the emulator's clock moves; its notifications reach this example receiver (in process
// and as a real process) and verify; artifacts download with the right checksum until the link
// expires; a receiver that is down, then up, gets every event, and redeliveries are dropped.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { ServiceClient, signWebhook } from '@plugin-license/api';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { control, fullDisk, stopProcess, tempHome } from '@plugin-license/test-utils';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error: the example is plain JavaScript, without type declarations
import { RecordFile, readRecords, startReceiver } from '../receiver.mjs';

const RECEIVER = fileURLToPath(new URL('../receiver.mjs', import.meta.url));
const T0 = Date.UTC(2030, 5, 1, 9, 0, 0);
const ALL = ['build.queued', 'build.started', 'build.success', 'build.failed', 'build.cancelled'];

interface Receiver {
  url: string;
  port: number;
  accepted(): Array<{ key: string; form: string; payload: Record<string, unknown> & { event: string; timestamp: string; build?: Record<string, unknown> } }>;
  close(): Promise<void>;
}

let emu: Emulator;
let ctl: ReturnType<typeof control>;
let admin: ServiceClient;
let home: { dir: string; cleanup: () => void };
/** The emulator's clock offset from T0, updated before each move so a receiver sharing it agrees during the move. */
let offset = 0;
const emulatorNow = (): number => T0 + offset;
const advance = async (ms: number): Promise<void> => {
  offset += ms;
  await ctl.clock({ advance_ms: ms });
};
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  emu = await startEmulator({ now: () => T0, rateLimits: { activation: 1000, builds: 1000, general: 1000, trigger: 1000 }, deliveryTimeoutMs: 2000 });
  ctl = control(emu.origin);
  admin = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, retry: false });
});
afterAll(async () => {
  await admin?.close();
  await emu?.close();
});
beforeEach(async () => {
  await ctl.reset();
  offset = 0;
  home = tempHome('plc-receiver-');
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  home.cleanup();
});

async function inProcessReceiver(record: string): Promise<Receiver> {
  const r = (await startReceiver({ secret: emu.webhookSecret, record, now: emulatorNow, log: () => undefined })) as Receiver;
  closers.push(() => r.close());
  return r;
}

/** The example as a real process (its own clock is the machine's: tests using it keep the emulator within 300 s of it). */
async function receiverProcess(secret: string, record: string, port = 0): Promise<{ url: string; port: number; child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [RECEIVER, '--port', String(port), '--record', record], {
    env: { PATH: process.env.PATH, WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`receiver exited ${code}: ${stderr}`)));
  });
  const url = (JSON.parse(line) as { url: string }).url;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async (): Promise<void> => {
    if (process.env.DEBUG_RECEIVER) process.stderr.write(stderr);
    await stopProcess(child, exited);
  };
  closers.push(stop);
  return { url, port: Number(new URL(url).port), child, stop };
}

describe('the receiver as a command', () => {
  it('refuses to start without a secret (exit 2) or with a bad port (exit 1), saying why', async () => {
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolveRun) => {
        const child = spawn(process.execPath, [RECEIVER, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('exit', (code) => resolveRun({ code, stderr }));
      });
    const record = join(home.dir, 'r.jsonl');
    expect(await run(['--record', record], {})).toMatchObject({ code: 2, stderr: expect.stringMatching(/set WEBHOOK_SECRET/) });
    expect(await run(['--port', 'eighty', '--record', record], { WEBHOOK_SECRET: 'whsec_x' })).toMatchObject({ code: 1, stderr: expect.stringMatching(/--port must be a whole number/) });
    expect(await run(['--record'], { WEBHOOK_SECRET: 'whsec_x' })).toMatchObject({ code: 1, stderr: expect.stringMatching(/--record needs a value/) });
  });
});

describe('the build side, end to end', () => {
  it('a matching push builds through its steps; notifications verify at the receiver; artifacts download until the link expires', async () => {
    const record = join(home.dir, 'deliveries.jsonl');
    const receiver = await inProcessReceiver(record);
    await ctl.buildSettings({ step_ms: 60_000, fail_rate: 0, seed: 0 });
    await ctl.triggers(emu.projectId, [
      { trigger: 'push', branches: ['main', 'release/*'], paths: { include: ['Source/**', 'CMakeLists.txt'], exclude: ['**/*.md'] }, build_config: { platforms: ['macos', 'windows'], formats: ['vst3', 'au'], release_type: 'patch' } },
    ]);
    await ctl.notifications(emu.projectId, { url: receiver.url, events: ALL, form: 'detailed' });

    expect(await ctl.push(emu.projectId, { branch: 'main', files: ['Source/README.md'] })).toMatchObject({ build_id: null });
    const pushed = await ctl.push(emu.projectId, { branch: 'release/1.0', files: ['Source/PluginProcessor.cpp', 'docs/notes.md'], commit_sha: 'c0ffee1234567' });
    const id = pushed.build_id!;
    expect(await admin.builds.get(id)).toMatchObject({ status: 'queued', version_number: '1.0.1' });

    const steps: string[] = [];
    for (let i = 0; i < 7; i++) {
      await advance(60_000);
      const b = await admin.builds.get(id);
      steps.push(`${b.status}:${b.metadata.current_step}`);
    }
    expect(steps).toEqual(['running:checkout', 'running:configure', 'running:compile', 'running:sign', 'running:package', 'running:upload', 'success:completed']);

    const accepted = receiver.accepted();
    expect(accepted.map((a) => a.payload.event)).toEqual(['build.queued', 'build.started', 'build.success']);
    const success = accepted[2]!.payload.build as { artifacts: Array<{ file_name: string; file_size: number; download_url: string }>; duration_seconds: number };
    expect(success.duration_seconds).toBe(360);
    const { artifacts } = await admin.builds.artifacts(id);
    expect(success.artifacts.map((a) => a.file_name).sort()).toEqual(artifacts.map((a) => a.file_name).sort());

    // The link the API hands out, and the one in the notification, serve the bytes the checksum names.
    const link = await admin.builds.download(id, artifacts[0]!.id);
    for (const url of [link.url, success.artifacts.find((a) => a.file_name === artifacts[0]!.file_name)!.download_url]) {
      const res = await request(url);
      const bytes = Buffer.from(await res.body.arrayBuffer());
      expect(res.statusCode).toBe(200);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(artifacts[0]!.checksum_sha256);
    }
    await advance(16 * 60_000);
    const expired = await request(link.url);
    expect(expired.statusCode).toBe(403);
    expect(((await expired.body.json()) as { message: string }).message).toMatch(/expired/);
    expect((await admin.builds.artifacts(id)).artifacts[0]!.download_count).toBe(1);
  });

  it('rejects stale, future, tampered, unsigned and malformed deliveries, recording nothing', async () => {
    const record = join(home.dir, 'deliveries.jsonl');
    const receiver = await inProcessReceiver(record);
    const body = JSON.stringify({ event: 'build.status', build_id: 'b1', status: 'success', project_id: emu.projectId, version: '1.0.0', timestamp: new Date(T0).toISOString() });
    const post = async (payload: string, headers: Record<string, string>) => {
      const res = await request(receiver.url, { method: 'POST', body: payload, headers: { 'content-type': 'application/json', ...headers } });
      return { status: res.statusCode, body: (await res.body.json()) as { error?: string; accepted?: string; duplicate?: boolean } };
    };
    const nowS = Math.floor(T0 / 1000);
    expect(await post(body, signWebhook(body, emu.webhookSecret, { timestamp: nowS - 301 }))).toEqual({ status: 400, body: { error: 'stale' } });
    expect(await post(body, signWebhook(body, emu.webhookSecret, { timestamp: nowS + 301 }))).toEqual({ status: 400, body: { error: 'future' } });
    expect(await post(body.replace('success', 'failed'), signWebhook(body, emu.webhookSecret, { timestamp: nowS }))).toEqual({ status: 400, body: { error: 'bad_signature' } });
    expect(await post(body, signWebhook(body, 'whsec_someone_else', { timestamp: nowS }))).toEqual({ status: 400, body: { error: 'bad_signature' } });
    expect(await post(body, {})).toEqual({ status: 400, body: { error: 'missing_header' } });
    expect(await post(body, signWebhook(body, emu.webhookSecret, { bodyOnly: true }))).toEqual({ status: 400, body: { error: 'missing_header' } });
    const junk = '{"event":"build.exploded"}';
    expect(await post(junk, signWebhook(junk, emu.webhookSecret, { timestamp: nowS }))).toEqual({ status: 400, body: { error: 'bad_payload' } });
    expect(readRecords(record)).toEqual([]);

    expect(await post(body, signWebhook(body, emu.webhookSecret, { timestamp: nowS }))).toEqual({ status: 200, body: { accepted: 'build.status|b1|success' } });
    // The same event re-signed later (a redelivery) is dropped.
    expect(await post(body, signWebhook(body, emu.webhookSecret, { timestamp: nowS + 10 }))).toEqual({ status: 200, body: { duplicate: true } });
    expect(readRecords(record)).toHaveLength(1);
  });

  it('a receiver process that is down, then up, gets every event in the end; a lost answer is redelivered and dropped as a duplicate', async () => {
    // The receiver process checks freshness on the machine's clock: the emulator runs on it too here.
    const live = await startEmulator({ rateLimits: { activation: 1000, builds: 1000, general: 1000, trigger: 1000 }, deliveryTimeoutMs: 2000 });
    closers.push(() => live.close());
    const liveCtl = control(live.origin);
    const record = join(home.dir, 'deliveries.jsonl');

    // Find a port, then leave it closed: the receiver is down.
    const first = await receiverProcess(live.webhookSecret, record);
    await first.stop();
    const port = first.port;

    // A gateway in front of the receiver that loses the receiver's first answer (it answers 502
    // after the receiver has recorded the delivery), as a proxy time-out would.
    let lose = 0;
    const gateway: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const upstream = httpRequest({ host: '127.0.0.1', port, path: req.url, method: 'POST', headers: req.headers }, (answer) => {
          const parts: Buffer[] = [];
          answer.on('data', (c: Buffer) => parts.push(c));
          answer.on('end', () => {
            if (lose > 0) {
              lose -= 1;
              res.writeHead(502).end();
            } else res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(parts));
          });
        });
        upstream.on('error', () => res.writeHead(502).end());
        upstream.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => { gateway.close(() => resolve()); gateway.closeAllConnections(); }));
    const gatewayUrl = `http://127.0.0.1:${(gateway.address() as { port: number }).port}/hooks/build`;

    await liveCtl.buildSettings({ step_ms: 5_000, fail_rate: 0, seed: 0 });
    await liveCtl.triggers(live.projectId, [{ trigger: 'push', branches: ['main'] }]);
    await liveCtl.notifications(live.projectId, { url: gatewayUrl, events: ALL, form: 'detailed' });
    const pushed = await liveCtl.push(live.projectId, { branch: 'main', files: ['Source/a.cpp'] });
    await liveCtl.clock({ advance_ms: 40_000 }); // the whole build, every delivery refused
    let { deliveries } = await liveCtl.deliveries();
    expect(deliveries.map((d) => d.event)).toEqual(['build.queued', 'build.started', 'build.success']);
    expect(deliveries.every((d) => !d.delivered && d.attempts.every((a) => a.status === 502))).toBe(true);

    // Up again on the same port, with the same record file; the first answer it gives is lost.
    const second = await receiverProcess(live.webhookSecret, record, port);
    lose = 1;
    await liveCtl.clock({ advance_ms: 30_000 });
    await liveCtl.clock({ advance_ms: 60_000 });
    ({ deliveries } = await liveCtl.deliveries());
    expect(deliveries.every((d) => d.delivered), JSON.stringify(deliveries, null, 1)).toBe(true);
    const accepted = readRecords(record) as Array<{ key: string }>;
    expect(accepted.map((a) => a.key).sort()).toEqual([`build.queued|${pushed.build_id}|queued`, `build.started|${pushed.build_id}|running`, `build.success|${pushed.build_id}|success`].sort());
    expect(readFileSync(record, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(deliveries.some((d) => d.attempts.filter((a) => a.status === 502).length > 0 && d.attempts.at(-1)?.status === 200)).toBe(true);

    // After a restart the record file still knows what was handled: a redelivery is dropped.
    await second.stop();
    const third = await receiverProcess(live.webhookSecret, record, port);
    const replay = JSON.stringify((readRecords(record) as Array<{ payload: unknown }>)[0]!.payload);
    const res = await request(third.url, { method: 'POST', body: replay, headers: { 'content-type': 'application/json', ...signWebhook(replay, live.webhookSecret) } });
    expect(await res.body.json()).toEqual({ duplicate: true });
    expect(readFileSync(record, 'utf8').trim().split('\n')).toHaveLength(3);
  });
});

describe('the receiver under faults', () => {
  const flat = (id: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ event: 'build.status', build_id: id, status: 'success', project_id: 'p', version: '1.0.0', timestamp: new Date().toISOString(), ...extra });
  const post = async (url: string, body: string, secret: string) => {
    const res = await request(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...signWebhook(body, secret) } });
    return { status: res.statusCode, body: (await res.body.json()) as { accepted?: string; duplicate?: boolean; error?: string } };
  };
  const machineClockReceiver = async (record: string): Promise<Receiver> => {
    const r = (await startReceiver({ secret: emu.webhookSecret, record, log: () => undefined })) as Receiver;
    closers.push(() => r.close());
    return r;
  };
  /** Every line of the file, each of which must be a whole record. */
  const lines = (file: string) => {
    const text = readFileSync(file, 'utf8');
    expect(text === '' || text.endsWith('\n'), 'the record file ends with a whole line').toBe(true);
    return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { key: string });
  };

  it('a client that hangs up mid-body fails that request only: the receiver keeps running and accepting', async () => {
    const record = join(home.dir, 'deliveries.jsonl');
    const receiver = await receiverProcess('whsec_test', record);
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve, reject) => {
        const socket = connect(receiver.port, '127.0.0.1', () => {
          socket.write(`POST /hooks/build HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"event":`);
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', reject);
      });
    }
    expect(receiver.child.exitCode).toBe(null);
    expect(await post(receiver.url, flat('b1'), 'whsec_test')).toEqual({ status: 200, body: { accepted: 'build.status|b1|success' } });
    expect(receiver.child.exitCode).toBe(null);
  });

  it('on a full disk it answers 500 for a record it could not write whole, never leaves a torn line, and records it once there is room', async (ctx) => {
    const disk = join(home.dir, 'disk');
    const full = fullDisk(disk, { freeBytes: 8192 });
    if (!full.ok) return ctx.skip(full.reason);
    try {
      const record = join(disk, 'deliveries.jsonl');
      const receiver = await receiverProcess('whsec_test', record);
      const padding = 'x'.repeat(1000); // about 1.1 KB a record (12 fit the 16 KB disk): the disk's room ends mid-record
      const answers: number[] = [];
      for (let i = 0; i < 12; i++) answers.push((await post(receiver.url, flat(`b${i}`, { padding }), 'whsec_test')).status);
      const accepted = answers.filter((s) => s === 200).length;
      expect(accepted).toBeGreaterThan(0);
      expect(answers.slice(accepted).every((s) => s === 500), answers.join(',')).toBe(true);
      expect(lines(record).map((r) => r.key)).toEqual(answers.slice(0, accepted).map((_, i) => `build.status|b${i}|success`));

      // Room again: the refused deliveries, retried, are recorded after the whole lines.
      rmSync(join(disk, '.filler'));
      for (let i = accepted; i < 12; i++) expect((await post(receiver.url, flat(`b${i}`, { padding }), 'whsec_test')).status).toBe(200);
      expect(lines(record).map((r) => r.key)).toEqual(answers.map((_, i) => `build.status|b${i}|success`));
      await receiver.stop();
    } finally {
      full.undo();
    }
  });

  it('a torn last line left by a crash is cut off at start, not glued to the next record', async () => {
    const record = join(home.dir, 'deliveries.jsonl');
    writeFileSync(record, `${JSON.stringify({ key: 'build.status|old|success', payload: {} })}\n{"key":"build.status|torn|succ`);
    const receiver = await machineClockReceiver(record);
    expect((await post(receiver.url, flat('b1'), emu.webhookSecret)).status).toBe(200);
    expect(lines(record).map((r) => r.key)).toEqual(['build.status|old|success', 'build.status|b1|success']);
    // The file class alone, as a library user would hold it.
    const file = new RecordFile(join(home.dir, 'other.jsonl'));
    file.append({ key: 'a' });
    file.close();
    expect(lines(join(home.dir, 'other.jsonl'))).toEqual([{ key: 'a' }]);
  });

  it('remembers every recorded delivery, however many: a replay of the first of 10,001 records is a duplicate', async () => {
    const record = join(home.dir, 'deliveries.jsonl');
    const payloads = Array.from({ length: 10_001 }, (_, i) => flat(`b${i}`));
    writeFileSync(record, payloads.map((p, i) => `${JSON.stringify({ key: `build.status|b${i}|success`, payload: JSON.parse(p) })}\n`).join(''));
    const receiver = await machineClockReceiver(record);
    expect(await post(receiver.url, payloads[0]!, emu.webhookSecret)).toEqual({ status: 200, body: { duplicate: true } });
    expect(await post(receiver.url, flat('b10001'), emu.webhookSecret)).toMatchObject({ status: 200 });
    expect(readRecords(record)).toHaveLength(10_002);
  });
});
