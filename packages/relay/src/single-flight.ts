/**
 * Identical concurrent work done once: `run(key, fn)` while a call of the same key is in flight
 * joins it and gets its result (or its failure); once it settles, the next call starts anew.
 * Nothing is kept after that: this is coalescing, not a cache.
 *
 * @example
 * const flights = new SingleFlight<Answer>();
 * const [a, b] = await Promise.all([flights.run(key, ask), flights.run(key, ask)]); // one `ask`
 */
export class SingleFlight<T> {
  readonly #inFlight = new Map<string, Promise<T>>();

  run(key: string, fn: () => Promise<T>): Promise<T> {
    const running = this.#inFlight.get(key);
    if (running !== undefined) return running;
    const started = (async () => {
      try {
        return await fn();
      } finally {
        this.#inFlight.delete(key);
      }
    })();
    this.#inFlight.set(key, started);
    return started;
  }

  /** How many distinct calls are in flight. */
  get size(): number {
    return this.#inFlight.size;
  }
}
