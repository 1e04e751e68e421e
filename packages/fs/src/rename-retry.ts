import { renameSync } from 'node:fs';
import { rename } from 'node:fs/promises';

/*
 * The one rule for replacing or moving a file we own: licensing's cache, intents, offline files and
 * machine id, the CLI's downloads, the emulator's data file. Windows refuses to rename over (or move) a
 * file that another process has open (EPERM, EACCES or EBUSY): a plugin's `check()` reading the
 * cache without the lock, `status`, an antivirus scanner or the search indexer. Those holds last
 * milliseconds, so the rename is retried for about 2 seconds before it fails. A reader that
 * re-opens the file in a loop holds it most of the time (under Wine a plugin's check() loop held
 * it on 4 of 5 attempts), so what counts is the number of attempts, not their spacing: short
 * steps (5, 10, then 20 ms at most) with equal jitter, so about 130 attempts fit in the window
 * and none falls into step with a reader that loops at a fixed period. On
 * POSIX a rename never fails because of a reader, and these codes mean a real permission
 * problem (a read-only folder): it fails at once.
 *
 * Not graceful-fs, though it does this for `fs.rename` on Windows: it retries for 60 seconds
 * (an agent request would hang that long on a folder that really refuses) and has no sync form,
 * which the machine id and the status command need.
 */

/** How long a refused rename is retried on Windows. */
export const RENAME_RETRY_MS = 2_000;
const TRANSIENT = new Set(['EPERM', 'EACCES', 'EBUSY']);
/** Short steps: a reader re-opens the file often, and each attempt is a new chance to find it closed. */
const FIRST_STEP_MS = 5;
const MAX_STEP_MS = 20;

/** What a rename needs of the world; tests replace parts of it. */
export interface RenameEnvironment {
  platform: NodeJS.Platform;
  /** Monotonic milliseconds. */
  clock: () => number;
  /** Uniform [0, 1), for the jitter. */
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  sleepSync: (ms: number) => void;
  rename: (from: string, to: string) => Promise<void>;
  renameSync: (from: string, to: string) => void;
}

const pause = new Int32Array(new SharedArrayBuffer(4));
export const systemRenameEnvironment: RenameEnvironment = {
  platform: process.platform,
  clock: () => performance.now(),
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  // A synchronous wait that does not spin the CPU.
  sleepSync: (ms) => void Atomics.wait(pause, 0, 0, ms),
  rename,
  renameSync,
};

function retryable(e: unknown, env: RenameEnvironment): boolean {
  return env.platform === 'win32' && TRANSIENT.has((e as NodeJS.ErrnoException).code ?? '');
}

/**
 * The next wait, or undefined when the window is spent: steps of 5, 10, then 20 ms, each with
 * equal jitter (between half and all of the step), the last cut to what is left of the window.
 */
function nextWait(attempt: number, started: number, env: RenameEnvironment): number | undefined {
  const left = RENAME_RETRY_MS - (env.clock() - started);
  if (left <= 0) return undefined;
  const step = Math.min(FIRST_STEP_MS * 2 ** attempt, MAX_STEP_MS);
  return Math.min(Math.max(1, Math.round(step * (0.5 + env.random() / 2))), left);
}

/**
 * `rename(from, to)`, retried for about 2 s while Windows says another process holds the file.
 *
 * @example
 * await renameRetrying(`${file}.part`, file); // a download, complete
 */
export async function renameRetrying(from: string, to: string, env: RenameEnvironment = systemRenameEnvironment): Promise<void> {
  const started = env.clock();
  for (let attempt = 0; ; attempt++) {
    try {
      await env.rename(from, to);
      return;
    } catch (e) {
      const wait = retryable(e, env) ? nextWait(attempt, started, env) : undefined;
      if (wait === undefined) throw e;
      await env.sleep(wait);
    }
  }
}

/**
 * The synchronous form of {@link renameRetrying}.
 *
 * @example
 * renameRetryingSync(tmp, secretFile);
 */
export function renameRetryingSync(from: string, to: string, env: RenameEnvironment = systemRenameEnvironment): void {
  const started = env.clock();
  for (let attempt = 0; ; attempt++) {
    try {
      env.renameSync(from, to);
      return;
    } catch (e) {
      const wait = retryable(e, env) ? nextWait(attempt, started, env) : undefined;
      if (wait === undefined) throw e;
      env.sleepSync(wait);
    }
  }
}
