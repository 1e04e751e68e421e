const MARKER = Symbol.for('plugin-license.licensing.LicenseError');

/** Stable codes of {@link LicenseError}; callers switch on these. */
export type LicenseErrorCode =
  | 'invalid_code'
  | 'code_not_found'
  | 'code_revoked'
  | 'max_activations_reached'
  | 'rate_limited'
  | 'unavailable'
  | 'unauthorized'
  | 'invalid_argument'
  | 'not_activated'
  | 'cache_io'
  /** An offline file that can't be read: truncated, mangled, of an unknown type or version, or the wrong kind. */
  | 'invalid_offline_file'
  /** An offline response read fine but refused by the import rules (machine, project, nonce, dates, signature). */
  | 'offline_refused'
  /**
   * A signed ticket (from the license relay or an offline response) that does not verify with
   * the configured `ticket_keys`: not stored. `kid` is its signer's key id (when it could be
   * read), `trustedKids` the ids of the configured keys.
   */
  | 'signed_ticket_refused';

export interface LicenseErrorOptions {
  retryAt?: Date;
  activations?: number;
  maxActivations?: number;
  status?: number;
  serviceCode?: string;
  path?: string;
  systemCode?: string;
  kid?: string;
  trustedKids?: readonly string[];
  cause?: unknown;
}

/**
 * The one error class of `@plugin-license/licensing`. `code` is stable; the message says what
 * happened and what to do next, and never contains a full activation code.
 *
 * @example
 * try { await license.activate(code); }
 * catch (e) { if (isLicenseError(e) && e.code === 'max_activations_reached') console.log(e.activations, e.maxActivations); }
 */
export class LicenseError extends Error {
  override readonly name = 'LicenseError' as const;
  readonly code: LicenseErrorCode;
  readonly retryAt?: Date;
  readonly activations?: number;
  readonly maxActivations?: number;
  /** HTTP status of the service's answer, when the service answered. */
  readonly status?: number;
  /** The service's own error code, exactly as it sent it (`forbidden`, `rate_limited`, …), when it answered. */
  readonly serviceCode?: string;
  /** The file or folder involved, for `cache_io`. */
  readonly path?: string;
  /** The operating system's error code (`EACCES`, `ENOSPC`, `EROFS`, …), for `cache_io`. */
  readonly systemCode?: string;
  /** For `signed_ticket_refused`: the key id the refused signed ticket names (its signer), when it could be read. */
  readonly kid?: string;
  /** For `signed_ticket_refused`: the ids of the keys this program trusts (`ticket_keys`). */
  readonly trustedKids?: readonly string[];

  constructor(code: LicenseErrorCode, message: string, options: LicenseErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.retryAt !== undefined) this.retryAt = options.retryAt;
    if (options.activations !== undefined) this.activations = options.activations;
    if (options.maxActivations !== undefined) this.maxActivations = options.maxActivations;
    if (options.status !== undefined) this.status = options.status;
    if (options.serviceCode !== undefined) this.serviceCode = options.serviceCode;
    if (options.path !== undefined) this.path = options.path;
    if (options.systemCode !== undefined) this.systemCode = options.systemCode;
    if (options.kid !== undefined) this.kid = options.kid;
    if (options.trustedKids !== undefined) this.trustedKids = [...options.trustedKids];
    Object.defineProperty(this, MARKER, { value: true });
  }
}

/**
 * True for a {@link LicenseError}, also one from another copy of this package or another realm.
 *
 * @example
 * if (isLicenseError(e) && e.code === 'unavailable') showOfflineNotice();
 */
export function isLicenseError(e: unknown): e is LicenseError {
  if (typeof e !== 'object' || e === null) return false;
  return (e as Record<symbol, unknown>)[MARKER] === true || (e as Error).name === 'LicenseError';
}
