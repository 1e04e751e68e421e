import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A tree holds something a digest does not describe (a FIFO, a device, a socket), or cannot be read. */
export class TreeDigestError extends Error {
  override readonly name = 'TreeDigestError';
  constructor(
    /** The path of the offending entry. */
    readonly path: string,
    /** What it is, in words ("a FIFO", "unreadable (EACCES)"). */
    readonly problem: string,
  ) {
    super(`${path} is ${problem}`);
  }
}

/** A folder, a regular file with the hex SHA-256 of its contents, or a link with its target. */
type Entry = { kind: 'd'; rel: string } | { kind: 'f'; rel: string; sha: string } | { kind: 'l'; rel: string; target: string };

const kindOf = (st: { isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string =>
  st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : st.isSocket() ? 'a socket' : 'not a file, folder or link';

function digestOf(entries: Entry[]): string {
  // Sorted by the bytes of the relative path, '/'-separated: the same order on every platform.
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.rel), Buffer.from(b.rel)));
  const hash = createHash('sha256');
  for (const e of sorted) hash.update(`${e.kind}\0${e.rel}\0${e.kind === 'f' ? e.sha : e.kind === 'l' ? e.target : ''}\n`);
  return `sha256:${hash.digest('hex')}`;
}

/** The digest of a single file holding `bytes`, as {@link treeDigest} gives for that file (a menu entry we write). */
export function fileDigest(bytes: Buffer | string): string {
  return digestOf([{ kind: 'f', rel: '', sha: createHash('sha256').update(bytes).digest('hex') }]);
}

/** The digest of a link to `target`, as {@link treeDigest} gives for that link (a macOS ~/Applications link). */
export function linkDigest(target: string): string {
  return digestOf([{ kind: 'l', rel: '', target }]);
}

/**
 * The names in a folder of a plugin, each checked to be UTF-8 text: a file system holds bytes, and
 * Node reads a name that is not text with replacement characters, a name no call can then open
 * (lstat says ENOENT of a file that is there). Such a name is {@link TreeDigestError}, saying so.
 * The one way this folder lists a plugin's folder (its digest, its copy, its code, the staged folder).
 */
export async function readNames(dir: string): Promise<string[]> {
  const names = await readdir(dir, { encoding: 'buffer' });
  const bad = names.find((name) => !isUtf8(name));
  if (bad !== undefined) throw new TreeDigestError(join(dir, bad.toString('utf8')), `named with bytes that are not UTF-8 text (${bad.toString('hex').replace(/(..)(?!$)/g, '$1 ')}), which cannot be copied by name; the vendor must rename it`);
  return names.map((name) => name.toString('utf8'));
}

/** One read buffer for every file: hashing runs one file at a time (synchronous reads, below). */
const readBuffer = Buffer.allocUnsafe(1 << 20);

/**
 * Opens a regular file for reading, synchronously, or says what else is there: never blocks on a
 * FIFO swapped in after lstat, never follows a link swapped in (fstat decides). The one way this
 * folder reads a file of a plugin (its digest, its first bytes).
 */
export function openRegularSync(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0));
  const st = fstatSync(fd);
  if (st.isFile()) return fd;
  closeSync(fd);
  throw new TreeDigestError(path, kindOf(st));
}

/**
 * The SHA-256 of a regular file's contents. Synchronous reads: a digest is the CLI's whole work at
 * that moment, and a thread-pool round trip per megabyte tripled an install's time (`pnpm bench plugins`).
 */
async function fileSha(path: string): Promise<string> {
  const fd = openRegularSync(path);
  try {
    const hash = createHash('sha256');
    for (;;) {
      const bytesRead = readSync(fd, readBuffer, 0, readBuffer.length, null);
      if (bytesRead === 0) break;
      hash.update(readBuffer.subarray(0, bytesRead));
    }
    return hash.digest('hex');
  } finally {
    closeSync(fd);
  }
}

/**
 * The one rule for "is this still exactly what was installed": a digest of a file, a link or a
 * folder tree made of each entry's relative path ('/'-separated), the SHA-256 of each file's
 * contents and each link's target (links are never followed), sorted by path. Permissions,
 * times and owners are not part of it, so it is the same on every platform. Returns
 * `sha256:<hex>`; throws {@link TreeDigestError} for a FIFO, a device or a socket anywhere in the
 * tree (never opened), or an entry that cannot be read; `ENOENT` when `root` is missing.
 *
 * @example
 * await treeDigest('/home/u/.vst3/Acme Gain.vst3'); // 'sha256:5f0c…'
 */
export async function treeDigest(root: string): Promise<string> {
  const entries: Entry[] = [];
  const walk = async (path: string, rel: string): Promise<void> => {
    const st = await lstat(path);
    if (st.isSymbolicLink()) entries.push({ kind: 'l', rel, target: await readlink(path) });
    else if (st.isFile()) entries.push({ kind: 'f', rel, sha: await fileSha(path) });
    else if (st.isDirectory()) {
      entries.push({ kind: 'd', rel });
      for (const name of await readNames(path)) await walk(join(path, name), rel === '' ? name : `${rel}/${name}`);
    } else throw new TreeDigestError(path, kindOf(st));
  };
  try {
    await walk(root, '');
  } catch (e) {
    if (e instanceof TreeDigestError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT' && err.path === root) throw e;
    throw new TreeDigestError(err.path ?? root, `unreadable (${err.code ?? err.message})`);
  }
  return digestOf(entries);
}

/** {@link treeDigest}, or undefined when nothing is at `path`, or the problem when it holds what no digest describes. */
export async function digestIfPresent(path: string): Promise<{ kind: 'missing' } | { kind: 'digest'; digest: string } | { kind: 'unusual'; problem: string }> {
  try {
    return { kind: 'digest', digest: await treeDigest(path) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    if (e instanceof TreeDigestError) return { kind: 'unusual', problem: e.message };
    throw e;
  }
}
