import type { ValidationReason } from '@plugin-license/api';

/**
 * Why a license is not valid: the service's reasons (`not_activated`, `code_revoked`,
 * `code_not_found`, `deactivated`) and the library's own (`grace_expired`, `clock_tampered`,
 * `cache_invalid`, and `unsigned`: with the vendor's ticket keys configured, a license the service
 * holds valid but no ticket signed by the vendor vouches for). Nothing stored for a project is
 * `not_activated`.
 */
export type Reason = ValidationReason | 'grace_expired' | 'clock_tampered' | 'cache_invalid' | 'unsigned';

/** The state of one project's license, as `check()`, `validate()` and the `change` event give it. */
export interface LicenseStatus {
  projectId: string;
  valid: boolean;
  /** Null when valid. */
  reason: Reason | null;
  /**
   * `online` once the last word came from the service in this object's life; `cache` when it
   * rests on the stored file; `offline` when it rests on an imported offline activation.
   */
  source: 'online' | 'cache' | 'offline';
  /** First 4 + "…" + last 4 characters of the stored code; the full code is never shown. */
  codeHint: string | null;
  activations: number | null;
  maxActivations: number | null;
  /** Last online success: the start of the grace period. */
  validatedAt: Date | null;
  /**
   * When the service last answered about this license, yes or no (a revocation too): the "last
   * online check" shown to people. Null when it never has (nothing stored).
   */
  checkedAt: Date | null;
  /** Until when the license stays valid without the service (validatedAt + graceMs, or an offline activation's valid_until); null when not valid-able. */
  graceUntil: Date | null;
  /** When a background revalidation is due (after failures: the back-off); null without a stored code. */
  nextCheckAt: Date | null;
  /**
   * The text of the project's signed ticket (`DATA/tickets/ID.signed`, docs/signed-ticket.md) as
   * stored, exactly; null when none is. With ticket keys configured, `valid` and `reason` follow
   * the reader's rule over it (`judgeLicense`: what a plugin with the same keys decides), so a
   * license the service holds valid reads `unsigned` without one that verifies.
   */
  signedTicket: string | null;
}

/** Slots of a code, from the service's public status endpoint. */
export interface CodeStatus {
  activations: number;
  maxActivations: number;
  available: number;
  isRevoked: boolean;
}
