import { basename, dirname, join } from 'node:path';
import { CliError, EXIT } from '../exit.js';
import { exists } from './tree-copy.js';

// The names a run gives what it moves: hidden siblings of ours (`.<name>.new-<pid>`,
// `.<name>.old-<pid>`, the form record.ts's isOwnScratch accepts back), and the name a
// same-named item that is not ours is kept under.

/** A hidden sibling of `path` that hosts do not scan (`.<name>.<role>-<pid>`), not yet taken. */
export async function scratchName(path: string, role: 'new' | 'old', taken: Set<string>): Promise<string> {
  for (let n = 1; n < 100; n++) {
    const candidate = join(dirname(path), `.${basename(path)}.${role}-${process.pid}${n === 1 ? '' : `-${n}`}`);
    if (!taken.has(candidate) && !(await exists(candidate))) {
      taken.add(candidate);
      return candidate;
    }
  }
  throw new CliError(EXIT.failed, 'no_scratch_name', `${dirname(path)} is full of hidden files named after ${basename(path)}; remove them and run again`);
}

/** The name a same-named item that is not ours is kept under: not scanned by hosts (it no longer ends in .vst3). */
export async function keptName(path: string, now: Date): Promise<string> {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  for (let n = 1; n < 100; n++) {
    const candidate = `${path}.kept-${stamp}${n === 1 ? '' : `-${n}`}`;
    if (!(await exists(candidate))) return candidate;
  }
  throw new CliError(EXIT.failed, 'no_kept_name', `cannot find a free name to keep ${path} under; move it away and run again`);
}
