import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { statSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startService as startSharedService, tempHome, type TestService as SharedTestService } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { License, type LicenseOptions } from '../src/index.js';

export const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
export const fixturesDir = join(packageDir, 'test', 'fixtures');

/** A fixed "raw OS id" so tests never depend on the host's /etc/machine-id. */
export const RAW_A = '0123456789abcdef0123456789abcdef';
export const RAW_B = 'fedcba9876543210fedcba9876543210';

export { tempHome } from '@plugin-license/test-utils';

/** A fixed start for a test's clock, where a test wants the same dates on every run. */
export const FIXED_NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

/** A clock the test moves by hand. */
export function manualClock(start = FIXED_NOW) {
  let t = start;
  return {
    now: () => t,
    set: (ms: number) => {
      t = ms;
    },
    advance: (ms: number) => {
      t += ms;
    },
  };
}

export type TestService = SharedTestService<Emulator>;

/**
 * The emulator in-process on 127.0.0.1:0 (test-utils' one `startService`). `now` is its base
 * clock: a fixed one keeps its one-minute rate-limit windows from rolling over mid-test.
 */
export function startService(options: { rateLimits?: { activation?: number }; now?: () => number } = {}): Promise<TestService> {
  const { now, ...rest } = options;
  return startSharedService((o) => startEmulator({ ...o, ...(now ? { now } : {}) }), rest);
}

/** Builds the package when dist is older than src, so child processes run current code. */
export function ensureBuilt(): void {
  const newest = (dir: string): number =>
    Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs)));
  let built = 0;
  try {
    built = Math.min(statSync(join(packageDir, 'dist', 'index.js')).mtimeMs, statSync(join(packageDir, 'dist', 'index.cjs')).mtimeMs);
  } catch {
    built = 0;
  }
  if (built < newest(join(packageDir, 'src'))) {
    execFileSync('pnpm', ['run', 'build'], { cwd: packageDir, stdio: 'pipe' });
  }
}

/** Runs a fixture script with node and returns its stdout (throws on a non-zero exit). */
export function runNode(args: string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: packageDir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, stderr, code }));
  });
}

/** Kills every child still running (afterEach / afterAll). */
export function killAll(children: Set<ChildProcess>): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
}

/**
 * The one set-up of a test file of `License`s against the emulator: one service for the file; a
 * fresh home and a hand-moved clock per test (starting now, or at `clockStart`); after each test,
 * its `cleanups` (newest first: a mount to undo before the home goes), then the service reset,
 * every license closed (those `license()` made and those a test put in `open`) and the home
 * removed. `license()` makes one with the raw id RAW_A, a fixed jitter and `options.license`.
 * `service`, `home` and `clock` are the same objects throughout, filled in for each test, so a
 * file can take them apart once: `const { service, home, clock, license } = useLicenses();`.
 */
export function useLicenses(options: { license?: Partial<LicenseOptions>; clockStart?: number } = {}) {
  const service = {} as TestService;
  const home = { dir: '', cleanup: () => {} };
  const clock = manualClock();
  const open: License[] = [];
  const cleanups: Array<() => void | Promise<void>> = [];
  beforeAll(async () => {
    Object.assign(service, await startService());
  });
  afterAll(async () => {
    await service.close?.();
  });
  beforeEach(() => {
    Object.assign(home, tempHome());
    clock.set(options.clockStart ?? Date.now());
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
    await service.control.reset();
    await Promise.all(open.splice(0).map((l) => l.close()));
    home.cleanup();
  });
  function license(overrides: Partial<LicenseOptions> = {}): License {
    const l = new License({
      projectId: service.emulator.projectId,
      baseUrl: service.emulator.baseUrl,
      home: home.dir,
      now: clock.now,
      dispatcher: service.dispatcher,
      rawMachineIdProvider: () => RAW_A,
      random: () => 0.5,
      ...options.license,
      ...overrides,
    });
    open.push(l);
    return l;
  }
  return { service, home, clock, license, open, cleanups };
}
