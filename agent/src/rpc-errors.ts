import { AgentError, isAgentError } from './errors.js';
import { RpcErrorCode, type RpcErrorObject } from './protocol.js';

const SERVICE_REFUSALS = new Set(['invalid_code', 'code_not_found', 'code_revoked', 'max_activations_reached', 'rate_limited', 'unauthorized', 'forbidden', 'bad_request', 'not_found']);

interface LicenseErrorLike {
  name: string;
  code: string;
  message: string;
  status?: number;
  retryAt?: Date;
}

function isLicenseErrorLike(e: unknown): e is LicenseErrorLike {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'LicenseError' && typeof (e as { code?: unknown }).code === 'string';
}

const DEFAULT_STATUS: Record<string, number> = {
  invalid_code: 400,
  code_not_found: 404,
  code_revoked: 403,
  max_activations_reached: 403,
  rate_limited: 429,
  unauthorized: 401,
};

/**
 * The one mapping from errors inside the agent to JSON-RPC error objects on the socket:
 * service refusals → -32001 {code, status, message}, unreachable service → -32002 {retry_at?},
 * agent limits → -32003 {limit}, bad arguments → -32602, anything else → -32603.
 * `scrub` removes secrets from messages before they leave.
 */
export function toRpcError(err: unknown, scrub: (s: string) => string = (s) => s): RpcErrorObject {
  if (isLicenseErrorLike(err)) {
    const message = scrub(err.message);
    if (err.code === 'unavailable') {
      return {
        code: RpcErrorCode.serviceUnavailable,
        message: `the license service is unreachable: ${message}`,
        data: err.retryAt ? { retry_at: err.retryAt.toISOString() } : {},
      };
    }
    if (SERVICE_REFUSALS.has(err.code)) {
      const data: Record<string, unknown> = { code: err.code, status: err.status ?? DEFAULT_STATUS[err.code] ?? 400, message };
      if (err.retryAt) data.retry_at = err.retryAt.toISOString();
      return { code: RpcErrorCode.serviceRefused, message, data };
    }
    if (err.code === 'invalid_argument') return { code: RpcErrorCode.invalidParams, message: `invalid params: ${message}` };
    return { code: RpcErrorCode.internalError, message: `internal error (${err.code}): ${message}` };
  }
  if (isAgentError(err)) {
    if (err.code === 'over_limit') {
      const data: Record<string, unknown> = { limit: err.limit ?? 'unknown' };
      if (err.retryAt) data.retry_at = err.retryAt.toISOString();
      return { code: RpcErrorCode.overLimit, message: scrub(err.message), data };
    }
    if (err.code === 'service_refused') {
      const data: Record<string, unknown> = { code: err.serviceCode ?? 'unknown', status: err.status ?? 0, message: scrub(err.message) };
      if (err.retryAt) data.retry_at = err.retryAt.toISOString();
      return { code: RpcErrorCode.serviceRefused, message: scrub(err.message), data };
    }
    if (err.code === 'invalid_params') return { code: RpcErrorCode.invalidParams, message: scrub(err.message) };
    if (err.code === 'method_not_found') return { code: RpcErrorCode.methodNotFound, message: scrub(err.message) };
  }
  return { code: RpcErrorCode.internalError, message: 'internal error in the agent; see its log file for details' };
}

/** Turns a JSON-RPC error received by a client into an `AgentError`. */
export function fromRpcError(error: RpcErrorObject): AgentError {
  const data = (typeof error.data === 'object' && error.data !== null ? error.data : {}) as Record<string, unknown>;
  const retryAt = typeof data.retry_at === 'string' && !Number.isNaN(Date.parse(data.retry_at)) ? new Date(data.retry_at) : undefined;
  const fields = { rpcCode: error.code, data: error.data, ...(retryAt ? { retryAt } : {}) };
  switch (error.code) {
    case RpcErrorCode.parseError:
      return new AgentError('parse_error', error.message, fields);
    case RpcErrorCode.invalidRequest:
      return new AgentError('invalid_request', error.message, fields);
    case RpcErrorCode.methodNotFound:
      return new AgentError('method_not_found', error.message, fields);
    case RpcErrorCode.invalidParams:
      return new AgentError('invalid_params', error.message, fields);
    case RpcErrorCode.serviceRefused:
      return new AgentError('service_refused', error.message, {
        ...fields,
        ...(typeof data.code === 'string' ? { serviceCode: data.code } : {}),
        ...(typeof data.status === 'number' ? { status: data.status } : {}),
      });
    case RpcErrorCode.serviceUnavailable:
      return new AgentError('service_unavailable', error.message, fields);
    case RpcErrorCode.overLimit:
      return new AgentError('over_limit', error.message, { ...fields, ...(typeof data.limit === 'string' ? { limit: data.limit } : {}) });
    default:
      return new AgentError('internal_error', error.message, fields);
  }
}
