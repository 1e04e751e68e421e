import { openSync, writeSync } from 'node:fs';
import { usageError } from './exit.js';

/**
 * Opens an `--out` file before the command does anything, so a bad path costs nothing: created
 * new (mode 0600) and never overwritten, or appended to where the command offers `--append`.
 * Returns the file descriptor; the one rule for every command that writes a file.
 */
export function openOutFile(path: string, options: { append?: boolean; offersAppend?: boolean } = {}): number {
  try {
    return openSync(path, options.append ? 'a' : 'wx', 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw usageError(`${path} exists; ${options.offersAppend ? 'pass --append to add to it, or choose' : 'choose'} another --out file (nothing is overwritten)`);
    throw usageError(`cannot write ${path} (${code ?? (err as Error).message}); choose a writable --out file`);
  }
}

/**
 * Writes all of `bytes` at `position`: a write may take fewer bytes than asked (a disk with a
 * few bytes left), and a row or a document must never be left half written by this loop alone.
 */
export function writeAllAt(fd: number, bytes: Buffer, position: number): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}
