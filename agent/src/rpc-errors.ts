import { isLicenseError } from '@plugin-license/licensing';
import { AgentError, isAgentError } from './errors.js';
import { RpcErrorCode, type RpcErrorObject } from './protocol.js';

/**
 * The one mapping from errors inside the agent to JSON-RPC error objects on the socket.
 * A licensing error: `cache_io` -> -32004 {code, path} (nothing was asked of the service, or it is
 * settled at the next start); `unavailable` (network, time-out, 5xx) -> -32002 {retry_at?}; any
 * other error the service sent -> -32001 {code, status, message} with the service's own code;
 * a signed ticket the relay sent that does not verify with the agent's keys -> -32001 {code:
 * `signed_ticket_refused`, status: null, message, kid, trusted} (the slot is recorded as usual);
 * a refusal before any request (a code that can't be one, a bad argument, an offline document
 * refused or unreadable) -> -32602 {code} with the licensing code (`offline_refused`, …). Agent limits
 * -> -32003 {limit}; anything else is a bug -> -32603. `scrub` removes secrets from messages.
 */
export function toRpcError(err: unknown, scrub: (s: string) => string = (s) => s): RpcErrorObject {
  if (isLicenseError(err)) {
    const message = scrub(err.message);
    if (err.code === 'cache_io') {
      return { code: RpcErrorCode.storageFailed, message, data: { code: err.systemCode ?? 'EIO', ...(err.path ? { path: err.path } : {}) } };
    }
    if (err.code === 'unavailable') {
      return { code: RpcErrorCode.serviceUnavailable, message, data: err.retryAt ? { retry_at: err.retryAt.toISOString() } : {} };
    }
    if (err.code === 'signed_ticket_refused') {
      // What the relay answered carries a signature this agent's keys do not accept: the relay's answer, refused here.
      return { code: RpcErrorCode.serviceRefused, message, data: { code: err.code, status: null, message, kid: err.kid ?? null, trusted: err.trustedKids ?? [] } };
    }
    if (err.serviceCode !== undefined) {
      const data: Record<string, unknown> = { code: err.serviceCode, status: err.status ?? null, message };
      if (err.retryAt) data.retry_at = err.retryAt.toISOString();
      return { code: RpcErrorCode.serviceRefused, message, data };
    }
    // data.code says which refusal (an offline response refused, a file that is not one, a code that can't be one).
    return { code: RpcErrorCode.invalidParams, message: `invalid params: ${message}`, data: { code: err.code } };
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
    case RpcErrorCode.storageFailed:
      return new AgentError('storage_failed', error.message, { ...fields, ...(typeof data.path === 'string' ? { path: data.path } : {}) });
    default:
      return new AgentError('internal_error', error.message, fields);
  }
}
