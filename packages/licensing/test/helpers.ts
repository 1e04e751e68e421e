import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '@plugin-license/api';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { Agent } from 'undici';

export const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
export const fixturesDir = join(packageDir, 'test', 'fixtures');

/** A fixed "raw OS id" so tests never depend on the host's /etc/machine-id. */
export const RAW_A = '0123456789abcdef0123456789abcdef';
export const RAW_B = 'fedcba9876543210fedcba9876543210';

export function tempHome(prefix = 'plugin-license-test-'): { home: string; cleanup: () => void } {
  const home = mkdtempSync(join(tmpdir(), prefix));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

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

export interface TestService {
  emulator: Emulator;
  admin: ServiceClient;
  dispatcher: Agent;
  generate(maxActivations?: number): Promise<string>;
  control(path: string, body?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

/** The emulator in-process on 127.0.0.1:0, with an admin client to issue codes. */
export async function startService(options: { rateLimits?: { activation?: number } } = {}): Promise<TestService> {
  const emulator = await startEmulator({ rateLimits: { activation: 100_000, general: 100_000, ...options.rateLimits } });
  const dispatcher = new Agent({ keepAliveTimeout: 100, keepAliveMaxTimeout: 100 });
  const admin = new ServiceClient({ baseUrl: emulator.baseUrl, token: emulator.token, dispatcher, retry: false });
  return {
    emulator,
    admin,
    dispatcher,
    async generate(maxActivations = 2) {
      const key = await admin.activation.generate({ project_id: emulator.projectId, max_activations: maxActivations, notes: 'licensing test' });
      return key.code;
    },
    async control(path, body) {
      const res = await fetch(`${emulator.origin}/__emulator/${path}`, {
        method: body === undefined && path === 'state' ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`control ${path}: ${res.status} ${await res.text()}`);
      const text = await res.text();
      return text ? JSON.parse(text) : undefined;
    },
    async close() {
      await admin.close();
      await dispatcher.close();
      await emulator.close();
    },
  };
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
