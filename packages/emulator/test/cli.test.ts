import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_CLI, generateCode, startEmulatorProcess, type EmulatorProcess } from '@plugin-license/test-utils';
import { call } from './http.js';

function runToExit(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [EMULATOR_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return once(child, 'exit').then(([code]) => {
    clearTimeout(timer);
    return { code: code as number | null, stdout, stderr };
  });
}

describe('plugin-license-emulator (CLI)', () => {
  let emu: EmulatorProcess;
  let api: { baseUrl: string; origin: string; token: string };

  beforeAll(async () => {
    emu = await startEmulatorProcess({ args: ['--rate-limit-activation', '3'] });
    api = { baseUrl: emu.info.base_url, origin: emu.origin, token: emu.info.token };
  });
  afterAll(async () => {
    await emu?.stop();
  });

  it('prints one JSON start-up line with a ready project and token', async () => {
    expect(Object.keys(emu.info).sort()).toEqual(['base_url', 'project_id', 'token', 'webhook_secret']);
    expect(emu.info.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/functions\/v1$/);
    expect(emu.info.project_id).toMatch(/^[0-9a-f-]{36}$/);
    const sdk = await call(api, 'GET', '/sdk/status');
    expect(sdk.status).toBe(200);
    const keys = await call(api, 'GET', `/plugin-activation/project/${emu.info.project_id}/keys`);
    expect(keys.status).toBe(200);
  });

  it('applies rate-limit flags and logs requests to stderr with codes redacted', async () => {
    const code = await generateCode(emu.info.base_url, emu.info.token, emu.info.project_id, 1);
    const status = await call(api, 'GET', `/plugin-activation/status/${code}`, { token: null });
    expect(status.headers['x-ratelimit-limit']).toBe('3');
    // status, then two validates fill the window of this address (generate counted under the token)
    for (let i = 0; i < 2; i++) expect((await call(api, 'POST', '/plugin-activation/validate', { body: { code, machine_id: 'm' }, token: null })).status).toBe(200);
    expect((await call(api, 'POST', '/plugin-activation/validate', { body: { code, machine_id: 'm' }, token: null })).status).toBe(429);
    const hint = `${code.slice(0, 4)}…${code.slice(-4)}`;
    await expect.poll(() => emu.stderr()).toContain(hint); // through the pipe, as soon as it is there
    expect(emu.stderr()).not.toContain(code);
    expect(emu.stderr()).not.toContain(emu.info.token);
  });

  it('stops cleanly on SIGINT and SIGTERM', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const child = await startEmulatorProcess({ args: ['--quiet'] });
      try {
        const exited = once(child.child, 'exit');
        child.child.kill(signal);
        const [code] = await exited;
        expect(code, signal).toBe(0);
      } finally {
        await child.stop();
      }
    }
  });

  it('refuses a non-loopback host and bad flags without starting', async () => {
    const wide = await runToExit(['--host', '0.0.0.0']);
    expect(wide.code).toBe(2);
    expect(wide.stdout).toBe('');
    expect(wide.stderr).toContain('loopback');
    const port = await runToExit(['--port', 'eighty']);
    expect(port.code).not.toBe(0);
    expect(port.stderr).toContain('--port');
    const limit = await runToExit(['--rate-limit-builds', '0']);
    expect(limit.code).not.toBe(0);
    expect(limit.stdout).toBe('');
  });

  it("takes a fixed --project-id (a plugin's compiled-in id): codes and activations work for it", async () => {
    const fixed = '7F3C2A10-5B6D-4E8F-9A1B-2C3D4E5F6071';
    const dir = mkdtempSync(join(tmpdir(), 'emu-project-'));
    const data = join(dir, 'state.json');
    try {
      const child = await startEmulatorProcess({ args: ['--project-id', fixed, '--data', data, '--quiet'] });
      try {
        expect(child.info.project_id).toBe(fixed.toLowerCase());
        const c = { baseUrl: child.info.base_url, origin: child.origin, token: child.info.token };
        const code = await generateCode(c.baseUrl, c.token, fixed.toLowerCase());
        const res = await call(c, 'POST', '/plugin-activation/activate', { body: { code, machine_id: 'studio-1', plugin_id: fixed.toLowerCase() } });
        expect(res.status).toBe(200);
      } finally {
        await child.stop();
      }
      // The data file is that project's: another id is refused, the same one (or none) is accepted.
      const other = await runToExit(['--project-id', '0b8a3c2e-5f61-4d7a-9e2b-3c4d5e6f7a8b', '--data', data]);
      expect(other.code).toBe(2);
      expect(other.stderr).toContain(`holds project ${fixed.toLowerCase()}, not 0b8a3c2e-5f61-4d7a-9e2b-3c4d5e6f7a8b; use another --data file`);
      const again = await startEmulatorProcess({ args: ['--data', data, '--quiet'] });
      expect(again.info.project_id).toBe(fixed.toLowerCase());
      await again.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const bad = await runToExit(['--project-id', 'plugin-1']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain("projectId must be a UUID such as 123e4567-e89b-12d3-a456-426614174000 (got 'plugin-1')");
  });

  it('answers downloads with a 302 under --download-redirect', async () => {
    const child = await startEmulatorProcess({ args: ['--download-redirect', '--quiet'] });
    try {
      const c = { baseUrl: child.info.base_url, origin: child.origin, token: child.info.token };
      const build = ((await call(c, 'GET', '/builds')).body.builds as Array<{ id: string }>)[0]!.id;
      const artifact = ((await call(c, 'GET', `/builds/${build}/artifacts`)).body.artifacts as Array<{ id: string }>)[0]!.id;
      const res = await call(c, 'GET', `/builds/${build}/download/${artifact}`);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/\/__emulator\/files\/artifacts\//);
    } finally {
      await child.stop();
    }
  });
});
