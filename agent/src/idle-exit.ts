import type { Scheduler, TimerHandle } from './scheduler.js';

export interface IdleExitOptions {
  /** Minutes of idleness before `exit` is called; 0 never calls it. */
  minutes: number;
  scheduler: Scheduler;
  /** True while a client is connected or anything is in flight (a request, an intent, a revalidation). */
  busy: () => boolean;
  /** Called once, when the agent has been idle for the whole time. */
  exit: () => void;
}

/**
 * The agent's idle exit (sccache's `SCCACHE_IDLE_TIMEOUT`, Bazel's `--max_idle_secs`): one timer
 * on the injected scheduler, armed from the last moment something ended (`touch`). When it fires
 * and the agent is busy, nothing is armed until the busy thing ends and touches again; when it
 * fires early (touched meanwhile) it is armed for the rest.
 */
export class IdleExit {
  #timer: TimerHandle | undefined;
  #lastActiveAt: number;
  #done = false;
  readonly #delayMs: number;

  readonly #o: IdleExitOptions;

  constructor(o: IdleExitOptions) {
    this.#o = o;
    this.#delayMs = o.minutes * 60_000;
    this.#lastActiveAt = o.scheduler.now();
  }

  /** Starts counting (after the socket listens). */
  start(): void {
    this.touch();
  }

  /** Something ended (a connection, a request, a service call): idleness counts from now. */
  touch(): void {
    if (this.#done || this.#delayMs <= 0) return;
    this.#lastActiveAt = this.#o.scheduler.now();
    if (this.#timer === undefined) this.#arm(this.#delayMs);
  }

  stop(): void {
    this.#done = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  #arm(ms: number): void {
    this.#timer = this.#o.scheduler.setTimer(ms, () => {
      this.#timer = undefined;
      if (this.#done || this.#o.busy()) return;
      const left = this.#lastActiveAt + this.#delayMs - this.#o.scheduler.now();
      if (left > 0) {
        this.#arm(left);
        return;
      }
      this.#done = true;
      this.#o.exit();
    });
  }
}
