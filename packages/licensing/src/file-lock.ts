import { setTimeout as sleep } from 'node:timers/promises';
import { lock } from 'proper-lockfile';

/** How {@link acquireFileLock} locks. */
export interface FileLockOptions {
  /** The lock's own path (a folder proper-lockfile creates with `mkdir`, atomic on every OS). */
  lockPath: string;
  /** A lock not refreshed for this long is taken over (its holder died); at least 2 s. */
  staleMs: number;
}

/**
 * Takes a cross-process lock (proper-lockfile: `mkdir` of `lockPath`, refreshed while held, a
 * stale one of a dead holder taken over), waiting only while another holder has it: a bounded
 * wait of twice the stale time plus 2 s. Any other failure (a read-only or full disk, no
 * permission) is final at once: waiting would not fix it. The one lock of the licensing
 * library: the license cache's read-modify-write and the agent's socket bind both use it.
 * Returns the release function.
 *
 * @example
 * const release = await acquireFileLock(file, { lockPath: `${file}.lock`, staleMs: 10_000 });
 * try { await work(); } finally { await release(); }
 */
export async function acquireFileLock(file: string, options: FileLockOptions): Promise<() => Promise<void>> {
  const stale = Math.max(2000, options.staleMs);
  const deadline = Date.now() + stale * 2 + 2000;
  for (let wait = 5; ; wait = Math.min(100, wait * 1.5)) {
    try {
      return await lock(file, { realpath: false, lockfilePath: options.lockPath, stale, retries: 0, onCompromised: () => undefined });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() >= deadline) throw e;
    }
    await sleep(Math.round(wait * (0.5 + Math.random() / 2)));
  }
}
