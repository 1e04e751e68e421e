import { constants } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, readlink, rm, stat, symlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { readNames, TreeDigestError } from './tree-digest.js';

/**
 * Copies a file, a link or a folder tree from `from` to `to` (which must not exist): files with
 * their permission bits, links as links with their target as written (never followed), folders
 * recursively. A FIFO, a device or a socket is refused ({@link TreeDigestError}), never opened.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  const st = await lstat(from);
  if (st.isSymbolicLink()) {
    const target = await readlink(from);
    // Windows wants to know what a link points at; POSIX ignores the type.
    const type = process.platform === 'win32' ? await stat(resolve(dirname(from), target)).then((s) => (s.isDirectory() ? 'junction' : 'file')).catch(() => 'file' as const) : undefined;
    await symlink(target, to, type);
  } else if (st.isFile()) {
    await copyFile(from, to, constants.COPYFILE_EXCL);
    await chmod(to, st.mode & 0o7777);
  } else if (st.isDirectory()) {
    await mkdir(to, { mode: 0o700 });
    for (const name of await readNames(from)) await copyTree(join(from, name), join(to, name));
    await chmod(to, st.mode & 0o7777);
  } else throw new TreeDigestError(from, 'not a file, folder or link');
}

/** Removes a file, a link (not what it points at) or a folder tree; nothing there is fine. */
export async function removeTree(path: string): Promise<void> {
  await rm(path, { recursive: true, force: true, maxRetries: process.platform === 'win32' ? 3 : 0 });
}

/**
 * Creates a plug-in folder and its missing parents (mode 0755, as hosts and file browsers expect).
 * Not `mkdir({recursive: true})`, which reports ENOENT where the truth is EROFS.
 */
export async function makeFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o755 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR', path: dir });
      return;
    }
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw e;
    await makeFolder(parent);
    await mkdir(dir, { mode: 0o755 }).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

/** Whether anything (a file, a folder, a link, even a broken one) is at `path`; any error but ENOENT is thrown. */
export const exists = async (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return false;
      throw e;
    },
  );
