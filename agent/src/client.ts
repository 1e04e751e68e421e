import { EventEmitter } from 'node:events';
import * as z from 'zod';
import { resolveConfig } from '@plugin-license/licensing';
import { AgentConnection, badAnswer, type ReconnectOptions } from './client-connection.js';
import { Subscription } from './client-subscription.js';
import { AgentError, isAgentError } from './errors.js';
import { fromWireState, type LicenseState } from './license-state.js';
import { PROTOCOL_VERSION, type HelloResult, type OfflineRequestResult } from './protocol.js';
import { socketPathOf } from './socket-path.js';

// The calls of agent protocol 1 and their typed answers. The connection under them (connect,
// reconnect, matching answers to requests) is client-connection.ts; a subscription's delivery,
// client-subscription.ts.

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

const HelloWire = z.looseObject({ protocol: z.number(), agent: z.string(), namespace: z.string(), data_dir: z.string().optional(), connections: z.number().optional() });
const ListWire = z.looseObject({ licenses: z.array(z.unknown()) });
const OfflineRequestWire = z.looseObject({ document: z.string(), file_name: z.string() });

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
  readonly #connection: AgentConnection;
  readonly #subscriptions = new Set<Subscription>();
  readonly #clientName: string | undefined;

  private constructor(socketPath: string, options: AgentClientOptions, namespace: string | undefined) {
    super();
    this.socketPath = socketPath;
    this.#clientName = options.clientName;
    const r = options.reconnect ?? true;
    const connection: AgentConnection = new AgentConnection(
      socketPath,
      namespace,
      {
        connectTimeoutMs: options.connectTimeoutMs ?? 1000,
        requestTimeoutMs: options.requestTimeoutMs ?? 15_000,
        reconnect: r === false ? false : { maxAttempts: 8, minDelayMs: 100, maxDelayMs: 5000, ...(r === true ? {} : r) },
      },
      {
        changed: (state) => {
          this.emit('changed', state);
          for (const s of this.#subscriptions) s.deliver(state);
        },
        disconnected: (err) => this.emit('disconnected', err),
        restore: async () => {
          for (const sub of this.#subscriptions) {
            await connection.request('subscribe', sub.projectId === undefined ? {} : { project_id: sub.projectId });
          }
        },
        reconnected: () => this.emit('reconnected'),
        closed: (err) => {
          for (const s of [...this.#subscriptions]) s.close();
          this.emit('closed', err);
        },
      },
    );
    this.#connection = connection;
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
    await client.#connection.open();
    return client;
  }

  /** True while a connection is up. */
  get connected(): boolean {
    return this.#connection.connected;
  }

  /** `hello`: the agent's protocol, version and namespace (and, from agents that send them, its data folder and connection count). */
  async hello(): Promise<HelloResult> {
    const r = this.#read('hello', await this.request('hello', { protocol: PROTOCOL_VERSION, ...(this.#clientName ? { client: this.#clientName } : {}) }), (v) => HelloWire.parse(v));
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
    return this.#read('check', await this.request('check', { project_id: projectId }), fromWireState);
  }

  /** `activate`: activates the code online; the answer carries only a hint of the code. */
  async activate(projectId: string, code: string): Promise<LicenseState> {
    return this.#read('activate', await this.request('activate', { project_id: projectId, code }), fromWireState);
  }

  /** `deactivate`: frees this machine's slot. */
  async deactivate(projectId: string): Promise<LicenseState> {
    return this.#read('deactivate', await this.request('deactivate', { project_id: projectId }), fromWireState);
  }

  /** `refresh`: validates online now, or answers from the cache when the service is unreachable. */
  async refresh(projectId: string): Promise<LicenseState> {
    return this.#read('refresh', await this.request('refresh', { project_id: projectId }), fromWireState);
  }

  /**
   * `offline_request` (added to protocol 1): the offline request as its text line, its nonce
   * stored as pending by the agent, and a file name to suggest. An agent without it throws
   * `agent_outdated`.
   */
  async offlineRequest(projectId: string, code?: string): Promise<OfflineRequestResult> {
    const r = this.#read('offline_request', await this.#newMethod('offline_request', { project_id: projectId, ...(code === undefined ? {} : { code }) }), (v) => OfflineRequestWire.parse(v));
    return { document: r.document, file_name: r.file_name };
  }

  /** `offline_import` (added to protocol 1): imports a response (file contents or its text line); the state after it. */
  async offlineImport(document: string): Promise<LicenseState> {
    return this.#read('offline_import', await this.#newMethod('offline_import', { document }), fromWireState);
  }

  /** `list`: every project the agent holds. */
  async list(): Promise<LicenseState[]> {
    return this.#read('list', await this.request('list', {}), (v) => ListWire.parse(v).licenses.map(fromWireState));
  }

  /**
   * The one way an answer becomes a typed value: one that is not of the protocol's shape is
   * `bad_answer`, in words, never a schema dump (nor the answer itself).
   */
  #read<T>(method: string, value: unknown, parse: (v: unknown) => T): T {
    try {
      return parse(value);
    } catch (err) {
      throw badAnswer(this.#connection.where, `its answer to '${method}' is not of the protocol's shape${err instanceof z.ZodError ? ` (${issueText(err)})` : ''}`, err);
    }
  }

  /**
   * `subscribe`: `changed` notifications for one project, or all when `projectId` is omitted.
   * Every notification is also emitted as `changed` on the client.
   */
  async subscribe(projectId?: string): Promise<Subscription> {
    const sub = new Subscription(projectId, (s) => this.#subscriptions.delete(s));
    // Registered before the answer: a `changed` may follow it in the same read.
    this.#subscriptions.add(sub);
    try {
      await this.request('subscribe', projectId === undefined ? {} : { project_id: projectId });
    } catch (err) {
      this.#subscriptions.delete(sub);
      throw err;
    }
    return sub;
  }

  /** A method added to protocol 1 later: an agent that answers -32601 predates it and needs an update. */
  async #newMethod(method: string, params: Record<string, unknown>): Promise<unknown> {
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
    return this.#connection.request(method, params, options.timeoutMs);
  }

  /** Closes the connection; pending requests reject with `closed`. */
  close(): void {
    this.#connection.close();
  }
}

/** The first problem zod found, as a path and a few words (never the value). */
function issueText(err: z.ZodError): string {
  const issue = err.issues[0];
  if (issue === undefined) return 'unexpected shape';
  const at = issue.path.length > 0 ? issue.path.join('.') : 'the result';
  const more = err.issues.length > 1 ? ` and ${err.issues.length - 1} more` : '';
  return `${at}: ${issue.message}${more}`;
}
