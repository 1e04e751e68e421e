import type { Logger } from 'pino';
import type * as z from 'zod';
import { AgentError } from './errors.js';
import type { Connection } from './connection.js';
import type { LicenseRegistry } from './license-registry.js';
import type { LicenseService } from './license-service.js';
import type { LicenseStateWire } from './license-state.js';
import { hintOf } from './logger.js';
import type { OfflineExchange } from './offline.js';
import {
  ActivateParams,
  HelloParams,
  ListParams,
  METHODS,
  OfflineImportParams,
  OfflineRequestParams,
  PROTOCOL_VERSION,
  ProjectParams,
  RpcErrorCode,
  ShutdownParams,
  SubscribeParams,
  describeIssues,
  type HelloResult,
  type RpcRequest,
  type ShutdownResult,
} from './protocol.js';
import { AGENT_VERSION } from './version.js';

export interface MethodDeps {
  registry: LicenseRegistry;
  service: LicenseService;
  offline: OfflineExchange;
  logger: Logger;
  namespace: () => string;
  /** Connections open now, the asking one included (reported by `hello`). */
  connections: () => number;
  /** The data folder of the licenses served (reported by `hello`). */
  dataDir: () => string;
  /** Registers a code seen on the socket, so no log line or error message shows it in full. */
  secret: (code: string) => void;
  /** Stops the agent as SIGTERM does (in-flight answers are written first). */
  shutdown: () => void;
  /** A client's first `check` or `subscribe` of a project (a plugin loading it), after its answer was made. */
  loaded: (projectId: string) => void;
}

/** Most projects one connection may subscribe to by id (a subscription to all is one). */
export const MAX_SUBSCRIPTIONS = 256;

interface Method<S extends z.ZodType> {
  params: S;
  /** Needs the network: counted against the connection's requests in flight. */
  slow?: boolean;
  run(params: z.infer<S>, connection: Connection): unknown;
}

const method = <S extends z.ZodType>(m: Method<S>): Method<S> => m;

/** Anything code-like (a UUID, a long hex or base64 run) in free text a client sent, as a hint. */
function maskCodes(text: string): string {
  return text.replace(/[0-9A-Za-z][0-9A-Za-z_-]{15,}/g, (m) => hintOf(m));
}

/**
 * Protocol 1's methods, each with its params schema; `dispatch` answers a request (a value or a
 * promise) or throws an error the connection turns into a JSON-RPC error.
 */
export function createDispatcher(deps: MethodDeps): (connection: Connection, request: RpcRequest) => unknown {
  const { registry, service, logger } = deps;
  /** The state from memory; a connection's first ask about the project is a load, told after the answer is made. */
  const stateFor = (connection: Connection, projectId: string): LicenseStateWire => {
    const state = registry.state(projectId);
    if (connection.firstAsk(projectId)) deps.loaded(projectId);
    return state;
  };
  const table: Record<(typeof METHODS)[number], Method<z.ZodType>> = {
    hello: method({
      params: HelloParams,
      run(p: HelloParams, connection): HelloResult {
        // A client name is free text: a code pasted into it must not reach the log.
        if (p.client) logger.debug({ connection: connection.id, client: maskCodes(p.client.slice(0, 80)) }, 'hello');
        return { protocol: PROTOCOL_VERSION, agent: AGENT_VERSION, namespace: deps.namespace(), data_dir: deps.dataDir(), connections: deps.connections() };
      },
    }),
    check: method({ params: ProjectParams, run: (p: ProjectParams, connection) => stateFor(connection, p.project_id) }),
    list: method({ params: ListParams, run: () => ({ licenses: registry.list() }) }),
    subscribe: method({
      params: SubscribeParams,
      run(p: z.infer<typeof SubscribeParams>, connection) {
        if (p.project_id === undefined) {
          connection.subscription = '*';
        } else if (connection.subscription !== '*') {
          const id = p.project_id.toLowerCase();
          const ids: Set<string> = connection.subscription ?? new Set();
          connection.subscription = ids;
          if (!ids.has(id) && ids.size >= MAX_SUBSCRIPTIONS) {
            throw new AgentError('over_limit', `this connection already follows ${MAX_SUBSCRIPTIONS} projects; subscribe without project_id to follow all of them`, {
              limit: 'subscriptions',
            });
          }
          stateFor(connection, id);
          ids.add(id);
        }
        return { subscribed: true };
      },
    }),
    activate: method({
      params: ActivateParams,
      slow: true,
      run(p: ActivateParams) {
        deps.secret(p.code);
        const id = p.project_id.toLowerCase();
        logger.info({ projectId: id, codeHint: hintOf(p.code) }, 'activation requested');
        return service.activate(id, p.code);
      },
    }),
    deactivate: method({ params: ProjectParams, slow: true, run: (p: ProjectParams) => service.deactivate(p.project_id.toLowerCase()) }),
    refresh: method({ params: ProjectParams, slow: true, run: (p: ProjectParams) => service.refresh(p.project_id.toLowerCase()) }),
    // Local files under the cache lock, no network; slow only in that the lock may be waited on.
    offline_request: method({
      params: OfflineRequestParams,
      slow: true,
      run(p: OfflineRequestParams) {
        if (p.code != null) deps.secret(p.code);
        return deps.offline.request(p.project_id.toLowerCase(), p.code ?? undefined);
      },
    }),
    offline_import: method({ params: OfflineImportParams, slow: true, run: (p: OfflineImportParams) => deps.offline.import(p.document) }),
    // Only this user can connect (the socket is 0600 in a 0700 folder): asking the agent to stop
    // is what lets an uninstaller stop one it did not start, with no pid file and no signal.
    shutdown: method({
      params: ShutdownParams,
      run(_p: unknown, connection): ShutdownResult {
        logger.info({ connection: connection.id }, 'shutdown requested on the socket');
        setImmediate(deps.shutdown);
        return { stopping: true, pid: process.pid };
      },
    }),
  };

  // Project ids already validated: `check` is the hot path and sees the same few ids.
  const knownIds = new Set<string>();

  return (connection, request) => {
    const m = Object.hasOwn(table, request.method) ? table[request.method as keyof typeof table] : undefined;
    if (!m) {
      throw new AgentError('method_not_found', `method not found: '${request.method.slice(0, 64)}'; protocol 1 has ${METHODS.join(', ')}`, {
        rpcCode: RpcErrorCode.methodNotFound,
      });
    }
    if (request.method === 'check') {
      const raw = request.params as { project_id?: unknown } | null | undefined;
      if (typeof raw === 'object' && raw !== null && !Array.isArray(raw) && typeof raw.project_id === 'string' && knownIds.has(raw.project_id)) {
        return stateFor(connection, raw.project_id);
      }
    }
    const params = parseParams(m.params, request.params);
    if (request.method === 'check') {
      if (knownIds.size >= 4096) knownIds.clear();
      knownIds.add((params as ProjectParams).project_id);
    }
    if (m.slow && !connection.canStartSlowRequest()) {
      throw new AgentError('over_limit', 'too many requests in flight on this connection; wait for answers before sending more', { limit: 'in_flight' });
    }
    return m.run(params, connection);
  };
}

function parseParams<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
  if (Array.isArray(raw)) throw new AgentError('invalid_params', 'invalid params: params must be an object with named fields, e.g. {"project_id":"…"}');
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success) throw new AgentError('invalid_params', `invalid params: ${describeIssues(parsed.error)}`);
  return parsed.data;
}
