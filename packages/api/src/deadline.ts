import { ConfigError, TimeoutError } from './errors.js';

/** Options of `new Deadline(...)`. */
export interface DeadlineOptions {
  /**
   * Where the time was stated, named in the time-out message so the reader knows what to raise.
   * @example 'PLUGIN_LICENSE_TIMEOUT'
   */
  name?: string;
  /**
   * Interrupts the waits of calls that are safe to repeat (GETs and validate): Ctrl-C. A call
   * that changes something is not cut off by it (its outcome would be unknown); it still ends by
   * the deadline. Pass a call's own `signal` to abort any call.
   */
  signal?: AbortSignal;
  /** Clock in epoch ms; injected by tests. Default `Date.now`. */
  now?: () => number;
}

/**
 * One deadline for a whole piece of work (a command, an installer step), shared by every call
 * given it, on any client: each attempt is cut to the time left, and a retry's back-off that
 * would pass it is not waited; the call then fails with a `TimeoutError` that names this
 * deadline ("no answer from the service within 2 s (PLUGIN_LICENSE_TIMEOUT)"). A wait the
 * service itself asks for (a 429 until the rate-limit window resets, bounded by the retry
 * policy) is not a wait for an answer: the deadline moves by it.
 *
 * @example
 * const deadline = new Deadline(5000, { name: 'install step' });
 * await client.activation.status(code, { deadline });
 * await client.activation.activate({ code, machine_id }, { deadline }); // what is left of the 5 s
 */
export class Deadline {
  /** The time given, in ms, as stated. */
  readonly ms: number;
  readonly name: string | undefined;
  readonly signal: AbortSignal | undefined;
  readonly #now: () => number;
  #at: number;

  constructor(ms: number, options: DeadlineOptions = {}) {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
      throw new ConfigError(`a deadline must be a positive number of milliseconds (got ${String(ms)})`, 'deadline');
    }
    this.ms = ms;
    this.name = options.name;
    this.signal = options.signal;
    this.#now = options.now ?? Date.now;
    this.#at = this.#now() + ms;
  }

  /** When it passes, on its clock (epoch ms). */
  get at(): number {
    return this.#at;
  }

  /** Time left in ms, 0 once passed. */
  remainingMs(): number {
    const left = this.#at - this.#now();
    return left > 0 ? left : 0;
  }

  /** A wait the service asked for (not a wait for an answer): the deadline moves by it. */
  extend(ms: number): void {
    if (ms > 0) this.#at += ms;
  }

  /** The deadline as messages name it: `2 s (PLUGIN_LICENSE_TIMEOUT)`. */
  describe(): string {
    const seconds = Number((this.ms / 1000).toFixed(3));
    return `${seconds} s${this.name === undefined ? '' : ` (${this.name})`}`;
  }

  /**
   * The one time-out of this deadline, whatever waited (a call, an answer relayed by another
   * process): it names the deadline applied and what raises it.
   * @param what what was waited for, e.g. `GET /builds/usage`
   */
  timeoutError(what: string, cause?: unknown): TimeoutError {
    const raise = this.name === undefined ? 'give it more time' : `raise ${this.name}`;
    return new TimeoutError(`no answer from the service within ${this.describe()} (${what}); check the network and any proxy, or ${raise} if the service is slow`, what, this.ms, cause);
  }

  /**
   * Waits for `task` (an answer that comes another way than a call given this deadline: through
   * another process, a probe) until the deadline: then it rejects with {@link timeoutError}; the
   * signal rejects it at once with the signal's reason. `task` goes on; what it brings later is dropped.
   *
   * @example
   * const state = await deadline.bound(agent.activate(projectId, code), 'asked through the agent');
   */
  bound<T>(task: Promise<T>, what: string): Promise<T> {
    task.catch(() => undefined);
    const signal = this.signal;
    if (signal?.aborted) return Promise.reject(signal.reason);
    const left = this.remainingMs();
    if (left <= 0) return Promise.reject(this.timeoutError(what));
    return new Promise<T>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', interrupted);
      };
      const interrupted = (): void => {
        done();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        done();
        reject(this.timeoutError(what));
      }, left);
      signal?.addEventListener('abort', interrupted, { once: true });
      task.then(
        (value) => {
          done();
          resolve(value);
        },
        (e: unknown) => {
          done();
          reject(e);
        },
      );
    });
  }
}

