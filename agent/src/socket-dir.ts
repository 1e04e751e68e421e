import { lstatSync, mkdirSync, chmodSync, unlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { AgentError } from './errors.js';
import { isPipePath } from './socket-path.js';
import { checkSocketOwner } from './socket-owner.js';

/**
 * Creates the socket's folder with mode 0700, or checks an existing one, by the one rule of
 * `checkSocketOwner` (the agent's start and every Node client): the folder is the user's own, not
 * a link, not writable by others, and nobody else can replace it. Read bits are then tightened
 * to 0700, as the protocol asks.
 */
export function prepareSocketDir(socketPath: string): void {
  if (isPipePath(socketPath)) return;
  mkdirSync(dirname(socketPath), { recursive: true, mode: 0o700 });
  const { folder } = checkSocketOwner(socketPath, { role: 'agent' });
  // Ours and not writable by others: tighten read/search bits too, as the protocol asks for 0700.
  if (folder !== undefined && (lstatSync(folder).mode & 0o077) !== 0) chmodSync(folder, 0o700);
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
