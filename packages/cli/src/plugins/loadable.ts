import { closeSync, readSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { openRegularSync, readNames } from './tree-digest.js';

/**
 * The first bytes of a file a host loads as code: PE ('MZ': a Windows DLL, .vst3, .clap, .exe),
 * ELF, Mach-O (32 and 64 bit, either byte order) and a universal (fat) Mach-O.
 */
const MAGICS = [[0x4d, 0x5a], [0x7f, 0x45, 0x4c, 0x46], [0xfe, 0xed, 0xfa, 0xce], [0xfe, 0xed, 0xfa, 0xcf], [0xce, 0xfa, 0xed, 0xfe], [0xcf, 0xfa, 0xed, 0xfe], [0xca, 0xfe, 0xba, 0xbe]].map((m) => Buffer.from(m));

function isLoadable(path: string): boolean {
  let fd: number;
  try {
    fd = openRegularSync(path);
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(4);
    const bytesRead = readSync(fd, head, 0, 4, 0);
    return MAGICS.some((m) => bytesRead >= m.length && head.subarray(0, m.length).equals(m));
  } finally {
    closeSync(fd);
  }
}

/**
 * The files of a bundle (a folder) that a host may have loaded as code, as '/'-separated paths
 * inside it, sorted; none for a single-file item or a missing path. Links are not followed.
 *
 * Windows lets a loaded DLL be renamed but neither removed nor moved with the folder that holds
 * it, so a bundle is replaced or removed whole by moving these out first (the one rule: see the
 * engine's `moveOut`), on every platform alike.
 *
 * @example
 * await loadableFiles('C:\\Users\\u\\AppData\\Local\\Programs\\Common\\VST3\\Acme Gain.vst3');
 * // ['Contents/x86_64-win/Acme Gain.vst3']
 */
export async function loadableFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (path: string, rel: string): Promise<void> => {
    const st = await lstat(path);
    if (st.isDirectory()) {
      for (const name of await readNames(path)) await walk(join(path, name), rel === '' ? name : `${rel}/${name}`);
    } else if (st.isFile() && rel !== '' && isLoadable(path)) found.push(rel);
  };
  try {
    await walk(root, '');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return found.sort();
}
