import { isIP } from 'node:net';
import { ConfigError } from './errors.js';

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}

/**
 * Parses and checks a service base URL: `https://` is required unless the host is loopback
 * (localhost, 127.0.0.0/8, ::1), and the URL may not carry credentials, a query or a fragment.
 * Returns the URL without a trailing slash on its path.
 *
 * @example
 * assertBaseUrl('https://api.example.com/functions/v1'); // URL
 * assertBaseUrl('http://127.0.0.1:8787/functions/v1');   // URL (loopback)
 * assertBaseUrl('http://api.example.com/functions/v1');  // throws ConfigError
 */
export function assertBaseUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch (cause) {
    throw new ConfigError(
      `baseUrl is not a valid URL; pass the service base address, e.g. https://host/functions/v1`,
      'baseUrl',
      cause,
    );
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ConfigError(`baseUrl must use https:// (got ${parsed.protocol}//); use the service's https address`, 'baseUrl');
  }
  if (parsed.protocol === 'http:' && !isLoopback(parsed.hostname)) {
    throw new ConfigError(
      `baseUrl uses http:// to ${parsed.hostname}, which would send tokens and codes in clear text; use https:// (plain http is allowed only for loopback hosts)`,
      'baseUrl',
    );
  }
  if (parsed.username || parsed.password) {
    throw new ConfigError('baseUrl must not contain credentials; pass the token in the `token` option instead', 'baseUrl');
  }
  if (parsed.search || parsed.hash) {
    throw new ConfigError('baseUrl must not contain a query or fragment; pass only scheme, host and path (…/functions/v1)', 'baseUrl');
  }
  parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  return parsed;
}
