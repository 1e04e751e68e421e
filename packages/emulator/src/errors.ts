const MARK = Symbol.for('plugin-license.emulator.error');

/** Stable codes of errors the emulator raises to its embedder (start-up, options, data file). */
export type EmulatorErrorCode =
  | 'host_not_loopback'
  | 'invalid_option'
  | 'data_file_invalid'
  | 'data_file_unwritable'
  | 'listen_failed'
  | 'http_error';

/**
 * Base class of every error of `@plugin-license/emulator`.
 *
 * @example
 * try { await startEmulator({ host: '0.0.0.0' }); }
 * catch (error) { if (isEmulatorError(error) && error.code === 'host_not_loopback') console.error(error.message); }
 */
export class EmulatorError extends Error {
  override readonly name: string = 'EmulatorError';
  readonly code: EmulatorErrorCode;
  readonly context: Record<string, unknown>;
  readonly [MARK] = true;

  constructor(code: EmulatorErrorCode, message: string, options: { cause?: unknown; context?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.context = options.context ?? {};
  }
}

/**
 * True for an {@link EmulatorError}, also across realms and duplicate installs.
 *
 * @example
 * if (isEmulatorError(error)) console.error(error.code);
 */
export function isEmulatorError(value: unknown): value is EmulatorError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MARK] === true;
}

/** Wire error codes of section 7 of the interface, plus activate's own. */
export type WireErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'rate_limited'
  | 'internal_error'
  | 'invalid_code'
  | 'code_not_found'
  | 'code_revoked'
  | 'max_activations_reached';

/** An HTTP answer in the error body shape of the interface; thrown by route code, sent by the error handler. */
export class HttpError extends EmulatorError {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly wireCode: WireErrorCode;
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    wireCode: WireErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super('http_error', message, { context: { status, wireCode } });
    this.status = status;
    this.wireCode = wireCode;
    this.details = details;
    this.headers = headers;
  }

  toBody(): { error: string; message: string; details: Record<string, unknown> } {
    return { error: this.wireCode, message: this.message, details: this.details };
  }
}

/** The wire code the interface pairs with an HTTP status (used for injected faults and framework errors). */
export function wireCodeForStatus(status: number): WireErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 429:
      return 'rate_limited';
    default:
      return status >= 500 ? 'internal_error' : 'bad_request';
  }
}
