import { vi } from 'vitest';
import { WAIT_MS } from './wait-bound.js';

/**
 * The first value `look` finds (anything but `undefined`), looked for every 20 ms for at most
 * `timeoutMs` ({@link WAIT_MS}); the test fails saying what it waited for and, with `seen`, what
 * there was instead. `gone`, asked when `look` found nothing, ends the wait at once when it names
 * a reason (a process that exited prints nothing more). An error `look` throws fails the wait as
 * it is.
 *
 * A test that asserts a state uses `expect.poll` (`await expect.poll(() => agents()).toEqual([])`).
 * This is for the waits whose value the test goes on with (the state a subscription pushed, the
 * n-th answer of a process), which vitest's tools do not fit: expect.poll returns no value, and
 * vi.waitUntil gives up after 1 s unless each call says otherwise, takes a falsy value (0, '')
 * for none, and fails with "Timed out in waitUntil!", neither what was awaited nor what was seen.
 *
 * @example
 * const state = await eventually(() => states.find((s) => s.valid), 'a valid state pushed', { seen: () => JSON.stringify(states) });
 */
export async function eventually<T>(
  look: () => T | undefined | Promise<T | undefined>,
  what: string,
  options: { seen?: () => string; gone?: () => string | undefined; timeoutMs?: number } = {},
): Promise<T> {
  const timeout = options.timeoutMs ?? WAIT_MS;
  let found: { value: T } | undefined;
  let gone: string | undefined;
  let failed = false;
  const settled = async (): Promise<boolean> => {
    try {
      const value = await look();
      if (value !== undefined) found = { value };
    } catch (error) {
      failed = true;
      throw error;
    }
    if (found === undefined) gone = options.gone?.();
    return found !== undefined || gone !== undefined;
  };
  try {
    await vi.waitUntil(settled, { timeout, interval: 20 });
  } catch (error) {
    if (failed) throw error;
  }
  if (found !== undefined) return found.value;
  const seen = options.seen === undefined ? '' : `; seen instead:\n${options.seen()}`;
  throw new Error(`${what}: ${gone === undefined ? `not seen within ${timeout} ms` : `never seen (${gone})`}${seen}`);
}
