import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BuildStatus, Format, Platform, ReleaseType } from '@plugin-license/api';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { FORMATS, PLATFORMS, RELEASE_TYPES, STATUSES } from '../src/program.js';
import { startService, startTamperingProxy, tempHome, type TestService } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cli, envFor, jsonOf } from './helpers.js';

let service: TestService<Emulator>;
let home: { dir: string; cleanup: () => void };
let env: Record<string, string>;

beforeAll(async () => {
  // The builds endpoints allow 10 requests a minute; a test file makes more.
  service = await startService((o) => startEmulator({ ...o, rateLimits: { ...o.rateLimits, builds: 100_000, trigger: 100_000 } }));
});
afterAll(async () => {
  await service?.close();
});
beforeEach(async () => {
  await service.control.reset();
  await service.control.buildSettings({ step_ms: 60 * 60_000, fail_rate: 0, seed: 0 });
  home = tempHome('plc-builds-');
  env = envFor(service, home.dir);
});
afterEach(() => home.cleanup());

async function finishedBuild(platforms = ['macos', 'windows'], formats = ['vst3', 'au']): Promise<string> {
  const created = await cli(['builds', 'create', service.emulator.projectId, '--platform', ...platforms, '--format', ...formats], env);
  expect(created.code, created.stderr).toBe(0);
  const id = created.stdout.trim();
  await service.control.clock({ advance_ms: 10 * 60 * 60_000 });
  return id;
}

/**
 * A CONNECT proxy on loopback that flips one byte at offset 60 000 of what each tunnel carries
 * back: small JSON answers pass untouched, a large download arrives corrupted but well framed.
 */
function startCorruptingProxy(): Promise<{ url: string; close(): Promise<void> }> {
  return startTamperingProxy((chunk, offset) => {
    if (offset <= 60_000 && offset + chunk.length > 60_000) chunk.writeUInt8(chunk.readUInt8(60_000 - offset) ^ 0xff, 60_000 - offset);
    return chunk;
  });
}

describe('plugin-license builds', () => {
  it('create, get, list and artifacts, as text and --json', async () => {
    const id = await finishedBuild(['macos'], ['vst3', 'au']);
    const got = await cli(['--json', 'builds', 'get', id], env);
    expect(jsonOf(got)).toMatchObject({ id, status: 'success', metadata: { current_step: 'completed', step_progress: 100 } });
    expect((await cli(['builds', 'get', id], env)).stdout).toMatch(/status\s+success/);

    const list = jsonOf(await cli(['--json', 'builds', 'list', '--project', service.emulator.projectId, '--status', 'success'], env));
    expect((list.builds as Array<{ id: string }>).map((b) => b.id)).toContain(id);
    const table = await cli(['builds', 'list', '--limit', '1'], env);
    expect(table.stdout).toContain(id);
    expect(table.stderr).toMatch(/1 of 2 builds; --offset 1 for the next page/);

    const artifacts = jsonOf(await cli(['--json', 'builds', 'artifacts', id], env)).artifacts as Array<{ format: string }>;
    expect(artifacts.map((a) => a.format).sort()).toEqual(['au', 'vst3']);
    expect((await cli(['builds', 'artifacts', id], env)).stdout).toMatch(/DemoReverb-1\.0\.0-macos\.component\.zip/);
  });

  it('refuses bad arguments with exit 2 and a missing build with exit 3', async () => {
    const badPlatform = await cli(['builds', 'create', service.emulator.projectId, '--platform', 'linux'], env);
    expect(badPlatform.code).toBe(2);
    expect(badPlatform.stderr).toMatch(/linux.*macos, windows|Allowed choices/i);
    expect((await cli(['builds', 'create', service.emulator.projectId, '--flag', 'turbo'], env)).code).toBe(2);
    expect((await cli(['builds', 'get', 'not-a-uuid'], env)).code).toBe(2);
    expect((await cli(['builds', 'watch', '123e4567-e89b-12d3-a456-426614174000', '--interval', '0'], env)).code).toBe(2);
    const missing = await cli(['--json', 'builds', 'get', '123e4567-e89b-42d3-a456-426614174000'], env);
    expect(missing.code).toBe(3);
    expect(jsonOf(missing)).toMatchObject({ error: { code: 'not_found' } });
    const noToken = await cli(['builds', 'list'], { ...env, PLUGIN_LICENSE_TOKEN: '' });
    expect(noToken.code).toBe(2);
  });

  it('downloads every artifact with verified checksums, never overwrites, and one artifact to a file', async () => {
    const id = await finishedBuild();
    const out = join(home.dir, 'dist');
    const run = await cli(['--json', 'builds', 'download', id, '--out', out], env);
    expect(run.code, run.stderr).toBe(0);
    const { artifacts } = await service.admin.builds.artifacts(id);
    expect(readdirSync(out).sort()).toEqual(artifacts.map((a) => a.file_name).sort());
    for (const a of artifacts) {
      const bytes = readFileSync(join(out, a.file_name));
      expect(bytes.length).toBe(a.file_size);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(a.checksum_sha256);
    }
    expect((jsonOf(run).downloaded as unknown[]).length).toBe(3);

    // Already there with the artifact's checksum: kept; a different file: refused, never overwritten.
    const again = await cli(['builds', 'download', id, '--out', out, '--platform', 'windows'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/kept \(already here\)/);
    const windows = artifacts.find((a) => a.platform === 'windows')!;
    writeFileSync(join(out, windows.file_name), 'not the artifact');
    const refused = await cli(['builds', 'download', id, '--out', out, '--platform', 'windows'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/already exists and is not this artifact .* downloads never overwrite/);
    expect(readFileSync(join(out, windows.file_name), 'utf8')).toBe('not the artifact');

    const one = join(home.dir, 'one.zip');
    const single = await cli(['builds', 'download', id, artifacts[0]!.id, '--out', one], env);
    expect(single.code, single.stderr).toBe(0);
    expect(createHash('sha256').update(readFileSync(one)).digest('hex')).toBe(artifacts[0]!.checksum_sha256);

    // A filter that selects one artifact still writes into the --out folder.
    const filtered = join(home.dir, 'win');
    expect((await cli(['builds', 'download', id, '--platform', 'windows', '--out', filtered], env)).code).toBe(0);
    expect(readdirSync(filtered)).toEqual(['DemoReverb-1.0.0-windows.vst3.zip']);

    const none = await cli(['builds', 'download', id, '--format', 'standalone', '--out', out], env);
    expect(none.code).toBe(3);
  });

  it('replaces a NAME.part left by a download that was killed', async () => {
    const id = await finishedBuild(['windows'], ['vst3']);
    const out = join(home.dir, 'resume');
    mkdirSync(out);
    writeFileSync(join(out, 'DemoReverb-1.0.0-windows.vst3.zip.part'), 'half of an old download');
    const run = await cli(['builds', 'download', id, '--out', out], env);
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(out)).toEqual(['DemoReverb-1.0.0-windows.vst3.zip']);
  });

  it('the parser offers exactly the api\'s platforms, formats, release types and statuses', () => {
    expect(PLATFORMS).toEqual(Platform.options);
    expect(FORMATS).toEqual(Format.options);
    expect(RELEASE_TYPES).toEqual(ReleaseType.options);
    expect(STATUSES).toEqual(BuildStatus.options);
  });

  it('deletes a download whose checksum does not match and exits 1', async () => {
    const id = await finishedBuild(['windows'], ['vst3']);
    const proxy = await startCorruptingProxy();
    try {
      const out = join(home.dir, 'corrupt');
      mkdirSync(out);
      const run = await cli(['builds', 'download', id, '--out', out], { ...env, HTTP_PROXY: proxy.url });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toMatch(/do not match the service's checksum .* the partial file was deleted, download again/);
      expect(readdirSync(out)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it('watch follows the steps to success (exit 0), failure and cancellation (exit 3)', async () => {
    await service.control.buildSettings({ step_ms: 150 });
    const created = await cli(['builds', 'create', service.emulator.projectId], env);
    const ok = await cli(['--json', 'builds', 'watch', created.stdout.trim(), '--interval', '0.1'], env);
    expect(ok.code, ok.stderr).toBe(0);
    const doc = jsonOf(ok) as { build: { status: string }; changes: Array<{ status: string; step: string }>; finished: boolean };
    expect(doc).toMatchObject({ build: { status: 'success' }, finished: true });
    expect(doc.changes.length).toBeGreaterThan(3);
    expect(doc.changes.at(-1)).toMatchObject({ status: 'success', step: 'completed' });

    await service.control.buildSettings({ fail_rate: 1, seed: 1 });
    const failing = await cli(['builds', 'create', service.emulator.projectId], env);
    const failed = await cli(['builds', 'watch', failing.stdout.trim(), '--interval', '0.1'], env);
    expect(failed.code).toBe(3);
    expect(failed.stdout).toMatch(/failed/);
    expect(failed.stderr).toMatch(/failed at (checkout|configure|compile|sign|package|upload)/);

    await service.control.buildSettings({ step_ms: 60 * 60_000 });
    const slow = (await cli(['builds', 'create', service.emulator.projectId], env)).stdout.trim();
    const cancelled = await cli(['builds', 'cancel', slow], env);
    expect(cancelled.stdout).toMatch(/cancelled/);
    expect((await cli(['builds', 'watch', slow, '--interval', '0.1'], env)).code).toBe(3);
    const twice = await cli(['--json', 'builds', 'cancel', slow], env);
    expect(twice.code).toBe(2);
    expect(jsonOf(twice)).toMatchObject({ error: { code: 'bad_request' } });
  });

  it('trigger signs with the webhook secret by default, or sends it; refuses without it', async () => {
    const withSecret = { ...env, PLUGIN_LICENSE_TOKEN: '', PLUGIN_LICENSE_WEBHOOK_SECRET: service.emulator.webhookSecret };
    const signed = await cli(['--json', 'trigger', service.emulator.projectId, '--ref', 'refs/tags/v4.0.0', '--commit', 'abcdef1', '--platform', 'windows'], withSecret);
    expect(signed.code, signed.stderr).toBe(0);
    const buildId = jsonOf(signed).build_id as string;
    expect(await service.admin.builds.get(buildId)).toMatchObject({ status: 'queued', version_number: '4.0.0', platforms: ['windows'] });
    const sent = await cli(['trigger', service.emulator.projectId, '--send-secret'], withSecret);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);

    const missing = await cli(['trigger', service.emulator.projectId], { ...env, PLUGIN_LICENSE_WEBHOOK_SECRET: '' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/PLUGIN_LICENSE_WEBHOOK_SECRET/);
    const wrong = await cli(['trigger', service.emulator.projectId], { ...env, PLUGIN_LICENSE_WEBHOOK_SECRET: 'whsec_wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).not.toContain('whsec_wrong');
  });

  it('a file in the way of --out as a folder is a usage error, and nothing is fetched', async () => {
    const id = await finishedBuild();
    const file = join(home.dir, 'taken');
    writeFileSync(file, 'x');
    const run = await cli(['builds', 'download', id, '--out', file], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/is a file, and artifacts go into a folder/);
    expect(existsSync(`${file}.part`)).toBe(false);
  });
});
