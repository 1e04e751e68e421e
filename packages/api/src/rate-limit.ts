/** The service's rate-limit window as last reported by `X-RateLimit-*` headers. */
export interface RateLimit {
  /** Requests allowed in the window. */
  limit: number;
  /** Requests left in the window. */
  remaining: number;
  /** When the window resets (from `X-RateLimit-Reset`, Unix seconds). */
  resetAt: Date;
}

type HeaderValue = string | string[] | undefined;

function header(headers: Record<string, HeaderValue>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function integer(text: string | undefined): number | undefined {
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Reads `X-RateLimit-Limit/Remaining/Reset` from response headers (lower-case keys, as undici
 * gives them). Undefined unless all three are present and numeric.
 *
 * @example
 * parseRateLimit({ 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '59', 'x-ratelimit-reset': '1767225600' });
 * // { limit: 60, remaining: 59, resetAt: 2026-01-01T00:00:00.000Z }
 */
export function parseRateLimit(headers: Record<string, HeaderValue>): RateLimit | undefined {
  const limit = integer(header(headers, 'x-ratelimit-limit'));
  const remaining = integer(header(headers, 'x-ratelimit-remaining'));
  const reset = integer(header(headers, 'x-ratelimit-reset'));
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, resetAt: new Date(reset * 1000) };
}

/**
 * When a refused request may be retried: `X-RateLimit-Reset` for a 429 that carries it, else
 * `Retry-After` (delta seconds or an HTTP date), else undefined.
 */
export function parseRetryAt(status: number, headers: Record<string, HeaderValue>, now: number): Date | undefined {
  if (status === 429) {
    const reset = integer(header(headers, 'x-ratelimit-reset'));
    if (reset !== undefined) return new Date(reset * 1000);
  }
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter === undefined) return undefined;
  const seconds = integer(retryAfter);
  if (seconds !== undefined) return new Date(now + seconds * 1000);
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : new Date(date);
}
