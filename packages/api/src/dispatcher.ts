import { Agent, EnvHttpProxyAgent, ProxyAgent, type Dispatcher } from 'undici';
import { ConfigError } from './errors.js';

/** How the client's own connections are made. */
export interface ConnectionOptions {
  /** Connect time-out, ms. */
  timeoutMs: number;
  /** PEM certificate(s) trusted in addition to the system's (a private CA, the emulator's `ca_file`). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** A proxy URL for every request, or `false` for none; default: the standard proxy variables. */
  proxy?: string | false;
  /** Where the proxy variables are read (default `process.env`). */
  env?: Record<string, string | undefined>;
}

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'];

/**
 * The client's own keep-alive pool. Requests go through `proxy` when it is a URL; with no
 * `proxy` option, through `HTTPS_PROXY`/`HTTP_PROXY` (minus `NO_PROXY`) when any is set (undici's
 * `EnvHttpProxyAgent`); otherwise straight. `ca` is trusted for the service and for the proxy.
 *
 * @example
 * createDispatcher({ timeoutMs: 10_000, proxy: 'http://proxy.studio.lan:3128' });
 */
export function createDispatcher(o: ConnectionOptions): Dispatcher {
  const tls = o.ca === undefined ? {} : { ca: o.ca };
  const pool = { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connect: { timeout: o.timeoutMs, ...tls } };
  if (typeof o.proxy === 'string') {
    return new ProxyAgent({ ...pool, uri: checkProxyUrl(o.proxy), requestTls: { ...tls, timeout: o.timeoutMs }, proxyTls: { ...tls, timeout: o.timeoutMs } });
  }
  const env = o.env ?? process.env;
  if (o.proxy !== false && PROXY_VARIABLES.some((name) => (env[name] ?? '').trim() !== '')) {
    for (const name of PROXY_VARIABLES) if ((env[name] ?? '').trim() !== '') checkProxyUrl(env[name] as string, name);
    return new EnvHttpProxyAgent({ ...pool, requestTls: { ...tls, timeout: o.timeoutMs }, proxyTls: { ...tls, timeout: o.timeoutMs } });
  }
  return new Agent(pool);
}

/**
 * Checks a proxy URL (http:// or https://, credentials allowed) and returns it normalized;
 * `ConfigError` otherwise, never echoing a password.
 *
 * @example
 * checkProxyUrl('http://proxy.studio.lan:3128'); // 'http://proxy.studio.lan:3128/'
 */
export function checkProxyUrl(value: string, from = 'proxy'): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch (cause) {
    throw new ConfigError(`${from} '${redactCredentials(value)}' is not a URL; use e.g. http://proxy.example:3128`, 'proxy', cause);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${from} must be an http:// or https:// proxy URL (got ${url.protocol}//)`, 'proxy');
  }
  return url.href;
}

/** A proxy URL may carry a user and password: never show them. */
export function redactCredentials(value: string): string {
  return value.replace(/\/\/[^/@]*@/, '//…@');
}
