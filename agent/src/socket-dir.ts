import { lstatSync, mkdirSync, chmodSync, unlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { AgentError } from './errors.js';
import { isPipePath } from './socket-path.js';

/**
 * Creates the socket's folder with mode 0700, or checks an existing one: it must be a real
 * folder (not a link), owned by this user and not writable by group or others.
 */
export function prepareSocketDir(socketPath: string): void {
  if (isPipePath(socketPath)) return;
  const dir = dirname(socketPath);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) {
    throw new AgentError('socket_dir_unsafe', `socket folder ${dir} is not a folder (a symbolic link or a file); remove it or choose another socket path`, { path: dir });
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  if (uid !== undefined && st.uid !== uid) {
    throw new AgentError(
      'socket_dir_unsafe',
      `socket folder ${dir} belongs to user ${st.uid}, not to you (${uid}); another user may have created it to intercept the agent. Remove it or set PLUGIN_LICENSE_SOCKET to a path in a folder you own`,
      { path: dir },
    );
  }
  if ((st.mode & 0o022) !== 0) {
    throw new AgentError(
      'socket_dir_unsafe',
      `socket folder ${dir} is writable by other users (mode ${(st.mode & 0o777).toString(8)}); run \`chmod 700 ${dir}\` or set PLUGIN_LICENSE_SOCKET to a path in a private folder`,
      { path: dir },
    );
  }
  // Ours and not writable by others: tighten read/search bits too, as the protocol asks for 0700.
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

export type SocketProbe = 'absent' | 'stale' | 'live';

/** Finds out whether something accepts connections on the path. */
export async function probeSocket(socketPath: string, timeoutMs = 1000): Promise<SocketProbe> {
  if (!isPipePath(socketPath)) {
    let st;
    try {
      st = lstatSync(socketPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
      throw err;
    }
    if (!st.isSocket()) {
      throw new AgentError('socket_in_use', `${socketPath} exists and is not a socket; it was left alone. Remove it or choose another socket path`, { path: socketPath });
    }
  }
  return new Promise<SocketProbe>((resolve) => {
    const socket = createConnection(socketPath);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('live');
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve('live');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(err.code === 'ECONNREFUSED' ? 'stale' : err.code === 'ENOENT' ? 'absent' : 'live');
    });
  });
}

/** Removes a socket file if present (no error when already gone). */
export function removeSocketFile(socketPath: string): void {
  if (isPipePath(socketPath)) return;
  try {
    unlinkSync(socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
