import { execFileSync } from 'node:child_process';
import { lstatSync, readlinkSync, type Stats } from 'node:fs';
import { posix } from 'node:path';
import { AgentError, type SocketHolder } from './errors.js';
import { isPipePath } from './socket-path.js';
import { notOwn, readSmallFile } from '@plugin-license/licensing';

/** Who asks: the agent about to listen, or a client about to send (the words differ, not the rule). */
export type SocketRole = 'agent' | 'client';

export interface SocketOwnerOptions {
  /** Who asks (default `client`). */
  role?: SocketRole;
  /** The user the path must belong to (default: this process's user). */
  uid?: number;
}

/**
 * What the check found: `absent` when the folder or the socket file does not exist yet (nothing
 * can be listening there for another user), `present` when a socket file of this user is there,
 * `unchecked` for a Windows pipe; `folder` is the socket folder's real path when it exists.
 */
export interface SocketOwnership {
  socket: 'absent' | 'present' | 'unchecked';
  folder?: string;
}

/** More links than this on the way to the socket's folder is a loop (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40;
const STICKY = 0o1000;

/**
 * The one rule for "this socket path is the user's own", for the agent before it listens and for
 * every Node client before it sends a byte (`AgentClient` runs it before connecting and again
 * before its first write):
 *
 * - the socket's folder is a real folder (a link there is refused), owned by the user, and not
 *   writable by group or others;
 * - every folder above it, followed from `/` (links included, each checked with `lstat` where it
 *   is), is the user's or root's, and is not writable by others unless sticky (`/tmp`), so no
 *   other user can rename the socket's folder away and put their own in its place;
 * - the socket file, when there, is a socket (not a link) owned by the user: only its binder
 *   owns it, and only the user or root can create an entry in a 0700 folder of the user's.
 *
 * Throws `AgentError` `socket_dir_unsafe`, whose message names the path, who holds it (user name
 * and uid) and its mode, says that nothing was sent (a client) or that the agent did not start,
 * and what to do; `holder` carries the same as data. Windows pipe names are not checked here
 * (`unchecked`): Node cannot ask who serves a pipe (see the README).
 *
 * @example
 * checkSocketOwner('/tmp/acme-audio-1000/agent.sock'); // { socket: 'present', folder: '/tmp/acme-audio-1000' }, or throws
 */
export function checkSocketOwner(socketPath: string, options: SocketOwnerOptions = {}): SocketOwnership {
  if (isPipePath(socketPath)) return { socket: 'unchecked' };
  const uid = options.uid ?? (typeof process.getuid === 'function' ? process.getuid() : undefined);
  if (uid === undefined) return { socket: 'unchecked' };
  const role = options.role ?? 'client';
  // Not normalized: `..` after a link is the link's target's parent, as the kernel reads it.
  const path = socketPath.startsWith('/') ? socketPath : `${process.cwd()}/${socketPath}`;
  const dir = posix.dirname(path);
  const refuse = (what: string, at: string, st: Stats | undefined, fix: string): never => {
    const holder: SocketHolder | undefined = st ? { path: at, uid: st.uid, user: userName(st.uid), mode: modeText(st.mode) } : undefined;
    const outcome = role === 'client' ? 'nothing was sent to it' : 'the agent did not start';
    throw new AgentError('socket_dir_unsafe', `${what}, so ${outcome}. ${fix}`, { path: at, ...(holder ? { holder } : {}) });
  };
  const holder = (st: Stats): string => holderText(st);
  const me = ownerText(uid);
  const elsewhere = role === 'client' ? 'or set PLUGIN_LICENSE_SOCKET to a path in a folder only you can write (the agent the same)' : 'or set PLUGIN_LICENSE_SOCKET (or --socket) to a path in a folder only you can write';

  // The folders above the socket's, resolved one name at a time from `/`.
  const folder = walkTo(posix.dirname(dir), uid, refuse, (at, st, reason) =>
    refuse(
      reason === 'link'
        ? `${at}, a link on the way to the agent's socket, belongs to ${holder(st)}, not to you (${me}) or the administrator: whoever owns it chooses where the socket is`
        : reason === 'loop'
          ? `${at}: more than ${MAX_LINKS} links on the way to the agent's socket (a loop)`
          : reason === 'owner'
            ? `${at}, a folder above the agent's socket, belongs to ${holder(st)}, not to you (${me}) or the administrator: that user could put their own socket folder in place of yours`
            : reason === 'writable'
              ? `${at}, a folder above the agent's socket, is writable by other users without the sticky bit (owner ${holder(st)}): another user could put their own socket folder in place of yours`
              : `${at}, on the way to the agent's socket, is not a folder (owner ${holder(st)})`,
      at,
      st,
      `Set PLUGIN_LICENSE_SOCKET to a path in a folder that only you and the administrator can change`,
    ),
  );
  if (folder === undefined) return { socket: 'absent' };
  const name = posix.basename(dir);
  const real = name === '..' ? posix.dirname(folder) : name === '.' || name === '' ? folder : posix.join(folder, name);
  const st = lstatOrUndefined(real, refuse);
  if (st === undefined) return { socket: 'absent' };
  if (st.isSymbolicLink()) {
    refuse(`the agent's socket folder ${real} is a symbolic link to ${safeReadlink(real)} (owner ${holder(st)}), not a folder`, real, st, `Remove the link (a folder of that name is made by the agent), ${elsewhere}`);
  }
  if (!st.isDirectory()) refuse(`the agent's socket folder ${real} is not a folder (owner ${holder(st)})`, real, st, `Remove it, ${elsewhere}`);
  // The rule itself is the library's (notOwn, plc's own_entry): the user's, writable by nobody else.
  const why = notOwn(st, uid);
  if (why === 'owner') {
    refuse(
      `the agent's socket folder ${real} belongs to ${holder(st)}, not to you (${me}); another user may have created it to receive what you send the agent`,
      real,
      st,
      `Ask its owner or an administrator to remove it (\`rm -r ${real}\` as root), then start your agent again, ${elsewhere}`,
    );
  }
  if (why === 'writable') {
    refuse(`the agent's socket folder ${real} is writable by other users (owner ${holder(st)})`, real, st, `Run \`chmod 700 ${real}\`, ${elsewhere}`);
  }
  const sock = lstatOrUndefined(posix.join(real, posix.basename(path)), refuse);
  if (sock === undefined) return { socket: 'absent', folder: real };
  const file = posix.join(real, posix.basename(path));
  if (sock.isSymbolicLink()) refuse(`the agent's socket ${file} is a symbolic link to ${safeReadlink(file)} (owner ${holder(sock)}), not a socket`, file, sock, `Remove the link, then start your agent again, ${elsewhere}`);
  if (sock.uid !== uid) {
    refuse(
      `the agent's socket ${file} belongs to ${holder(sock)}, not to you (${me}): a program of that user listens there`,
      file,
      sock,
      `Stop that program or ask an administrator to remove the file, then start your agent again, ${elsewhere}`,
    );
  }
  return { socket: 'present', folder: real };
}

type Refuse = (what: string, at: string, st: Stats | undefined, fix: string) => never;
type Reason = 'owner' | 'writable' | 'link' | 'loop' | 'not_folder';

/**
 * Follows `target` from `/` one name at a time, as the kernel does, checking with `lstat` each
 * folder it passes through and each link it follows: the real path of the last folder, or
 * undefined when a name on the way does not exist.
 */
function walkTo(target: string, uid: number, refuse: Refuse, fail: (at: string, st: Stats, reason: Reason) => never): string | undefined {
  const trusted = (owner: number): boolean => owner === uid || owner === 0;
  const checkFolder = (at: string, st: Stats): void => {
    if (!st.isDirectory()) fail(at, st, 'not_folder');
    if (!trusted(st.uid)) fail(at, st, 'owner');
    if ((st.mode & 0o022) !== 0 && (st.mode & STICKY) === 0) fail(at, st, 'writable');
  };
  let current = '/';
  checkFolder(current, lstatSync(current));
  const names = target.split('/').filter((n) => n !== '' && n !== '.');
  let links = 0;
  while (names.length > 0) {
    const name = names.shift() as string;
    if (name === '..') {
      current = posix.dirname(current);
      continue;
    }
    const next = posix.join(current, name);
    const st = lstatOrUndefined(next, refuse);
    if (st === undefined) return undefined;
    if (st.isSymbolicLink()) {
      // In a sticky or private folder only the link's owner can change it.
      if (!trusted(st.uid)) fail(next, st, 'link');
      if (++links > MAX_LINKS) fail(next, st, 'loop');
      const to = readlinkSync(next);
      if (to.startsWith('/')) current = '/';
      names.unshift(...to.split('/').filter((n) => n !== '' && n !== '.'));
      continue;
    }
    checkFolder(next, st);
    current = next;
  }
  return current;
}

function lstatOrUndefined(path: string, refuse: Refuse): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    return refuse(`${path} could not be checked (${code ?? (err as Error).message})`, path, undefined, 'Check the permissions of the folders on the way to it, or set PLUGIN_LICENSE_SOCKET to a path in a folder only you can write');
  }
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '?';
  }
}

/** `0755`-style text of a mode's permission bits (with the sticky bit when set). */
function modeText(mode: number): string {
  return (mode & 0o1777).toString(8).padStart(4, '0');
}

/** "nobody (uid 65534, mode 0755)", or "uid 1234 (mode 0755)" when no name is known. */
function holderText(st: Stats): string {
  const name = userName(st.uid);
  const mode = modeText(st.mode);
  return name === undefined ? `uid ${st.uid} (mode ${mode})` : `${name} (uid ${st.uid}, mode ${mode})`;
}

/** "nobody (uid 65534)", or "uid 1234" when no name is known. */
function ownerText(uid: number): string {
  const name = userName(uid);
  return name === undefined ? `uid ${uid}` : `${name} (uid ${uid})`;
}

/**
 * A user's name from their uid: /etc/passwd, else `id -nu` (macOS keeps its users in Directory
 * Services). Only ever asked on the way to a refusal.
 */
export function userName(uid: number): string | undefined {
  const fromFile = passwdName(uid);
  if (fromFile !== undefined) return fromFile;
  for (const id of ['/usr/bin/id', '/bin/id']) {
    try {
      const out = execFileSync(id, ['-nu', String(uid)], { encoding: 'utf8', timeout: 2000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
      return out === '' || out === String(uid) ? undefined : out;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return undefined;
    }
  }
  return undefined;
}

function passwdName(uid: number): string | undefined {
  // Read only if it is a regular file, and bounded: never a FIFO a local user swapped in.
  const read = readSmallFile('/etc/passwd', 4 * 1024 * 1024);
  if (read.kind !== 'bytes') return undefined;
  for (const line of read.bytes.toString('utf8').split('\n')) {
    const f = line.split(':');
    if (f.length >= 3 && f[2] === String(uid) && f[0]) return f[0];
  }
  return undefined;
}
