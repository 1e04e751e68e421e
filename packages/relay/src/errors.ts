const kRelayError = Symbol.for('plugin-license.relay.error');

/**
 * The relay's configuration cannot be used (a variable missing or malformed): the relay does not
 * start (the Node command and the Deno entry exit 2 with `message`; a Worker answers 500 to every
 * request and logs it). `variable` names the environment variable; the message never holds a
 * secret's value.
 */
export class RelayConfigError extends Error {
  override readonly name = 'RelayConfigError';
  readonly code = 'relay_config';
  readonly [kRelayError] = true;
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Whether `e` is a {@link RelayConfigError}, also from another copy of this package.
 *
 * @example
 * try { await loadRelayConfig(env); } catch (e) { if (isRelayConfigError(e)) exit(2, e.message); throw e; }
 */
export function isRelayConfigError(e: unknown): e is RelayConfigError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[kRelayError] === true && (e as { name?: unknown }).name === 'RelayConfigError';
}
