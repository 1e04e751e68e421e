import { ConfigError } from './errors.js';
import type { WebhookPayload } from './schemas.js';

export interface WebhookDeduplicatorOptions {
  /** Keys remembered at most; the oldest are forgotten first. Default 10000. */
  maxEntries?: number;
  /** How long a key is remembered, in ms. Default 24 h. */
  ttlMs?: number;
  /** Clock in ms. Default `Date.now`. */
  now?: () => number;
}

/**
 * Drops repeated webhook deliveries. The key is event + build id + build status: a build emits
 * one event per status change, so the build id alone would drop its later events, while a
 * re-delivery of the same change (possibly re-signed with a new timestamp) has the same key.
 * Memory is bounded by `maxEntries` and `ttlMs`; the state lives in this process only. When more
 * than `maxEntries` deliveries arrive within `ttlMs`, the oldest are forgotten early: a receiver
 * that must record each event exactly once, forever, dedupes against its own store instead (the
 * example receiver uses its record file).
 *
 * @example
 * const dedupe = new WebhookDeduplicator({ ttlMs: 3_600_000 });
 * const { payload } = verifyWebhook({ body, headers, secret });
 * if (dedupe.isDuplicate(payload)) return res.writeHead(200).end();   // already handled
 * try { await handle(payload); } catch (e) { dedupe.forget(payload); throw e; } // let the sender retry
 */
export class WebhookDeduplicator {
  readonly #seen = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: WebhookDeduplicatorOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
    this.#now = options.now ?? Date.now;
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries < 1) {
      throw new ConfigError('maxEntries must be a whole number >= 1', 'maxEntries');
    }
    if (!Number.isFinite(this.#ttlMs) || this.#ttlMs <= 0) throw new ConfigError('ttlMs must be a number > 0', 'ttlMs');
  }

  /**
   * The dedupe key of a payload: `event|build id|status`.
   *
   * @example
   * WebhookDeduplicator.keyOf({ event: 'build.status', build_id: 'b1', status: 'success', ... }); // 'build.status|b1|success'
   */
  static keyOf(payload: WebhookPayload): string {
    if (payload.event === 'build.status') return `${payload.event}|${payload.build_id}|${payload.status}`;
    return `${payload.event}|${payload.build.id}|${payload.build.status}`;
  }

  /** Keys currently remembered. */
  get size(): number {
    this.#expire();
    return this.#seen.size;
  }

  /**
   * True when this delivery was seen within `ttlMs`; otherwise remembers it and returns false.
   *
   * @example
   * if (!dedupe.isDuplicate(payload)) await handle(payload);
   */
  isDuplicate(payload: WebhookPayload): boolean {
    this.#expire();
    const key = WebhookDeduplicator.keyOf(payload);
    if (this.#seen.has(key)) return true;
    this.#seen.set(key, this.#now());
    while (this.#seen.size > this.#maxEntries) {
      const oldest = this.#seen.keys().next().value as string;
      this.#seen.delete(oldest);
    }
    return false;
  }

  /**
   * Forgets a delivery, so a retry of it is handled again (call when handling failed).
   *
   * @example
   * dedupe.forget(payload);
   */
  forget(payload: WebhookPayload): void {
    this.#seen.delete(WebhookDeduplicator.keyOf(payload));
  }

  #expire(): void {
    const cutoff = this.#now() - this.#ttlMs;
    // Entries are kept in insertion order, which is time order, so expiry stops at the first fresh one.
    for (const [key, seenAt] of this.#seen) {
      if (seenAt > cutoff) break;
      this.#seen.delete(key);
    }
  }
}
