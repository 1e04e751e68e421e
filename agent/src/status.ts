import { readCachedStatus, resolvePaths } from '@plugin-license/licensing';
import { AgentClient } from './client.js';
import type { AgentConfig } from './config.js';
import { isAgentError } from './errors.js';
import { toWireState, type LicenseStateWire } from './license-state.js';

/** What `plugin-license-agent status` reports. */
export interface AgentStatusReport {
  running: boolean;
  socket_path: string;
  namespace: string;
  /** The data folder whose licenses are reported. */
  data_dir: string;
  /** The running agent's version (when running). */
  version?: string;
  /** Connections open to the running agent besides this one (plugin processes, apps), when it says. */
  connections?: number;
  /** `agent`: answered by the running agent; `cache`: read from the cache files, without changing them. */
  from: 'agent' | 'cache';
  /** Set when an agent answers on the socket but serves another data folder: its folder. */
  other_agent_data_dir?: string;
  licenses: LicenseStateWire[];
  /** Per project, from the files: why a cache file can't be trusted, files set aside, unfinished operations (cache reports only). */
  files?: Array<{ project_id: string; file: string; problem: string | null; set_aside: string[]; pending_operations: number }>;
}

/**
 * Asks the running agent (`list`) when it serves this configuration's data folder; otherwise
 * reads the namespace's cache files. Inspection only: nothing is written, moved or locked.
 *
 * @example
 * const report = await agentStatus(resolveAgentConfig());
 * console.log(report.running, report.licenses.length);
 */
export async function agentStatus(config: AgentConfig, timeoutMs = 1000): Promise<AgentStatusReport> {
  const pathOptions = { namespace: config.namespace, ...(config.home ? { home: config.home } : {}) };
  const dataDir = resolvePaths(pathOptions).data;
  const base = { socket_path: config.socketPath, namespace: config.namespace, data_dir: dataDir };
  let other: string | undefined;
  let running = false;
  let version: string | undefined;
  try {
    const client = await AgentClient.connect({ socketPath: config.socketPath, namespace: config.namespace, connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs, reconnect: false, clientName: 'plugin-license-agent status' });
    try {
      const hello = await client.hello();
      running = true;
      version = hello.agent;
      if (hello.data_dir === undefined || hello.data_dir === dataDir) {
        const list = await client.list();
        const others = typeof hello.connections === 'number' ? { connections: hello.connections - 1 } : {};
        return { running, ...base, ...(version ? { version } : {}), ...others, from: 'agent', licenses: list.map(toWireState) };
      }
      other = hello.data_dir;
    } finally {
      client.close();
    }
  } catch (err) {
    if (!isAgentError(err) || (err.code !== 'not_running' && err.code !== 'timeout' && err.code !== 'disconnected')) throw err;
  }
  const cached = await readCachedStatus(pathOptions);
  return {
    running,
    ...base,
    ...(version ? { version } : {}),
    from: 'cache',
    ...(other ? { other_agent_data_dir: other } : {}),
    licenses: cached.map((c) => toWireState(c.status)),
    files: cached.map((c) => ({ project_id: c.projectId, file: c.file, problem: c.problem, set_aside: c.setAside, pending_operations: c.pendingIntents })),
  };
}

/** Human-readable status, one line per license, then what support should know about the files. */
export function formatStatus(report: AgentStatusReport): string {
  const where = `socket ${report.socket_path}, namespace ${report.namespace}, data ${report.data_dir}`;
  let head: string;
  if (report.from === 'agent') {
    const clients = report.connections === undefined ? '' : `, ${report.connections} other connection${report.connections === 1 ? '' : 's'}`;
    head = `agent running (version ${report.version ?? '?'}${clients}): ${where}`;
  }
  else if (report.other_agent_data_dir) head = `an agent runs on this socket but serves ${report.other_agent_data_dir}; showing the cache files of ${report.data_dir} (${where})`;
  else head = `agent not running (${where}); states read from the cache files, unchanged`;
  const lines = [head];
  if (report.licenses.length === 0) lines.push('no licenses held');
  for (const l of report.licenses) {
    const state = l.valid ? 'valid' : `not valid (${l.reason})`;
    const extra = [
      l.code_hint ? `code ${l.code_hint}` : undefined,
      l.activations !== null && l.max_activations !== null ? `${l.activations}/${l.max_activations} activations` : undefined,
      `source ${l.source}`,
      l.validated_at ? `validated ${l.validated_at}` : undefined,
      l.grace_until ? `grace until ${l.grace_until}` : undefined,
      l.next_check_at ? `next check ${l.next_check_at}` : undefined,
    ].filter(Boolean);
    lines.push(`${l.project_id}  ${state}  ${extra.join(', ')}`);
  }
  for (const f of report.files ?? []) {
    if (f.problem) lines.push(`  ${f.file}: not trusted: ${f.problem}`);
    for (const aside of f.set_aside) lines.push(`  ${aside}: set aside earlier as invalid`);
    if (f.pending_operations > 0) lines.push(`  ${f.project_id}: ${f.pending_operations} activation or deactivation not yet settled with the service (the agent settles it at start)`);
  }
  return lines.join('\n');
}
