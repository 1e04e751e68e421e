import { lstat, readFile, rm, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { lock } from 'proper-lockfile';

/** How {@link acquireFileLock} locks. */
export interface FileLockOptions {
  /** The lock's own path (a folder proper-lockfile creates with `mkdir`, atomic on every OS). */
  lockPath: string;
  /** A lock not refreshed for this long is taken over (its holder died); at least 2 s. */
  staleMs: number;
  /**
   * Also name the holder: its pid in `<lockPath>-pid` while it holds the lock, so that a lock
   * whose holder is gone (killed, or a power cut while the OS kept the disk) is taken over at
   * once instead of after `staleMs` ({@link takeOverFromTheDead}). For a lock that runs wait for
   * by hand (an installer): the next run starts at once after a crash.
   */
  namedHolder?: boolean;
}

/**
 * Takes a cross-process lock (proper-lockfile: `mkdir` of `lockPath`, refreshed while held, a
 * stale one of a dead holder taken over), waiting only while another holder has it: a bounded
 * wait of twice the stale time plus 2 s. Any other failure (a read-only or full disk, no
 * permission) is final at once: waiting would not fix it. The one lock of the project: the
 * license cache's read-modify-write, the agent's socket bind and the CLI's plugin records
 * (`namedHolder`) all use it. Returns the release function.
 *
 * @example
 * const release = await acquireFileLock(file, { lockPath: `${file}.lock`, staleMs: 10_000 });
 * try { await work(); } finally { await release(); }
 */
export async function acquireFileLock(file: string, options: FileLockOptions): Promise<() => Promise<void>> {
  const stale = Math.max(2000, options.staleMs);
  if (options.namedHolder === true) await takeOverFromTheDead(options.lockPath);
  const deadline = Date.now() + stale * 2 + 2000;
  let release: () => Promise<void>;
  for (let wait = 5; ; wait = Math.min(100, wait * 1.5)) {
    try {
      release = await lock(file, { realpath: false, lockfilePath: options.lockPath, stale, retries: 0, onCompromised: () => undefined });
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED' || Date.now() >= deadline) throw e;
    }
    await sleep(Math.round(wait * (0.5 + Math.random() / 2)));
  }
  if (options.namedHolder !== true) return release;
  const holder = holderFile(options.lockPath);
  await writeFile(holder, `${process.pid}\n`).catch(() => undefined);
  const unlock = release;
  return async () => {
    await rm(holder, { force: true }).catch(() => undefined);
    await unlock();
  };
}

/** Where a lock taken with `namedHolder` names its holder. */
const holderFile = (lockPath: string): string => `${lockPath}-pid`;

/**
 * The one rule of a dead holder: a lock whose named holder's process is gone is removed (with
 * its holder file), so the next run starts at once rather than after the lock goes stale. A
 * holder that is alive, this process, unknown (no holder file, or not a pid), or a lock that is
 * not there, is left to the lock's own rules. Never throws.
 *
 * @example
 * await takeOverFromTheDead('/opt/acme/installed-plugins/.lock');
 */
export async function takeOverFromTheDead(lockPath: string): Promise<void> {
  const text = (await readFile(holderFile(lockPath), 'utf8').catch(() => '')).trim();
  const pid = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return;
  if (!(await lstat(lockPath).then(() => true, () => false))) return;
  try {
    process.kill(pid, 0);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') return;
  }
  await rm(lockPath, { recursive: true, force: true }).catch(() => undefined);
  await rm(holderFile(lockPath), { force: true }).catch(() => undefined);
}
