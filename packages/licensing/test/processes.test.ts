import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeCache } from '../src/cache-file.js';
import { resolveIdentity } from '../src/machine-id.js';
import { cacheFilePath, License } from '../src/index.js';
import { ensureBuilt, fixturesDir, killAll, packageDir, RAW_A, runNode, startService, tempHome, type TestService } from './helpers.js';

// Child processes run the built package (dist), like an installer or app would.
let service: TestService;
const homes: Array<{ dir: string; cleanup: () => void }> = [];
const children = new Set<ChildProcess>();

beforeAll(async () => {
  ensureBuilt();
  service = await startService();
}, 120_000);
afterEach(() => killAll(children));
afterAll(async () => {
  killAll(children);
  await service?.close();
  for (const h of homes) h.cleanup();
});

function home(): string {
  const h = tempHome();
  homes.push(h);
  return h.dir;
}

async function readState(h: string, projectId: string) {
  const identity = await resolveIdentity({ home: h, rawMachineIdProvider: () => RAW_A });
  const file = cacheFilePath(projectId, { home: h });
  return decodeCache({ projectId, machineId: identity.id, cacheKey: identity.cacheKey }, readFileSync(file, 'utf8'));
}

async function activate(h: string, projectId = service.emulator.projectId): Promise<void> {
  const code = await service.code(5);
  const l = new License({ projectId, baseUrl: service.emulator.baseUrl, home: h, dispatcher: service.dispatcher, rawMachineIdProvider: () => RAW_A });
  await l.activate(code);
  await l.close();
}

describe('the built package', () => {
  it('loads through import and require() (env-paths bundled into the CommonJS build)', async () => {
    const h = home();
    const esm = await runNode([join(fixturesDir, 'load-esm.mjs'), h]);
    const cjs = await runNode([join(fixturesDir, 'load-cjs.cjs'), h]);
    expect(esm.stderr).toBe('');
    expect(cjs.stderr).toBe('');
    const a = JSON.parse(esm.stdout);
    const b = JSON.parse(cjs.stdout);
    expect(a.exports).toEqual(b.exports);
    expect(a.exports).toEqual(expect.arrayContaining(['License', 'LicenseError', 'isLicenseError', 'getMachineId', 'resolvePaths', 'listCachedProjects', 'DEFAULT_POLICY', 'revalidationDueAt']));
    expect(a.paths).toEqual(b.paths);
    expect(a.paths.data).toBe(join(h, 'data'));
    expect(b.osPaths.data).toMatch(/cjs-check/);
    expect(a.id).toEqual({ id: 'esm-check', source: 'caller' });
    expect(b.id).toEqual({ id: 'cjs-check', source: 'caller' });
    expect(readFileSync(join(packageDir, 'dist', 'index.cjs'), 'utf8')).not.toMatch(/require\(["']env-paths["']\)/);
  });
});

describe('the README snippets', () => {
  it('activation from an installer, validation at app start, the offline run and the air-gapped exchange work as written', async () => {
    const readme = readFileSync(join(packageDir, 'README.md'), 'utf8');
    const blocks = new Map<string, string>();
    for (const m of readme.matchAll(/```js\n(\/\/ ([a-z-]+\.mjs)[^\n]*\n[\s\S]*?)```/g)) blocks.set(m[2]!, m[1]!);
    expect([...blocks.keys()]).toEqual(['activate.mjs', 'app.mjs', 'offline.mjs', 'airgap.mjs']);
    // Inside the package, so the bare import resolves to the built package (self-reference).
    const dir = mkdtempSync(join(packageDir, 'test', '.readme-'));
    try {
      for (const [name, text] of blocks) writeFileSync(join(dir, name), text);
      const env = { PROJECT_ID: service.emulator.projectId, PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl, PLUGIN_LICENSE_HOME: home(), PLUGIN_LICENSE_APP: '' };
      const code = await service.code(2);
      const hint = `${code.slice(0, 4)}…${code.slice(-4)}`;

      const empty = await runNode([join(dir, 'activate.mjs'), '  '], env);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toMatch(/activation code is empty/);

      const activated = await runNode([join(dir, 'activate.mjs'), code], env);
      expect(activated).toMatchObject({ code: 0, stderr: '' });
      expect(activated.stdout).toBe(`activated ${hint} (1 of 2 machines)\n`);

      const app = await runNode([join(dir, 'app.mjs')], env);
      expect(app).toMatchObject({ code: 0, stderr: '' });
      // Just activated: within the minimum interval the stored answer stands, without a request.
      expect(app.stdout).toBe('license: valid (cache)\n');

      const offline = await runNode([join(dir, 'offline.mjs')], env);
      expect(offline).toMatchObject({ code: 0, stderr: '' });
      expect(offline.stdout).toMatch(/^offline: valid from the cache, grace until \d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
      for (const r of [activated, app, offline]) expect(r.stdout).not.toContain(code);

      // The air-gapped exchange, in a home of its own (same machine: the request's id is this one's).
      const stick = mkdtempSync(join(dir, 'stick-'));
      const airgapEnv = { ...env, PLUGIN_LICENSE_HOME: join(stick, 'home') };
      const second = await service.code(1);
      expect(await runNode([join(dir, 'airgap.mjs'), 'request', stick, second], airgapEnv)).toMatchObject({ code: 0, stderr: '' });
      expect(await runNode([join(dir, 'airgap.mjs'), 'answer', stick], airgapEnv)).toMatchObject({ code: 0, stderr: '' });
      const imported = await runNode([join(dir, 'airgap.mjs'), 'import', stick], airgapEnv);
      expect(imported).toMatchObject({ code: 0, stderr: '' });
      expect(imported.stdout).toMatch(/^valid \(offline\) until \d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await service.control.faults({ mode: 'none' });
    }
  });
});

describe('machine id across processes', () => {
  it('is stable across processes (OS id, or the generated one where the OS has none)', async () => {
    const h = home();
    const runs = await Promise.all([1, 2, 3].map(() => runNode([join(fixturesDir, 'machine-id.mjs'), h, 'acme-audio'])));
    const ids = runs.map((r) => JSON.parse(r.stdout));
    expect(ids[0].id).toMatch(/^m1_[0-9a-f]{64}$/);
    expect(new Set(ids.map((i) => i.id)).size).toBe(1);
    expect(ids.every((i) => i.memoized)).toBe(true);
  });

  it('the generated fallback is created once and agreed on by processes starting together', async () => {
    const h = home();
    const runs = await Promise.all([1, 2, 3, 4].map(() => runNode([join(fixturesDir, 'machine-id.mjs'), h, 'acme-audio', '--no-os'])));
    const ids = runs.map((r) => JSON.parse(r.stdout));
    expect(ids.every((i) => i.source === 'generated')).toBe(true);
    expect(new Set(ids.map((i) => i.id)).size).toBe(1);
    const later = JSON.parse((await runNode([join(fixturesDir, 'machine-id.mjs'), h, 'acme-audio', '--no-os'])).stdout);
    expect(later.id).toBe(ids[0].id);
    expect(readdirSync(join(h, 'data')).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});

describe('concurrent writers', () => {
  it('8 processes validating the same project at once: no update lost, no lock left', async () => {
    const h = home();
    const projectId = service.emulator.projectId;
    await activate(h);
    const before = await readState(h, projectId);
    expect(before.kind).toBe('ok');
    const perWorker = 10;
    const runs = await Promise.all(
      Array.from({ length: 8 }, () => runNode([join(fixturesDir, 'validate-worker.mjs'), h, projectId, service.emulator.baseUrl, String(perWorker), RAW_A])),
    );
    for (const r of runs) {
      expect(r.stderr).toBe('');
      expect(JSON.parse(r.stdout)).toEqual({ valid: perWorker });
    }
    const after = await readState(h, projectId);
    if (before.kind !== 'ok' || after.kind !== 'ok') throw new Error('cache unreadable');
    // Every write is a read-modify-write under the lock: each of the 80 bumped the revision.
    expect(after.license.revision).toBe(before.license.revision + 8 * perWorker);
    expect(after.license).toMatchObject({ status: 'active', failures: 0 });
    const dir = dirname(cacheFilePath(projectId, { home: h }));
    // The cache, and no unfinished intent, lock or temp file.
    expect(readdirSync(dir).sort()).toEqual([`${projectId}.json`, 'intents']);
    expect(readdirSync(join(dir, 'intents'))).toEqual([]);
  }, 120_000);
});

describe('a writer killed with SIGKILL at random moments', () => {
  it('leaves the cache readable as the old or the new state, every time (200 kills)', async () => {
    const lanes = 4;
    const killsPerLane = 50;
    let killed = 0;
    let writesSeen = 0;
    const lane = async (): Promise<void> => {
      const h = home();
      const projectId = service.emulator.projectId;
      await activate(h);
      const file = cacheFilePath(projectId, { home: h });
      for (let i = 0; i < killsPerLane; i++) {
        const before = await readState(h, projectId);
        if (before.kind !== 'ok') throw new Error(`kill ${i}: cache unreadable before: ${JSON.stringify(before)}`);
        const child = spawn(process.execPath, [join(fixturesDir, 'kill-writer.mjs'), h, projectId, RAW_A], { cwd: packageDir, stdio: ['ignore', 'pipe', 'pipe'] });
        children.add(child);
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (d: Buffer) => (d.toString().includes('ready') ? resolve() : undefined));
          child.on('exit', () => reject(new Error(`writer exited before ready: ${stderr}`)));
        });
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 25)));
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await exited;
        children.delete(child);
        killed++;
        const after = await readState(h, projectId);
        expect(after.kind, `kill ${i}`).toBe('ok');
        if (after.kind === 'ok') {
          expect(after.license.revision).toBeGreaterThanOrEqual(before.license.revision);
          writesSeen += after.license.revision - before.license.revision;
        }
        // The holder is dead: clear its lock rather than wait out the stale time (tested on its own below).
        rmSync(`${file}.lock`, { recursive: true, force: true });
      }
      // A clean write afterwards sweeps the temp files dead writers left.
      const l = new License({ projectId, baseUrl: service.emulator.baseUrl, home: h, dispatcher: service.dispatcher, rawMachineIdProvider: () => RAW_A, policy: { minRevalidateIntervalMs: 0 } });
      expect(await l.validate({ force: true })).toMatchObject({ valid: true, source: 'online' });
      await l.close();
      expect(readdirSync(dirname(file)).sort()).toEqual([`${projectId}.json`, 'intents']);
      expect(readdirSync(join(dirname(file), 'intents'))).toEqual([]);
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    expect(killed).toBe(lanes * killsPerLane);
    // The writers were really writing when killed (otherwise this test would prove nothing).
    expect(writesSeen).toBeGreaterThan(0);
  }, 300_000);

  it('a stale lock left by a dead holder is taken over', async () => {
    const h = home();
    await activate(h);
    const projectId = service.emulator.projectId;
    const file = cacheFilePath(projectId, { home: h });
    const { mkdirSync, utimesSync } = await import('node:fs');
    mkdirSync(`${file}.lock`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    const l = new License({ projectId, baseUrl: service.emulator.baseUrl, home: h, dispatcher: service.dispatcher, rawMachineIdProvider: () => RAW_A, policy: { minRevalidateIntervalMs: 0 } });
    expect(await l.validate({ force: true })).toMatchObject({ valid: true, source: 'online' });
    await l.close();
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
