import type { AgentClient } from '@plugin-license/agent';
import { ServiceClient } from '@plugin-license/api';
import { assertProjectId, License, normalizeCode, resolveConfig, type ResolvedConfig } from '@plugin-license/licensing';
import { usageError } from './exit.js';
import type { Output } from './output.js';

/** The global options of cli.md. */
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
  readonly #closers: Array<() => Promise<void> | void> = [];

  constructor(
    readonly out: Output,
    readonly options: GlobalOptions,
    readonly env: Readonly<Record<string, string | undefined>>,
  ) {}

  /** flag > environment > config.json > default, by licensing's one resolver. */
  get config(): ResolvedConfig {
    this.#config ??= resolveConfig({ app: this.options.app, home: this.options.home, baseUrl: this.options.baseUrl, token: this.options.token }, this.env);
    return this.#config;
  }

  baseUrl(): string {
    const { baseUrl, configFile } = this.config;
    if (baseUrl.value === undefined) {
      throw usageError(`no service base URL: pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${configFile}`);
    }
    return baseUrl.value;
  }

  /** A client of the service; `needsToken` for the endpoints that take the bearer token. */
  client(needsToken: boolean, options: { retry?: false } = {}): ServiceClient {
    const token = this.config.token.value;
    if (needsToken && token === undefined) {
      throw usageError(`this command needs the bearer token: set PLUGIN_LICENSE_TOKEN (safer than --token, which shows in the process list) or put "token" in ${this.config.configFile}`);
    }
    const proxy = this.config.proxy.value;
    const client = new ServiceClient({
      baseUrl: this.baseUrl(),
      ...(needsToken && token !== undefined ? { token } : {}),
      ...(proxy === undefined ? {} : { proxy }),
      ...(options.retry === false ? { retry: false as const } : {}),
      userAgent: `plugin-license-cli node/${process.versions.node}`,
    });
    this.#closers.push(() => client.close());
    return client;
  }

  /** The library's `License` for a project of this namespace (what an installer would use). */
  license(projectId: string, machineId?: string): License {
    const license = new License({
      projectId: this.projectId(projectId),
      baseUrl: this.baseUrl(),
      namespace: this.config.namespace.value,
      ...(this.config.home.value === undefined ? {} : { home: this.config.home.value }),
      ...(machineId === undefined ? {} : { machineId }),
    });
    this.#closers.push(() => license.close());
    return license;
  }

  /** The socket path of this namespace's agent. */
  async socketPath(): Promise<string> {
    const { resolveSocketPath } = await import('@plugin-license/agent');
    return resolveSocketPath({ namespace: this.config.namespace.value, env: { ...this.env, PLUGIN_LICENSE_SOCKET: this.config.socket.value } });
  }

  /** The running agent of this namespace, or undefined when none answers. */
  async agent(connectTimeoutMs = 1000): Promise<AgentClient | undefined> {
    // Loaded here: most commands never talk to the agent.
    const { AgentClient, isAgentError } = await import('@plugin-license/agent');
    const socketPath = await this.socketPath();
    try {
      const client = await AgentClient.connect({ socketPath, namespace: this.config.namespace.value, connectTimeoutMs, reconnect: false });
      this.#closers.push(() => client.close());
      return client;
    } catch (err) {
      if (isAgentError(err) && (err.code === 'not_running' || err.code === 'timeout')) return undefined;
      throw err;
    }
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
