export interface TokenBucketOptions {
  /** Most tokens held at once (the burst). */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
  /** Milliseconds clock; injected so tests don't sleep. */
  now: () => number;
}

/** A classic token bucket; starts full. */
export class TokenBucket {
  #tokens: number;
  #last: number;
  #options: TokenBucketOptions;

  constructor(options: TokenBucketOptions) {
    this.#options = options;
    this.#tokens = options.capacity;
    this.#last = options.now();
  }

  /** Changes rate and burst, keeping the tokens already earned (up to the new capacity). */
  configure(capacity: number, refillPerSecond: number): void {
    this.#refill();
    this.#options = { ...this.#options, capacity, refillPerSecond };
    this.#tokens = Math.min(this.#tokens, capacity);
  }

  /** Tokens available now. */
  available(): number {
    this.#refill();
    return this.#tokens;
  }

  /** Takes one token when at least `keep + 1` are available. */
  take(keep = 0): boolean {
    this.#refill();
    if (this.#tokens >= keep + 1) {
      this.#tokens -= 1;
      return true;
    }
    return false;
  }

  /** Milliseconds until `keep + 1` tokens are available. */
  msUntil(keep = 0): number {
    this.#refill();
    const missing = keep + 1 - this.#tokens;
    if (missing <= 0) return 0;
    return Math.ceil((missing / this.#options.refillPerSecond) * 1000);
  }

  #refill(): void {
    const now = this.#options.now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#tokens = Math.min(this.#options.capacity, this.#tokens + (elapsed / 1000) * this.#options.refillPerSecond);
  }
}
