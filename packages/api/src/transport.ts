import type * as z from 'zod';
import { TIMEOUT_CODES, type Carrier, type CarriedAnswer, type HeaderValues } from './carrier.js';
import { redact, redactDeep } from './code-hint.js';
import type { Deadline } from './deadline.js';
import { ConfigError, NetworkError, SchemaError, ServiceError, TimeoutError, type SchemaIssue } from './errors.js';
import { parseRateLimit, parseRetryAfterMs, type RateLimit } from './rate-limit.js';
import { backoffDelay, type RetryPolicy } from './retry-policy.js';
import { ErrorBody } from './schemas.js';

/** Per-call options accepted by every client method. */
export interface CallOptions {
  /** Aborts the call (and any retry wait); the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Time-out of each attempt in ms (headers wait and body pauses), overriding the client's `timeoutMs`. */
  timeoutMs?: number;
  /**
   * The deadline this call shares with others (a command's), overriding the client's `deadline`:
   * every attempt and retry wait ends by it. See {@link Deadline}.
   */
  deadline?: Deadline;
}

/** Everything the transport needs to know about one endpoint call. */
export interface CallSpec<T> {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the base URL, already percent-encoded. */
  path: string;
  /** Method and path template for messages, e.g. `GET /builds/:id`: never holds ids or codes. */
  endpoint: string;
  schema: z.ZodType<T>;
  query?: Record<string, string | number | undefined>;
  /** Serialised exactly once; `raw` is sent byte for byte (signed trigger bodies). */
  body?: { json: unknown } | { raw: string };
  bearer: boolean;
  headers?: Record<string, string>;
  /** Safe to repeat: GETs and validate. Everything else is never retried. */
  idempotent: boolean;
  /** Strings that must never reach a message (codes, secrets); shown as hints instead. */
  secrets?: (string | undefined)[];
  /** Turn a 3xx with `Location` into this value instead of an error (download endpoint). */
  onRedirect?: (location: string) => unknown;
  /** What proves the caller, when not the bearer token (the trigger's webhook secret): the advice of a 401 or 403 names it. */
  credential?: 'webhook secret';
}

export interface TransportConfig {
  baseUrl: URL;
  token: string | undefined;
  /** The carrier: a promise while the first request makes it, then the carrier itself. */
  carrier: () => Carrier | Promise<Carrier>;
  timeoutMs: number;
  /** The deadline of a call given none: the client's, shared or one per call. */
  deadline: (() => Deadline) | undefined;
  userAgent: string;
  policy: RetryPolicy;
  onRateLimit: (rateLimit: RateLimit) => void;
}

interface RawAnswer {
  status: number;
  headers: HeaderValues;
  text: string;
  rateLimit: RateLimit | undefined;
}

// Advice for an error answer the service did not explain (no error body): the service's own
// words, when it gave any, are the advice, and nothing is added to them (two pieces of advice
// repeat or contradict each other).
const nextStep: Record<string, string> = {
  bad_request: 'fix the request fields named in details',
  unauthorized: 'check that the access token is set (PLUGIN_LICENSE_TOKEN or the token option) and has not expired',
  forbidden: "the service refused this request for this account (a resource of another account, or a used-up build quota: see builds usage)",
  not_found: 'check the id in the request',
  endpoint_not_found: 'something answers at the base URL, but not the service; check the base URL (it ends in /functions/v1)',
  internal_error: 'the service failed; try again later, and contact support if it persists',
  invalid_code: 'the activation code is malformed; check it for typos (it is UUID-like text)',
  code_not_found: 'check the activation code for typos and that it belongs to this plugin',
  code_revoked: 'this activation code was revoked; contact the vendor for a new one',
  max_activations_reached: 'every activation slot of this code is in use; deactivate it on another machine first, or ask the vendor for more activations',
};

function codeForStatus(status: number): string {
  const byStatus: Record<number, string> = { 400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 429: 'rate_limited' };
  return byStatus[status] ?? (status >= 500 ? 'internal_error' : `http_${status}`);
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

function describeCause(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  if (err && typeof err.code === 'string') return err.code;
  return err && typeof err.message === 'string' ? err.message : String(e);
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

// Node's codes for a certificate it does not accept (unknown issuer, self-signed, wrong name, expired).
const TLS_CODES = /^(UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|CERT_|ERR_TLS_CERT|ERR_SSL_|HOSTNAME_MISMATCH)/;

/** The TLS verification code of a failure (also wrapped by a proxy tunnel), if that is what it is. */
function tlsFailure(e: unknown): string | undefined {
  for (let x = e as { code?: unknown; cause?: unknown } | undefined, depth = 0; x && depth < 4; x = x.cause as typeof x, depth++) {
    if (typeof x.code === 'string' && TLS_CODES.test(x.code)) return x.code;
  }
  return undefined;
}

function isRetryable(e: unknown): e is NetworkError | TimeoutError | ServiceError {
  if (e instanceof NetworkError || e instanceof TimeoutError) return true;
  return e instanceof ServiceError && (e.status === 429 || e.status >= 500);
}

/** Sends one logical call: attempts, time-outs, retries, rate-limit tracking, parsing. */
export class Transport {
  readonly #base: string;
  readonly #bearer: string;

  readonly #config: TransportConfig;

  constructor(config: TransportConfig) {
    this.#config = config;
    this.#base = config.baseUrl.href.replace(/\/+$/, '');
    this.#bearer = `Bearer ${config.token ?? ''}`;
  }

  url(spec: Pick<CallSpec<unknown>, 'path' | 'query'>): string {
    let url = `${this.#base}${spec.path}`;
    if (spec.query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(spec.query)) if (value !== undefined) params.set(key, String(value));
      const query = params.toString();
      if (query) url += `?${query}`;
    }
    return url;
  }

  async call<T>(spec: CallSpec<T>, options: CallOptions = {}): Promise<T> {
    const { policy } = this.#config;
    const deadline = options.deadline ?? this.#config.deadline?.();
    // A deadline's signal (Ctrl-C) cuts off only a call that is safe to repeat: one that changes
    // something runs to its answer or its deadline, so its outcome is known.
    const signal = options.signal ?? (spec.idempotent ? deadline?.signal : undefined);
    const timeoutMs = options.timeoutMs ?? this.#config.timeoutMs;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new ConfigError(`timeoutMs must be a positive number of milliseconds (got ${String(timeoutMs)})`, 'timeoutMs');
    }
    const retries = spec.idempotent ? policy.retries : 0;
    // The call's own budget, waits the service asks for included (policy.deadlineMs); a shared
    // deadline bounds the time spent waiting for answers.
    const callEnd = policy.now() + policy.deadlineMs;
    const url = this.url(spec);

    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw abortReason(signal);
      let attemptMs = retries > 0 ? Math.max(1, Math.min(timeoutMs, callEnd - policy.now())) : timeoutMs;
      let cutBy: Deadline | undefined;
      if (deadline !== undefined) {
        const left = deadline.remainingMs();
        if (left <= 0) throw deadline.timeoutError(spec.endpoint);
        if (left <= attemptMs) {
          attemptMs = left;
          cutBy = deadline;
        }
      }
      let failure: unknown;
      // One attempt, inline (not a method of its own: one promise less per call on the hot path).
      // Time-outs are the carrier's own (undici's headersTimeout/bodyTimeout, a timer in Node's)
      // rather than an AbortController per attempt: creating and wiring a signal per request
      // cost ~15% of a loopback round trip.
      try {
        if (signal?.aborted) throw abortReason(signal);
        // No await once the carrier is made: the client hands it back itself, not a promise.
        const made = this.#config.carrier();
        const carrier = made instanceof Promise ? await made : made;
        let response: CarriedAnswer;
        try {
          const body = spec.body === undefined ? undefined : 'raw' in spec.body ? spec.body.raw : JSON.stringify(spec.body.json);
          response = await carrier.send(url, { method: spec.method, headers: this.#headers(spec), body, signal, timeoutMs: attemptMs });
        } catch (e) {
          return this.#failed(e, 'reach', spec, attemptMs, signal, cutBy);
        }
        const { headers } = response;
        const rateLimit = parseRateLimit(headers, policy.now());
        if (rateLimit) this.#config.onRateLimit(rateLimit);
        let text: string;
        try {
          text = await response.text();
        } catch (e) {
          return this.#failed(e, 'read the answer of', spec, attemptMs, signal, cutBy);
        }
        return this.#interpret(spec, url, { status: response.status, headers, text, rateLimit });
      } catch (e) {
        failure = e;
      }
      if (!isRetryable(failure) || attempt >= retries) throw failure;
      const retryAfterMs = failure instanceof ServiceError ? failure.retryAfterMs : undefined;
      if (retryAfterMs !== undefined && retryAfterMs > policy.maxServiceWaitMs) throw failure;
      const wait = backoffDelay(policy, attempt, retryAfterMs);
      if (policy.now() + wait >= callEnd) throw failure;
      // A back-off is part of waiting for an answer; a wait the service asked for is not.
      if (deadline !== undefined && retryAfterMs === undefined && wait >= deadline.remainingMs()) {
        throw failure instanceof TimeoutError ? deadline.timeoutError(spec.endpoint, failure) : failure;
      }
      try {
        await policy.sleep(wait, signal);
      } catch (e) {
        // The default sleep rejects with an AbortError; an injected one may say it its own way.
        if (signal?.aborted && (e as { name?: unknown } | undefined)?.name === 'AbortError') throw abortReason(signal);
        throw e;
      }
      if (deadline !== undefined && retryAfterMs !== undefined) deadline.extend(wait);
    }
  }

  #headers(spec: CallSpec<unknown>): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.#config.userAgent };
    if (spec.headers) Object.assign(headers, spec.headers);
    if (spec.body) headers['content-type'] = 'application/json';
    if (spec.bearer && this.#config.token) headers.authorization = this.#bearer;
    return headers;
  }

  /** What a failed attempt throws (a method, not a closure made per attempt: the hot path stays lean). */
  #failed(e: unknown, stage: string, spec: CallSpec<unknown>, timeoutMs: number, signal: AbortSignal | undefined, cutBy: Deadline | undefined): never {
    if (signal?.aborted) throw abortReason(signal);
    const code = (e as { code?: unknown } | undefined)?.code;
    if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
      if (cutBy !== undefined) throw cutBy.timeoutError(spec.endpoint, e);
      throw new TimeoutError(
        `no answer from ${spec.endpoint} within ${timeoutMs} ms; check the network, or raise timeoutMs if the service is slow`,
        spec.endpoint,
        timeoutMs,
        e,
      );
    }
    const tls = tlsFailure(e);
    if (tls !== undefined) {
      throw new NetworkError(
        `the TLS certificate of ${this.#config.baseUrl.hostname} is not trusted (${tls}); if the service uses a private CA, pass its PEM as the ca option or set NODE_EXTRA_CA_CERTS, otherwise check the base URL and this machine's clock`,
        spec.endpoint,
        e,
      );
    }
    throw new NetworkError(
      `could not ${stage} ${spec.endpoint} at ${this.#config.baseUrl.host} (${redact(describeCause(e), this.#secrets(spec))}); check the network connection and the base URL`,
      spec.endpoint,
      e,
    );
  }

  #secrets(spec: CallSpec<unknown>): (string | undefined)[] {
    return [...(spec.secrets ?? []), this.#config.token];
  }

  #interpret<T>(spec: CallSpec<T>, url: string, answer: RawAnswer): T {
    const { status, headers } = answer;
    if (status >= 200 && status < 300) return this.#parse(spec, answer.text, status);
    const location = headers.location;
    if (spec.onRedirect && status >= 300 && status < 400 && location) {
      const target = new URL(Array.isArray(location) ? (location[0] ?? '') : location, url).href;
      return this.#validate(spec, spec.onRedirect(target));
    }
    throw this.#serviceError(spec, answer);
  }

  #parse<T>(spec: CallSpec<T>, text: string, status: number): T {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (cause) {
      throw new SchemaError(
        `the ${status} answer of ${spec.endpoint} is not JSON; check that the base URL points at the service (…/functions/v1) and not at a web page or proxy`,
        { endpoint: spec.endpoint, path: '', issues: [{ path: '', message: 'body is not JSON' }], cause },
      );
    }
    return this.#validate(spec, data);
  }

  #validate<T>(spec: CallSpec<T>, data: unknown): T {
    const result = spec.schema.safeParse(data);
    if (result.success) return result.data;
    const secrets = this.#secrets(spec);
    const issues: SchemaIssue[] = result.error.issues.map((issue) => ({
      path: formatPath(issue.path),
      message: redact(issue.message, secrets),
    }));
    const first = issues[0] ?? { path: '', message: 'invalid' };
    throw new SchemaError(
      `the answer of ${spec.endpoint} does not match the documented shape: field "${first.path || '(body)'}": ${first.message}; ` +
        'the service may have changed, so upgrade @plugin-license/api or report it',
      { endpoint: spec.endpoint, path: first.path, issues, cause: result.error },
    );
  }

  #serviceError(spec: CallSpec<unknown>, answer: RawAnswer): ServiceError {
    const secrets = this.#secrets(spec);
    let body: ErrorBody | undefined;
    try {
      const parsed = ErrorBody.safeParse(JSON.parse(answer.text));
      if (parsed.success) body = parsed.data;
    } catch {
      body = undefined;
    }
    // A 404 without the service's error body is not the service saying "no such thing": nothing
    // about an id or a code may be concluded from it.
    const code = body?.error ?? (answer.status === 404 ? 'endpoint_not_found' : codeForStatus(answer.status));
    const now = this.#config.policy.now();
    const retryAfterMs = parseRetryAfterMs(answer.status, answer.headers, now);
    const retryAt = retryAfterMs === undefined ? undefined : new Date(now + retryAfterMs);
    const said = body ? redact(body.message, secrets) : `no error body (HTTP ${answer.status})`;
    let next: string | undefined = nextStep[code] ?? (answer.status >= 500 ? nextStep.internal_error : 'check the request against the service interface');
    if (spec.credential === 'webhook secret' && (answer.status === 401 || answer.status === 403)) {
      next = "check the project's webhook secret (PLUGIN_LICENSE_WEBHOOK_SECRET, or the auth option): the trigger is signed with it";
    }
    if (code === 'rate_limited' || answer.status === 429) {
      next = retryAt ? `too many requests; wait until ${retryAt.toISOString()} before trying again` : 'too many requests; slow down and try again later';
    }
    // The service said what happened, and what to do, in its own words (a time to wait included):
    // a second piece of advice would repeat or contradict it.
    if (body !== undefined && body.message.trim() !== '') next = undefined;
    const details = body?.details ? (redactDeep(body.details, secrets) as Record<string, unknown>) : {};
    return new ServiceError({
      status: answer.status,
      code,
      message: `${spec.endpoint} failed with ${answer.status} ${code}: ${said}${next === undefined ? '' : `; ${next}`}`,
      details,
      ...(retryAt ? { retryAt, retryAfterMs } : {}),
      ...(answer.rateLimit ? { rateLimit: answer.rateLimit } : {}),
      endpoint: spec.endpoint,
    });
  }
}
