import { TokenBucket } from './token-bucket.js';

export type Priority = 'user' | 'background';

export interface ServiceBudgetOptions {
  perMinute: number;
  /** Tokens background checks must leave for user-initiated calls. */
  reserve: number;
  now: () => number;
}

/**
 * One budget of requests to the service for the whole agent, however many projects it holds:
 * a token bucket (default 30 a minute, half the activation endpoints' 60) plus a pause until the
 * service's `retryAt` after a 429. User-initiated calls may use the reserve; background checks
 * may not, which gives users priority while both count.
 */
export class ServiceBudget {
  private readonly bucket: TokenBucket;
  private reserve: number;
  private pausedUntil = 0;
  private readonly now: () => number;

  constructor(options: ServiceBudgetOptions) {
    this.now = options.now;
    this.reserve = Math.min(options.reserve, Math.max(0, options.perMinute - 1));
    this.bucket = new TokenBucket({ capacity: options.perMinute, refillPerSecond: options.perMinute / 60, now: options.now });
  }

  configure(perMinute: number, reserve: number): void {
    this.reserve = Math.min(reserve, Math.max(0, perMinute - 1));
    this.bucket.configure(perMinute, perMinute / 60);
  }

  /** Takes a token for one request; false when over budget or paused. */
  take(priority: Priority): boolean {
    if (this.now() < this.pausedUntil) return false;
    return this.bucket.take(priority === 'background' ? this.reserve : 0);
  }

  /** Epoch ms when a request of that priority may be made. */
  availableAt(priority: Priority): number {
    const now = this.now();
    const wait = this.bucket.msUntil(priority === 'background' ? this.reserve : 0);
    return Math.max(now + wait, this.pausedUntil);
  }

  /** The service said "not before": every request waits until then. */
  pauseUntil(time: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, time);
  }

  get pausedUntilTime(): number {
    return this.pausedUntil;
  }
}
