import { open, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Fsyncs a folder, so a rename or an unlink in it survives a crash. Not on Windows (no handle
 * on a folder); a file system that refuses it still renamed atomically.
 */
export async function syncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await handle?.close();
  }
}

/**
 * Removes `file` and fsyncs its folder, so a crash right after cannot bring it back. A file
 * already gone is not an error.
 *
 * @example
 * await removeFileDurably('/home/u/.local/share/acme-audio/intents/1f0e….json');
 */
export async function removeFileDurably(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  await syncDir(dirname(file));
}
