import * as z from 'zod';
import { isLicenseError, resolveConfig, type ResolvedConfig, type ResolveOptions } from '@plugin-license/licensing';
import { AgentError } from './errors.js';
import { socketPathOf } from './socket-path.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Limits of the socket server; every one can be changed by SIGHUP. */
export interface AgentLimits {
  /** Most simultaneous connections; the next one gets -32003 and is closed. */
  maxConnections: number;
  /** A connection that completes no request for this long is closed (subscribers are exempt). */
  idleTimeoutMs: number;
  /** Requests per second per connection (token bucket refill). */
  requestRate: number;
  /** Requests a connection may send in a burst. */
  requestBurst: number;
  /** Bytes of unsent answers per connection above which the agent stops reading from it. */
  writeBufferBytes: number;
  /** Requests to the service per minute for the whole agent (background and user-initiated). */
  serviceBudgetPerMinute: number;
  /** Part of that budget kept for activate/refresh: background checks leave this many tokens. */
  serviceReserve: number;
}

export const DEFAULT_LIMITS: Readonly<AgentLimits> = Object.freeze({
  maxConnections: 512,
  idleTimeoutMs: 5 * 60_000,
  requestRate: 200,
  requestBurst: 400,
  writeBufferBytes: 256 * 1024,
  serviceBudgetPerMinute: 30,
  serviceReserve: 5,
});

/** The agent's configuration after flag > environment > config file > default. */
export interface AgentConfig {
  namespace: string;
  home: string | undefined;
  baseUrl: string | undefined;
  token: string | undefined;
  socketPath: string;
  logLevel: LogLevel;
  limits: AgentLimits;
  /** From config.json: a proxy URL, `false` for none; undefined: the standard proxy variables. */
  proxy: string | false | undefined;
  /** From config.json (`offline_public_keys`): keys an offline activation must be signed by; empty: unsigned ones are accepted. */
  offlinePublicKeys: string[];
  /** From config.json (`offline_max_days`, default 365): the longest validity an imported offline response may have. */
  offlineMaxDays: number;
  /** The vendor's license relay (`relay_url`, PLUGIN_LICENSE_RELAY_URL, baked `--relay`): the activation endpoints' base URL; undefined: the service's. */
  relayUrl: string | undefined;
  /** The vendor's public keys signed tickets must verify with (`ticket_keys`, PLUGIN_LICENSE_TICKET_KEYS, baked `--ticket-key`), as canonical text; empty: none. */
  ticketKeys: string[];
  /**
   * Minutes with no client connected and nothing in flight after which the agent exits by itself
   * (`--idle-exit-minutes`, else `"idle_exit_minutes"` in config.json, default 10); 0: it stays.
   */
  idleExitMinutes: number;
  /** The config file read (whether or not it existed). */
  configFile: string;
  /** Resolved with `fileProblems: 'report'`: why the config file was not used. */
  configProblem?: string;
}

/** What the command line gave; undefined means "not given". */
export interface AgentFlags {
  app?: string;
  home?: string;
  baseUrl?: string;
  token?: string;
  socket?: string;
  logLevel?: string;
  maxConnections?: number;
  idleTimeoutMs?: number;
  requestRate?: number;
  requestBurst?: number;
  idleExitMinutes?: number;
}

/** How long an agent with no client and nothing in flight stays before it exits. */
export const DEFAULT_IDLE_EXIT_MINUTES = 10;

const positiveInt = z.number().int().positive();
/** The agent's own keys of config.json; the shared ones (`base_url`, `token`, `socket`, `proxy`) are licensing's resolver's. */
const AgentFileConfig = z.looseObject({
  log_level: z.enum(LOG_LEVELS).optional(),
  idle_exit_minutes: z.number().finite().nonnegative('a number of minutes, 0 or more (0: the agent stays)').optional(),
  agent: z
    .looseObject({
      max_connections: positiveInt.optional(),
      idle_timeout_ms: positiveInt.optional(),
      request_rate: positiveInt.optional(),
      request_burst: positiveInt.optional(),
      write_buffer_bytes: positiveInt.optional(),
      service_budget_per_minute: positiveInt.max(40, 'at most 40: bursts may reach 1.5 times this in a minute, and the service allows 60').optional(),
      service_reserve: z.number().int().nonnegative().optional(),
    })
    .optional(),
});

/**
 * Resolves the agent's configuration the way every tool of the project does (licensing's
 * `resolveConfig`: flag > environment (`PLUGIN_LICENSE_*`) > `config.json` > default), plus the
 * agent's own settings (`log_level`, `agent.*`).
 *
 * @example
 * const config = resolveAgentConfig({ baseUrl: 'http://127.0.0.1:54321/functions/v1' });
 * config.socketPath; // e.g. /run/user/1000/plugin-license/agent.sock
 */
export function resolveAgentConfig(flags: AgentFlags = {}, env: Record<string, string | undefined> = process.env, options: ResolveOptions = {}): AgentConfig {
  let shared: ResolvedConfig;
  try {
    shared = resolveConfig({ app: flags.app, home: flags.home, baseUrl: flags.baseUrl, token: flags.token, socket: flags.socket }, env, options);
  } catch (err) {
    throw new AgentError('config_invalid', (err as Error).message, { cause: err, ...(isLicenseError(err) && err.path ? { path: err.path } : {}) });
  }
  const configFile = shared.configFile;
  let fileProblem = shared.fileProblem;
  const parsed = AgentFileConfig.safeParse(shared.file);
  let file: z.infer<typeof AgentFileConfig> = {};
  if (parsed.success) file = parsed.data;
  else {
    const what = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    const message = `config file ${configFile} has invalid settings: ${what}`;
    if (options.fileProblems !== 'report') throw new AgentError('config_invalid', message, { path: configFile, cause: parsed.error });
    fileProblem ??= message;
  }
  const namespace = shared.namespace.value;
  const socketPath = socketPathOf(shared, env);
  const logLevelRaw = flags.logLevel ?? nonEmpty(env.PLUGIN_LICENSE_LOG_LEVEL) ?? file.log_level ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw)) {
    throw new AgentError('config_invalid', `log level '${logLevelRaw}' is unknown; use one of ${LOG_LEVELS.join(', ')}`);
  }
  const a = file.agent ?? {};
  const limits: AgentLimits = {
    maxConnections: flags.maxConnections ?? a.max_connections ?? DEFAULT_LIMITS.maxConnections,
    idleTimeoutMs: flags.idleTimeoutMs ?? a.idle_timeout_ms ?? DEFAULT_LIMITS.idleTimeoutMs,
    requestRate: flags.requestRate ?? a.request_rate ?? DEFAULT_LIMITS.requestRate,
    requestBurst: flags.requestBurst ?? a.request_burst ?? DEFAULT_LIMITS.requestBurst,
    writeBufferBytes: a.write_buffer_bytes ?? DEFAULT_LIMITS.writeBufferBytes,
    serviceBudgetPerMinute: a.service_budget_per_minute ?? DEFAULT_LIMITS.serviceBudgetPerMinute,
    serviceReserve: a.service_reserve ?? DEFAULT_LIMITS.serviceReserve,
  };
  return {
    namespace,
    home: shared.home.value,
    baseUrl: shared.baseUrl.value,
    token: shared.token.value,
    socketPath,
    logLevel: logLevelRaw as LogLevel,
    limits,
    proxy: shared.proxy.value,
    offlinePublicKeys: shared.offlinePublicKeys.value,
    offlineMaxDays: shared.offlineMaxDays.value,
    relayUrl: shared.relayUrl.value,
    ticketKeys: shared.ticketKeys.value.map((k) => k.text),
    idleExitMinutes: flags.idleExitMinutes ?? file.idle_exit_minutes ?? DEFAULT_IDLE_EXIT_MINUTES,
    configFile,
    ...(fileProblem === undefined ? {} : { configProblem: fileProblem }),
  };
}



function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}

/**
 * The one reading of `--idle-exit-minutes`: a plain non-negative decimal number of minutes
 * (fractions allowed, `0` stays); anything else (a sign, hex, an exponent, words, an empty value)
 * is refused with words.
 *
 * @example
 * parseIdleExitMinutes('0.5'); // 0.5
 */
export function parseIdleExitMinutes(text: string): number {
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(n)) {
    throw new AgentError('usage', `--idle-exit-minutes must be a number of minutes, 0 or more, such as 10 or 0.5 (0: the agent stays), got '${text}'`);
  }
  return n;
}
