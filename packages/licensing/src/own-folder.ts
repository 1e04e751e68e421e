import { chmodSync, statSync } from 'node:fs';
import { LicenseError } from './errors.js';

/** What a folder or file is as far as the rule goes: its owner and mode. */
export interface Ownership {
  uid: number;
  mode: number;
}

/** This process's user (the owner of what it creates); undefined on Windows, whose folders are the user's by their ACL. */
function currentUid(): number | undefined {
  return typeof process.geteuid === 'function' ? process.geteuid() : undefined;
}

/**
 * The one rule of what is the user's own (docs/architecture.md, "Only the user's own files": the socket
 * folder's rule, which plc's `own_entry` states in C): owned by this user and writable by nobody
 * else. Why not, or `undefined` when it is (always on Windows).
 *
 * @example
 * notOwn(statSync(dir)); // undefined, 'owner' or 'writable'
 */
export function notOwn(st: Ownership, uid: number | undefined = currentUid()): 'owner' | 'writable' | undefined {
  if (uid === undefined) return undefined;
  if (st.uid !== uid) return 'owner';
  return (st.mode & 0o022) !== 0 ? 'writable' : undefined;
}

/** The words of {@link notOwn}'s answer about `what` ("the tickets folder /x"), as plc says them. */
export function notOwnWords(what: string, why: 'owner' | 'writable', st: Ownership): string {
  return why === 'owner'
    ? `${what} belongs to user ${st.uid}, not to this one (${currentUid() ?? '?'})`
    : `${what} is writable by others (mode ${(st.mode & 0o777).toString(8).padStart(3, '0')})`;
}

/** What a reader found at a folder: nothing (then nothing in it either), one it trusts, or one it does not (words). */
export type FolderCheck = { kind: 'ok' } | { kind: 'missing' } | { kind: 'bad'; problem: string };

/**
 * The reader's folder rule (docs/license-ticket.md, docs/architecture.md: "the socket's"): the folder at
 * `path`, links resolved, is a folder of the user's own ({@link notOwn}). A reader trusts nothing
 * in a folder that is not; one that is not there holds nothing. `name` starts the words ("the
 * tickets folder").
 *
 * @example
 * checkOwnFolder('/home/me/.local/share/acme-audio', 'the data folder'); // { kind: 'ok' }
 */
export function checkOwnFolder(path: string, name: string): FolderCheck {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'bad', problem: code === 'ENOTDIR' ? `${name} ${path} is under a file, not a folder` : `${name} ${path} cannot be checked (${code ?? (e as Error).message})` };
  }
  if (!st.isDirectory()) return { kind: 'bad', problem: `${name} ${path} is ${st.isFIFO() ? 'a FIFO' : st.isFile() ? 'a file' : 'something else'}, not a folder` };
  const why = notOwn(st);
  if (why === undefined) return { kind: 'ok' };
  const words = notOwnWords(`${name} ${path}`, why, st);
  return { kind: 'bad', problem: why === 'owner' ? `${words}: nothing in it is trusted` : `${words}: nothing in it is trusted; run chmod 700 on it` };
}

/**
 * The writer's side of the rule, for a folder the library makes (the data folder, `tickets/`):
 * one of the user's own is left at mode 0700 (repaired when it is looser, as the contract's
 * folders are 0700); anything else is refused with words (`cache_io`), since no reader would
 * trust what is written there: not a folder, or another user's (who could put their own files in
 * it). Call it once the folder exists.
 *
 * @example
 * repairOwnFolder('/home/me/.local/share/acme-audio/tickets', 'the tickets folder');
 */
export function repairOwnFolder(path: string, name: string): void {
  const st = statSync(path);
  if (!st.isDirectory()) {
    throw new LicenseError('cache_io', `${name} ${path} is not a folder; remove it (the library makes the folder)`, { path });
  }
  if (notOwn(st) === 'owner') {
    throw new LicenseError('cache_io', `${notOwnWords(`${name} ${path}`, 'owner', st)}, and that user could put their own files in it; have it removed by its owner or an administrator, then try again`, { path });
  }
  if (currentUid() === undefined || (st.mode & 0o077) === 0) return;
  chmodSync(path, 0o700);
  // A file system without Unix modes (a FAT or SMB mount) keeps its own: no reader would trust it.
  const after = statSync(path);
  if (notOwn(after) !== undefined) {
    throw new LicenseError('cache_io', `${notOwnWords(`${name} ${path}`, 'writable', after)} and stays so after chmod 700 (a file system without Unix permissions?); keep the data folder on a disk of your own`, { path });
  }
}
