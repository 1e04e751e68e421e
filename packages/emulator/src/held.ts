import * as z from 'zod';

/** One service request held by the `hold` fault, as `GET /__emulator/held` shows it. */
export interface HeldView {
  method: string;
  /** The path with any code in it shown as a hint. */
  path: string;
  /** When it arrived, on the emulator's clock. */
  arrived_at: string;
}

/** Query of `GET /__emulator/held`. */
export const HeldQuery = z.strictObject({
  at_least: z.coerce.number().int().min(0).max(1_000_000).default(0),
  wait_ms: z.coerce.number().int().min(0).max(600_000).default(30_000),
});

/** Body of `POST /__emulator/held/release` (empty: every held request). */
export const ReleaseRequest = z.strictObject({ count: z.number().int().min(1).max(1_000_000).optional() }).default({});

interface Entry {
  view: HeldView;
  release: () => void;
  /** Settles once the request, released, has been answered (or its answer could not be sent). */
  handled: Promise<void>;
  markHandled: () => void;
}

/**
 * Service requests held by the `hold` fault until a test releases them: the event a test waits
 * on is held by a control the test releases, never by a window of real time (a `latency` that
 * a loaded machine can outrun). Held requests are kept in arrival order.
 */
export class HeldRequests {
  readonly #entries: Entry[] = [];
  readonly #byKey = new WeakMap<object, Entry>();
  readonly #watchers = new Set<() => void>();

  readonly #shutdown: AbortSignal;

  constructor(shutdown: AbortSignal) {
    this.#shutdown = shutdown;
  }

  /** Holds the request `key` until it is released; rejects when the emulator closes meanwhile. */
  hold(key: object, view: HeldView): Promise<void> {
    let release!: () => void;
    let markHandled!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const handled = new Promise<void>((resolve) => (markHandled = resolve));
    const entry: Entry = { view, release, handled, markHandled };
    this.#entries.push(entry);
    this.#byKey.set(key, entry);
    for (const watcher of [...this.#watchers]) watcher();
    return new Promise<void>((resolve, reject) => {
      const onClose = (): void => {
        markHandled();
        reject(new Error('the emulator is closing'));
      };
      if (this.#shutdown.aborted) return onClose();
      this.#shutdown.addEventListener('abort', onClose, { once: true });
      void released.then(() => {
        this.#shutdown.removeEventListener('abort', onClose);
        resolve();
      });
    });
  }

  /** The request `key`, if it was held, has been answered: a release waiting on it may answer. */
  handled(key: object): void {
    this.#byKey.get(key)?.markHandled();
  }

  list(): HeldView[] {
    return this.#entries.map((e) => ({ ...e.view }));
  }

  /** The held requests once there are at least `atLeast` of them, or after `waitMs` of real time, or at close. */
  async waitFor(atLeast: number, waitMs: number): Promise<HeldView[]> {
    if (this.#entries.length >= atLeast || waitMs === 0 || this.#shutdown.aborted) return this.list();
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#watchers.delete(check);
        this.#shutdown.removeEventListener('abort', done);
        resolve();
      };
      const check = (): void => {
        if (this.#entries.length >= atLeast) done();
      };
      const timer = setTimeout(done, waitMs);
      this.#watchers.add(check);
      this.#shutdown.addEventListener('abort', done, { once: true });
    });
    return this.list();
  }

  /**
   * Lets the oldest `count` held requests (all by default) be handled, and resolves once each of
   * them has been answered, so what they changed can be read next without waiting.
   */
  async release(count?: number): Promise<HeldView[]> {
    const taken = this.#entries.splice(0, count ?? this.#entries.length);
    for (const entry of taken) entry.release();
    await Promise.all(taken.map((e) => e.handled));
    return taken.map((e) => e.view);
  }
}
