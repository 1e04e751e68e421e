import { listCachedProjects } from '@plugin-license/licensing';
import { AgentClient } from './client.js';
import type { AgentConfig } from './config.js';
import { defaultLicenseFactory } from './default-license-factory.js';
import { isAgentError } from './errors.js';
import { LicenseStateWire, toWireState } from './license-state.js';

/** What `plugin-license-agent status` reports. */
export interface AgentStatusReport {
  running: boolean;
  socket_path: string;
  namespace: string;
  /** The running agent's version (when running). */
  version?: string;
  /** `agent`: answered by the running agent; `cache`: read from the cache files. */
  from: 'agent' | 'cache';
  licenses: LicenseStateWire[];
}

// Reading caches needs no service; License still wants a base URL, so a loopback placeholder is
// used when none is configured (check() never touches the network).
const PLACEHOLDER_BASE_URL = 'http://127.0.0.1:9/functions/v1';

/**
 * Asks the running agent (`list`), or, when none runs, reads the namespace's cache files.
 *
 * @example
 * const report = await agentStatus(resolveAgentConfig());
 * console.log(report.running, report.licenses.length);
 */
export async function agentStatus(config: AgentConfig, timeoutMs = 1000): Promise<AgentStatusReport> {
  try {
    const client = await AgentClient.connect({ socketPath: config.socketPath, connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs, reconnect: false });
    try {
      const hello = (await client.request('hello', { protocol: 1, client: 'plugin-license-agent status' })) as { agent?: string };
      const list = (await client.request('list', {})) as { licenses?: unknown[] };
      return {
        running: true,
        socket_path: config.socketPath,
        namespace: config.namespace,
        ...(hello.agent ? { version: hello.agent } : {}),
        from: 'agent',
        licenses: (list.licenses ?? []).map((l) => LicenseStateWire.parse(l)),
      };
    } finally {
      client.close();
    }
  } catch (err) {
    if (!isAgentError(err) || (err.code !== 'not_running' && err.code !== 'timeout' && err.code !== 'disconnected')) throw err;
  }
  const pathOptions = { namespace: config.namespace, ...(config.home ? { home: config.home } : {}) };
  const ids = await listCachedProjects(pathOptions);
  const factory = defaultLicenseFactory();
  const licenses: LicenseStateWire[] = [];
  for (const projectId of ids) {
    const license = factory({ projectId, baseUrl: config.baseUrl ?? PLACEHOLDER_BASE_URL, namespace: config.namespace, home: config.home, token: undefined, now: () => Date.now() });
    try {
      licenses.push(toWireState(license.check(), null));
    } finally {
      await license.close();
    }
  }
  return { running: false, socket_path: config.socketPath, namespace: config.namespace, from: 'cache', licenses };
}

/** Human-readable status, one line per license. */
export function formatStatus(report: AgentStatusReport): string {
  const lines = [
    report.running
      ? `agent running (version ${report.version ?? '?'}) on ${report.socket_path}, namespace ${report.namespace}`
      : `agent not running (socket ${report.socket_path}, namespace ${report.namespace}); states read from the cache`,
  ];
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
  return lines.join('\n');
}
