/**
 * The longest wait the service may impose on a client: one hour. A longer one comes from a
 * skewed clock (the service's or this machine's) or a bad header, and must never lock a user out.
 */
export const MAX_SERVICE_WAIT_MS = 3_600_000;

/** The service's rate-limit window as last reported by `X-RateLimit-*` headers. */
export interface RateLimit {
  /** Requests allowed in the window. */
  limit: number;
  /** Requests left in the window. */
  remaining: number;
  /**
   * How long until the window resets, in ms: `X-RateLimit-Reset` (Unix seconds on the service's
   * clock) measured against the service's own `Date` header, capped at {@link MAX_SERVICE_WAIT_MS}.
   * Relative, so callers add it to their own clock.
   */
  resetInMs: number;
  /** `resetInMs` after the answer arrived, on this machine's clock (`Date.now()` of the client). */
  resetAt: Date;
}

type HeaderValue = string | string[] | undefined;
type Headers = Record<string, HeaderValue>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function integer(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

function clampWait(ms: number): number {
  return ms <= 0 ? 0 : ms >= MAX_SERVICE_WAIT_MS ? MAX_SERVICE_WAIT_MS : Math.ceil(ms);
}

/**
 * The one rule for a wait the service asks for: a time on the service's clock becomes a delay
 * from now, measured against the answer's `Date` header (so neither clock being off matters),
 * and capped at {@link MAX_SERVICE_WAIT_MS}. Without a usable `Date` header the local clock
 * stands in for the service's.
 *
 * @example
 * serviceWaitMs(Date.parse('2026-01-01T00:01:00Z'), { date: 'Thu, 01 Jan 2026 00:00:30 GMT' }, Date.now()); // 30_000
 */
export function serviceWaitMs(serviceTimeMs: number, headers: Headers, localNow: number): number {
  const serviceNow = dateOf(header(headers, 'date'));
  return clampWait(serviceTimeMs - (Number.isNaN(serviceNow) ? localNow : serviceNow));
}

// The `Date` header changes once a second, and every answer carries one: its last reading is kept.
let lastDate: string | undefined;
let lastDateMs = Number.NaN;

function dateOf(date: string | undefined): number {
  if (date === undefined) return Number.NaN;
  if (date !== lastDate) {
    lastDateMs = Date.parse(date);
    lastDate = date;
  }
  return lastDateMs;
}

/**
 * Reads `X-RateLimit-Limit/Remaining/Reset` from response headers (lower-case keys, as undici
 * gives them). Undefined unless all three are present and numeric. The reset is read relative
 * to the `Date` header and capped (see {@link serviceWaitMs}).
 *
 * @example
 * parseRateLimit({ date: 'Thu, 01 Jan 2026 00:00:00 GMT', 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': '1767225630' }, now);
 * // { limit: 60, remaining: 59, resetInMs: 30_000, resetAt: new Date(now + 30_000) }
 */
export function parseRateLimit(headers: Headers, localNow: number = Date.now()): RateLimit | undefined {
  const limit = integer(header(headers, 'x-ratelimit-limit'));
  const remaining = integer(header(headers, 'x-ratelimit-remaining'));
  const reset = integer(header(headers, 'x-ratelimit-reset'));
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  const resetInMs = serviceWaitMs(reset * 1000, headers, localNow);
  return { limit, remaining, resetInMs, resetAt: new Date(localNow + resetInMs) };
}

/**
 * How long a refused request should wait before a retry, in ms, or undefined when the answer
 * does not say: `X-RateLimit-Reset` for a 429 that carries it, else `Retry-After` (delta seconds
 * or an HTTP date). Always relative and capped (see {@link serviceWaitMs}).
 */
export function parseRetryAfterMs(status: number, headers: Headers, localNow: number): number | undefined {
  if (status === 429) {
    const reset = integer(header(headers, 'x-ratelimit-reset'));
    if (reset !== undefined) return serviceWaitMs(reset * 1000, headers, localNow);
  }
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter === undefined) return undefined;
  const seconds = integer(retryAfter);
  if (seconds !== undefined) return clampWait(seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : serviceWaitMs(date, headers, localNow);
}
