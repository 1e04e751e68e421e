import { spawn } from 'node:child_process';
import { userHome } from '@plugin-license/licensing';
import { withoutNodeRuntimeVariables } from './node-environment.js';

/** How often one process starts the agent of one namespace and socket at most. */
export const AGENT_START_INTERVAL_MS = 30_000;

/** What {@link startAgentDetached} starts. */
export interface DetachedAgentStart {
  /** The program that runs the agent's commands, as argv: `[...selfCommand(), 'agent']` under the CLI. */
  command: string[];
  namespace: string;
  /** The socket the agent will listen on (with the namespace, the key of the 30 s limit). */
  socketPath: string;
  /** The environment the agent gets, Node's run-time variables removed (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Clock of the 30 s limit (tests). */
  now?: () => number;
}

const lastStart = new Map<string, number>();

/**
 * Starts `COMMAND run --app NAMESPACE` detached, the way gpg starts gpg-agent: its own session
 * (process group on Windows, no console window), no inherited descriptors or handles (stdio
 * ignored), the user's home as working folder (else the root), this environment without Node's
 * run-time variables (so namespace, home and socket variables carry over). The caller never
 * waits on its output: it connects to the socket. At most once per 30 s per process, namespace
 * and socket; many starters at once end with one agent by the socket itself (a live socket wins).
 * Returns the pid, or undefined when it was started less than 30 s ago or could not be started.
 *
 * @example
 * startAgentDetached({ command: [...selfCommand(), 'agent'], namespace: 'acme-audio', socketPath });
 */
export function startAgentDetached(o: DetachedAgentStart): number | undefined {
  const now = (o.now ?? Date.now)();
  const key = `${o.namespace}\0${o.socketPath}`;
  const last = lastStart.get(key);
  if (last !== undefined && now - last < AGENT_START_INTERVAL_MS && now >= last) return undefined;
  lastStart.set(key, now);
  const [program, ...args] = o.command;
  if (program === undefined) return undefined;
  let cwd = '/';
  try {
    cwd = userHome(o.env ?? process.env);
  } catch {
    // no usable home (none, empty, relative): the root; the agent then refuses such a HOME in words
  }
  try {
    const child = spawn(program, [...args, 'run', '--app', o.namespace], {
      detached: true,
      stdio: 'ignore',
      windowsHide: true,
      cwd,
      env: withoutNodeRuntimeVariables(o.env ?? process.env),
    });
    child.on('error', () => {});
    child.unref();
    return child.pid;
  } catch {
    return undefined;
  }
}

/** How {@link waitForStartedAgent} waits. */
export interface StartedAgentWait<T> {
  /** The pid {@link startAgentDetached} returned. */
  pid: number;
  /** One attempt to connect: the client, or undefined while nothing answers yet. */
  connect: () => Promise<T | undefined>;
  /** The longest wait, in ms (the caller's deadline, if shorter, is its to pass). */
  timeoutMs: number;
  /** Ends the wait early (the command was interrupted, the manager closed). */
  signal?: AbortSignal;
  /** Between attempts (default 25 ms). */
  pollMs?: number;
}

/**
 * Waits for an agent just started on demand to answer on its socket: an attempt every `pollMs`,
 * bounded by `timeoutMs` (and by the number of rounds it allows), ended early by `signal`. The
 * started process's output is never waited on, only its socket. A starter that lost the race
 * exits once the winner listens, so when the started process is gone one last attempt decides.
 * The one wait of the CLI's commands and of the license manager.
 *
 * @example
 * const pid = startAgentDetached({ command, namespace, socketPath });
 * const client = pid === undefined ? undefined : await waitForStartedAgent({ pid, connect: tryConnect, timeoutMs: 10_000 });
 */
export async function waitForStartedAgent<T>(o: StartedAgentWait<T>): Promise<T | undefined> {
  const poll = Math.max(1, o.pollMs ?? 25);
  const until = Date.now() + o.timeoutMs;
  const rounds = Math.ceil(o.timeoutMs / poll) + 1;
  for (let i = 0; i < rounds && Date.now() < until && o.signal?.aborted !== true; i++) {
    await new Promise((resolve) => setTimeout(resolve, poll));
    const client = await o.connect();
    if (client !== undefined) return client;
    if (!alive(o.pid)) return o.connect();
  }
  return undefined;
}

/** Whether a process of ours is still there (EPERM: there, but not ours to signal). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
