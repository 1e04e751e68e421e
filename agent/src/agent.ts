import { join } from 'node:path';
import type { Logger } from 'pino';
import { connectionRoute, type ServiceClient } from '@plugin-license/api';
import { createLicenseClient, listCachedProjects, listIntentProjects, resolvePaths, type LicensePolicy } from '@plugin-license/licensing';
import { resolveAgentConfig, type AgentConfig, type AgentFlags, type AgentLimits, type LogLevel } from './config.js';
import { AgentError, isAgentError } from './errors.js';
import { LicenseRegistry, type LicenseDefaults } from './license-registry.js';
import { OfflineExchange } from './offline.js';
import { LicenseWatch } from './license-watch.js';
import { LicenseService, describeError } from './license-service.js';
import { createFileLogger, SecretScrubber, silentLogger, type FileLogger } from './logger.js';
import { IdleExit } from './idle-exit.js';
import { createDispatcher } from './methods.js';
import { BackgroundRevalidation } from './revalidation.js';
import { toRpcError } from './rpc-errors.js';
import { systemScheduler, type Scheduler } from './scheduler.js';
import { ServiceBudget } from './service-budget.js';
import { SocketServer, type SocketStats } from './socket-server.js';
import { AGENT_VERSION } from './version.js';

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
  /**
   * Minutes with no client connected and nothing in flight after which the agent closes by
   * itself (`closed` settles); 0 stays. Else `"idle_exit_minutes"` in config.json, else 10.
   */
  idleExitMinutes?: number;
  /** Limits of the socket server and of the service budget. */
  limits?: Partial<AgentLimits>;
  /** Licensing policy overrides (grace period, revalidation interval, back-off). */
  policy?: Partial<LicensePolicy>;
  /** Clock and timers; pass a `ManualScheduler` in tests so nothing sleeps. */
  scheduler?: Scheduler;
  /** Source of jitter in [0, 1). */
  random?: () => number;
  /** Environment to resolve configuration from (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** PEM certificate(s) trusted besides Node's default roots, for a service behind a private CA (`NODE_EXTRA_CA_CERTS` works too, without this). */
  ca?: string | Buffer | Array<string | Buffer>;
  /**
   * Called when the configured route to the service goes through a proxy (at start, and on a
   * reload that sets one), before any request: then undici carries the requests. The executable
   * sets V8's `--liftoff-only` there for undici's WebAssembly parser; an embedding host decides
   * its own flags.
   */
  beforeProxy?: () => void;
}

/** Counters of a running agent (tests and `status` use them). */
export interface AgentStats extends SocketStats {
  projects: number;
}

/** A running agent. */
export interface RunningAgent {
  socketPath: string;
  namespace: string;
  version: string;
  /** The configuration in effect. */
  config(): AgentConfig;
  stats(): AgentStats;
  /** Re-reads configuration (what SIGHUP does); `flags` keep their precedence. A bad one is refused and the current one kept. */
  reload(flags?: AgentFlags): Promise<void>;
  /** Stops accepting, finishes in-flight requests, flushes state, removes the socket. */
  close(): Promise<void>;
  /** Settles once the agent has closed. */
  closed: Promise<void>;
}

const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Starts the agent in this process: settles what an earlier run left unfinished, loads every
 * cached license, and serves protocol 1 on the namespace's socket. Companion apps use it to host
 * the agent in-process; `plugin-license-agent run` uses it too.
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
  const pathOptions = { namespace: config.namespace, ...(config.home ? { home: config.home } : {}) };
  const dataDir = resolvePaths(pathOptions).data;

  const scrubber = new SecretScrubber();
  let fileLogger: FileLogger | undefined;
  if (options.logger === undefined) fileLogger = await createFileLogger({ dir: resolvePaths(pathOptions).log, level: config.logLevel });
  const logger = fileLogger?.logger ?? (options.logger || silentLogger());
  const addSecret = (s: string | undefined): void => [scrubber, fileLogger?.scrubber].forEach((x) => x?.add(s));
  addSecret(config.token);

  // One client (one keep-alive pool) for every project, so the service's rate-limit headers are
  // read in one place and pause the one budget, however many projects the agent holds.
  let client: ServiceClient | undefined;
  // The vendor's license relay, when configured: the activation endpoints go there (one client too).
  let relayClient: ServiceClient | undefined;
  const licenseOptions = (): LicenseDefaults => {
    if (options.beforeProxy && viaProxy(config.proxy)) options.beforeProxy();
    const connection = {
      ...(options.policy ? { policy: options.policy } : {}),
      ...(config.proxy === undefined ? {} : { proxy: config.proxy }),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    };
    client = createLicenseClient({ baseUrl: config.baseUrl as string, ...(config.token ? { token: config.token } : {}), ...connection });
    relayClient = config.relayUrl === undefined ? undefined : createLicenseClient({ baseUrl: config.relayUrl, ...connection });
    return {
      baseUrl: config.baseUrl as string,
      ...pathOptions,
      client,
      ...(relayClient === undefined ? {} : { relayClient }),
      ticketKeys: config.ticketKeys,
      now: () => scheduler.now(),
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.random ? { random: options.random } : {}),
      offlinePublicKeys: config.offlinePublicKeys,
    };
  };
  const budget = new ServiceBudget({ perMinute: config.limits.serviceBudgetPerMinute, reserve: config.limits.serviceReserve, now: () => scheduler.now() });
  const registry = new LicenseRegistry({ licenseOptions: licenseOptions(), logger });
  const service = new LicenseService({ registry, budget, scheduler, logger, client: () => client, budgetPerMinute: () => config.limits.serviceBudgetPerMinute });
  const offline = new OfflineExchange({
    registry,
    logger,
    paths: () => pathOptions,
    rules: () => ({ offlinePublicKeys: config.offlinePublicKeys, offlineMaxDays: config.offlineMaxDays, ticketKeys: config.ticketKeys }),
    now: () => scheduler.now(),
  });
  const revalidation = new BackgroundRevalidation({ registry, scheduler, budget, ...(options.random ? { random: options.random } : {}), validate: (id, why) => service.background(id, why) });
  // Started after the socket listens; it counts from whatever ended last.
  const idle: IdleExit = new IdleExit({
    minutes: config.idleExitMinutes,
    scheduler,
    busy: () => server.stats().connections > 0 || server.inFlightCount > 0 || registry.inUse,
    exit: () => {
      logger.info({ idleExitMinutes: config.idleExitMinutes }, 'no client and nothing in flight for the idle time: exiting');
      void close();
    },
  });
  registry.on('quiet', () => idle.touch());
  const server: SocketServer = new SocketServer({
    socketPath: config.socketPath,
    namespace: config.namespace,
    limits: () => config.limits,
    scheduler,
    logger,
    ended: () => idle.touch(),
    dispatch: createDispatcher({ registry, service, offline, logger, loaded: (id) => revalidation.loaded(id), namespace: () => config.namespace, dataDir: () => dataDir, connections: (): number => server.stats().connections, secret: addSecret, shutdown: () => void close() }),
    toError: (err) => {
      const known = isAgentError(err) || (typeof err === 'object' && err !== null && (err as Error).name === 'LicenseError');
      if (!known) logger.error({ err: describeError(err) }, 'unexpected error while handling a request');
      return toRpcError(err, (s) => scrubber.scrub(s));
    },
  });
  registry.on('changed', (state) => server.notify(state));
  // Another process's import, release or activation reaches memory and subscribers within a second.
  const watcher = new LicenseWatch({
    dir: join(dataDir, 'licenses'),
    logger,
    changed: (id) => void registry.reload(id).catch((err: unknown) => logger.warn({ projectId: id, err: describeError(err) }, 'could not read a changed license file')),
  });

  const stopAll = async (): Promise<void> => {
    watcher.stop();
    revalidation.stop();
    await registry.close();
    await client?.close();
    await relayClient?.close();
  };
  try {
    // What an earlier run left unfinished is settled with the service first (no slot lost or
    // kept by mistake); then every cached license is loaded, so the first `check` answers from memory.
    await service.settle(await listIntentProjects(join(dataDir, 'licenses')).catch(() => []));
    await watcher.start();
    for (const id of await listCachedProjects(pathOptions).catch(() => [])) registry.state(id);
    await server.listen();
  } catch (err) {
    await stopAll();
    await fileLogger?.close();
    throw err;
  }
  logger.info({ socketPath: config.socketPath, namespace: config.namespace, version: AGENT_VERSION, projects: registry.size, idleExitMinutes: config.idleExitMinutes }, 'agent listening');
  idle.start();

  let closing: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      idle.stop();
      logger.info({ inFlight: server.inFlightCount }, 'agent stopping');
      await server.close(SHUTDOWN_GRACE_MS, () => service.abort());
      await stopAll();
      logger.info('agent stopped');
      await fileLogger?.close();
      resolveClosed();
    })());

  async function reload(extra: AgentFlags = {}): Promise<void> {
    let next: AgentConfig;
    try {
      next = withLimits(resolveAgentConfig({ ...flags, ...extra }, env), options.limits);
    } catch (err) {
      logger.warn({ err: describeError(err) }, 'reload refused, keeping the current configuration');
      throw err;
    }
    if (next.socketPath !== config.socketPath) logger.warn({ socketPath: next.socketPath }, 'socket path changes need a restart; keeping the current one');
    if (!next.baseUrl) {
      logger.warn('reload refused, keeping the current configuration: the new one has no base URL');
      throw new AgentError('config_invalid', `the new configuration has no service base URL (${next.configFile}); keeping the current one`);
    }
    const serviceChanged =
      next.baseUrl !== config.baseUrl ||
      next.token !== config.token ||
      next.proxy !== config.proxy ||
      next.offlinePublicKeys.join() !== config.offlinePublicKeys.join() ||
      next.relayUrl !== config.relayUrl ||
      next.ticketKeys.join() !== config.ticketKeys.join();
    config = { ...next, socketPath: config.socketPath };
    addSecret(config.token);
    fileLogger?.setLevel(config.logLevel);
    budget.configure(config.limits.serviceBudgetPerMinute, config.limits.serviceReserve);
    server.reconfigure(config.limits);
    if (serviceChanged) {
      const previous = [client, relayClient];
      await registry.reconfigure(licenseOptions());
      for (const c of previous) await c?.close();
    }
    logger.info({ baseUrl: config.baseUrl, logLevel: config.logLevel, limits: config.limits }, 'configuration reloaded');
  }

  return {
    socketPath: config.socketPath,
    namespace: config.namespace,
    version: AGENT_VERSION,
    config: () => config,
    stats: () => ({ ...server.stats(), projects: registry.size }),
    reload,
    close,
    closed,
  };
}

function flagsFromOptions(o: AgentOptions): AgentFlags {
  const f: AgentFlags = {};
  if (o.namespace !== undefined) f.app = o.namespace;
  if (o.home !== undefined) f.home = o.home;
  if (o.baseUrl !== undefined) f.baseUrl = o.baseUrl;
  if (o.token !== undefined) f.token = o.token;
  if (o.socketPath !== undefined) f.socket = o.socketPath;
  if (o.logLevel !== undefined) f.logLevel = o.logLevel;
  if (o.idleExitMinutes !== undefined) f.idleExitMinutes = o.idleExitMinutes;
  return f;
}

function withLimits(config: AgentConfig, limits: Partial<AgentLimits> | undefined): AgentConfig {
  if (!limits) return config;
  const defined = Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined));
  return { ...config, limits: { ...config.limits, ...defined } };
}

/** True when requests to the service go through a proxy; a bad proxy URL is the client's to report. */
function viaProxy(proxy: string | false | undefined): boolean {
  try {
    return connectionRoute(proxy === undefined ? {} : { proxy }).via !== 'direct';
  } catch {
    return false;
  }
}
