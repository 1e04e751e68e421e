import { assertBaseUrl, isApiError } from '@plugin-license/api';
import { LicenseError } from './errors.js';

export const MAX_CODE_LENGTH = 256;

/**
 * Trims an activation code and rejects what can never be one (empty, control characters, over
 * 256 characters) with `invalid_code`, before any request. Other formats go to the service,
 * which decides.
 *
 * @example
 * normalizeCode('  3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601\n'); // '3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601'
 */
export function normalizeCode(code: unknown): string {
  if (typeof code !== 'string') {
    throw new LicenseError('invalid_code', `the activation code must be a string, got ${code === null ? 'null' : typeof code}; pass the code the customer received`);
  }
  const trimmed = code.trim();
  if (trimmed === '') {
    throw new LicenseError('invalid_code', 'the activation code is empty; ask the customer to paste the code from their purchase e-mail');
  }
  if (trimmed.length > MAX_CODE_LENGTH) {
    throw new LicenseError('invalid_code', `the activation code is ${trimmed.length} characters long (at most ${MAX_CODE_LENGTH}); check that only the code was pasted`);
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(trimmed)) {
    throw new LicenseError('invalid_code', 'the activation code contains control characters; ask the customer to type or paste it again');
  }
  return trimmed;
}

/**
 * Checks a service base URL before any I/O: https (or http to loopback only), ending in
 * `/functions/v1`. Returns it without a trailing slash.
 *
 * @example
 * normalizeBaseUrl('https://service.example/functions/v1/'); // 'https://service.example/functions/v1'
 */
export function normalizeBaseUrl(baseUrl: unknown): string {
  if (typeof baseUrl !== 'string' || baseUrl.trim() === '') {
    throw new LicenseError('invalid_argument', 'baseUrl is required: the service address ending in /functions/v1, e.g. https://service.example/functions/v1');
  }
  let url: URL;
  try {
    url = assertBaseUrl(baseUrl.trim());
  } catch (e) {
    if (!isApiError(e)) throw e;
    throw new LicenseError('invalid_argument', e.message, { cause: e });
  }
  if (!url.pathname.endsWith('/functions/v1')) {
    throw new LicenseError(
      'invalid_argument',
      `baseUrl ${url.origin}${url.pathname} does not end in /functions/v1; pass the full service base address, e.g. ${url.origin}/functions/v1`,
    );
  }
  return url.href.replace(/\/+$/, '');
}
