import { EventEmitter } from 'node:events';
import type { LicenseState } from './license-state.js';

/** States kept for an iterator that is not reading; the oldest go first. */
const QUEUE_LIMIT = 1000;

/**
 * One subscription: an event emitter (`changed`) and an async iterator of `LicenseState`.
 * Survives reconnects (the client subscribes again).
 *
 * @example
 * const sub = await client.subscribe(projectId);
 * for await (const state of sub) if (!state.valid) break;
 * sub.close();
 */
export class Subscription extends EventEmitter<{ changed: [LicenseState]; end: [] }> implements AsyncIterable<LicenseState> {
  readonly #queue: LicenseState[] = [];
  readonly #waiters: Array<(r: IteratorResult<LicenseState>) => void> = [];
  readonly #onClose: (s: Subscription) => void;
  #ended = false;

  constructor(
    readonly projectId: string | undefined,
    onClose: (s: Subscription) => void,
  ) {
    super();
    this.#onClose = onClose;
  }

  /** @internal */
  deliver(state: LicenseState): void {
    if (this.#ended || (this.projectId !== undefined && state.projectId !== this.projectId.toLowerCase())) return;
    this.emit('changed', state);
    const waiter = this.#waiters.shift();
    if (waiter) waiter({ value: state, done: false });
    else {
      this.#queue.push(state);
      if (this.#queue.length > QUEUE_LIMIT) this.#queue.shift();
    }
  }

  /** Stops delivering; pending iterations end. */
  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    for (const w of this.#waiters.splice(0)) w({ value: undefined, done: true });
    this.#onClose(this);
    this.emit('end');
  }

  get closed(): boolean {
    return this.#ended;
  }

  [Symbol.asyncIterator](): AsyncIterator<LicenseState> {
    return {
      next: () => {
        const value = this.#queue.shift();
        if (value) return Promise.resolve({ value, done: false });
        if (this.#ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.#waiters.push(resolve));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
