// One scaffolding for the relay's tests: the relay as a real process on each runtime (the built
// CLI's `relay serve` on Node, `pnpm relay:deno`'s and `pnpm relay:workerd`'s scripts), keys
// made with node:crypto, and an independent check of a signed ticket with node:crypto.
import { spawn, type ChildProcess } from 'node:child_process';
import { createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { STOP_GRACE_MS, WAIT_MS } from '@plugin-license/test-utils';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');

export type Runtime = 'node' | 'deno' | 'workerd';

/** What each runtime runs: the packaged CLI's command, and the two root scripts (`pnpm relay:deno`, `pnpm relay:workerd`). */
export const RUNTIME_COMMAND: Record<Runtime, string[]> = {
  node: [join(root, 'packages', 'cli', 'bin', 'plugin-license.js'), 'relay', 'serve'],
  deno: [join(root, 'packages', 'relay', 'scripts', 'deno.mjs')],
  workerd: [join(root, 'packages', 'relay', 'scripts', 'workerd.mjs')],
};

/** workerd ships for Linux x64 here (the npm package @cloudflare/workerd-linux-64). */
export const hasWorkerd = process.platform === 'linux' && process.arch === 'x64';

/** A vendor key made for a test (test-utils' one maker): its PEM, its seed, its public key and id. */
export { makeVendorKey as makeKey, type VendorKey as TestKey } from '@plugin-license/test-utils';

/** The relay's start line. */
export interface StartLine {
  base_url: string;
  keys: Array<{ kid: string; public_key: string }>;
}

export interface RelayProcess {
  runtime: Runtime;
  info: StartLine;
  /** http://HOST:PORT. */
  origin: string;
  baseUrl: string;
  child: ChildProcess;
  /** Everything it printed on stdout and stderr so far. */
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Sends `signal` (SIGTERM by default) and resolves with the exit code (SIGKILL after STOP_GRACE_MS). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

function spawnRelay(runtime: Runtime, env: NodeJS.ProcessEnv, args: string[]) {
  const [script, ...rest] = RUNTIME_COMMAND[runtime];
  if (!existsSync(script!)) throw new Error(`${script} is missing; run "pnpm build" first`);
  // The relay's environment only: nothing of the test's own RELAY_*.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('RELAY_')));
  // Its own process group: the Deno and workerd scripts start the runtime as a child, which a
  // SIGKILL of the script alone would leave running.
  const child = spawn(process.execPath, [script!, ...rest, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  const first = new Promise<string | undefined>((resolve) => {
    lines.once('line', resolve);
    void exited.then(() => resolve(undefined));
  });
  lines.on('line', (l) => (stdout += `${l}\n`));
  /** SIGKILL to the whole group (the script and its runtime); any other signal to the script, which passes it on. */
  const signal = (sig: NodeJS.Signals): void => {
    try {
      if (sig === 'SIGKILL') process.kill(-child.pid!, sig);
      else child.kill(sig);
    } catch {
      // Already gone.
    }
  };
  return { child, first, exited, signal, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Starts a relay on `runtime` with `env` (the RELAY_* variables) and waits for its start line;
 * `stop()` it in `afterAll`.
 *
 * @example
 * const relay = await startRelay('deno', relayEnv(service, [key]));
 */
export async function startRelay(runtime: Runtime, env: NodeJS.ProcessEnv, args: string[] = ['--port', '0']): Promise<RelayProcess> {
  const p = spawnRelay(runtime, env, args);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (p.child.exitCode !== null || p.child.signalCode !== null) {
      p.signal('SIGKILL'); // a runtime the script left behind, if any
      return p.child.exitCode;
    }
    p.signal(signal);
    const timer = setTimeout(() => p.signal('SIGKILL'), STOP_GRACE_MS);
    try {
      return await p.exited;
    } finally {
      clearTimeout(timer);
    }
  };
  const timer = setTimeout(() => p.signal('SIGKILL'), WAIT_MS);
  const line = await p.first;
  clearTimeout(timer);
  if (line === undefined) {
    await stop('SIGKILL');
    throw new Error(`the ${runtime} relay printed no start line (exit ${p.child.exitCode}); stderr:\n${p.stderr()}`);
  }
  const info = JSON.parse(line) as StartLine;
  return { runtime, info, origin: new URL(info.base_url).origin, baseUrl: info.base_url, child: p.child, stdout: p.stdout, stderr: p.stderr, exited: p.exited, stop };
}

/** Runs a relay that must refuse to start: its exit code and words (a relay that starts instead is stopped, and says so). */
export async function refusedStart(runtime: Runtime, env: NodeJS.ProcessEnv, args: string[] = ['--port', '0']): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const p = spawnRelay(runtime, env, args);
  const timer = setTimeout(() => p.signal('SIGKILL'), WAIT_MS);
  const line = await p.first;
  if (line !== undefined) p.signal('SIGKILL');
  const code = await p.exited;
  clearTimeout(timer);
  p.signal('SIGKILL');
  return { code, stdout: line ?? p.stdout(), stderr: p.stderr() };
}

/** A JSON request to the relay (or anything): status, headers and the parsed body (or the text). */
export async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  const res = await fetch(url, { method, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = {};
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A signed ticket read and verified here, independently of the library: node:crypto and JSON.parse. */
export function verifiedTicket(text: unknown, publicKey: string): Record<string, unknown> {
  if (typeof text !== 'string') throw new Error(`no signed ticket: ${String(text)}`);
  const m = /^([^\n]+)\ned25519:([0-9a-f]{16}):([A-Za-z0-9_-]{86})\n$/.exec(text);
  if (m === null) throw new Error(`not a signed ticket's two lines: ${JSON.stringify(text)}`);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
  const message = Buffer.concat([Buffer.from('plugin-license/signed-ticket/v1\0'), Buffer.from(m[1]!, 'utf8')]);
  if (!verify(null, message, key, Buffer.from(m[3]!, 'base64url'))) throw new Error('the signature does not verify with the key');
  const fields = JSON.parse(m[1]!) as Record<string, unknown>;
  if (fields.kid !== m[2]) throw new Error(`line 1's kid ${String(fields.kid)} is not line 2's ${m[2]}`);
  return fields;
}

/** Same seed, same key: the PEM and the base64url seed of one key name one key. */
export function publicKeyOfSeed(seed: string): string {
  const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(seed, 'base64url')]);
  return createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })).export({ format: 'jwk' }).x!;
}

/**
 * A pass-through proxy to the service that can keep one answer back: `holdNext(path)` resolves
 * once the service has answered the next request to `path`, whose answer then waits for
 * `release()`. For the one case the emulator cannot make: an answer given before a change and
 * delivered after it.
 */
export async function answerHoldingProxy(serviceBaseUrl: string): Promise<{ baseUrl: string; holdNext(path: string): Promise<void>; release(): void; close(): Promise<void> }> {
  const target = new URL(serviceBaseUrl);
  let hold: { path: string; answered: () => void; released: Promise<void>; release: () => void } | undefined;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const upstream = await fetch(`${target.origin}${req.url}`, { method: req.method!, headers: { 'content-type': 'application/json', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) }, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) });
    const text = await upstream.text();
    const mine = hold !== undefined && req.url!.endsWith(hold.path) ? hold : undefined;
    if (mine) {
      hold = undefined;
      mine.answered();
      await mine.released;
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  let release = (): void => undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}${target.pathname}`,
    holdNext(path) {
      return new Promise<void>((answered) => {
        let r!: () => void;
        const released = new Promise<void>((x) => (r = x));
        release = r;
        hold = { path, answered, released, release: r };
      });
    },
    release: () => release(),
    close: () => new Promise<void>((r) => { release(); server.closeAllConnections(); server.close(() => r()); }),
  };
}
