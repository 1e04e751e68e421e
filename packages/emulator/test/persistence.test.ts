import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateCode, startEmulatorProcess, tempHome } from '@plugin-license/test-utils';
import { startEmulator } from '../src/index.js';
import { call } from './http.js';

let home: ReturnType<typeof tempHome>;

beforeEach(async () => {
  home = tempHome('plugin-license-emulator-');
});
afterEach(async () => {
  home.cleanup();
});

describe('--data persistence', () => {
  it('keeps codes, activations, revocations, builds, token and project across a restart of the CLI', async () => {
    const file = join(home.dir, 'state', 'emulator.json');
    const first = await startEmulatorProcess({ args: ['--data', file, '--quiet'] });
    let kept: string;
    let revoked: string;
    let buildId: string;
    try {
      const api = { baseUrl: first.info.base_url, origin: first.origin, token: first.info.token };
      kept = await generateCode(api.baseUrl, api.token, first.info.project_id, 3);
      revoked = await generateCode(api.baseUrl, api.token, first.info.project_id, 1);
      for (const m of ['m1', 'm2']) {
        expect((await call(api, 'POST', '/plugin-activation/activate', { body: { code: kept, machine_id: m }, token: null })).status).toBe(200);
      }
      await call(api, 'POST', '/plugin-activation/deactivate', { body: { code: kept, machine_id: 'm2' }, token: null });
      expect((await call(api, 'POST', `/__emulator/codes/${revoked}/revoke`)).status).toBe(200);
      // Steps of an hour: the build is still pending after the restart, however slow the machine.
      expect((await call(api, 'PUT', '/__emulator/build-settings', { body: { step_ms: 3_600_000, fail_rate: 0.25, seed: 9 } })).status).toBe(200);
      expect((await call(api, 'PUT', `/__emulator/projects/${first.info.project_id}/triggers`, { body: [{ trigger: 'push', branches: ['main'] }] })).status).toBe(200);
      expect((await call(api, 'PUT', `/__emulator/projects/${first.info.project_id}/notifications`, { body: { url: 'http://127.0.0.1:9/hook', events: ['build.queued'] } })).status).toBe(200);
      buildId = String((await call(api, 'POST', '/builds', { body: { project_id: first.info.project_id } })).body.id);
    } finally {
      await first.stop();
    }

    const info = await stat(file);
    expect(info.mode & 0o777).toBe(0o600);
    expect((await readdir(join(home.dir, 'state'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    const second = await startEmulatorProcess({ args: ['--data', file, '--quiet'] });
    try {
      expect(second.info.token).toBe(first.info.token);
      expect(second.info.project_id).toBe(first.info.project_id);
      expect(second.info.webhook_secret).toBe(first.info.webhook_secret);
      const api = { baseUrl: second.info.base_url, origin: second.origin, token: first.info.token };
      expect((await call(api, 'GET', `/plugin-activation/status/${kept}`, { token: null })).body).toEqual({
        activations: 1,
        max_activations: 3,
        available: 2,
        is_revoked: false,
      });
      const validate = (code: string, m: string) => call(api, 'POST', '/plugin-activation/validate', { body: { code, machine_id: m }, token: null });
      expect((await validate(kept, 'm1')).body).toEqual({ valid: true });
      expect((await validate(kept, 'm2')).body).toEqual({ valid: false, reason: 'deactivated' });
      expect((await validate(revoked, 'x')).body).toEqual({ valid: false, reason: 'code_revoked' });
      expect((await call(api, 'GET', `/builds/${buildId}`)).body).toMatchObject({ id: buildId, status: 'pending' });
      // Settings (with the seeded sequence's position), triggers, notification targets and the
      // build's schedule come back too: the build goes on where it was.
      const state = (await call(api, 'GET', '/__emulator/state')).body as { build_settings: unknown; projects: Array<{ id: string; triggers: unknown[]; notifications: unknown }> };
      expect(state.build_settings).toEqual({ step_ms: 3_600_000, fail_rate: 0.25, seed: 9, draws: 1 });
      const project = state.projects.find((p) => p.id === second.info.project_id);
      expect(project?.triggers).toEqual([{ trigger: 'push', enabled: true, branches: ['main'], build_config: {} }]);
      expect(project?.notifications).toEqual({ url: 'http://127.0.0.1:9/hook', events: ['build.queued'], form: 'detailed' });
      await call(api, 'POST', '/__emulator/clock', { body: { advance_ms: 3_600_000 } });
      expect((await call(api, 'GET', `/builds/${buildId}`)).body).toMatchObject({ status: 'queued' });
      const keys = (await call(api, 'GET', `/plugin-activation/project/${second.info.project_id}/keys`)).body.keys as unknown[];
      expect(keys).toHaveLength(2);
    } finally {
      await second.stop();
    }
  });

  it('writes through on each change in process too, and reset is persisted', async () => {
    const file = join(home.dir, 'emu.json');
    const a = await startEmulator({ dataFile: file });
    let code: string;
    try {
      code = await generateCode(a.baseUrl, a.token, a.projectId, 1);
      const onDisk = JSON.parse(await readFile(file, 'utf8')) as { codes: Array<{ code: string }> };
      expect(onDisk.codes.map((c) => c.code)).toEqual([code]);
    } finally {
      await a.close();
    }
    const b = await startEmulator({ dataFile: file });
    try {
      expect(b.token).toBe(a.token);
      expect(b.otherProjectId).toBe(a.otherProjectId);
      expect((await call(b, 'GET', `/plugin-activation/status/${code}`)).status).toBe(200);
      await call(b, 'POST', '/__emulator/reset');
    } finally {
      await b.close();
    }
    const c = await startEmulator({ dataFile: file });
    try {
      expect(c.projectId).toBe(a.projectId);
      expect((await call(c, 'GET', `/plugin-activation/status/${code}`)).status).toBe(404);
    } finally {
      await c.close();
    }
    // A file written before the build side existed (no settings, triggers, notifications,
    // deliveries or schedules) is read with the defaults.
    const old = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown> & { projects: Array<Record<string, unknown>>; builds: Array<Record<string, unknown>> };
    delete old.build_settings;
    delete old.deliveries;
    for (const p of old.projects) {
      delete p.triggers;
      delete p.notifications;
    }
    for (const b of old.builds) delete b.schedule;
    await writeFile(file, JSON.stringify(old));
    const d = await startEmulator({ dataFile: file });
    try {
      const state = (await call(d, 'GET', '/__emulator/state')).body as { build_settings: { step_ms: number }; deliveries: unknown[] };
      expect(state.build_settings.step_ms).toBe(5000);
      expect(state.deliveries).toEqual([]);
      expect((await call(d, 'POST', '/builds', { body: { project_id: d.projectId } })).status).toBe(201);
    } finally {
      await d.close();
    }
  });

  it('a delivery still owed when the emulator stops goes out after a restart', async () => {
    const file = join(home.dir, 'owed.json');
    // A port nothing listens on yet: the receiver is down while the first emulator runs.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const a = await startEmulator({ dataFile: file });
    try {
      await call(a, 'PUT', `/__emulator/projects/${a.projectId}/notifications`, { body: { url: `http://127.0.0.1:${port}/hook`, events: ['build.queued'] } });
      const trig = await call(a, 'POST', `/external-builds/${a.projectId}/trigger`, { body: {}, token: null, headers: { 'x-webhook-secret': a.webhookSecret } });
      expect(trig.status).toBe(201);
      const owed = (await call(a, 'GET', '/__emulator/deliveries')).body.deliveries as Array<{ delivered: boolean; attempts: unknown[] }>;
      expect(owed).toMatchObject([{ delivered: false, attempts: [expect.objectContaining({ error: 'connection refused' })] }]);
    } finally {
      await a.close();
    }
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d));
      req.on('end', () => {
        received.push(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(port, '127.0.0.1', r));
    const b = await startEmulator({ dataFile: file });
    try {
      await call(b, 'POST', '/__emulator/clock', { body: { advance_ms: 10_000 } });
      const after = (await call(b, 'GET', '/__emulator/deliveries')).body.deliveries as Array<{ delivered: boolean; attempts: Array<{ status: number | null }> }>;
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({ delivered: true });
      expect(after[0]!.attempts.at(-1)?.status).toBe(204);
      expect(received.map((r) => (JSON.parse(r) as { event: string }).event)).toEqual(['build.queued']);
    } finally {
      await b.close();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });

  it('a data file the disk refuses: the request answers 500 naming the file (not an emulator bug), no temp file is left, and the next write holds everything', async () => {
    const dir = join(home.dir, 'refusing');
    const file = join(dir, 'emulator.json');
    const emu = await startEmulator({ dataFile: file });
    try {
      const first = await generateCode(emu.baseUrl, emu.token, emu.projectId, 1);
      // A folder where the file should be: the rename of the written temp file onto it fails.
      await rm(file);
      await mkdir(join(file, 'in-the-way'), { recursive: true });
      const refused = await call(emu, 'POST', '/plugin-activation/generate', { body: { project_id: emu.projectId, max_activations: 1 } });
      expect(refused.status).toBe(500);
      expect(refused.body).toMatchObject({ error: 'internal_error', details: { file } });
      expect(refused.body.message).toMatch(/^cannot write the data file .*emulator\.json: .*; check the folder exists and is writable; the change is kept in memory and saved with the next one$/);
      expect(JSON.stringify(refused.body)).not.toContain(first);
      expect((await readdir(dir)).sort()).toEqual(['emulator.json']);
      await rm(file, { recursive: true });
      const third = await generateCode(emu.baseUrl, emu.token, emu.projectId, 1);
      const saved = JSON.parse(await readFile(file, 'utf8')) as { codes: Array<{ code: string }> };
      expect(saved.codes.map((c) => c.code)).toEqual(expect.arrayContaining([first, third]));
      expect(saved.codes).toHaveLength(3);
    } finally {
      await emu.close();
    }
  });

  it('refuses a data file that is not its own and leaves it untouched', async () => {
    const file = join(home.dir, 'broken.json');
    await writeFile(file, '{"version": 1, "codes": ');
    await expect(startEmulator({ dataFile: file })).rejects.toMatchObject({ code: 'data_file_invalid' });
    await writeFile(file, '{"version": 2}');
    await expect(startEmulator({ dataFile: file })).rejects.toMatchObject({ code: 'data_file_invalid', message: expect.stringContaining('version') });
    expect(await readFile(file, 'utf8')).toBe('{"version": 2}');
    await expect(startEmulatorProcess({ args: ['--data', file], timeoutMs: 15_000 })).rejects.toThrow(/not an emulator data file/);
  });
});
