import { setTimeout as delay } from 'node:timers/promises';
import { ConfigError } from './errors.js';

/** Retry options of safe calls (GETs and `activation.validate`). */
export interface RetryOptions {
  /** Retries after the first attempt. Default 2. */
  retries?: number;
  /** Base of the exponential backoff, in ms. Default 250. */
  minDelayMs?: number;
  /** Cap of one backoff delay, in ms (a later `X-RateLimit-Reset` still wins). Default 5000. */
  maxDelayMs?: number;
  /** Total time budget of a call including retries and waits, in ms. Default 30000. */
  deadlineMs?: number;
  /**
   * The longest wait the service may ask for (429 or `Retry-After`) that a call sits out before
   * retrying; a longer one fails the call at once with the service's error, for callers that
   * schedule their own next attempt. Default: no limit but the deadline.
   */
  maxServiceWaitMs?: number;
}

/** Injected in tests so backoff runs without real waits; production uses the defaults. */
export interface RetryHooks {
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  now?: () => number;
}

export interface RetryPolicy {
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  deadlineMs: number;
  maxServiceWaitMs: number;
  random: () => number;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  now: () => number;
}

function nonNegative(value: number | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(`${option} must be a finite number >= 0 (got ${String(value)})`, option);
  }
  return value;
}

export function createRetryPolicy(options: RetryOptions | false | undefined, hooks: RetryHooks = {}): RetryPolicy {
  const o = options === false ? { retries: 0 } : (options ?? {});
  const retries = Math.floor(nonNegative(o.retries, 2, 'retry.retries'));
  const minDelayMs = nonNegative(o.minDelayMs, 250, 'retry.minDelayMs');
  const maxDelayMs = nonNegative(o.maxDelayMs, 5000, 'retry.maxDelayMs');
  if (maxDelayMs < minDelayMs) throw new ConfigError('retry.maxDelayMs must be >= retry.minDelayMs', 'retry.maxDelayMs');
  return {
    retries,
    minDelayMs,
    maxDelayMs,
    deadlineMs: nonNegative(o.deadlineMs, 30_000, 'retry.deadlineMs'),
    maxServiceWaitMs: nonNegative(o.maxServiceWaitMs, Number.POSITIVE_INFINITY, 'retry.maxServiceWaitMs'),
    random: hooks.random ?? Math.random,
    sleep: hooks.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : undefined)),
    now: hooks.now ?? Date.now,
  };
}

/**
 * Delay before retry number `attempt` (0-based) inside one call: full jitter over an exponential
 * ceiling (`random() * min(max, min * 2^attempt)`), but never shorter than the wait the service
 * asked for (`retryAfterMs`, already relative and capped). The call's deadline bounds the total.
 */
export function backoffDelay(policy: RetryPolicy, attempt: number, retryAfterMs: number | undefined): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.minDelayMs * 2 ** attempt);
  const jittered = Math.floor(policy.random() * ceiling);
  return Math.max(jittered, retryAfterMs ?? 0, 0);
}
