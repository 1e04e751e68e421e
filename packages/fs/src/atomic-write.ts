import { randomBytes } from 'node:crypto';
import { open, readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { syncDir } from './durable.js';
import { ensureDir } from './ensure-dir.js';
import { renameRetrying } from './rename-retry.js';

/*
 * The one atomic replace of a file we own: the license cache, intents, tickets, offline files,
 * config.json, the plugins' records, the emulator's data file. Its temporary files are named
 * `.<name>.<pid>.<random>.tmp` beside the target (hidden, and in the same folder, so the rename
 * stays on one file system); `sweepTempFiles` and `probeWritable` follow the same rule.
 */

function tempName(file: string): string {
  return join(dirname(file), `${tempPrefix(file)}${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

function tempPrefix(file: string): string {
  return `.${basename(file)}.`;
}

/**
 * Replaces `file` atomically: a temp file in the same folder (mode 0600), written and fsynced,
 * renamed over the target (retried while Windows says a reader holds it, {@link renameRetrying}),
 * then the folder fsynced where the OS allows it (not on Windows). A reader sees the old content
 * or the new, never a mix. Missing folders are created (mode 0700, {@link ensureDir}). On any
 * failure no temp file is left behind and the system's error is thrown.
 *
 * @example
 * await writeFileAtomic('/home/u/.config/acme-audio/config.json', JSON.stringify(config, null, 2) + '\n');
 */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const dir = dirname(file);
  await ensureDir(dir);
  const tmp = tempName(file);
  const handle = await open(tmp, 'w', 0o600);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await renameRetrying(tmp, file);
  } catch (e) {
    // A full disk or a folder in the way: leave no empty or partial temp file behind.
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  await syncDir(dir);
}

/**
 * Proves that `file` can be written where it will be: writes `bytes` bytes to a temp file beside
 * it (as {@link writeFileAtomic} would), syncs it and removes it. Throws the system's error (EROFS,
 * EACCES, ENOSPC) when the folder refuses.
 *
 * @example
 * await probeWritable(cacheFile, 4096); // before asking the service for a slot
 */
export async function probeWritable(file: string, bytes: number): Promise<void> {
  await ensureDir(dirname(file));
  const tmp = tempName(file);
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(Buffer.alloc(bytes, 0x20));
    await handle.sync();
  } finally {
    await handle.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Removes temp files of `file` left by writers that died between create and rename. Call it
 * under the lock that serialises the writers of `file`.
 *
 * @example
 * await sweepTempFiles(cacheFile);
 */
export async function sweepTempFiles(file: string): Promise<void> {
  const dir = dirname(file);
  const prefix = tempPrefix(file);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  await Promise.all(names.filter((n) => n.startsWith(prefix) && n.endsWith('.tmp')).map((n) => unlink(join(dir, n)).catch(() => undefined)));
}
