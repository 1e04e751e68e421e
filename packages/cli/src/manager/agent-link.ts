import { AgentClient, AgentError, isAgentError, toWireState, waitForStartedAgent, type LicenseState, type LicenseStateWire } from '@plugin-license/agent';

/** What the page knows of the agent. */
export type AgentView = { running: true; agent: string; protocol: number } | { running: false; problem: string };

/** How often the manager looks again for an agent that is not running (it may be started meanwhile). */
export const AGENT_RETRY_MS = 2000;

/** The longest the manager waits for an agent it started to answer (then it looks again every AGENT_RETRY_MS). */
export const AGENT_START_WAIT_MS = 10_000;

/**
 * The manager's one connection to the agent: connected when it can be (an agent it started on
 * demand is waited for on its socket at once, so the first page shows its state), looked for
 * again every AGENT_RETRY_MS when not, subscribed to every license, so the view it keeps is what the agent
 * holds now. `changed` is called after every change of that view.
 */
export class AgentLink {
  #client: AgentClient | undefined;
  #view: AgentView = { running: false, problem: 'not looked for yet' };
  readonly #licenses = new Map<string, LicenseStateWire>();
  #retry: NodeJS.Timeout | undefined;
  /** The attempt under way: an action and the retry timer that both ask wait for the same one. */
  #connecting: Promise<void> | undefined;
  #closed = false;
  readonly #closing = new AbortController();
  /** Why the last attempt could not connect, when it was refused before a byte was sent (another user's socket path). */
  #refused: AgentError | undefined;

  readonly #changed: () => void;
  /** Starts the agent on demand when none answers (limited to once per 30 s by the starter): its pid, or undefined when none was started. */
  readonly #start: (() => Promise<number | undefined>) | undefined;

  constructor(
    readonly socketPath: string,
    readonly namespace: string,
    changed: () => void,
    start?: () => Promise<number | undefined>,
  ) {
    this.#changed = changed;
    this.#start = start;
  }

  get view(): AgentView {
    return this.#view;
  }

  /** The licenses the agent holds, by project. */
  get licenses(): LicenseStateWire[] {
    return [...this.#licenses.values()].sort((a, b) => a.project_id.localeCompare(b.project_id));
  }

  /** The connected client; throws the agent's own `not_running` error (its words: how to start it) when there is none. */
  async client(): Promise<AgentClient> {
    if (this.#client?.connected) return this.#client;
    await this.connect();
    if (this.#client?.connected) return this.#client;
    if (this.#refused) throw this.#refused;
    // The agent's own words: where it looked, and how to start it.
    throw new AgentError('not_running', this.#view.running ? 'the license agent went away; try again' : this.#view.problem);
  }

  /** Connects when it can; otherwise tries again after AGENT_RETRY_MS. */
  connect(): Promise<void> {
    this.#connecting ??= this.#attempt().finally(() => (this.#connecting = undefined));
    return this.#connecting;
  }

  async #attempt(): Promise<void> {
    if (this.#closed || this.#client?.connected) return;
    clearTimeout(this.#retry);
    let client: AgentClient;
    try {
      client = await this.#open();
    } catch (err) {
      this.#refused = isAgentError(err) && err.code === 'socket_dir_unsafe' ? err : undefined;
      const started = isAgentError(err) && err.code === 'not_running' ? await this.#started() : undefined;
      if (started === undefined) {
        this.#down(isAgentError(err) ? err.message : String(err));
        return;
      }
      client = started;
    }
    this.#refused = undefined;
    if (this.#closed) {
      client.close();
      return;
    }
    try {
      const hello = await client.hello();
      const subscription = await client.subscribe();
      const list = await client.list();
      this.#client = client;
      this.#licenses.clear();
      for (const s of list) this.#licenses.set(s.projectId, toWireState(s));
      this.#view = { running: true, agent: hello.agent, protocol: hello.protocol };
      subscription.on('changed', (s: LicenseState) => {
        this.#licenses.set(s.projectId, toWireState(s));
        this.#changed();
      });
      client.on('disconnected', () => {
        if (this.#client === client) this.#client = undefined;
        client.close();
        this.#down('the license agent stopped');
      });
      this.#changed();
    } catch (err) {
      client.close();
      this.#down(isAgentError(err) ? err.message : String(err));
    }
  }

  #open(): Promise<AgentClient> {
    // An activation waits on the service (the agent's own time-out is shorter than this).
    return AgentClient.connect({ socketPath: this.socketPath, namespace: this.namespace, connectTimeoutMs: 1000, requestTimeoutMs: 30_000, reconnect: false, clientName: 'license-manager' });
  }

  /** Starts the agent on demand and waits for it on its socket (bounded); undefined when none came. */
  async #started(): Promise<AgentClient | undefined> {
    const pid = await this.#start?.().catch(() => undefined);
    if (pid === undefined || this.#closed) return undefined;
    return waitForStartedAgent({ pid, connect: () => this.#open().catch(() => undefined), timeoutMs: AGENT_START_WAIT_MS, signal: this.#closing.signal });
  }

  /** Records a state the agent answered an action with (the subscription brings it too, maybe later). */
  record(state: LicenseState): LicenseStateWire {
    const wire = toWireState(state);
    this.#licenses.set(state.projectId, wire);
    this.#changed();
    return wire;
  }

  #down(problem: string): void {
    const same = !this.#view.running && this.#view.problem === problem;
    this.#view = { running: false, problem };
    this.#licenses.clear();
    if (!same) this.#changed();
    if (this.#closed) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => void this.connect(), AGENT_RETRY_MS);
    this.#retry.unref();
  }

  close(): void {
    this.#closed = true;
    this.#closing.abort();
    clearTimeout(this.#retry);
    this.#client?.close();
    this.#client = undefined;
  }
}
