import { createServer, type Server, type Socket } from 'node:net';
import { isMainThread } from 'node:worker_threads';
import { setMaxListeners } from 'node:events';
import { chmodSync } from 'node:fs';
import type { Logger } from 'pino';
import type { ServiceClient } from '@plugin-license/api';
import { createLicenseClient, DEFAULT_POLICY, listCachedProjects, resolvePaths, type LicensePolicy } from '@plugin-license/licensing';
import { resolveAgentConfig, type AgentConfig, type AgentFlags, type AgentLimits, type LogLevel } from './config.js';
import { Connection, type ConnectionHost } from './connection.js';
import { AgentError, isAgentError } from './errors.js';
import { defaultLicenseFactory } from './default-license-factory.js';
import type { LicenseFactory, LicenseStatusLike } from './license-handle.js';
import { LicenseRegistry } from './license-registry.js';
import type { LicenseStateWire } from './license-state.js';
import { createFileLogger, hintOf, SecretScrubber, silentLogger, type FileLogger } from './logger.js';
import { ActivateParams, HelloParams, ProjectParams, PROTOCOL_VERSION, RpcErrorCode, SubscribeParams, describeIssues, type HelloResult, type RpcRequest } from './protocol.js';
import { Revalidator, type Outcome } from './revalidator.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { ServiceBudget } from './service-budget.js';
import { toRpcError } from './rpc-errors.js';
import { isPipePath } from './socket-path.js';
import { prepareSocketDir, probeSocket, removeSocketFile } from './socket-dir.js';
import { AGENT_VERSION } from './version.js';
import type { z } from 'zod';

/** Options of {@link startAgent}; unset ones follow flag > environment > config file > default. */
export interface AgentOptions {
  /** Service base URL, ending in `/functions/v1` (else `PLUGIN_LICENSE_BASE_URL`, else config.json). */
  baseUrl?: string;
  /** Bearer token, when the activation endpoints need one. */
  token?: string;
  /** Namespace (`PLUGIN_LICENSE_APP`, default `plugin-license`). */
  namespace?: string;
  /** One root folder for config, data, cache and logs (`PLUGIN_LICENSE_HOME`). */
  home?: string;
  /** Socket path or Windows pipe name (`PLUGIN_LICENSE_SOCKET`, else the protocol's default). */
  socketPath?: string;
  /** Log level of the file log (`PLUGIN_LICENSE_LOG_LEVEL`, default info). */
  logLevel?: LogLevel;
  /** A pino logger to use instead of the rotated file log; `false` logs nothing. */
  logger?: Logger | false;
  /** Limits of the socket server and of the service budget. */
  limits?: Partial<AgentLimits>;
  /** Licensing policy overrides (grace period, revalidation interval, back-off). */
  policy?: Partial<LicensePolicy>;
  /** Clock and timers; pass a `ManualScheduler` in tests so nothing sleeps. */
  scheduler?: Scheduler;
  /** Source of jitter in [0, 1). */
  random?: () => number;
  /** Creates the `License` of a project; defaults to `@plugin-license/licensing`'s `License`. */
  licenseFactory?: LicenseFactory;
  /** Environment to resolve configuration from (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** Counters of a running agent (tests and `status` use them). */
export interface AgentStats {
  connections: number;
  subscribers: number;
  projects: number;
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

/** A running agent. */
export interface RunningAgent {
  socketPath: string;
  namespace: string;
  version: string;
  /** The configuration in effect. */
  config(): AgentConfig;
  stats(): AgentStats;
  /** Re-reads configuration (what SIGHUP does); `flags` keep their precedence. */
  reload(flags?: AgentFlags): Promise<void>;
  /** Stops accepting, finishes in-flight requests, flushes state, removes the socket. */
  close(): Promise<void>;
  /** Settles once the agent has closed. */
  closed: Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;
const LISTEN_BACKLOG = 2048;

/**
 * Starts the agent in this process: listens on the namespace's socket and serves protocol 1.
 * Companion apps use it to host the agent in-process; `plugin-license-agent run` uses it too.
 *
 * @example
 * const agent = await startAgent({ baseUrl: 'https://example.com/functions/v1', namespace: 'acme-audio' });
 * console.log(agent.socketPath);
 * await agent.close();
 */
export async function startAgent(options: AgentOptions = {}): Promise<RunningAgent> {
  const env = options.env ?? process.env;
  const flags = flagsFromOptions(options);
  let config = withLimits(resolveAgentConfig(flags, env), options.limits);
  if (!config.baseUrl) {
    throw new AgentError('config_invalid', `no service base URL: pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${config.configFile}`);
  }
  const scheduler = options.scheduler ?? systemScheduler;
  const random = options.random ?? Math.random;
  const policy = { ...DEFAULT_POLICY, ...options.policy };
  const socketPath = config.socketPath;

  let fileLogger: FileLogger | undefined;
  let logger: Logger;
  const scrubber = new SecretScrubber();
  if (options.logger === false) {
    logger = silentLogger();
  } else if (options.logger) {
    logger = options.logger;
  } else {
    fileLogger = await createFileLogger({ dir: resolvePaths({ namespace: config.namespace, ...(config.home ? { home: config.home } : {}) }).log, level: config.logLevel });
    logger = fileLogger.logger;
  }
  const scrubbers = [scrubber, ...(fileLogger ? [fileLogger.scrubber] : [])];
  const addSecret = (s: string | undefined): void => scrubbers.forEach((x) => x.add(s));
  addSecret(config.token);

  try {
    if (!isPipePath(socketPath)) prepareSocketDir(socketPath);
    const probe = await probeSocket(socketPath);
    if (probe === 'live') {
      throw new AgentError('socket_in_use', `another agent is already running on ${socketPath} (namespace '${config.namespace}'); stop it first, or run this one with another namespace or socket path`, { path: socketPath });
    }
    if (probe === 'stale') {
      logger.warn({ socketPath }, 'removing a stale socket left by an agent that did not stop cleanly');
      removeSocketFile(socketPath);
    }
  } catch (err) {
    await fileLogger?.close();
    throw err;
  }

  const now = (): number => scheduler.now();
  const budget = new ServiceBudget({ perMinute: config.limits.serviceBudgetPerMinute, reserve: config.limits.serviceReserve, now: () => scheduler.now() });
  const factory = options.licenseFactory ?? defaultLicenseFactory(options.policy);
  // One client (one keep-alive pool) for every project, so the service's rate-limit headers are
  // read in one place and pause the one budget, however many projects the agent holds.
  let serviceClient: ServiceClient | undefined;
  const factoryOptions = () => {
    serviceClient = createLicenseClient({ baseUrl: config.baseUrl as string, ...(config.token ? { token: config.token } : {}), policy });
    return { baseUrl: config.baseUrl as string, namespace: config.namespace, home: config.home, token: config.token, now, client: serviceClient };
  };
  /** The service said nothing is left in this window: every request waits for its reset. */
  const noteRateLimit = (): void => {
    const rl = serviceClient?.rateLimit;
    if (rl && rl.remaining <= 0) budget.pauseUntil(rl.resetAt.getTime());
  };
  const registry = new LicenseRegistry({ factory, factoryOptions: factoryOptions(), logger });
  const shutdown = new AbortController();
  // Every service call listens on this one signal; many at once is normal here, not a leak.
  setMaxListeners(0, shutdown.signal);

  const revalidator = new Revalidator({
    scheduler,
    budget,
    random,
    policy,
    validate: async (projectId) => {
      const license = registry.license(projectId);
      const release = registry.hold(projectId);
      try {
        const status = await license.validate({ signal: shutdown.signal });
        noteRateLimit();
        const outcome = outcomeOf(status);
        logger.info({ projectId, outcome: outcome.kind, valid: status.valid, reason: status.reason, codeHint: status.codeHint }, 'background validation');
        registry.refreshState(projectId, status);
        return outcome;
      } catch (err) {
        noteRateLimit();
        const outcome = failureOutcome(err);
        logger.warn({ projectId, outcome: outcome.kind, err: describeError(err) }, 'background validation failed');
        registry.refreshState(projectId);
        return outcome;
      } finally {
        release();
      }
    },
    onGraceDeadline: (projectId) => {
      logger.info({ projectId }, 'grace deadline reached');
      registry.refreshState(projectId);
    },
  });
  registry.revalidator = revalidator;

  const connections = new Set<Connection>();
  const inFlight = new Set<Promise<unknown>>();
  let nextId = 1;

  registry.on('changed', (state) => {
    for (const c of connections) {
      const sub = c.subscription;
      if (sub === '*' || (sub !== null && sub.has(state.project_id))) c.notify('changed', state);
    }
  });

  const host: ConnectionHost = {
    limits: () => config.limits,
    scheduler,
    track(promise) {
      inFlight.add(promise);
      void promise.finally(() => inFlight.delete(promise));
    },
    closed(connection) {
      connections.delete(connection);
      logger.debug({ connection: connection.id, connections: connections.size }, 'connection closed');
    },
    toError: (err) => {
      if (!isAgentError(err) && !(typeof err === 'object' && err !== null && (err as Error).name === 'LicenseError')) {
        logger.error({ err: describeError(err) }, 'unexpected error while handling a request');
      }
      return toRpcError(err, (s) => scrubber.scrub(s));
    },
    dispatch: (connection, request) => dispatch(connection, request),
  };

  // Project ids already validated by zod: `check` is the hot path and sees the same few ids.
  const knownIds = new Set<string>();
  function checkProjectId(raw: unknown): string {
    const p = raw as { project_id?: unknown } | undefined;
    if (typeof p === 'object' && p !== null && !Array.isArray(p) && typeof p.project_id === 'string' && knownIds.has(p.project_id)) return p.project_id;
    const id = params(ProjectParams, raw).project_id;
    if (knownIds.size >= 4096) knownIds.clear();
    knownIds.add(id);
    return id;
  }

  function params<T extends z.ZodType>(schema: T, raw: unknown): z.infer<T> {
    if (Array.isArray(raw)) throw new AgentError('invalid_params', 'invalid params: params must be an object with named fields, e.g. {"project_id":"…"}');
    const parsed = schema.safeParse(raw ?? {});
    if (!parsed.success) throw new AgentError('invalid_params', `invalid params: ${describeIssues(parsed.error)}`);
    return parsed.data;
  }

  function takeBudget(projectId: string): void {
    if (budget.take('user')) return;
    const at = budget.availableAt('user');
    if (budget.pausedUntilTime > scheduler.now()) {
      throw new AgentError('service_refused', `the license service asked to wait until ${new Date(at).toISOString()} (rate limited); retry then`, {
        serviceCode: 'rate_limited',
        status: 429,
        retryAt: new Date(at),
      });
    }
    logger.warn({ projectId }, 'user request refused: agent-wide service budget used up');
    throw new AgentError('over_limit', `the agent's budget of ${config.limits.serviceBudgetPerMinute} service requests a minute is used up; retry after ${new Date(at).toISOString()}`, {
      limit: 'service_budget',
      retryAt: new Date(at),
    });
  }

  function slowCall(connection: Connection): void {
    if (!connection.canStartSlowRequest()) {
      throw new AgentError('over_limit', 'too many requests in flight on this connection; wait for answers before sending more', { limit: 'in_flight' });
    }
  }

  async function serviceCall(projectId: string, call: () => Promise<LicenseStatusLike>, what: string): Promise<LicenseStateWire> {
    takeBudget(projectId);
    const release = registry.hold(projectId);
    try {
      const status = await call();
      noteRateLimit();
      const outcome = outcomeOf(status);
      logger.info({ projectId, valid: status.valid, reason: status.reason, source: status.source, codeHint: status.codeHint }, what);
      return registry.settle(projectId, outcome, status);
    } catch (err) {
      noteRateLimit();
      const outcome = failureOutcome(err);
      logger.warn({ projectId, err: describeError(err) }, `${what} failed`);
      registry.settle(projectId, outcome.kind === 'failed' && isServiceAnswer(err) ? { kind: 'answered' } : outcome, undefined);
      if (outcome.kind === 'rate_limited' && outcome.retryAt !== undefined) budget.pauseUntil(outcome.retryAt);
      throw err;
    } finally {
      release();
    }
  }

  const refreshing = new Map<string, Promise<LicenseStateWire>>();

  function dispatch(connection: Connection, request: RpcRequest): unknown {
    switch (request.method) {
      case 'hello': {
        const p = params(HelloParams, request.params);
        if (p.client) logger.debug({ connection: connection.id, client: p.client.slice(0, 80) }, 'hello');
        const result: HelloResult = { protocol: PROTOCOL_VERSION, agent: AGENT_VERSION, namespace: config.namespace };
        return result;
      }
      case 'check':
        return registry.state(checkProjectId(request.params));
      case 'list':
        params(ProjectParamsOrEmpty, request.params);
        return { licenses: registry.list() };
      case 'subscribe': {
        const p = params(SubscribeParams, request.params);
        if (p.project_id === undefined) {
          connection.subscription = '*';
        } else {
          const id = p.project_id.toLowerCase();
          registry.state(id);
          if (connection.subscription !== '*') {
            connection.subscription ??= new Set();
            connection.subscription.add(id);
          }
        }
        return { subscribed: true };
      }
      case 'activate': {
        const p = params(ActivateParams, request.params);
        addSecret(p.code);
        slowCall(connection);
        const id = p.project_id.toLowerCase();
        const license = registry.license(id);
        logger.info({ projectId: id, codeHint: hintOf(p.code) }, 'activation requested');
        return serviceCall(id, () => license.activate(p.code, { signal: shutdown.signal }), 'activation');
      }
      case 'deactivate': {
        const p = params(ProjectParams, request.params);
        const id = p.project_id.toLowerCase();
        const license = registry.license(id);
        if (!license.check().codeHint) return registry.state(id);
        slowCall(connection);
        return serviceCall(id, () => license.deactivate({ signal: shutdown.signal }), 'deactivation');
      }
      case 'refresh': {
        const p = params(ProjectParams, request.params);
        const id = p.project_id.toLowerCase();
        const license = registry.license(id);
        if (!license.check().codeHint) return registry.state(id);
        // Many plugin instances refreshing one project at once share one request.
        const running = refreshing.get(id);
        if (running) return running;
        slowCall(connection);
        // An explicit refresh asks the service now (force: past the library's 5-minute floor and
        // back-off, which pace background checks); the agent's one budget still bounds it.
        const refresh = serviceCall(id, () => license.validate({ signal: shutdown.signal, force: true }), 'refresh')
          .catch((err: unknown) => {
            // Offline, or the service (or the agent's budget) says wait: the protocol answers
            // refresh from the cache; the background schedule asks again later.
            if (isUnavailable(err) || isBudgetRefusal(err)) return registry.state(id);
            throw err;
          })
          .finally(() => refreshing.delete(id));
        refreshing.set(id, refresh);
        return refresh;
      }
      default:
        throw new AgentError('method_not_found', `method not found: '${request.method.slice(0, 64)}'; protocol 1 has hello, check, activate, deactivate, refresh, list, subscribe`, {
          rpcCode: RpcErrorCode.methodNotFound,
        });
    }
  }

  // Load every cached project before listening, so the first `check` already answers from memory.
  let cached: string[] = [];
  try {
    cached = await listCachedProjects({ namespace: config.namespace, ...(config.home ? { home: config.home } : {}) });
  } catch (err) {
    logger.error({ err: describeError(err) }, 'cannot list cached licenses; starting with none');
  }
  for (const id of cached) {
    try {
      registry.state(id);
    } catch (err) {
      logger.error({ projectId: id, err: describeError(err) }, 'cannot load a cached license');
    }
  }

  let closing = false;
  const server: Server = createServer({ allowHalfOpen: false, pauseOnConnect: false });
  server.on('connection', (socket: Socket) => {
    const connection = new Connection(nextId++, socket, host);
    if (closing || connections.size >= config.limits.maxConnections) {
      logger.warn({ connections: connections.size, max: config.limits.maxConnections }, 'connection refused: over the connection limit');
      connection.refuse('connections', closing ? 'the agent is shutting down; reconnect in a moment' : `the agent is at its limit of ${config.limits.maxConnections} connections; close unused connections and retry`);
      return;
    }
    connections.add(connection);
    logger.debug({ connection: connection.id, connections: connections.size }, 'connection accepted');
  });
  server.on('error', (err) => logger.error({ err: describeError(err) }, 'socket server error'));

  try {
    await listen(server, socketPath);
  } catch (err) {
    revalidator.stop();
    await registry.close();
    await serviceClient?.close();
    await fileLogger?.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new AgentError('socket_in_use', `another agent started on ${socketPath} at the same time; stop it first or choose another socket path`, { path: socketPath, cause: err });
    }
    throw new AgentError('internal_error', `cannot listen on ${socketPath}: ${(err as Error).message}`, { path: socketPath, cause: err });
  }
  logger.info({ socketPath, namespace: config.namespace, version: AGENT_VERSION, projects: registry.size }, 'agent listening');

  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));

  async function close(): Promise<void> {
    if (closing) return closed;
    closing = true;
    logger.info({ inFlight: inFlight.size }, 'agent stopping');
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Finish what is in flight (bounded), then abort the rest.
    const grace = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref());
    await Promise.race([Promise.allSettled([...inFlight]), grace]);
    shutdown.abort();
    revalidator.stop();
    for (const c of connections) c.end();
    await Promise.race([serverClosed, new Promise<void>((resolve) => setTimeout(resolve, 3_000).unref())]);
    for (const c of connections) c.socket.destroy();
    await registry.close();
    await serviceClient?.close();
    try {
      removeSocketFile(socketPath);
    } catch (err) {
      logger.warn({ err: describeError(err) }, 'could not remove the socket file');
    }
    logger.info('agent stopped');
    await fileLogger?.close();
    resolveClosed();
  }

  async function reload(extra: AgentFlags = {}): Promise<void> {
    const next = withLimits(resolveAgentConfig({ ...flags, ...extra }, env), options.limits);
    if (next.socketPath !== config.socketPath) logger.warn({ socketPath: next.socketPath }, 'socket path changes need a restart; keeping the current one');
    if (!next.baseUrl) {
      logger.warn('reload ignored: the new configuration has no base URL');
      return;
    }
    const serviceChanged = next.baseUrl !== config.baseUrl || next.token !== config.token;
    config = { ...next, socketPath: config.socketPath };
    addSecret(config.token);
    fileLogger?.setLevel(config.logLevel);
    budget.configure(config.limits.serviceBudgetPerMinute, config.limits.serviceReserve);
    for (const c of connections) c.reconfigure(config.limits);
    if (serviceChanged) {
      const previous = serviceClient;
      await registry.reconfigure(factoryOptions());
      await previous?.close();
    }
    logger.info({ baseUrl: config.baseUrl, logLevel: config.logLevel, limits: config.limits }, 'configuration reloaded');
  }

  return {
    socketPath,
    namespace: config.namespace,
    version: AGENT_VERSION,
    config: () => config,
    stats() {
      let pendingWriteBytes = 0;
      let maxPendingWriteBytes = 0;
      let pendingReadBytes = 0;
      let pausedConnections = 0;
      let subscribers = 0;
      for (const c of connections) {
        pendingWriteBytes += c.pendingWriteBytes;
        maxPendingWriteBytes = Math.max(maxPendingWriteBytes, c.pendingWriteBytes);
        pendingReadBytes += c.pendingReadBytes;
        if (c.isPaused) pausedConnections += 1;
        if (c.subscription !== null) subscribers += 1;
      }
      return { connections: connections.size, subscribers, projects: registry.size, inFlight: inFlight.size, pendingWriteBytes, maxPendingWriteBytes, pendingReadBytes, pausedConnections };
    },
    reload,
    close,
    closed,
  };
}

const ProjectParamsOrEmpty = ProjectParams.partial();

function flagsFromOptions(o: AgentOptions): AgentFlags {
  const f: AgentFlags = {};
  if (o.namespace !== undefined) f.app = o.namespace;
  if (o.home !== undefined) f.home = o.home;
  if (o.baseUrl !== undefined) f.baseUrl = o.baseUrl;
  if (o.token !== undefined) f.token = o.token;
  if (o.socketPath !== undefined) f.socket = o.socketPath;
  if (o.logLevel !== undefined) f.logLevel = o.logLevel;
  return f;
}

function withLimits(config: AgentConfig, limits: Partial<AgentLimits> | undefined): AgentConfig {
  if (!limits) return config;
  const defined = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  return { ...config, limits: { ...config.limits, ...defined } };
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
    const options = { path, backlog: LISTEN_BACKLOG };
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

interface ErrorLike {
  name?: string;
  code?: string;
  retryAt?: Date;
  status?: number;
  message?: string;
}

/**
 * The licensing library reports transport failures (offline, 5xx, 429) of `validate()` as a
 * state resting on the cache, with its back-off (and the service's retry time) as `nextCheckAt`.
 */
function outcomeOf(status: LicenseStatusLike): Outcome {
  const retryAt = status.nextCheckAt?.getTime();
  if (status.source === 'online' || !status.codeHint) return retryAt === undefined ? { kind: 'answered' } : { kind: 'answered', nextAt: retryAt };
  return retryAt === undefined ? { kind: 'failed' } : { kind: 'failed', retryAt };
}

function failureOutcome(err: unknown): Outcome {
  const e = (err ?? {}) as ErrorLike;
  const retryAt = e.retryAt instanceof Date ? e.retryAt.getTime() : undefined;
  if (e.code === 'rate_limited') return retryAt === undefined ? { kind: 'rate_limited' } : { kind: 'rate_limited', retryAt };
  return retryAt === undefined ? { kind: 'failed' } : { kind: 'failed', retryAt };
}

/** The service gave a definitive answer (a refusal), as opposed to not answering. */
function isServiceAnswer(err: unknown): boolean {
  const code = (err as ErrorLike | undefined)?.code;
  return code === 'invalid_code' || code === 'code_not_found' || code === 'code_revoked' || code === 'max_activations_reached' || code === 'not_activated';
}

function isBudgetRefusal(err: unknown): boolean {
  return isAgentError(err) && (err.code === 'over_limit' || (err.code === 'service_refused' && err.serviceCode === 'rate_limited'));
}

function isUnavailable(err: unknown): boolean {
  return (err as ErrorLike | undefined)?.code === 'unavailable';
}

function describeError(err: unknown): Record<string, unknown> {
  const e = (err ?? {}) as ErrorLike;
  return { name: e.name, errCode: e.code, status: e.status, message: e.message };
}
