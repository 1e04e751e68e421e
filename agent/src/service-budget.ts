import { TokenBucket } from './token-bucket.js';

export type Priority = 'user' | 'background';

export interface ServiceBudgetOptions {
  perMinute: number;
  /** Tokens background checks must leave for user-initiated calls (at most burst - 1). */
  reserve: number;
  now: () => number;
}

/**
 * One budget of requests to the service for the whole agent, however many projects it holds:
 * a token bucket refilled at `perMinute` (default 30) with a burst of half that, so any 60 s
 * window holds at most 1.5 × perMinute requests (45 by default, under the activation endpoints'
 * 60), plus a pause until the service's `retryAt` after a 429. User-initiated calls may use the
 * reserve; background checks may not, which gives users priority while both count.
 */
export class ServiceBudget {
  readonly #bucket: TokenBucket;
  #reserve: number;
  #pausedUntil = 0;
  readonly #now: () => number;

  constructor(options: ServiceBudgetOptions) {
    this.#now = options.now;
    const capacity = burstOf(options.perMinute);
    this.#reserve = Math.min(options.reserve, capacity - 1);
    this.#bucket = new TokenBucket({ capacity, refillPerSecond: options.perMinute / 60, now: options.now });
  }

  configure(perMinute: number, reserve: number): void {
    const capacity = burstOf(perMinute);
    this.#reserve = Math.min(reserve, capacity - 1);
    this.#bucket.configure(capacity, perMinute / 60);
  }

  /** Takes a token for one request; false when over budget or paused. */
  take(priority: Priority): boolean {
    if (this.#now() < this.#pausedUntil) return false;
    return this.#bucket.take(priority === 'background' ? this.#reserve : 0);
  }

  /** Epoch ms when a request of that priority may be made. */
  availableAt(priority: Priority): number {
    const now = this.#now();
    const wait = this.#bucket.msUntil(priority === 'background' ? this.#reserve : 0);
    return Math.max(now + wait, this.#pausedUntil);
  }

  /** The service said "not before": every request waits until then. */
  pauseUntil(time: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, time);
  }

  get pausedUntilTime(): number {
    return this.#pausedUntil;
  }
}

function burstOf(perMinute: number): number {
  return Math.max(1, Math.floor(perMinute / 2));
}
