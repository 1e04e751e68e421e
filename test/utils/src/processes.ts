// Child processes for tests: a program run to its end, a long-running one whose stdout lines can
// be awaited, and the built agent (plugin-license-agent run) with its own home and socket.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function execute(file: string, args: string[], env: NodeJS.ProcessEnv, killAfterMs: number): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: killAfterMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a program to its end (killed after killAfterMs as a safety net) and collects its output; `env` adds to the test's own. */
export function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}, killAfterMs = 15_000): Promise<RunResult> {
  return execute(file, args, { ...process.env, ...env }, killAfterMs);
}

/**
 * Runs a program as {@link run} does, with `env` alone: nothing of the test's own environment,
 * as on a musician's computer. The safety net is longer: installers unpack and start services.
 */
export function runBare(file: string, args: string[], env: NodeJS.ProcessEnv, killAfterMs = 120_000): Promise<RunResult> {
  return execute(file, args, env, killAfterMs);
}

/**
 * How long a child that was asked to stop has to exit before it is killed. A safety net against a
 * hang, not a deadline of the behaviour: generous, so a loaded machine's slow exit is never
 * turned into a SIGKILL (and a null exit code a test then reads as a failure).
 */
export const STOP_GRACE_MS = 20_000;

/**
 * Stops a child: `signal` (SIGTERM by default), then SIGKILL after {@link STOP_GRACE_MS}.
 * Resolves with its exit code (null when a signal ended it). `exited` is its exit, listened
 * for from the spawn on so that an early exit is not missed.
 *
 * @example
 * const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
 * expect(await stopProcess(child, exited)).toBe(0);
 */
export async function stopProcess(child: ChildProcess, exited: Promise<number | null>, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

/** A long-running child whose stdout lines can be awaited. */
export interface LineProcess {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the first line (already seen or future) that matches; rejects if the process exits first. */
  waitFor(match: RegExp, what: string): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnLines(file: string, args: string[], env: NodeJS.ProcessEnv = {}, options: { stdin?: boolean } = {}): LineProcess {
  const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: { match: RegExp; resolve(l: string): void }[] = [];
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-20_000);
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const rl = createInterface({ input: child.stdout! });
  rl.on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) {
      if (w.match.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  return {
    child,
    lines,
    exited,
    waitFor(match, what) {
      const seen = lines.find((l) => match.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then((code) =>
          reject(new Error(`${file} exited (code ${code}) before printing ${what}; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`)),
        );
      });
    },
    stop: (signal = 'SIGTERM') => stopProcess(child, exited, signal),
  };
}

/** The built agent bin; child processes run dist, so `pnpm build` comes first. */
export const AGENT_CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../../agent/bin/plugin-license-agent.js');

export interface RunningAgent {
  socket: string;
  home: string;
  process: LineProcess;
  /** Stops the agent (SIGTERM) and removes its home unless `keepHome`. */
  stop(keepHome?: 'keep-home'): Promise<number | null>;
}

/** Starts `plugin-license-agent run` with an isolated home and socket; resolves once it prints ready. */
export async function startAgent(options: { socket: string; baseUrl: string; home?: string; env?: Record<string, string> }): Promise<RunningAgent> {
  if (!existsSync(AGENT_CLI)) {
    throw new Error(`the agent is not built (${AGENT_CLI} is missing); run \`pnpm build\` at the repository root first`);
  }
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'plc-agent-home-'));
  const proc = spawnLines(process.execPath, [AGENT_CLI, 'run'], {
    PLUGIN_LICENSE_HOME: home,
    PLUGIN_LICENSE_SOCKET: options.socket,
    PLUGIN_LICENSE_BASE_URL: options.baseUrl,
    ...options.env,
  });
  try {
    await proc.waitFor(/"ready"\s*:\s*true/, 'its ready line');
  } catch (error) {
    await proc.stop('SIGKILL');
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
  return {
    socket: options.socket,
    home,
    process: proc,
    async stop(keepHome) {
      const code = await proc.stop('SIGTERM');
      if (keepHome === undefined) rmSync(home, { recursive: true, force: true });
      return code;
    },
  };
}

/** One JSON-RPC request over the agent socket, as a companion app would send it. */
export function agentRpc(socket: string, method: string, params: unknown, timeoutMs = 10_000): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    let pending = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    conn.on('connect', () => conn.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) + '\n'));
    conn.on('data', (chunk) => {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const message = JSON.parse(pending.slice(0, nl)) as { id?: unknown; result?: unknown; error?: { code: number; message: string } };
        pending = pending.slice(nl + 1);
        if (message.id === 1) {
          clearTimeout(timer);
          conn.end();
          resolve(message);
          return;
        }
      }
    });
  });
}

