/** A cancellable timer returned by a `Scheduler`. */
export interface TimerHandle {
  cancel(): void;
}

/**
 * Time and timers of the agent. The default uses the system clock and `setTimeout`; tests and
 * simulations pass a `ManualScheduler` so grace expiry, revalidation and idle time-outs run
 * without sleeping.
 */
export interface Scheduler {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once, `delayMs` from now (0 or less: on the next turn). */
  setTimer(delayMs: number, fn: () => void): TimerHandle;
}

// setTimeout overflows past 2^31-1 ms (about 24.8 days): longer waits are chained.
const MAX_DELAY = 2_147_483_647;

/** The system clock with unref'd timers (they never keep the process alive on their own). */
export const systemScheduler: Scheduler = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    let handle: NodeJS.Timeout | undefined;
    let cancelled = false;
    const due = Date.now() + Math.max(0, delayMs);
    const arm = (): void => {
      const left = due - Date.now();
      if (left > MAX_DELAY) {
        handle = setTimeout(arm, MAX_DELAY);
      } else {
        handle = setTimeout(() => {
          if (!cancelled) fn();
        }, Math.max(0, left));
      }
      handle.unref();
    };
    arm();
    return {
      cancel() {
        cancelled = true;
        if (handle) clearTimeout(handle);
      },
    };
  },
};

interface ManualTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A scheduler whose clock moves only when told: `advance(ms)` runs every timer that falls due,
 * in order, each seeing `now()` at its due time.
 *
 * @example
 * const clock = new ManualScheduler(Date.parse('2026-01-01T00:00:00Z'));
 * const agent = await startAgent({ ..., scheduler: clock });
 * await clock.advance(31 * 24 * 3600_000); // grace expiry is pushed to subscribers
 */
export class ManualScheduler implements Scheduler {
  #current: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  constructor(start: number = Date.now()) {
    this.#current = start;
  }

  now(): number {
    return this.#current;
  }

  setTimer(delayMs: number, fn: () => void): TimerHandle {
    const timer: ManualTimer = { at: this.#current + Math.max(0, delayMs), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Number of timers still waiting. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Due time of the earliest waiting timer, or undefined. */
  nextDue(): number | undefined {
    const live = this.#timers.filter((t) => !t.cancelled);
    return live.length === 0 ? undefined : Math.min(...live.map((t) => t.at));
  }

  /**
   * Moves the clock forward by `ms`, running due timers in order. Between timers it yields to
   * the event loop so I/O started by one timer (a revalidation) can settle before the next.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#current + ms;
    for (let guard = 0; guard < 100_000; guard++) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      const next = this.#timers.reduce<ManualTimer | undefined>(
        (best, t) => (t.at <= target && (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) ? t : best),
        undefined,
      );
      if (!next) break;
      this.#current = Math.max(this.#current, next.at);
      next.cancelled = true;
      next.fn();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.#current = target;
  }

  /** Sets the clock (forward or back) without running timers; then runs those already due. */
  async set(time: number): Promise<void> {
    if (time >= this.#current) return this.advance(time - this.#current);
    this.#current = time;
  }
}
