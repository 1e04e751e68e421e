import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { resolvePaths } from '@plugin-license/licensing';
import { AgentClient } from './client.js';
import type { AgentConfig } from './config.js';
import { AgentError, isAgentError } from './errors.js';
import { RpcErrorCode, type HelloResult, type ShutdownResult } from './protocol.js';

/** What `plugin-license-agent stop` reports. */
export interface AgentStopReport {
  /** Whether an agent of this namespace and data folder answered on the socket. */
  was_running: boolean;
  socket_path: string;
  namespace: string;
  /** The stopped agent's process id. */
  pid?: number;
  /** `request`: it stopped when asked (`shutdown`); `signal`: an older agent without `shutdown`, ended with SIGTERM. */
  how?: 'request' | 'signal';
}

export interface StopOptions {
  /** How long the agent may take to finish in-flight requests and exit (default 15 s: its own grace is 10 s). */
  timeoutMs?: number;
}

/**
 * Stops the agent serving this configuration's socket, whoever started it (a service manager, a
 * plugin, a person): asks it over the socket (`shutdown`), so no pid file and no guessed process
 * is involved, and waits until its process is gone. Only an agent of the same namespace and data
 * folder is stopped, and only through the user's own socket. An older agent without `shutdown`
 * is ended with SIGTERM on Linux, found as the process of this user that listens on the socket.
 *
 * @example
 * const report = await stopAgent(resolveAgentConfig({ app: 'acme-audio' }));
 * console.log(report.was_running ? `stopped ${report.pid}` : 'none was running');
 */
export async function stopAgent(config: AgentConfig, options: StopOptions = {}): Promise<AgentStopReport> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const base = { socket_path: config.socketPath, namespace: config.namespace };
  const dataDir = resolvePaths({ namespace: config.namespace, ...(config.home ? { home: config.home } : {}) }).data;
  let client: AgentClient;
  try {
    client = await AgentClient.connect({ socketPath: config.socketPath, namespace: config.namespace, connectTimeoutMs: 2000, requestTimeoutMs: 5000, reconnect: false });
  } catch (err) {
    if (isAgentError(err) && err.code === 'not_running') return { was_running: false, ...base };
    throw err;
  }
  let pid: number | undefined;
  let how: 'request' | 'signal' = 'request';
  try {
    const hello = (await client.request('hello', { protocol: 1, client: 'agent stop' })) as Partial<HelloResult>;
    if (hello.namespace !== config.namespace || (hello.data_dir !== undefined && hello.data_dir !== dataDir)) {
      throw new AgentError(
        'socket_in_use',
        `the agent answering on ${config.socketPath} serves namespace ${String(hello.namespace)}${hello.data_dir ? ` (data ${hello.data_dir})` : ''}, not ${config.namespace} (data ${dataDir}); it was left running`,
      );
    }
    try {
      pid = ((await client.request('shutdown', {})) as ShutdownResult).pid;
    } catch (err) {
      if (!(isAgentError(err) && err.rpcCode === RpcErrorCode.methodNotFound)) throw err;
      how = 'signal';
      pid = listenerPid(config.socketPath);
      if (pid === undefined) {
        throw new AgentError('not_running', `the agent on ${config.socketPath} is an older version that cannot be asked to stop, and its process was not found; end it yourself (it runs "agent run")`);
      }
      process.kill(pid, 'SIGTERM');
    }
  } finally {
    client.close();
  }
  const deadline = Date.now() + timeoutMs;
  while (!processGone(pid) || (await answers(config.socketPath))) {
    if (Date.now() >= deadline) {
      throw new AgentError('timeout', `the agent (process ${pid}) was asked to stop but is still running after ${timeoutMs} ms; it may be finishing a request: run this again, or end it with: kill ${pid}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { was_running: true, ...base, pid, how };
}

/**
 * True once the process has exited (a zombie waiting for its parent counts as gone): the one wait
 * for a process asked to stop (the agent here, a license manager by `manager stop`).
 */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  if (process.platform !== 'linux') return false;
  try {
    return / [ZX] /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/\(.*\)/s, '()'));
  } catch {
    return true;
  }
}

async function answers(socketPath: string): Promise<boolean> {
  try {
    const c = await AgentClient.connect({ socketPath, connectTimeoutMs: 1000, requestTimeoutMs: 1000, reconnect: false });
    c.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Linux: the process of this user listening on `socketPath` (its socket's inode in
 * /proc/net/unix, then the process holding it); another user's processes are never looked at.
 */
function listenerPid(socketPath: string): number | undefined {
  if (process.platform !== 'linux' || typeof process.getuid !== 'function') return undefined;
  const uid = process.getuid();
  const inodes = new Set<string>();
  try {
    for (const line of readFileSync('/proc/net/unix', 'utf8').split('\n').slice(1)) {
      // Num RefCount Protocol Flags Type St Inode Path; flag 00010000: listening.
      const m = /^\S+: \S+ \S+ (\S+) \S+ \S+ +(\d+) (.*)$/.exec(line);
      if (m && (parseInt(m[1]!, 16) & 0x10000) !== 0 && m[3] === socketPath) inodes.add(`socket:[${m[2]}]`);
    }
  } catch {
    return undefined;
  }
  if (inodes.size === 0) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const owner = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'));
      if (!owner || Number(owner[1]) !== uid) continue;
      for (const fd of readdirSync(`/proc/${entry}/fd`)) {
        if (inodes.has(readlinkSync(`/proc/${entry}/fd/${fd}`))) return Number(entry);
      }
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return undefined;
}
