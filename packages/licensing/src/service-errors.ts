import { codeHint, isNetworkError, isSchemaError, isServiceError, isTimeoutError, type ServiceClient, type ValidationReason } from '@plugin-license/api';
import { LicenseError, isLicenseError, type LicenseErrorOptions } from './errors.js';

type Action = 'activate' | 'deactivate' | 'validate' | 'status';

/**
 * A failure that says nothing about the license: DNS, refused, reset, time-out, 5xx, 429, or an
 * answer in an unexpected shape (a captive portal, a proxy's error page). The cache decides.
 */
export function isTransportFailure(e: unknown): boolean {
  if (isNetworkError(e) || isTimeoutError(e) || isSchemaError(e)) return true;
  // A 404 that is not the service's (a wrong base URL, a captive portal) says nothing either.
  if (isServiceError(e)) return e.status >= 500 || e.status === 429 || e.code === 'endpoint_not_found';
  return false;
}

/** An error answer that is as definitive as `valid: false` with this reason, or null. */
export function isDefinitiveReason(e: unknown): ValidationReason | null {
  if (!isServiceError(e)) return null;
  if (e.code === 'code_revoked') return 'code_revoked';
  if (e.code === 'code_not_found' || e.code === 'invalid_code') return 'code_not_found';
  return null;
}

/**
 * Maps anything the client throws to a {@link LicenseError} with an actionable message that
 * shows the code only as a hint. For `max_activations_reached` without counts in the error
 * details, asks the public status endpoint for them (best effort).
 */
export async function toLicenseError(e: unknown, code: string, action: Action, client: ServiceClient, signal?: AbortSignal): Promise<LicenseError> {
  if (isLicenseError(e)) return e;
  const hint = codeHint(code);
  if (isServiceError(e)) {
    // The service's own code and status travel with every error made from its answer.
    const status = e.status;
    const base = { status, serviceCode: e.code, cause: e };
    switch (e.code) {
      case 'invalid_code':
        return new LicenseError('invalid_code', `the service says activation code ${hint} is not a valid code; check it for typos (codes look like 8-4-4-4-12 hexadecimal groups)`, base);
      case 'code_not_found':
      case 'code_revoked':
        return codeGoneError(e.code === 'code_revoked' ? 'code_revoked' : 'code_not_found', code, base);
      case 'max_activations_reached': {
        const counts = await slotCounts(e.details, code, client, signal);
        const used = counts.activations !== undefined && counts.maxActivations !== undefined ? ` (${counts.activations} of ${counts.maxActivations} slots in use)` : '';
        return new LicenseError('max_activations_reached', `activation code ${hint} is already active on as many machines as it allows${used}; deactivate it on a machine you no longer use, then try again`, { ...base, ...counts });
      }
      case 'rate_limited':
        return new LicenseError('rate_limited', `the license service is rate-limiting requests; try again ${e.retryAt ? `after ${e.retryAt.toISOString()}` : 'in a minute'}`, { ...base, ...(e.retryAt ? { retryAt: e.retryAt } : {}) });
      case 'endpoint_not_found':
        // The api's message names the endpoint and says to check the base URL.
        return new LicenseError('unavailable', `${action}: ${e.message}`, base);
      case 'unauthorized':
      case 'forbidden':
        return new LicenseError('unauthorized', `the license service refused the ${action} request (${status} ${e.code}); check the token passed to License, or contact the vendor`, base);
      default:
        if (status === 429) {
          return new LicenseError('rate_limited', `the license service is rate-limiting requests; try again ${e.retryAt ? `after ${e.retryAt.toISOString()}` : 'in a minute'}`, { ...base, ...(e.retryAt ? { retryAt: e.retryAt } : {}) });
        }
        if (status >= 500) {
          return new LicenseError('unavailable', `the license service failed (${status} ${e.code}) during ${action}; try again later`, { ...base, ...(e.retryAt ? { retryAt: e.retryAt } : {}) });
        }
        return new LicenseError('invalid_argument', `the license service rejected the ${action} request (${status} ${e.code}): ${e.message}`, base);
    }
  }
  if (isNetworkError(e) || isTimeoutError(e)) {
    // The api's message already says what failed and what to check; add only which step it was.
    return new LicenseError('unavailable', `${action}: ${(e as Error).message}`, { cause: e });
  }
  if (isSchemaError(e)) {
    return new LicenseError('unavailable', `the license service answered ${action} in an unexpected shape (a proxy or captive portal?); try again later`, { cause: e });
  }
  return new LicenseError('unavailable', `${action} failed unexpectedly (${(e as Error)?.message ?? String(e)}); try again later`, { cause: e });
}

/** A code the service says is unknown or revoked, whether as an error answer or as a `valid: false` reason. */
export function codeGoneError(reason: 'code_not_found' | 'code_revoked', code: string, options: LicenseErrorOptions = {}): LicenseError {
  const hint = codeHint(code);
  return reason === 'code_not_found'
    ? new LicenseError('code_not_found', `activation code ${hint} does not exist; check it for typos, or ask the vendor for the right code`, options)
    : new LicenseError('code_revoked', `activation code ${hint} has been revoked; contact the vendor for a new code`, options);
}

async function slotCounts(details: Record<string, unknown>, code: string, client: ServiceClient, signal?: AbortSignal): Promise<{ activations?: number; maxActivations?: number }> {
  const a = details.activations ?? details.current_activations;
  const m = details.max_activations;
  if (typeof a === 'number' && typeof m === 'number') return { activations: a, maxActivations: m };
  try {
    const s = await client.activation.status(code, { ...(signal ? { signal } : {}), timeoutMs: 3000 });
    return { activations: s.activations, maxActivations: s.max_activations };
  } catch {
    return {};
  }
}
