import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { notOwn, notOwnWords } from './own-folder.js';

/** What a read of a small file found. */
export type SmallFileRead = { kind: 'missing' } | { kind: 'bad'; problem: string } | { kind: 'bytes'; bytes: Buffer };

/**
 * Reads a file only if it is a regular file of at most `maxBytes`: opened so that it cannot block
 * (`O_NONBLOCK`: a FIFO never waits for a writer), `fstat` on what was opened, then at most
 * `maxBytes` + 1 bytes read (a file that grew is caught). `followLinks: false` refuses a link
 * (`O_NOFOLLOW`); `ownOnly: true` refuses a file that is not the user's own (`notOwn`: another
 * user's, or writable by others), as checked on what was opened. Windows has neither flag; the
 * regular-file and size checks still hold. The one reader of small files a local user could swap
 * for a FIFO, a device or a folder (the ticket, `/etc/passwd`).
 *
 * @example
 * const read = readSmallFile('/etc/passwd', 4 * 1024 * 1024);
 * if (read.kind === 'bytes') console.log(read.bytes.length);
 */
export function readSmallFile(file: string, maxBytes: number, options: { followLinks?: boolean; ownOnly?: boolean } = {}): SmallFileRead {
  const flags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (options.followLinks === false ? (constants.O_NOFOLLOW ?? 0) : 0);
  let fd: number;
  try {
    fd = openSync(file, flags);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'bad', problem: code === 'ELOOP' ? 'a link, not a regular file' : `cannot be opened (${code ?? (e as Error).message})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { kind: 'bad', problem: 'not a regular file' };
    const why = options.ownOnly === true ? notOwn(st) : undefined;
    if (why !== undefined) return { kind: 'bad', problem: notOwnWords('the file', why, st) };
    if (st.size > maxBytes) return { kind: 'bad', problem: `${st.size} bytes, more than ${maxBytes}` };
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > maxBytes) return { kind: 'bad', problem: `more than ${maxBytes} bytes` };
    return { kind: 'bytes', bytes: buffer.subarray(0, length) };
  } catch (e) {
    return { kind: 'bad', problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  } finally {
    closeSync(fd);
  }
}
