/** A failure of `pnpm package` that says what to do; `usage` for a bad flag (exit 2, else 1). */
export class PackageError extends Error {
  name = 'PackageError';
  /** @param {string} message @param {{ usage?: boolean, cause?: unknown }} [options] */
  constructor(message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.usage = options.usage === true;
  }
}
