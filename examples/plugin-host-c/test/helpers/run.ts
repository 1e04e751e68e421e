import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (killed after killAfterMs as a safety net) and collects its output. */
export function run(file: string, args: string[], env: NodeJS.ProcessEnv = {}, killAfterMs = 15_000): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...process.env, ...env }, timeout: killAfterMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs plc-check (time-out 5 s unless given) and parses its JSON lines. */
export async function plcCheck(
  bin: string,
  socket: string,
  projectId: string,
  options: { timeoutMs?: number; repeat?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; answers: Record<string, unknown>[] }> {
  // A generous default time-out: a loaded CI machine must not turn an answer into a time-out.
  const args = [socket, projectId, String(options.timeoutMs ?? 5000)];
  if (options.repeat !== undefined) args.push(String(options.repeat));
  const r = await run(bin, args, options.env);
  const answers = r.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { code: r.code, answers };
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

export function spawnLines(file: string, args: string[], env: NodeJS.ProcessEnv = {}): LineProcess {
  const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
