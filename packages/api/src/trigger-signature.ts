import { createHmac } from 'node:crypto';

/**
 * The `X-Signature` value for the manual build trigger: `sha256=` + lowercase hex HMAC-SHA256 of
 * the raw request body, keyed by the project's webhook secret. The signature covers the body bytes
 * exactly as sent (no timestamp, no re-serialisation): sign the same string or bytes you send.
 *
 * @example
 * const body = JSON.stringify({ ref: 'refs/heads/main', commit_sha: 'a1b2c3d' });
 * await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-signature': signTrigger(body, secret) } });
 */
export function signTrigger(rawBody: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}
