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

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 0, 15, 12, 0, 0)) {
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
 * The usual set-up of a test file of `License`s against the emulator: one service for the file, a
 * fresh home and a hand-moved clock (starting now) per test, every license closed and the service
 * reset after each. `license()` makes one with the raw id RAW_A and a fixed jitter.
 */
export function useLicenses(defaults: Partial<LicenseOptions> = {}) {
  let service: TestService | undefined;
  let home: { dir: string; cleanup: () => void } | undefined;
  let clock = manualClock(Date.now());
  const open: License[] = [];
  beforeAll(async () => {
    service = await startService();
  });
  afterAll(async () => {
    await service?.close();
  });
  beforeEach(() => {
    home = tempHome();
    clock = manualClock(Date.now());
  });
  afterEach(async () => {
    await service?.control.reset();
    await Promise.all(open.splice(0).map((l) => l.close()));
    home?.cleanup();
  });
  const env = {
    get service(): TestService {
      if (!service) throw new Error('useLicenses: the service is not started yet (use it inside a test)');
      return service;
    },
    get home(): { dir: string; cleanup: () => void } {
      if (!home) throw new Error('useLicenses: no home outside a test');
      return home;
    },
    get clock() {
      return clock;
    },
    license(overrides: Partial<LicenseOptions> = {}): License {
      const l = new License({
        projectId: env.service.emulator.projectId,
        baseUrl: env.service.emulator.baseUrl,
        home: env.home.dir,
        now: clock.now,
        dispatcher: env.service.dispatcher,
        rawMachineIdProvider: () => RAW_A,
        random: () => 0.5,
        ...defaults,
        ...overrides,
      });
      open.push(l);
      return l;
    },
  };
  return env;
}
