import type { Dispatcher } from 'undici';
import { loadUndici } from './undici-loader.js';
import { ConfigError } from './errors.js';

/** How the client's own connections are made. */
export interface ConnectionOptions {
  /** Connect time-out, ms. */
  timeoutMs: number;
  /** PEM certificate(s) trusted in addition to Node's default roots (a private CA, the emulator's `ca_file`). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** A proxy URL for every request, or `false` for none; default: the standard proxy variables. */
  proxy?: string | false;
  /** Where the proxy variables are read (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** The standard proxy variables undici's `EnvHttpProxyAgent` reads (`NO_PROXY` lists the exceptions). */
export const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'] as const;
export const NO_PROXY_VARIABLES = ['NO_PROXY', 'no_proxy'] as const;

/**
 * The client's own keep-alive pool. Requests go through `proxy` when it is a URL; with no
 * `proxy` option, through `HTTPS_PROXY`/`HTTP_PROXY` (minus `NO_PROXY`) when any is set (undici's
 * `EnvHttpProxyAgent`); otherwise straight. `ca` is trusted for the service and for the proxy.
 *
 * @example
 * const dispatcher = await createDispatcher({ timeoutMs: 10_000, proxy: 'http://proxy.studio.lan:3128' });
 */
export async function createDispatcher(o: ConnectionOptions): Promise<Dispatcher> {
  const route = connectionRoute(o);
  const { Agent, EnvHttpProxyAgent, ProxyAgent } = await loadUndici();
  const tls = o.ca === undefined ? {} : { ca: await trustedCa(o.ca) };
  const pool = { keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connect: { timeout: o.timeoutMs, ...tls } };
  const tunnelTls = { requestTls: { ...tls, timeout: o.timeoutMs }, proxyTls: { ...tls, timeout: o.timeoutMs } };
  if (route.via === 'proxy') return new ProxyAgent({ ...pool, uri: route.uri, ...tunnelTls });
  if (route.via === 'environment') return new EnvHttpProxyAgent({ ...pool, ...tunnelTls });
  return new Agent(pool);
}

/**
 * The certificates a connection given `ca` trusts: Node's default roots and those. Node's own
 * `ca` option replaces the roots instead, so a private CA for a proxy would make a public
 * service untrusted. (`NODE_EXTRA_CA_CERTS` adds to the roots only when no `ca` is given.)
 */
export async function trustedCa(ca: NonNullable<ConnectionOptions['ca']>): Promise<Array<string | Buffer>> {
  const { rootCertificates } = await import('node:tls');
  return [...rootCertificates, ...(Array.isArray(ca) ? ca : [ca])];
}

/**
 * Which way requests go, decided (and every proxy URL checked) without loading undici: through
 * the `proxy` option, through the proxy variables when one is set, or straight.
 */
export function connectionRoute(o: Pick<ConnectionOptions, 'proxy' | 'env'>): { via: 'proxy'; uri: string } | { via: 'environment' } | { via: 'direct' } {
  if (typeof o.proxy === 'string') return { via: 'proxy', uri: checkProxyUrl(o.proxy) };
  const env = o.env ?? process.env;
  const set = PROXY_VARIABLES.filter((name) => (env[name] ?? '').trim() !== '');
  if (o.proxy === false || set.length === 0) return { via: 'direct' };
  for (const name of set) checkProxyUrl(env[name] as string, name);
  return { via: 'environment' };
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

/** How long {@link closeDispatcher} lets connections end by themselves before it ends them. */
const CLOSE_GRACE_MS = 1000;

/**
 * Closes a dispatcher gracefully, but not for longer than a moment (`graceMs`, at most 1 s; 0
 * ends its connections at once): a connection stuck where no answer comes (a proxy that never
 * answers CONNECT) would otherwise hold the close, and the process, until the system gives up on
 * it minutes later.
 *
 * @example
 * const dispatcher = await createDispatcher({ timeoutMs: 10_000 });
 * try { ... } finally { await closeDispatcher(dispatcher); }
 */
export async function closeDispatcher(dispatcher: { close(): Promise<void>; destroy(): Promise<void> }, graceMs: number = CLOSE_GRACE_MS): Promise<void> {
  // No grace (a connection known to be stuck, a deadline already spent): ended at once.
  if (!(graceMs > 0)) return dispatcher.destroy();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.min(graceMs, CLOSE_GRACE_MS));
  });
  const closed = await Promise.race([dispatcher.close().then(() => 'closed' as const), late]);
  clearTimeout(timer);
  if (closed === 'late') await dispatcher.destroy();
}
