import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Creates `dir` and its missing parents (mode 0700). Not `mkdir({recursive: true})`: Node's
 * recursive form reports ENOENT where the truth is EROFS (a read-only volume), and the user must
 * hear the truth.
 *
 * @example
 * await ensureDir('/home/u/.local/share/acme-audio/licenses');
 */
export async function ensureDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw e;
    await ensureDir(parent);
    try {
      await mkdir(dir, { mode: 0o700 });
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
    }
  }
}
