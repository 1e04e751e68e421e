/** The emulator's clock: the injected base clock plus an offset moved by `/__emulator/clock`. */
export class EmulatorClock {
  #offsetMs = 0;

  readonly #base: () => number;

  constructor(base: () => number) {
    this.#base = base;
  }

  now(): number {
    return this.#base() + this.#offsetMs;
  }

  iso(offsetMs = 0): string {
    return new Date(this.now() + offsetMs).toISOString();
  }

  get offsetMs(): number {
    return this.#offsetMs;
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }

  set(epochMs: number): void {
    this.#offsetMs = epochMs - this.#base();
  }

  reset(): void {
    this.#offsetMs = 0;
  }
}
