import { chmodSync, lstatSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { isMainThread } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { AgentLimits } from './config.js';
import { Connection, type ConnectionHost } from './connection.js';
import { acquireFileLock } from '@plugin-license/licensing';
import { AgentError } from './errors.js';
import type { LicenseStateWire } from './license-state.js';
import type { RpcErrorObject, RpcRequest } from './protocol.js';
import type { Scheduler, TimerHandle } from './scheduler.js';
import { isPipePath } from './socket-path.js';
import { prepareSocketDir, probeSocket, removeSocketFile } from './socket-dir.js';

export interface SocketServerOptions {
  socketPath: string;
  namespace: string;
  limits: () => AgentLimits;
  scheduler: Scheduler;
  logger: Logger;
  dispatch: (connection: Connection, request: RpcRequest) => unknown;
  toError: (err: unknown) => RpcErrorObject;
  /** Called when a connection closes or a request in flight ends (the idle exit counts from then). */
  ended?: () => void;
}

/** Counters of the socket server (tests and `status` use them). */
export interface SocketStats {
  connections: number;
  subscribers: number;
  inFlight: number;
  /** Sum of answer bytes waiting to be written, over all connections. */
  pendingWriteBytes: number;
  /** Largest per-connection figure of the above. */
  maxPendingWriteBytes: number;
  /** Sum of unfinished request bytes held. */
  pendingReadBytes: number;
  /** Connections the agent stopped reading from until they read their answers. */
  pausedConnections: number;
}

const LISTEN_BACKLOG = 2048;

/**
 * The agent's socket: a 0700 folder and a 0600 socket (or a named pipe), one live agent per
 * path, connections with their limits, notifications to subscribers, and a draining shutdown.
 */
export class SocketServer {
  readonly #connections = new Set<Connection>();
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #server: Server;
  #nextId = 1;
  #closing = false;
  #sweep: TimerHandle | undefined;
  /** The socket file this server bound (device and inode): at close only that one is removed. */
  #bound: { dev: number; ino: number } | undefined;

  readonly #o: SocketServerOptions;

  constructor(o: SocketServerOptions) {
    this.#o = o;
    const host: ConnectionHost = {
      limits: o.limits,
      scheduler: o.scheduler,
      dispatch: o.dispatch,
      toError: o.toError,
      track: (promise) => {
        this.#inFlight.add(promise);
        void promise.finally(() => {
          this.#inFlight.delete(promise);
          o.ended?.();
        });
      },
      closed: (connection) => {
        this.#connections.delete(connection);
        o.ended?.();
        if (o.logger.isLevelEnabled('debug')) o.logger.debug({ connection: connection.id, connections: this.#connections.size }, 'connection closed');
      },
    };
    // Half-open: a client that closes its sending side still gets every answer it asked for.
    this.#server = createServer({ allowHalfOpen: true, pauseOnConnect: false });
    this.#server.on('connection', (socket: Socket) => {
      const connection = new Connection(this.#nextId++, socket, host);
      const max = o.limits().maxConnections;
      if (this.#closing || this.#connections.size >= max) {
        o.logger.warn({ connections: this.#connections.size, max }, 'connection refused: over the connection limit');
        connection.refuse('connections', this.#closing ? 'the agent is shutting down; reconnect in a moment' : `the agent is at its limit of ${max} connections; close unused connections and retry`);
        return;
      }
      this.#connections.add(connection);
      this.#armSweep();
      if (o.logger.isLevelEnabled('debug')) o.logger.debug({ connection: connection.id, connections: this.#connections.size }, 'connection accepted');
    });
    this.#server.on('error', (err) => o.logger.error({ err: { message: err.message } }, 'socket server error'));
  }

  /**
   * Prepares the folder, then in one critical section (the socket's lock, see
   * {@link withSocketLock}): refuses a live socket, removes a stale one, listens. Many agents
   * started at once on one path end with one: the others find the winner's live socket under the
   * lock and exit with `socket_in_use`.
   */
  async listen(): Promise<void> {
    const { socketPath } = this.#o;
    if (isPipePath(socketPath)) {
      // A pipe leaves nothing stale behind: the first server instance wins (libuv creates it with
      // FILE_FLAG_FIRST_PIPE_INSTANCE), and a second gets EADDRINUSE.
      await this.#claim();
      return;
    }
    prepareSocketDir(socketPath);
    await withSocketLock(socketPath, () => this.#claim());
  }

  async #claim(): Promise<void> {
    const { socketPath, namespace, logger } = this.#o;
    const probe = await probeSocket(socketPath);
    if (probe === 'live') {
      // On Windows anyone may create a pipe of this name first. Node cannot ask which process
      // serves a pipe (GetNamedPipeServerProcessId needs a native call), so the message says
      // what it knows; `plugin-license doctor` and the C client's PLC_ERR_FOREIGN_AGENT tell more.
      const who = isPipePath(socketPath)
        ? `another agent is already running on ${socketPath}, or another program serves that pipe name (namespace '${namespace}')`
        : `another agent is already running on ${socketPath} (namespace '${namespace}')`;
      throw new AgentError('socket_in_use', `${who}; stop it first, or run this one with another namespace or socket path`, { path: socketPath });
    }
    if (probe === 'stale') {
      logger.warn({ socketPath }, 'removing a stale socket left by an agent that did not stop cleanly');
      removeSocketFile(socketPath);
    }
    try {
      await listen(this.#server, socketPath);
      if (!isPipePath(socketPath)) {
        const st = lstatSync(socketPath);
        this.#bound = { dev: st.dev, ino: st.ino };
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new AgentError('socket_in_use', `another agent started on ${socketPath} at the same time; stop it first or choose another socket path`, { path: socketPath, cause: err });
      }
      throw new AgentError('internal_error', `cannot listen on ${socketPath}: ${(err as Error).message}`, { path: socketPath, cause: err });
    }
  }

  /**
   * The idle time-out, for every connection at once: a sweep every tenth of the time-out (at
   * least 100 ms) while any connection is open, so an idle connection is closed between 1 and
   * 1.1 time-outs after its last request. A timer per connection cost about a tenth of the
   * agent's work when a DAW connects its plugins all at once.
   */
  #armSweep(): void {
    if (this.#sweep !== undefined || this.#connections.size === 0 || this.#closing) return;
    const period = Math.max(100, Math.ceil(this.#o.limits().idleTimeoutMs / 10));
    this.#sweep = this.#o.scheduler.setTimer(period, () => {
      this.#sweep = undefined;
      const now = this.#o.scheduler.now();
      const { idleTimeoutMs } = this.#o.limits();
      for (const c of this.#connections) c.dropIfIdle(now, idleTimeoutMs);
      this.#armSweep();
    });
  }

  /** Pushes a changed state to the connections subscribed to it. */
  notify(state: LicenseStateWire): void {
    for (const c of this.#connections) {
      const sub = c.subscription;
      if (sub === '*' || (sub !== null && sub.has(state.project_id))) c.notify('changed', state);
    }
  }

  reconfigure(limits: AgentLimits): void {
    for (const c of this.#connections) c.reconfigure(limits);
  }

  stats(): SocketStats {
    let pendingWriteBytes = 0;
    let maxPendingWriteBytes = 0;
    let pendingReadBytes = 0;
    let pausedConnections = 0;
    let subscribers = 0;
    for (const c of this.#connections) {
      pendingWriteBytes += c.pendingWriteBytes;
      maxPendingWriteBytes = Math.max(maxPendingWriteBytes, c.pendingWriteBytes);
      pendingReadBytes += c.pendingReadBytes;
      if (c.isPaused) pausedConnections += 1;
      if (c.subscription !== null) subscribers += 1;
    }
    return { connections: this.#connections.size, subscribers, inFlight: this.#inFlight.size, pendingWriteBytes, maxPendingWriteBytes, pendingReadBytes, pausedConnections };
  }

  /**
   * Stops accepting, lets requests in flight finish (up to `graceMs`), then calls `abort` for the
   * rest, ends every connection once its answers are written, and removes the socket file.
   */
  async close(graceMs: number, abort: () => void): Promise<void> {
    this.#closing = true;
    this.#sweep?.cancel();
    this.#sweep = undefined;
    const serverClosed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    await Promise.race([Promise.allSettled([...this.#inFlight]), delay(graceMs)]);
    abort();
    for (const c of this.#connections) c.end();
    await Promise.race([serverClosed, delay(3_000)]);
    for (const c of this.#connections) c.socket.destroy();
    try {
      // An agent started on demand may already listen on this path (this one stopped accepting
      // first): its socket file is not ours to remove. Checked and removed under the socket's
      // lock, so a starter's bind never falls between the check and the removal.
      const removeOurs = (): void => {
        if (this.#ownsSocketFile()) removeSocketFile(this.#o.socketPath);
      };
      if (isPipePath(this.#o.socketPath)) removeOurs();
      else await withSocketLock(this.#o.socketPath, async () => removeOurs());
    } catch (err) {
      this.#o.logger.warn({ err: { message: (err as Error).message } }, 'could not remove the socket file');
    }
  }

  #ownsSocketFile(): boolean {
    if (this.#bound === undefined) return !isPipePath(this.#o.socketPath);
    try {
      const st = lstatSync(this.#o.socketPath);
      return st.dev === this.#bound.dev && st.ino === this.#bound.ino;
    } catch {
      return false;
    }
  }

  get inFlightCount(): number {
    return this.#inFlight.size;
  }
}

/** A lock not refreshed for this long belongs to a starter that died (SIGKILL) and is taken over. */
const SOCKET_LOCK_STALE_MS = 5_000;

/**
 * Runs `fn` holding the socket's lock: `SOCKET.lock` next to the socket (in its 0700 folder), by
 * the licensing library's one cross-process lock ({@link acquireFileLock}). The socket itself
 * decides who runs (a live socket wins); the lock only makes probe, removal of a stale socket and
 * bind one step, so two starters that both found it stale cannot remove each other's live socket.
 */
export async function withSocketLock<T>(socketPath: string, fn: () => Promise<T>): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await acquireFileLock(socketPath, { lockPath: `${socketPath}.lock`, staleMs: SOCKET_LOCK_STALE_MS });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ELOCKED') {
      throw new AgentError('socket_in_use', `another agent is starting on ${socketPath} and held its lock ${socketPath}.lock for too long; retry in a moment, or remove that folder if no agent is starting`, { path: socketPath, cause: err });
    }
    throw new AgentError('internal_error', `cannot lock ${socketPath}.lock to start on ${socketPath}: ${e.message}; check that the socket's folder is yours and writable`, { path: socketPath, cause: err });
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => undefined);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.once('listening', () => {
      server.off('error', onError);
      resolve();
    });
    // A DAW opening a session connects dozens of plugin instances at once: a deep accept queue
    // (the kernel caps it at somaxconn) turns a burst into a short wait instead of EAGAIN.
    // exclusive: a process Node started as a cluster worker (NODE_UNIQUE_ID, read before any code
    // of ours) would otherwise ask a primary that does not exist for the socket, and never listen.
    const options = { path, backlog: LISTEN_BACKLOG, exclusive: true };
    if (isPipePath(path)) {
      server.listen(options);
      return;
    }
    // The socket is created 0600 by the umask at bind time: there is no moment when it is open to others.
    let previous: number | undefined;
    if (isMainThread) previous = process.umask(0o177);
    try {
      server.listen(options);
    } finally {
      if (previous !== undefined) process.umask(previous);
    }
    if (!isMainThread) chmodSync(path, 0o600);
  });
}
