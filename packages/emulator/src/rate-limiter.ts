/** Rate-limit scopes of section 8 of the interface. */
export type Bucket = 'activation' | 'builds' | 'general' | 'trigger';

/** Requests allowed per minute in each scope. */
export interface RateLimits {
  activation: number;
  builds: number;
  general: number;
  trigger: number;
}

/** The limits of section 8: activation 60, builds 10, general 100, incoming triggers 10 per project, per minute. */
export const DEFAULT_RATE_LIMITS: Readonly<RateLimits> = Object.freeze({ activation: 60, builds: 10, general: 100, trigger: 10 });

const WINDOW_MS = 60_000;
const MAX_TRACKED = 10_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** End of the current window, Unix seconds. */
  resetSeconds: number;
}

/** Fixed one-minute windows aligned on the emulator clock, one counter per scope and client key. */
export class FixedWindowRateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();

  readonly #now: () => number;

  constructor(
    readonly limits: RateLimits,
    now: () => number,
  ) {
    this.#now = now;
  }

  hit(bucket: Bucket, key: string): RateDecision {
    const now = this.#now();
    const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
    const id = `${bucket}|${key}`;
    let window = this.#windows.get(id);
    if (!window || window.start !== start) {
      if (this.#windows.size >= MAX_TRACKED) this.#prune(start);
      window = { start, count: 0 };
      this.#windows.set(id, window);
    }
    const limit = this.limits[bucket];
    const allowed = window.count < limit;
    if (allowed) window.count += 1;
    return { allowed, limit, remaining: Math.max(0, limit - window.count), resetSeconds: Math.ceil((start + WINDOW_MS) / 1000) };
  }

  reset(): void {
    this.#windows.clear();
  }

  snapshot(): Record<string, { window_start: string; count: number }> {
    const out: Record<string, { window_start: string; count: number }> = {};
    for (const [id, w] of this.#windows) out[id] = { window_start: new Date(w.start).toISOString(), count: w.count };
    return out;
  }

  #prune(currentStart: number): void {
    for (const [id, w] of this.#windows) if (w.start !== currentStart) this.#windows.delete(id);
  }
}
