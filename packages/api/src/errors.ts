import type { RateLimit } from './rate-limit.js';

const kApiError = Symbol.for('plugin-license.api.error');
const kKind = Symbol.for('plugin-license.api.error.kind');

/** Codes the service documents (section 7); other strings may appear from newer services. */
export type ServiceErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'internal_error'
  | 'invalid_code'
  | 'code_not_found'
  | 'code_revoked'
  | 'max_activations_reached'
  /** Ours, not the service's: a 404 without the service's error body (the base URL answers, but is not the service). */
  | 'endpoint_not_found'
  | (string & {});

export type WebhookVerificationReason =
  | 'missing_header'
  | 'bad_signature'
  | 'bad_timestamp'
  | 'stale'
  | 'future'
  | 'bad_payload';

type ErrorKind = 'ServiceError' | 'NetworkError' | 'TimeoutError' | 'SchemaError' | 'ConfigError' | 'WebhookVerificationError';

/**
 * Base class of every error this package throws. Switch on `code`; test with `isApiError`,
 * which also recognises errors from another copy of this package or another realm.
 */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly code: string;
  readonly [kApiError] = true;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }
}

/** The service answered with an error status (section 7 body, or a bare status from a proxy). */
export class ServiceError extends ApiError {
  override name = 'ServiceError' as const;
  readonly [kKind]: ErrorKind = 'ServiceError';
  declare readonly code: ServiceErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;
  /**
   * How long to wait before trying again, in ms: set for 429 (from `X-RateLimit-Reset` or
   * `Retry-After`) and 503 with `Retry-After`; measured against the service's `Date` header and
   * capped at one hour, so a skewed clock never turns it into days.
   */
  readonly retryAfterMs: number | undefined;
  /** `retryAfterMs` after the answer arrived, on this machine's clock. */
  readonly retryAt: Date | undefined;
  readonly rateLimit: RateLimit | undefined;
  /** Method and path template, e.g. `GET /plugin-activation/status/:code` (never the code itself). */
  readonly endpoint: string;

  constructor(init: {
    status: number;
    code: ServiceErrorCode;
    message: string;
    details?: Record<string, unknown>;
    retryAfterMs?: number;
    retryAt?: Date;
    rateLimit?: RateLimit;
    endpoint: string;
  }) {
    super(init.code, init.message);
    this.status = init.status;
    this.details = init.details ?? {};
    this.retryAfterMs = init.retryAfterMs;
    this.retryAt = init.retryAt;
    this.rateLimit = init.rateLimit;
    this.endpoint = init.endpoint;
  }
}

/** The request never got an HTTP answer: DNS, refused or reset connection, TLS failure. */
export class NetworkError extends ApiError {
  override name = 'NetworkError' as const;
  readonly [kKind]: ErrorKind = 'NetworkError';
  readonly endpoint: string;

  constructor(message: string, endpoint: string, cause?: unknown) {
    super('network_error', message, { cause });
    this.endpoint = endpoint;
  }
}

/** No complete answer within the per-attempt time-out (or the retry deadline). */
export class TimeoutError extends ApiError {
  override name = 'TimeoutError' as const;
  readonly [kKind]: ErrorKind = 'TimeoutError';
  readonly endpoint: string;
  readonly timeoutMs: number;

  constructor(message: string, endpoint: string, timeoutMs: number, cause?: unknown) {
    super('timeout', message, { cause });
    this.endpoint = endpoint;
    this.timeoutMs = timeoutMs;
  }
}

export interface SchemaIssue {
  path: string;
  message: string;
}

/** A success answer whose body is not JSON or lacks / mistypes a documented field. */
export class SchemaError extends ApiError {
  override name = 'SchemaError' as const;
  readonly [kKind]: ErrorKind = 'SchemaError';
  readonly endpoint: string;
  /** Dotted path of the first bad field, e.g. `builds[0].status`; empty for the body itself. */
  readonly path: string;
  readonly issues: SchemaIssue[];

  constructor(message: string, init: { endpoint: string; path: string; issues: SchemaIssue[]; cause?: unknown }) {
    super('schema_mismatch', message, { cause: init.cause });
    this.endpoint = init.endpoint;
    this.path = init.path;
    this.issues = init.issues;
  }
}

/** Bad client options or arguments (e.g. `http://` to a non-loopback host, an empty id). */
export class ConfigError extends ApiError {
  override name = 'ConfigError' as const;
  readonly [kKind]: ErrorKind = 'ConfigError';
  /** The option or argument at fault, e.g. `baseUrl`. */
  readonly option: string;

  constructor(message: string, option: string, cause?: unknown) {
    super('invalid_config', message, { cause });
    this.option = option;
  }
}

/** A webhook delivery failed verification; `code` is the reason. Answer the sender with 400/401. */
export class WebhookVerificationError extends ApiError {
  override name = 'WebhookVerificationError' as const;
  readonly [kKind]: ErrorKind = 'WebhookVerificationError';
  declare readonly code: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string, cause?: unknown) {
    super(reason, message, { cause });
  }
}

const kinds = new Set<string>(['ServiceError', 'NetworkError', 'TimeoutError', 'SchemaError', 'ConfigError', 'WebhookVerificationError']);

function kindOf(e: unknown): string | undefined {
  if (!e || typeof e !== 'object') return undefined;
  const marked = (e as Record<symbol, unknown>)[kApiError] === true;
  const kind = (e as Record<symbol, unknown>)[kKind];
  if (marked) return typeof kind === 'string' ? kind : 'ApiError';
  // Fallback for copies that lost the symbol (serialised, or built by another tool): trust the name and a string code.
  const name = (e as { name?: unknown }).name;
  if (typeof name === 'string' && (kinds.has(name) || name === 'ApiError') && typeof (e as { code?: unknown }).code === 'string') {
    return name;
  }
  return undefined;
}

/**
 * True for any error of this package, from any copy or realm.
 *
 * @example
 * try { await client.activation.activate({ code, machine_id }); }
 * catch (e) { if (isApiError(e)) console.error(e.code, e.message); else throw e; }
 */
export function isApiError(e: unknown): e is ApiError {
  return kindOf(e) !== undefined;
}

/**
 * True for an error answer of the service.
 *
 * @example
 * if (isServiceError(e) && e.code === 'max_activations_reached') askToDeactivateElsewhere();
 */
export function isServiceError(e: unknown): e is ServiceError {
  return kindOf(e) === 'ServiceError';
}

/**
 * True when the service could not be reached.
 *
 * @example
 * if (isNetworkError(e)) useCachedLicense();
 */
export function isNetworkError(e: unknown): e is NetworkError {
  return kindOf(e) === 'NetworkError';
}

/**
 * True when a call ran out of time.
 *
 * @example
 * if (isTimeoutError(e)) console.warn(`no answer within ${e.timeoutMs} ms`);
 */
export function isTimeoutError(e: unknown): e is TimeoutError {
  return kindOf(e) === 'TimeoutError';
}

/**
 * True when a success answer did not match the documented shape.
 *
 * @example
 * if (isSchemaError(e)) console.error(`${e.endpoint}: bad field ${e.path}`);
 */
export function isSchemaError(e: unknown): e is SchemaError {
  return kindOf(e) === 'SchemaError';
}

/**
 * True for bad client options or arguments.
 *
 * @example
 * if (isConfigError(e)) console.error(`fix option ${e.option}: ${e.message}`);
 */
export function isConfigError(e: unknown): e is ConfigError {
  return kindOf(e) === 'ConfigError';
}

/**
 * True when a webhook delivery failed verification.
 *
 * @example
 * if (isWebhookVerificationError(e)) res.writeHead(e.code === 'bad_payload' ? 400 : 401).end();
 */
export function isWebhookVerificationError(e: unknown): e is WebhookVerificationError {
  return kindOf(e) === 'WebhookVerificationError';
}
