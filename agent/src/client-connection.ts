import { createConnection, type Socket } from 'node:net';
import * as z from 'zod';
import { agentCommandHint } from '@plugin-license/licensing';
import { AgentError, isAgentError } from './errors.js';
import { LineSplitter } from './framing.js';
import { fromWireState, type LicenseState } from './license-state.js';
import type { RpcErrorObject } from './protocol.js';
import { fromRpcError } from './rpc-errors.js';
import { checkSocketOwner } from './socket-owner.js';

// A client's connection to the agent: its life (connect, the owner check, reconnect with
// bounded back-off, close) and the wire under it (JSON lines, requests matched to answers by
// id, notifications). What the requests mean is client.ts's.

/** How `AgentClient` reconnects after the agent goes away. */
export interface ReconnectOptions {
  /** Attempts before giving up (default 8). */
  maxAttempts?: number;
  /** First delay (default 100 ms); doubles per attempt. */
  minDelayMs?: number;
  /** Longest delay (default 5 s). */
  maxDelayMs?: number;
}

export interface ConnectionOptions {
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  reconnect: Required<ReconnectOptions> | false;
}

/** What the connection tells its owner. */
export interface ConnectionEvents {
  /** A `changed` notification the agent pushed. */
  changed(state: LicenseState): void;
  disconnected(err: AgentError): void;
  /** Runs on each new connection of a reconnect, before any other request (the subscriptions are renewed here); a throw fails the attempt. */
  restore(): Promise<void>;
  reconnected(): void;
  /** Closed by its owner (no error) or given up reconnecting. */
  closed(err: AgentError | undefined): void;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const CLIENT_MAX_LINE = 16 * 1024 * 1024;

const ErrorWire = z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

export class AgentConnection {
  readonly #socketPath: string;
  /** The socket path, and the namespace when known, as messages name them. */
  readonly where: string;
  readonly #namespace: string | undefined;
  readonly #o: ConnectionOptions;
  readonly #events: ConnectionEvents;
  #socket: Socket | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #userClosed = false;
  #reconnecting: Promise<void> | undefined;

  constructor(socketPath: string, namespace: string | undefined, options: ConnectionOptions, events: ConnectionEvents) {
    this.#socketPath = socketPath;
    this.where = namespace === undefined ? socketPath : `${socketPath} (namespace '${namespace}')`;
    this.#namespace = namespace;
    this.#o = options;
    this.#events = events;
  }

  /** True while a connection is up. */
  get connected(): boolean {
    return this.#socket !== undefined && !this.#socket.destroyed;
  }

  /** Sends a request and resolves with its `result`; rejects with `AgentError` for an error answer. */
  async request(method: string, params: Record<string, unknown>, timeoutMs = this.#o.requestTimeoutMs): Promise<unknown> {
    if (this.#userClosed) throw new AgentError('closed', 'this AgentClient is closed; create a new one with AgentClient.connect()');
    const deadline = Date.now() + timeoutMs;
    if (!this.connected) await this.#waitForConnection(timeoutMs);
    const socket = this.#socket as Socket;
    const id = this.#nextId++;
    const line = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new AgentError('timeout', `the agent did not answer '${method}' within ${timeoutMs} ms; it may be overloaded or hung`));
      }, Math.max(1, deadline - Date.now()));
      this.#pending.set(id, { resolve, reject, timer });
      socket.write(line);
    });
  }

  /** Closes the connection; pending requests reject with `closed`. */
  close(): void {
    if (this.#userClosed) return;
    this.#userClosed = true;
    this.#failPending(new AgentError('closed', 'the AgentClient was closed before the agent answered'));
    this.#socket?.destroy();
    this.#socket = undefined;
    this.#events.closed(undefined);
  }

  async #waitForConnection(timeoutMs: number): Promise<void> {
    if (!this.#reconnecting) {
      if (this.#o.reconnect === false) throw new AgentError('disconnected', `not connected to the agent at ${this.where}; connect again`);
      this.#startReconnect();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AgentError('timeout', `could not reach the agent at ${this.where} within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.#reconnecting, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (!this.connected) throw new AgentError('not_running', `no agent is running at ${this.where}; start it with \`${agentCommandHint('run', this.#namespace)}\``);
  }

  /** Connects within `connectTimeoutMs`: `not_running` when nothing listens, `timeout` when the agent does not accept in time. */
  open(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Only the user's own agent: nothing is sent, and no connection made, to a path another
      // user holds. Checked again once connected (before any byte is written), so a folder made
      // by someone else between the check and the connect is caught too.
      try {
        checkSocketOwner(this.#socketPath, { role: 'client' });
      } catch (err) {
        reject(err as Error);
        return;
      }
      const socket = createConnection(this.#socketPath);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new AgentError('timeout', `the agent at ${this.where} did not accept the connection within ${this.#o.connectTimeoutMs} ms`, { path: this.#socketPath }));
      }, this.#o.connectTimeoutMs);
      socket.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const notRunning = err.code === 'ENOENT' || err.code === 'ECONNREFUSED';
        reject(
          new AgentError(
            notRunning ? 'not_running' : 'disconnected',
            notRunning
              ? `no agent is running at ${this.where}; start it with \`${agentCommandHint('run', this.#namespace)}\` (or install it as a service)`
              : `cannot connect to the agent at ${this.where}: ${err.message}`,
            { path: this.#socketPath, cause: err },
          ),
        );
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        try {
          checkSocketOwner(this.#socketPath, { role: 'client' });
        } catch (err) {
          socket.destroy();
          reject(err as Error);
          return;
        }
        this.#attach(socket);
        resolve();
      });
    });
  }

  #attach(socket: Socket): void {
    this.#socket = socket;
    const splitter = new LineSplitter(CLIENT_MAX_LINE);
    const onLine = (line: string): void => this.#onLine(line);
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => {
      if (splitter.push(chunk, onLine)) socket.destroy(new Error('the agent sent a line over 16 MiB'));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      if (this.#userClosed) return;
      const err = new AgentError('disconnected', `the connection to the agent at ${this.where} was closed`);
      this.#failPending(err);
      this.#events.disconnected(err);
      if (this.#o.reconnect !== false) this.#startReconnect();
    });
  }

  #startReconnect(): void {
    if (this.#reconnecting || this.#o.reconnect === false) return;
    const r = this.#o.reconnect;
    this.#reconnecting = (async () => {
      let last: unknown;
      for (let attempt = 0; attempt < r.maxAttempts && !this.#userClosed; attempt++) {
        const delay = Math.min(r.maxDelayMs, r.minDelayMs * 2 ** attempt);
        await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)).unref());
        if (this.#userClosed) return;
        try {
          await this.open();
          await this.#events.restore();
          this.#events.reconnected();
          return;
        } catch (err) {
          last = err;
          // Another user's path does not become ours by waiting.
          if (isAgentError(err) && err.code === 'socket_dir_unsafe') break;
        }
      }
      if (!this.#userClosed && !this.connected) {
        const unsafe = isAgentError(last) && last.code === 'socket_dir_unsafe';
        this.#events.closed(unsafe ? (last as AgentError) : new AgentError('not_running', `gave up reconnecting to the agent at ${this.where} after ${r.maxAttempts} attempts`, { cause: last }));
      }
    })().finally(() => {
      this.#reconnecting = undefined;
    });
  }

  #onLine(line: string): void {
    let msg: { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    try {
      msg = JSON.parse(line);
    } catch (err) {
      // The agent writes JSON lines only: whatever answers here does not speak the protocol.
      this.#unreadable('it sent a line that is not JSON', err);
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.#unreadable('it sent JSON that is not a JSON-RPC message');
      return;
    }
    if (msg.method === 'changed' && msg.id === undefined) {
      let state: LicenseState;
      try {
        state = fromWireState(msg.params);
      } catch {
        return;
      }
      this.#events.changed(state);
      return;
    }
    if (typeof msg.id !== 'number') return;
    const p = this.#pending.get(msg.id);
    if (!p) return;
    this.#pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.error !== undefined) {
      const error = ErrorWire.safeParse(msg.error);
      p.reject(error.success ? fromRpcError(error.data as RpcErrorObject) : badAnswer(this.where, 'its error answer is not a JSON-RPC error object', error.error));
    } else if ('result' in msg) p.resolve(msg.result);
    else p.reject(badAnswer(this.where, 'its answer has neither a result nor an error'));
  }

  /** A line no request can be matched with: every pending request fails with `bad_answer`, and the connection is closed. */
  #unreadable(why: string, cause?: unknown): void {
    const err = badAnswer(this.where, why, cause);
    this.#failPending(err);
    const socket = this.#socket;
    this.#socket = undefined;
    socket?.destroy();
    this.#events.disconnected(err);
    if (this.#o.reconnect !== false && !this.#userClosed) this.#startReconnect();
  }

  #failPending(err: AgentError): void {
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.#pending.delete(id);
    }
  }
}

/** The one error for an answer that cannot be read, whatever the reason. */
export function badAnswer(where: string, why: string, cause?: unknown): AgentError {
  return new AgentError(
    'bad_answer',
    `the agent's answer could not be read: ${why}. The program at ${where} is not the license agent, or not one of this version: stop it, or update the license agent`,
    cause === undefined ? {} : { cause },
  );
}
