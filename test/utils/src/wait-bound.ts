/**
 * How long a test waits for an outcome that has no event to await (a page's text, a file, a
 * process gone) before it fails: expect.poll's timeout (vitest.config.ts) and `eventually`'s.
 * It only bounds how long a missing outcome takes to fail the test, so it is generous: vitest's
 * default of 1 s fails on a loaded machine, never telling a bug from a slow runner.
 */
export const WAIT_MS = 15_000;
