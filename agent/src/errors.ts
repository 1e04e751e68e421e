const MARKER = Symbol.for('plugin-license.agent.error');

/** Stable codes callers switch on. */
export type AgentErrorCode =
  | 'parse_error'
  | 'invalid_request'
  | 'method_not_found'
  | 'agent_outdated'
  | 'invalid_params'
  | 'service_refused'
  | 'service_unavailable'
  | 'over_limit'
  | 'storage_failed'
  | 'internal_error'
  | 'not_running'
  | 'timeout'
  | 'disconnected'
  | 'closed'
  | 'socket_path_too_long'
  | 'socket_in_use'
  | 'socket_dir_unsafe'
  | 'bad_answer'
  | 'config_invalid'
  | 'usage'
  | 'unsupported_platform'
  | 'service_manager_failed';

/** Who holds a socket path that is not the user's own (`socket_dir_unsafe`). */
export interface SocketHolder {
  /** The folder, link or socket file that failed the check. */
  path: string;
  uid: number;
  /** The owner's user name, when the system knows it. */
  user: string | undefined;
  /** Permission bits as octal text, e.g. `0755`, `1777`. */
  mode: string;
}

export interface AgentErrorFields {
  /** JSON-RPC error code, when the error came from (or goes to) the socket. */
  rpcCode?: number;
  /** The service's own error code (`invalid_code`, `rate_limited`, …) for -32001. */
  serviceCode?: string;
  /** HTTP status the service answered with, when known. */
  status?: number;
  /** When the service (or the agent's budget) allows a new try. */
  retryAt?: Date;
  /** Which limit was hit, for `over_limit`. */
  limit?: string;
  /** Socket path or file involved, when any. */
  path?: string;
  /** The raw JSON-RPC `data` object, when any. */
  data?: unknown;
  /** For `socket_dir_unsafe`: who holds the path, and its mode. */
  holder?: SocketHolder;
  cause?: unknown;
}

/**
 * The one error class of `@plugin-license/agent`: thrown by `startAgent`, `AgentClient` and the
 * CLI helpers. Switch on `code`; messages say what happened and what to do next.
 *
 * @example
 * try { await client.activate(projectId, code) } catch (err) {
 *   if (isAgentError(err) && err.code === 'service_refused') console.log(err.serviceCode)
 * }
 */
export class AgentError extends Error {
  override readonly name = 'AgentError' as const;
  readonly code: AgentErrorCode;
  readonly rpcCode?: number;
  readonly serviceCode?: string;
  readonly status?: number;
  readonly retryAt?: Date;
  readonly limit?: string;
  readonly path?: string;
  readonly data?: unknown;
  readonly holder?: SocketHolder;
  readonly [MARKER] = true;

  constructor(code: AgentErrorCode, message: string, fields: AgentErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = code;
    if (fields.rpcCode !== undefined) this.rpcCode = fields.rpcCode;
    if (fields.serviceCode !== undefined) this.serviceCode = fields.serviceCode;
    if (fields.status !== undefined) this.status = fields.status;
    if (fields.retryAt !== undefined) this.retryAt = fields.retryAt;
    if (fields.limit !== undefined) this.limit = fields.limit;
    if (fields.path !== undefined) this.path = fields.path;
    if (fields.data !== undefined) this.data = fields.data;
    if (fields.holder !== undefined) this.holder = fields.holder;
  }
}

/**
 * True for an `AgentError`, also across realms and duplicate installs of the package.
 *
 * @example
 * if (isAgentError(err) && err.code === 'not_running') retryLater()
 */
export function isAgentError(value: unknown): value is AgentError {
  return (
    typeof value === 'object' &&
    value !== null &&
    ((value as Record<symbol, unknown>)[MARKER] === true || (value as { name?: unknown }).name === 'AgentError')
  );
}
