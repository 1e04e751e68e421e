import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { ServiceClient } from '@plugin-license/api';
import { STOP_GRACE_MS } from './processes.js';

/** Absolute path of the built emulator CLI (`pnpm build` makes it). */
export const EMULATOR_CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../../packages/emulator/dist/cli.js');

/** The emulator's start-up line. */
export interface EmulatorInfo {
  base_url: string;
  token: string;
  project_id: string;
  webhook_secret: string;
}

export interface EmulatorProcess {
  info: EmulatorInfo;
  child: ChildProcess;
  /** http://127.0.0.1:PORT (the controls live under `${origin}/__emulator`). */
  origin: string;
  /** What the process wrote to stderr so far (last 64 KiB). */
  stderr(): string;
  /** SIGTERM, then SIGKILL after `STOP_GRACE_MS`; resolves once the process has exited. */
  stop(): Promise<void>;
}

const STDERR_KEEP = 64 * 1024;

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((done) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      done(false);
    }, ms);
    const onExit = (): void => {
      clearTimeout(timer);
      done(true);
    };
    child.once('exit', onExit);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  if (await waitForExit(child, STOP_GRACE_MS)) return;
  child.kill('SIGKILL');
  await waitForExit(child, 5_000);
}

/**
 * Spawns `node packages/emulator/dist/cli.js` and waits for its start-up line.
 * The process is killed if it does not start; call `stop()` in `afterAll`/`finally`.
 *
 * @example
 * const emu = await startEmulatorProcess({ args: ['--rate-limit-activation', '1000'] });
 * try { console.log(emu.info.base_url); } finally { await emu.stop(); }
 */
export async function startEmulatorProcess(options: { args?: string[]; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<EmulatorProcess> {
  if (!existsSync(EMULATOR_CLI)) throw new Error(`the emulator is not built (${EMULATOR_CLI} is missing); run "pnpm build" first`);
  const child = spawn(process.execPath, [EMULATOR_CLI, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP);
  });
  const lines = createInterface({ input: child.stdout! });
  const timeoutMs = options.timeoutMs ?? 20_000;
  try {
    const first = await new Promise<string>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`the emulator printed no start-up line within ${timeoutMs} ms`)), timeoutMs);
      lines.once('line', (line) => {
        clearTimeout(timer);
        ok(line);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        fail(new Error(`the emulator exited before it listened (code ${code}, signal ${signal})`));
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        fail(error);
      });
    });
    const info = JSON.parse(first) as EmulatorInfo;
    child.stdout?.resume();
    return {
      info,
      child,
      origin: new URL(info.base_url).origin,
      stderr: () => stderr,
      stop: () => stopChild(child),
    };
  } catch (error) {
    lines.close();
    await stopChild(child);
    throw new Error(`${(error as Error).message}\nstderr:\n${stderr}`, { cause: error });
  } finally {
    lines.removeAllListeners('line');
  }
}

async function send(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<unknown> {
  const res = await request(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`${method} ${new URL(url).pathname} answered ${res.statusCode}: ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/** One outgoing notification as `GET /__emulator/deliveries` shows it. */
export interface Delivery {
  id: string;
  project_id: string;
  build_id: string;
  event: string;
  occurred_at: string;
  url: string;
  form: 'detailed' | 'flat';
  attempts: Array<{ at: string; status: number | null; error: string | null; duration_ms: number }>;
  delivered: boolean;
  gave_up: boolean;
  next_attempt_at: string | null;
}

/** Body of `POST /__emulator/faults`. */
export interface FaultBody {
  mode: 'none' | 'offline' | 'error' | 'latency' | 'hold';
  status?: number;
  count?: number;
  latency_ms?: number;
}

/** A service request kept by the `hold` fault, as `GET /__emulator/held` shows it. */
export interface HeldRequest {
  method: string;
  path: string;
  arrived_at: string;
}

/** How long `held(n)` lets the emulator wait for the n-th request: a bound on failing, never a window to act in. */
const HELD_WAIT_MS = 30_000;

/**
 * Helpers for the emulator's `/__emulator/` controls; each throws on a non-2xx answer.
 *
 * @example
 * await control(emu.origin).faults({ mode: 'error', status: 503, count: 2 });
 */
export function control(origin: string) {
  const at = (path: string): string => `${origin}/__emulator${path}`;
  return {
    revoke: (code: string) => send('POST', at(`/codes/${encodeURIComponent(code)}/revoke`)),
    faults: (body: FaultBody) => send('POST', at('/faults'), body),
    clock: (body: { advance_ms: number } | { now: string | number }) =>
      send('POST', at('/clock'), body) as Promise<{ now: string; now_ms: number; offset_ms: number }>,
    reset: () => send('POST', at('/reset')),
    state: () => send('GET', at('/state')) as Promise<Record<string, unknown>>,
    buildSettings: (body: { step_ms?: number; fail_rate?: number; seed?: number }) => send('PUT', at('/build-settings'), body),
    triggers: (projectId: string, triggers: unknown[]) => send('PUT', at(`/projects/${projectId}/triggers`), triggers),
    notifications: (projectId: string, body: { url: string; events: string[]; form?: 'detailed' | 'flat' }) => send('PUT', at(`/projects/${projectId}/notifications`), body),
    push: (projectId: string, body: { branch: string; files: string[]; commit_sha?: string }) =>
      send('POST', at(`/projects/${projectId}/push`), body) as Promise<{ build_id: string | null; reason?: string; trigger?: number }>,
    release: (projectId: string, body: { release_type: string; tag: string }) =>
      send('POST', at(`/projects/${projectId}/release`), body) as Promise<{ build_id: string | null; reason?: string; trigger?: number }>,
    deliveries: () => send('GET', at('/deliveries')) as Promise<{ deliveries: Delivery[] }>,
    /**
     * The requests the `hold` fault keeps, once there are at least `atLeast` of them (the
     * emulator answers as soon as they have arrived); throws, naming what is held, when they
     * have not arrived after 30 s.
     */
    held: async (atLeast = 0): Promise<HeldRequest[]> => {
      const { held } = (await send('GET', at(`/held?at_least=${atLeast}&wait_ms=${HELD_WAIT_MS}`))) as { held: HeldRequest[] };
      if (held.length < atLeast) {
        throw new Error(`${held.length} of ${atLeast} service requests held after ${HELD_WAIT_MS} ms: ${JSON.stringify(held.map((h) => `${h.method} ${h.path}`))}`);
      }
      return held;
    },
    /** Lets the oldest `count` held requests (all by default) be handled; answers once they have been answered. */
    releaseHeld: (count?: number) =>
      send('POST', at('/held/release'), count === undefined ? {} : { count }) as Promise<{ released: HeldRequest[]; held: HeldRequest[] }>,
  };
}

/**
 * A fresh temporary folder (for PLUGIN_LICENSE_HOME, --data files, sockets) and its cleanup.
 *
 * @example
 * const home = tempHome();
 * try { ... } finally { home.cleanup(); }
 */
export function tempHome(prefix = 'plugin-license-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Generates an activation code through the service (bearer token of the project's owner).
 *
 * @example
 * const code = await generateCode(emu.info.base_url, emu.info.token, emu.info.project_id, 3);
 */
export async function generateCode(baseUrl: string, token: string, projectId: string, maxActivations = 2, ca?: string): Promise<string> {
  const res = await request(`${baseUrl}/plugin-activation/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: projectId, max_activations: maxActivations, notes: 'test' }),
    ...(ca ? { dispatcher: new Agent({ connect: { ca } }) } : {}),
  });
  const text = await res.body.text();
  if (res.statusCode !== 201) throw new Error(`generate answered ${res.statusCode}: ${text}`);
  return (JSON.parse(text) as { code: string }).code;
}

/** A mount made for a test, or why it could not be made (then the test is skipped, saying why). */
export type TestMount = { ok: true; undo: () => void } | { ok: false; reason: string };

function mountCommand(args: string[]): string | null {
  try {
    execFileSync('mount', args, { stdio: 'pipe' });
    return null;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    return stderr || (error as Error).message;
  }
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  } catch {
    // Already gone.
  }
}

/**
 * Makes an existing folder read-only for everyone, root included (a read-only bind mount onto
 * itself), as a read-only volume or a locked-down profile folder is. Needs Linux and the right
 * to mount; otherwise says why.
 *
 * @example
 * const ro = readOnlyFolder(dir);
 * if (!ro.ok) return ctx.skip(ro.reason);
 * try { ... } finally { ro.undo(); }
 */
export function readOnlyFolder(dir: string): TestMount {
  if (process.platform !== 'linux') return { ok: false, reason: 'read-only bind mounts are a Linux test facility' };
  const failed = mountCommand(['--bind', dir, dir]) ?? mountCommand(['-o', 'remount,bind,ro', dir]);
  if (failed !== null) {
    unmount(dir);
    return { ok: false, reason: `cannot mount a read-only folder here (${failed}); run as root on Linux` };
  }
  return { ok: true, undo: () => unmount(dir) };
}

/**
 * Mounts a tiny tmpfs on `dir` (created if missing) and fills it, so every write there fails
 * with ENOSPC, as on a full disk; with `freeBytes`, that much room is left first (writes succeed,
 * then one is cut short, then they fail), and removing `dir/.filler` frees the disk again. Needs
 * Linux and the right to mount; otherwise says why.
 *
 * @example
 * const full = fullDisk(join(home, 'data'));
 */
export function fullDisk(dir: string, options: { freeBytes?: number } = {}): TestMount {
  if (process.platform !== 'linux') return { ok: false, reason: 'tmpfs mounts are a Linux test facility' };
  mkdirSync(dir, { recursive: true });
  const failed = mountCommand(['-t', 'tmpfs', '-o', 'size=16k,mode=0700', 'tmpfs', dir]);
  if (failed !== null) return { ok: false, reason: `cannot mount a small tmpfs here (${failed}); run as root on Linux` };
  // Fill it: blocks first, then the inodes are what is left.
  const filler = Buffer.alloc(4096, 1);
  try {
    for (let i = 0; i < 64; i++) appendFileSync(join(dir, '.filler'), filler);
  } catch {
    // ENOSPC: full.
  }
  // Leave some room when asked (whole pages: tmpfs allocates in pages).
  const free = options.freeBytes ?? 0;
  if (free > 0) truncateSync(join(dir, '.filler'), Math.max(0, statSync(join(dir, '.filler')).size - free));
  return { ok: true, undo: () => unmount(dir) };
}

/**
 * The error a promise rejects with, checked by `guard` (the type guard of the package under test:
 * `isLicenseError`, `isAgentError`, ...) or, without one, any `Error`; fails the test when the
 * promise resolves or rejects with something else. The one way tests take a failure apart.
 *
 * @example
 * const e = await rejection(license.activate(code), isLicenseError);
 * expect(e.code).toBe('cache_io');
 */
export async function rejection(promise: Promise<unknown>): Promise<Error>;
export async function rejection<E>(promise: Promise<unknown>, guard: (e: unknown) => e is E): Promise<E>;
export async function rejection(promise: Promise<unknown>, guard = (e: unknown): e is Error => e instanceof Error): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    if (guard(e)) return e;
    throw e;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** What `startService` needs of an emulator: `startEmulator` of `@plugin-license/emulator` gives it. */
export interface ServiceEmulator {
  baseUrl: string;
  origin: string;
  token: string;
  projectId: string;
  close(): Promise<void>;
}

/** A test file's emulator with the tools every suite uses on it. */
export interface TestService<E extends ServiceEmulator = ServiceEmulator> {
  emulator: E;
  /** The `/__emulator/` controls. */
  control: ReturnType<typeof control>;
  /** A new activation code of the emulator's project. */
  code(maxActivations?: number): Promise<string>;
  /** A client with the project owner's token, for what a test checks behind the product's back. */
  admin: ServiceClient;
  /** A pool with short keep-alive, for clients a test makes, so closing the emulator is quick. */
  dispatcher: Agent;
  close(): Promise<void>;
}

/**
 * The one way suites start the service: the in-process emulator on 127.0.0.1:0 with rate limits
 * high enough for a test file. The emulator's `startEmulator` is passed in, so this package does
 * not depend on the emulator (whose own tests use it).
 *
 * @example
 * import { startEmulator } from '@plugin-license/emulator';
 * const service = await startService(startEmulator);
 * const code = await service.code(3);
 * await service.control.faults({ mode: 'offline' });
 */
export async function startService<E extends ServiceEmulator>(
  startEmulator: (options: { rateLimits: { activation: number; general: number; builds: number } }) => Promise<E>,
  options: { rateLimits?: { activation?: number; general?: number; builds?: number } } = {},
): Promise<TestService<E>> {
  const emulator = await startEmulator({ rateLimits: { activation: 100_000, general: 100_000, builds: 100_000, ...options.rateLimits } });
  const dispatcher = new Agent({ keepAliveTimeout: 100, keepAliveMaxTimeout: 100 });
  const admin = new ServiceClient({ baseUrl: emulator.baseUrl, token: emulator.token, dispatcher, retry: false });
  return {
    emulator,
    control: control(emulator.origin),
    admin,
    dispatcher,
    async code(maxActivations = 2) {
      return (await admin.activation.generate({ project_id: emulator.projectId, max_activations: maxActivations, notes: 'test' })).code;
    },
    async close() {
      await admin.close();
      await dispatcher.close();
      await emulator.close();
    },
  };
}
export * from './processes.js';
export * from './peers.js';
export { eventually } from './eventually.js';
export { WAIT_MS } from './wait-bound.js';
export * from './squatter.js';
export { asOtherUser, readableByOtherUser, shareWithOtherUser, type SharedCopy } from './other-user.js';
export * from './relay.js';
