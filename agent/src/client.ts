import { EventEmitter } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import * as z from 'zod';
import { AgentError, isAgentError } from './errors.js';
import { LineSplitter } from './framing.js';
import { fromWireState, type LicenseState } from './license-state.js';
import { PROTOCOL_VERSION, type HelloResult, type OfflineRequestResult, type RpcErrorObject } from './protocol.js';
import { fromRpcError } from './rpc-errors.js';
import { agentCommandHint, resolveConfig } from '@plugin-license/licensing';
import { socketPathOf } from './socket-path.js';
import { checkSocketOwner } from './socket-owner.js';

/** How `AgentClient` reconnects after the agent goes away. */
export interface ReconnectOptions {
  /** Attempts before giving up (default 8). */
  maxAttempts?: number;
  /** First delay (default 100 ms); doubles per attempt. */
  minDelayMs?: number;
  /** Longest delay (default 5 s). */
  maxDelayMs?: number;
}

export interface AgentClientOptions {
  /** Socket path or pipe name; default: the protocol's path for `namespace`. */
  socketPath?: string;
  /** Namespace used to find the socket (default `PLUGIN_LICENSE_APP`, else `plugin-license`). */
  namespace?: string;
  /** Connect time-out (default 1000 ms). */
  connectTimeoutMs?: number;
  /** Answer time-out per request (default 15 s: activate and refresh wait on the service). */
  requestTimeoutMs?: number;
  /** Reconnect with back-off when the connection drops (default on); `false` disables. */
  reconnect?: boolean | ReconnectOptions;
  /** Name sent in `hello`, shown in the agent's debug log. */
  clientName?: string;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const CLIENT_MAX_LINE = 16 * 1024 * 1024;
const QUEUE_LIMIT = 1000;

const HelloWire = z.looseObject({ protocol: z.number(), agent: z.string(), namespace: z.string(), data_dir: z.string().optional(), connections: z.number().optional() });
const ListWire = z.looseObject({ licenses: z.array(z.unknown()) });
const OfflineRequestWire = z.looseObject({ document: z.string(), file_name: z.string() });
const ErrorWire = z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });

/**
 * One subscription: an event emitter (`changed`) and an async iterator of `LicenseState`.
 * Survives reconnects (the client subscribes again).
 *
 * @example
 * const sub = await client.subscribe(projectId);
 * for await (const state of sub) if (!state.valid) break;
 * sub.close();
 */
export class Subscription extends EventEmitter<{ changed: [LicenseState]; end: [] }> implements AsyncIterable<LicenseState> {
  private readonly queue: LicenseState[] = [];
  private readonly waiters: Array<(r: IteratorResult<LicenseState>) => void> = [];
  private ended = false;

  constructor(
    readonly projectId: string | undefined,
    private readonly onClose: (s: Subscription) => void,
  ) {
    super();
  }

  /** @internal */
  deliver(state: LicenseState): void {
    if (this.ended || (this.projectId !== undefined && state.projectId !== this.projectId.toLowerCase())) return;
    this.emit('changed', state);
    const waiter = this.waiters.shift();
    if (waiter) waiter({ value: state, done: false });
    else {
      this.queue.push(state);
      if (this.queue.length > QUEUE_LIMIT) this.queue.shift();
    }
  }

  /** Stops delivering; pending iterations end. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    for (const w of this.waiters.splice(0)) w({ value: undefined, done: true });
    this.onClose(this);
    this.emit('end');
  }

  get closed(): boolean {
    return this.ended;
  }

  [Symbol.asyncIterator](): AsyncIterator<LicenseState> {
    return {
      next: () => {
        const value = this.queue.shift();
        if (value) return Promise.resolve({ value, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

type ClientEvents = {
  changed: [LicenseState];
  disconnected: [AgentError];
  reconnected: [];
  /** The client gave up reconnecting (or was closed). */
  closed: [AgentError | undefined];
};

/**
 * Node client of agent protocol 1: pipelined requests matched by id, typed results, `changed`
 * notifications, reconnect with bounded back-off.
 *
 * @example
 * const client = await AgentClient.connect({ namespace: 'acme-audio' });
 * const state = await client.check('8d5e…-project-uuid');
 * if (state.valid) enableFeatures();
 * client.close();
 */
export class AgentClient extends EventEmitter<ClientEvents> {
  readonly socketPath: string;
  private socket: Socket | undefined;
  private readonly pending = new Map<number, Pending>();
  private readonly subscriptions = new Set<Subscription>();
  private nextId = 1;
  private userClosed = false;
  private reconnecting: Promise<void> | undefined;
  private readonly o: Required<Omit<AgentClientOptions, 'socketPath' | 'namespace' | 'reconnect' | 'clientName'>> & { reconnect: Required<ReconnectOptions> | false; clientName: string | undefined };

  /** The socket path, and the namespace when known, as messages name them. */
  private readonly where: string;
  private readonly namespace: string | undefined;

  private constructor(socketPath: string, options: AgentClientOptions, namespace: string | undefined) {
    super();
    this.socketPath = socketPath;
    this.where = namespace === undefined ? socketPath : `${socketPath} (namespace '${namespace}')`;
    this.namespace = namespace;
    const r = options.reconnect ?? true;
    this.o = {
      connectTimeoutMs: options.connectTimeoutMs ?? 1000,
      requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
      reconnect: r === false ? false : { maxAttempts: 8, minDelayMs: 100, maxDelayMs: 5000, ...(r === true ? {} : r) },
      clientName: options.clientName,
    };
  }

  /**
   * Connects (within `connectTimeoutMs`) and returns a ready client. Throws `AgentError`
   * `not_running` when nothing listens on the socket, `timeout` when the agent does not accept in time.
   *
   * @example
   * const client = await AgentClient.connect({ socketPath: '/tmp/acme-1000/agent.sock', connectTimeoutMs: 200 });
   */
  static async connect(options: AgentClientOptions = {}): Promise<AgentClient> {
    let namespace = options.namespace;
    let socketPath = options.socketPath;
    if (socketPath === undefined) {
      // Where the agent of this namespace listens, by the project's one resolver (environment, config.json).
      let config;
      try {
        config = resolveConfig({ app: options.namespace });
      } catch (err) {
        throw new AgentError('config_invalid', (err as Error).message, { cause: err });
      }
      namespace = config.namespace.value;
      socketPath = socketPathOf(config);
    }
    const client = new AgentClient(socketPath, options, namespace);
    await client.open();
    return client;
  }

  /** True while a connection is up. */
  get connected(): boolean {
    return this.socket !== undefined && !this.socket.destroyed;
  }

  /** `hello`: the agent's protocol, version and namespace (and, from agents that send them, its data folder and connection count). */
  async hello(): Promise<HelloResult> {
    const r = this.read('hello', await this.request('hello', { protocol: PROTOCOL_VERSION, ...(this.o.clientName ? { client: this.o.clientName } : {}) }), (v) => HelloWire.parse(v));
    return {
      protocol: r.protocol,
      agent: r.agent,
      namespace: r.namespace,
      ...(r.data_dir === undefined ? {} : { data_dir: r.data_dir }),
      ...(r.connections === undefined ? {} : { connections: r.connections }),
    };
  }

  /** `check`: the state from the agent's memory (no network). */
  async check(projectId: string): Promise<LicenseState> {
    return this.read('check', await this.request('check', { project_id: projectId }), fromWireState);
  }

  /** `activate`: activates the code online; the answer carries only a hint of the code. */
  async activate(projectId: string, code: string): Promise<LicenseState> {
    return this.read('activate', await this.request('activate', { project_id: projectId, code }), fromWireState);
  }

  /** `deactivate`: frees this machine's slot. */
  async deactivate(projectId: string): Promise<LicenseState> {
    return this.read('deactivate', await this.request('deactivate', { project_id: projectId }), fromWireState);
  }

  /** `refresh`: validates online now, or answers from the cache when the service is unreachable. */
  async refresh(projectId: string): Promise<LicenseState> {
    return this.read('refresh', await this.request('refresh', { project_id: projectId }), fromWireState);
  }

  /**
   * `offline_request` (added to protocol 1): the offline request as its text line, its nonce
   * stored as pending by the agent, and a file name to suggest. An agent without it throws
   * `agent_outdated`.
   */
  async offlineRequest(projectId: string, code?: string): Promise<OfflineRequestResult> {
    const r = this.read('offline_request', await this.newMethod('offline_request', { project_id: projectId, ...(code === undefined ? {} : { code }) }), (v) => OfflineRequestWire.parse(v));
    return { document: r.document, file_name: r.file_name };
  }

  /** `offline_import` (added to protocol 1): imports a response (file contents or its text line); the state after it. */
  async offlineImport(document: string): Promise<LicenseState> {
    return this.read('offline_import', await this.newMethod('offline_import', { document }), fromWireState);
  }

  /** `list`: every project the agent holds. */
  async list(): Promise<LicenseState[]> {
    return this.read('list', await this.request('list', {}), (v) => ListWire.parse(v).licenses.map(fromWireState));
  }

  /**
   * The one way an answer becomes a typed value: one that is not of the protocol's shape is
   * `bad_answer`, in words, never a schema dump (nor the answer itself).
   */
  private read<T>(method: string, value: unknown, parse: (v: unknown) => T): T {
    try {
      return parse(value);
    } catch (err) {
      throw badAnswer(this.where, `its answer to '${method}' is not of the protocol's shape${err instanceof z.ZodError ? ` (${issueText(err)})` : ''}`, err);
    }
  }

  /**
   * `subscribe`: `changed` notifications for one project, or all when `projectId` is omitted.
   * Every notification is also emitted as `changed` on the client.
   */
  async subscribe(projectId?: string): Promise<Subscription> {
    const sub = new Subscription(projectId, (s) => this.subscriptions.delete(s));
    // Registered before the answer: a `changed` may follow it in the same read.
    this.subscriptions.add(sub);
    try {
      await this.request('subscribe', projectId === undefined ? {} : { project_id: projectId });
    } catch (err) {
      this.subscriptions.delete(sub);
      throw err;
    }
    return sub;
  }

  /** A method added to protocol 1 later: an agent that answers -32601 predates it and needs an update. */
  private async newMethod(method: string, params: Record<string, unknown>): Promise<unknown> {
    try {
      return await this.request(method, params);
    } catch (err) {
      if (isAgentError(err) && err.code === 'method_not_found') {
        throw new AgentError('agent_outdated', `the license agent needs an update: it does not know '${method}' (install the vendor's current version)`, { rpcCode: err.rpcCode, cause: err });
      }
      throw err;
    }
  }

  /**
   * Sends any request and resolves with its `result`; rejects with `AgentError` for an error answer.
   *
   * @example
   * const raw = await client.request('check', { project_id });
   */
  async request(method: string, params: Record<string, unknown> = {}, options: { timeoutMs?: number } = {}): Promise<unknown> {
    if (this.userClosed) throw new AgentError('closed', 'this AgentClient is closed; create a new one with AgentClient.connect()');
    const timeoutMs = options.timeoutMs ?? this.o.requestTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    if (!this.connected) await this.waitForConnection(timeoutMs);
    const socket = this.socket as Socket;
    const id = this.nextId++;
    const line = JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n';
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AgentError('timeout', `the agent did not answer '${method}' within ${timeoutMs} ms; it may be overloaded or hung`));
      }, Math.max(1, deadline - Date.now()));
      this.pending.set(id, { resolve, reject, timer });
      socket.write(line);
    });
  }

  /** Closes the connection; pending requests reject with `closed`. */
  close(): void {
    if (this.userClosed) return;
    this.userClosed = true;
    this.failPending(new AgentError('closed', 'the AgentClient was closed before the agent answered'));
    for (const s of [...this.subscriptions]) s.close();
    this.socket?.destroy();
    this.socket = undefined;
    this.emit('closed', undefined);
  }

  private async waitForConnection(timeoutMs: number): Promise<void> {
    if (!this.reconnecting) {
      if (this.o.reconnect === false) throw new AgentError('disconnected', `not connected to the agent at ${this.where}; connect again`);
      this.startReconnect();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AgentError('timeout', `could not reach the agent at ${this.where} within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.reconnecting, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (!this.connected) throw new AgentError('not_running', `no agent is running at ${this.where}; start it with \`${agentCommandHint('run', this.namespace)}\``);
  }

  private open(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Only the user's own agent: nothing is sent, and no connection made, to a path another
      // user holds. Checked again once connected (before any byte is written), so a folder made
      // by someone else between the check and the connect is caught too.
      try {
        checkSocketOwner(this.socketPath, { role: 'client' });
      } catch (err) {
        reject(err as Error);
        return;
      }
      const socket = createConnection(this.socketPath);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new AgentError('timeout', `the agent at ${this.where} did not accept the connection within ${this.o.connectTimeoutMs} ms`, { path: this.socketPath }));
      }, this.o.connectTimeoutMs);
      socket.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        const notRunning = err.code === 'ENOENT' || err.code === 'ECONNREFUSED';
        reject(
          new AgentError(
            notRunning ? 'not_running' : 'disconnected',
            notRunning
              ? `no agent is running at ${this.where}; start it with \`${agentCommandHint('run', this.namespace)}\` (or install it as a service)`
              : `cannot connect to the agent at ${this.where}: ${err.message}`,
            { path: this.socketPath, cause: err },
          ),
        );
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        try {
          checkSocketOwner(this.socketPath, { role: 'client' });
        } catch (err) {
          socket.destroy();
          reject(err as Error);
          return;
        }
        this.attach(socket);
        resolve();
      });
    });
  }

  private attach(socket: Socket): void {
    this.socket = socket;
    const splitter = new LineSplitter(CLIENT_MAX_LINE);
    const onLine = (line: string): void => this.onLine(line);
    socket.setNoDelay?.(true);
    socket.on('data', (chunk: Buffer) => {
      if (splitter.push(chunk, onLine)) socket.destroy(new Error('the agent sent a line over 16 MiB'));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.userClosed) return;
      const err = new AgentError('disconnected', `the connection to the agent at ${this.where} was closed`);
      this.failPending(err);
      this.emit('disconnected', err);
      if (this.o.reconnect !== false) this.startReconnect();
    });
  }

  private startReconnect(): void {
    if (this.reconnecting || this.o.reconnect === false) return;
    const r = this.o.reconnect;
    this.reconnecting = (async () => {
      let last: unknown;
      for (let attempt = 0; attempt < r.maxAttempts && !this.userClosed; attempt++) {
        const delay = Math.min(r.maxDelayMs, r.minDelayMs * 2 ** attempt);
        await new Promise((resolve) => setTimeout(resolve, delay * (0.5 + Math.random() / 2)).unref());
        if (this.userClosed) return;
        try {
          await this.open();
          for (const sub of this.subscriptions) {
            await this.request('subscribe', sub.projectId === undefined ? {} : { project_id: sub.projectId });
          }
          this.emit('reconnected');
          return;
        } catch (err) {
          last = err;
          // Another user's path does not become ours by waiting.
          if (isAgentError(err) && err.code === 'socket_dir_unsafe') break;
        }
      }
      if (!this.userClosed && !this.connected) {
        const unsafe = isAgentError(last) && last.code === 'socket_dir_unsafe';
        const err = unsafe ? (last as AgentError) : new AgentError('not_running', `gave up reconnecting to the agent at ${this.where} after ${r.maxAttempts} attempts`, { cause: last });
        for (const s of [...this.subscriptions]) s.close();
        this.emit('closed', err);
      }
    })().finally(() => {
      this.reconnecting = undefined;
    });
  }

  private onLine(line: string): void {
    let msg: { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    try {
      msg = JSON.parse(line);
    } catch (err) {
      // The agent writes JSON lines only: whatever answers here does not speak the protocol.
      this.unreadable('it sent a line that is not JSON', err);
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.unreadable('it sent JSON that is not a JSON-RPC message');
      return;
    }
    if (msg.method === 'changed' && msg.id === undefined) {
      let state: LicenseState;
      try {
        state = fromWireState(msg.params);
      } catch {
        return;
      }
      this.emit('changed', state);
      for (const s of this.subscriptions) s.deliver(state);
      return;
    }
    if (typeof msg.id !== 'number') return;
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.error !== undefined) {
      const error = ErrorWire.safeParse(msg.error);
      p.reject(error.success ? fromRpcError(error.data as RpcErrorObject) : badAnswer(this.where, 'its error answer is not a JSON-RPC error object', error.error));
    } else if ('result' in msg) p.resolve(msg.result);
    else p.reject(badAnswer(this.where, 'its answer has neither a result nor an error'));
  }

  /** A line no request can be matched with: every pending request fails with `bad_answer`, and the connection is closed. */
  private unreadable(why: string, cause?: unknown): void {
    const err = badAnswer(this.where, why, cause);
    this.failPending(err);
    const socket = this.socket;
    this.socket = undefined;
    socket?.destroy();
    this.emit('disconnected', err);
    if (this.o.reconnect !== false && !this.userClosed) this.startReconnect();
  }

  private failPending(err: AgentError): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(err);
      this.pending.delete(id);
    }
  }
}

/** The one error for an answer that cannot be read, whatever the reason. */
function badAnswer(where: string, why: string, cause?: unknown): AgentError {
  return new AgentError(
    'bad_answer',
    `the agent's answer could not be read: ${why}. The program at ${where} is not the license agent, or not one of this version: stop it, or update the license agent`,
    cause === undefined ? {} : { cause },
  );
}

/** The first problem zod found, as a path and a few words (never the value). */
function issueText(err: z.ZodError): string {
  const issue = err.issues[0];
  if (issue === undefined) return 'unexpected shape';
  const at = issue.path.length > 0 ? issue.path.join('.') : 'the result';
  const more = err.issues.length > 1 ? ` and ${err.issues.length - 1} more` : '';
  return `${at}: ${issue.message}${more}`;
}
