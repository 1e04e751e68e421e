import type { AgentClient } from '@plugin-license/agent';
import { Deadline, ServiceClient } from '@plugin-license/api';
import { assertProjectId, License, normalizeCode, resolveConfig, type ResolvedConfig } from '@plugin-license/licensing';
import { usageError } from './exit.js';
import { killAtStep } from './test-hook.js';
import type { Output } from './output.js';

const DEFAULT_TIMEOUT_MS = 10_000;

/** The longest a command waits for an agent it started to answer on its socket. */
export const AGENT_START_WAIT_MS = 10_000;

/** What the deadline's messages name: the setting that raises it. */
export const TIMEOUT_VARIABLE = 'PLUGIN_LICENSE_TIMEOUT';

/** The longest a command waits for the service's rate limit to reset (a window is a minute). */
export const RATE_LIMIT_WAIT_MS = 90_000;

/** The global options of docs/cli.md. */
export interface GlobalOptions {
  baseUrl?: string;
  token?: string;
  app?: string;
  home?: string;
  json?: boolean;
  color?: boolean;
  debug?: boolean;
}

/** What every command stands on: the resolved configuration, the output, and the clients it makes. */
export class Context {
  #config: ResolvedConfig | undefined;
  #inspection: ResolvedConfig | undefined;
  #deadline: Deadline | undefined;
  readonly #closers: Array<() => Promise<void> | void> = [];

  constructor(
    readonly out: Output,
    readonly options: GlobalOptions,
    readonly env: Readonly<Record<string, string | undefined>>,
    /** Aborted by Ctrl-C (or SIGTERM): every wait of a command ends on it. */
    readonly signal: AbortSignal = new AbortController().signal,
    /** Runs a step whose result must be recorded; a second interrupt waits for it (see `run`). */
    readonly hold: <T>(task: () => Promise<T>) => Promise<T> = (task) => task(),
  ) {}

  /** flag > environment > config.json > default, by licensing's one resolver. */
  get config(): ResolvedConfig {
    this.#config ??= resolveConfig({ app: this.options.app, home: this.options.home, baseUrl: this.options.baseUrl, token: this.options.token }, this.env);
    return this.#config;
  }

  /**
   * The configuration of what needs only the namespace and the folders (asking the running
   * agent, this machine's id): a config file that cannot be used is said once on stderr, and the
   * command goes on as it would without that file.
   */
  get inspectionConfig(): ResolvedConfig {
    if (this.#inspection === undefined) {
      this.#inspection = resolveConfig({ app: this.options.app, home: this.options.home, baseUrl: this.options.baseUrl, token: this.options.token }, this.env, { fileProblems: 'report' });
      if (this.#inspection.fileProblem !== undefined) this.out.note(`${this.#inspection.fileProblem}; going on without it`);
    }
    return this.#inspection;
  }

  /**
   * `PLUGIN_LICENSE_TIMEOUT` in ms (1 to 300 s; default 10 s): the length of the command's
   * deadline (and of each step's, for a command that runs on).
   */
  get requestTimeoutMs(): number {
    const raw = this.env.PLUGIN_LICENSE_TIMEOUT;
    if (raw === undefined || raw.trim() === '') return DEFAULT_TIMEOUT_MS;
    const seconds = Number(raw);
    if (!/^\s*\d+(\.\d+)?\s*$/.test(raw) || seconds < 1 || seconds > 300) throw usageError(`PLUGIN_LICENSE_TIMEOUT must be a number of seconds from 1 to 300, got '${raw}'`);
    return seconds * 1000;
  }

  /**
   * The command's one deadline: every wait for the service of the whole command (every request,
   * retry and back-off, on every client, the agent's answer and doctor's probes) ends by it,
   * and its time-out names it. It starts at the command's first wait for the service; Ctrl-C
   * interrupts it. A wait the service asks for (a rate limit, shown as a countdown) is not counted.
   */
  get deadline(): Deadline {
    this.#deadline ??= this.stepDeadline();
    return this.#deadline;
  }

  /**
   * A deadline of the same length for one step of a command that runs on by design (a batch of
   * codes, a watched build, a download's links, the manager's actions): each step ends by its own.
   */
  stepDeadline(): Deadline {
    return new Deadline(this.requestTimeoutMs, { name: TIMEOUT_VARIABLE, signal: this.signal });
  }

  baseUrl(config: ResolvedConfig = this.config): string {
    const { baseUrl, configFile } = config;
    if (baseUrl.value === undefined) {
      throw usageError(`no service base URL: pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${configFile}`);
    }
    return baseUrl.value;
  }

  /**
   * A client of the service; `needsToken` for the endpoints that take the bearer token. Its calls
   * share the command's deadline, or with `steps` each has its own (see `stepDeadline`).
   */
  client(needsToken: boolean, options: { retry?: false; config?: ResolvedConfig; steps?: boolean; relay?: boolean } = {}): ServiceClient {
    const config = options.config ?? this.config;
    const token = config.token.value;
    if (needsToken && token === undefined) {
      throw usageError(`this command needs the bearer token: set PLUGIN_LICENSE_TOKEN (safer than --token, which shows in the process list) or put "token" in ${config.configFile}`);
    }
    const proxy = config.proxy.value;
    const client = new ServiceClient(
      {
        // The vendor's relay takes only the activation endpoints, and never the token.
        baseUrl: options.relay === true ? (config.relayUrl.value as string) : this.baseUrl(config),
        ...(needsToken && token !== undefined && options.relay !== true ? { token } : {}),
        ...(proxy === undefined ? {} : { proxy }),
        timeoutMs: this.requestTimeoutMs,
        deadline: options.steps === true ? () => this.stepDeadline() : () => this.deadline,
        // A person waits out a rate limit (a window is a minute), with a countdown; a script
        // gets exit 1 only after that wait. Ctrl-C ends the wait.
        retry: options.retry === false ? false : { deadlineMs: RATE_LIMIT_WAIT_MS },
        userAgent: `plugin-license-cli node/${process.versions.node}`,
      },
      { sleep: (ms, signal) => this.out.wait(ms, 'the service is rate-limiting requests', signal ? AbortSignal.any([signal, this.signal]) : this.signal) },
    );
    this.#closers.push(() => client.close());
    return client;
  }

  /**
   * The library's `License` for a project of this namespace (what an installer would use), on a
   * client of this command: its requests share the command's deadline.
   */
  license(projectId: string): License {
    const license = new License({
      projectId: this.projectId(projectId),
      baseUrl: this.baseUrl(),
      namespace: this.config.namespace.value,
      ...(this.config.home.value === undefined ? {} : { home: this.config.home.value }),
      offlinePublicKeys: this.config.offlinePublicKeys.value,
      client: this.client(false),
      // The vendor's relay and keys, as every tool resolves them (relay_url, ticket_keys).
      ...(this.config.relayUrl.value === undefined ? {} : { relayClient: this.client(false, { relay: true }) }),
      ticketKeys: this.ticketKeys(),
      policy: { requestTimeoutMs: this.requestTimeoutMs },
      ...this.testHook,
    });
    this.#closers.push(() => license.close());
    return license;
  }

  /** The vendor's public keys signed tickets must verify with (`ticket_keys`), as text; none: no signed ticket is stored or required. */
  ticketKeys(config: ResolvedConfig = this.config): string[] {
    return config.ticketKeys.value.map((k) => k.text);
  }

  /** The library's step hook when a test asks to be killed at a step (PLUGIN_LICENSE_TEST_KILL_AT); nothing otherwise. */
  get testHook(): { onStep?: (step: string) => void } {
    const onStep = killAtStep(this.env);
    return onStep === undefined ? {} : { onStep };
  }

  /** The socket path of this namespace's agent. */
  async socketPath(): Promise<string> {
    const { socketPathOf } = await import('@plugin-license/agent');
    return socketPathOf(this.inspectionConfig, this.env);
  }

  /**
   * The running agent of this namespace, or undefined when none answers. With `start`, an agent
   * that is not running is started on demand first (see `agentStart`) and waited for on its
   * socket, within the command's deadline and at most AGENT_START_WAIT_MS.
   */
  async agent(connectTimeoutMs = 1000, options: { start?: boolean } = {}): Promise<AgentClient | undefined> {
    // Loaded here: most commands never talk to the agent.
    const { AgentClient, isAgentError, startAgentDetached, waitForStartedAgent } = await import('@plugin-license/agent');
    const socketPath = await this.socketPath();
    const namespace = this.inspectionConfig.namespace.value;
    const connect = async (): Promise<AgentClient | undefined> => {
      try {
        const client = await AgentClient.connect({ socketPath, namespace, connectTimeoutMs, reconnect: false });
        this.#closers.push(() => client.close());
        return client;
      } catch (err) {
        if (isAgentError(err) && (err.code === 'not_running' || err.code === 'timeout')) return undefined;
        throw err;
      }
    };
    const first = await connect();
    if (first !== undefined || options.start !== true) return first;
    const start = await this.agentStart();
    if ('off' in start) return undefined;
    const pid = startAgentDetached({ command: start.command, namespace, socketPath, env: start.env });
    if (pid === undefined) return undefined;
    return waitForStartedAgent({ pid, connect, timeoutMs: Math.min(AGENT_START_WAIT_MS, this.deadline.remainingMs()), signal: this.signal });
  }

  /**
   * The one rule of when the CLI starts the agent on demand, and with what. It starts
   * `<this program> agent run --app NAMESPACE` with this environment (the CLI's --home,
   * --base-url and --token passed as their variables, never on the command line). It does not
   * when `PLUGIN_LICENSE_NO_AUTOSTART` is set (not empty, not 0); when the socket was pointed at
   * by `PLUGIN_LICENSE_SOCKET` (a path chosen for this shell on purpose: a test, a debugging
   * session, an agent run by hand); or when this program cannot be run again (`node -e`).
   */
  async agentStart(): Promise<{ command: string[]; env: NodeJS.ProcessEnv } | { off: string }> {
    const off = this.env.PLUGIN_LICENSE_NO_AUTOSTART;
    if (off !== undefined && off.trim() !== '' && off.trim() !== '0') return { off: 'PLUGIN_LICENSE_NO_AUTOSTART is set' };
    const config = this.inspectionConfig;
    if (config.socket.source === 'environment' || config.socket.source === 'flag') return { off: 'the socket was chosen by PLUGIN_LICENSE_SOCKET' };
    const { selfCommand } = await import('@plugin-license/agent');
    let command: string[];
    try {
      command = [...selfCommand(), 'agent'];
    } catch (err) {
      return { off: (err as Error).message };
    }
    const env: NodeJS.ProcessEnv = { ...this.env };
    if (this.options.home !== undefined) env.PLUGIN_LICENSE_HOME = this.options.home;
    if (this.options.baseUrl !== undefined) env.PLUGIN_LICENSE_BASE_URL = this.options.baseUrl;
    if (this.options.token !== undefined) env.PLUGIN_LICENSE_TOKEN = this.options.token;
    return { command, env };
  }

  /** A project id checked locally (a UUID), lower-cased. */
  projectId(value: string): string {
    assertProjectId(value);
    return value.toLowerCase();
  }

  /** A code checked locally (trimmed; no control characters; not empty or overlong). */
  code(value: string): string {
    return normalizeCode(value);
  }

  async close(): Promise<void> {
    for (const close of this.#closers.splice(0).reverse()) {
      try {
        await close();
      } catch {
        // closing is best effort; the command's result stands
      }
    }
  }
}
