import { openSync } from 'node:fs';
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
