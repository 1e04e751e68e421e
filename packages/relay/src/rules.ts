// The library's input rules, on the web platform only: the relay runs on Deno and in Workers,
// where the library's Node modules cannot load. test/rules.test.ts holds each verdict equal to
// the library's own (a table of hostile inputs through both), so they cannot drift apart.

/** A project id as the service gives it: a UUID (licensing's PROJECT_ID_PATTERN). */
export const PROJECT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A namespace, one per vendor (licensing's NAMESPACE_PATTERN): 1-64 letters, digits, '.', '_', '-'. */
export const NAMESPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The longest activation code the library sends (licensing's MAX_CODE_LENGTH). */
export const MAX_CODE_LENGTH = 256;

/** The longest machine id the service takes. */
export const MAX_MACHINE_ID_LENGTH = 256;

/**
 * The longest life of a signed ticket, in days: the library's offline grace (30 days), so a
 * ticket never carries a computer further than the grace the library itself gives.
 */
export const MAX_TICKET_DAYS = 30;

/** Loopback as the api's base-URL rule has it: localhost (and *.localhost), 127.0.0.0/8, ::1. */
function isLoopback(url: URL): boolean {
  // The URL parser has already normalized the host: IPv4 in dotted decimal, IPv6 compressed in brackets.
  const host = url.hostname.toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return true;
  return host === '[::1]';
}

/**
 * Why `text` cannot be a service base URL, or the URL without a trailing slash: the api's and the
 * library's rule (https unless loopback, no credentials, query or fragment, ending in
 * /functions/v1).
 *
 * @example
 * baseUrlProblem('https://service.example/functions/v1'); // { url: 'https://service.example/functions/v1' }
 * baseUrlProblem('http://service.example/functions/v1');  // { problem: 'uses http:// to service.example, …' }
 */
export function baseUrlProblem(text: string): { url: string } | { problem: string } {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { problem: 'is not a valid URL; give the service base address, e.g. https://host/functions/v1' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { problem: `must use https:// (got ${url.protocol}//)` };
  if (url.protocol === 'http:' && !isLoopback(url)) return { problem: `uses http:// to ${url.hostname}, which would send the token and codes in clear text; use https:// (plain http is allowed only for loopback hosts)` };
  if (url.username || url.password) return { problem: 'must not contain credentials; the token goes in RELAY_SERVICE_TOKEN' };
  if (url.search || url.hash) return { problem: 'must not contain a query or fragment; give only scheme, host and path (…/functions/v1)' };
  const path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/functions/v1')) return { problem: `does not end in /functions/v1; give the full service base address, e.g. ${url.origin}/functions/v1` };
  return { url: `${url.origin}${path}` };
}
