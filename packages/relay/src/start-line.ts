import type { RelayKey } from './relay.js';

/** `http://HOST:PORT` for a host and port a server listens on (an IPv6 host in brackets). */
export function originOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * The one line a relay prints on stdout once it listens, on every runtime:
 * `{"base_url": ".../functions/v1", "keys": [{"kid", "public_key"}]}`.
 *
 * @example
 * startLine('http://127.0.0.1:8788', relay.keys); // '{"base_url":"http://127.0.0.1:8788/functions/v1","keys":[…]}'
 */
export function startLine(origin: string, keys: readonly RelayKey[]): string {
  return JSON.stringify({ base_url: `${origin}/functions/v1`, keys: keys.map((k) => ({ kid: k.kid, public_key: k.public_key })) });
}
