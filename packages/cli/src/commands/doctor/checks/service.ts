import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { closeDispatcher, createDispatcher, isTimeoutError, NO_PROXY_VARIABLES, PROXY_VARIABLES } from '@plugin-license/api';
import type { ResolvedConfig } from '@plugin-license/licensing';
import { request } from 'undici';
import type { Context } from '../../../context.js';
import { maskUrl } from '../format.js';
import type { Add, Facts } from '../report.js';

export interface Probe {
  localAt: number;
  serviceDate: number | undefined;
  /** The answer came from the service (its error body, or a success), not from whatever else answers at the URL. */
  isService: boolean;
}

export async function service(ctx: Context, config: ResolvedConfig, facts: Facts, add: Add): Promise<Probe | undefined> {
  const section = 'service';
  const set = [...PROXY_VARIABLES, ...NO_PROXY_VARIABLES].filter((v) => (ctx.env[v] ?? '').trim() !== '');
  add({ section, name: 'proxy variables', level: 'info', detail: set.length === 0 ? 'none set' : set.map((v) => `${v}=${maskUrl(ctx.env[v] as string)}`).join(', ') });
  const base = config.baseUrl.value;
  const seen: NonNullable<Facts['service']> = { base_url: base ?? null, reachable: false, is_the_service: null, status: null, latency_ms: null, clock_offset_ms: null };
  facts.service = seen;
  if (base === undefined) return undefined;
  const url = new URL(base);
  add({ section, name: 'base URL form', level: 'ok', detail: `${url.protocol === 'https:' ? 'https' : 'http (loopback)'}, ends in /functions/v1` });
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0) {
    try {
      const addresses = await lookup(url.hostname, { all: true });
      add({ section, name: 'DNS', level: 'ok', detail: `${url.hostname} → ${addresses.map((a) => a.address).join(', ')}` });
    } catch (err) {
      add({ section, name: 'DNS', level: set.length ? 'warning' : 'failed', detail: `${url.hostname} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`, fix: 'check the host name in the base URL and this machine\'s network and DNS settings' });
    }
  }
  const PROBE_TIMEOUT_MS = ctx.requestTimeoutMs;
  const dispatcher = await createDispatcher({ timeoutMs: PROBE_TIMEOUT_MS, ...(config.proxy.value === undefined ? {} : { proxy: config.proxy.value }), env: ctx.env });
  const started = performance.now();
  try {
    // The command's deadline ends the probe whatever stage hangs (a proxy that never answers
    // CONNECT is not aborted by undici itself); the stuck connection goes with the dispatcher.
    const { res, text } = await ctx.deadline.bound(
      (async () => {
        const answer = await request(`${base}/plugin-activation/status/doctor-probe`, { dispatcher, headersTimeout: PROBE_TIMEOUT_MS, bodyTimeout: PROBE_TIMEOUT_MS });
        return { res: answer, text: await answer.body.text() };
      })(),
      'GET /plugin-activation/status/:code, the public request of this check',
    );
    const ms = performance.now() - started;
    const date = Date.parse(String(res.headers.date ?? ''));
    const answered = res.statusCode < 500;
    // The service answers an unknown code with its error body ({"error": …, "message": …}); a
    // web server, a portal or a wrong path answers something else.
    const isService = answered && (res.statusCode < 300 || serviceErrorBody(text));
    Object.assign(seen, { reachable: true, is_the_service: isService, status: res.statusCode, latency_ms: Math.round(ms) });
    add({
      section,
      name: 'connect and TLS',
      level: answered ? 'ok' : 'failed',
      detail: `${url.host} answered HTTP ${res.statusCode} to a public request in ${ms.toFixed(0)} ms`,
      ...(answered ? {} : { fix: 'the service is failing; try again later or check the service status page' }),
    });
    if (answered) {
      add(
        isService
          ? { section, name: 'is the service', level: 'ok', detail: 'answered as the service does' }
          : { section, name: 'is the service', level: 'failed', detail: `HTTP ${res.statusCode} without the service's error body: something answers at this URL, but not the service`, fix: "check the base URL: the service's ends in /functions/v1" },
      );
    }
    if (answered && ms > 2000) add({ section, name: 'latency', level: 'warning', detail: `${ms.toFixed(0)} ms for one request`, fix: 'a slow network or proxy; activation still works, but slowly' });
    return { localAt: Date.now() - ms / 2, serviceDate: Number.isNaN(date) ? undefined : date, isService };
  } catch (err) {
    if (ctx.signal.aborted) throw err; // Ctrl-C: the report stops here
    const e = err as Error & { code?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code ?? '';
    const tls = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code + e.message);
    add({
      section,
      name: 'connect and TLS',
      level: 'failed',
      detail: `${url.host}: ${tls ? `the certificate is not trusted (${code || e.message})` : isTimeoutError(err) ? err.message : `no answer (${code || e.message})`}`,
      fix: tls ? 'if the service sits behind a private CA, point NODE_EXTRA_CA_CERTS at its PEM file' : 'check the network connection, the proxy settings and the base URL; licenses stay valid offline during the grace period',
    });
    return undefined;
  } finally {
    // A probe that got no answer may leave a stuck connection: it is not waited for.
    await closeDispatcher(dispatcher, ctx.deadline.remainingMs());
  }
}

function serviceErrorBody(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown } | null;
    return typeof body === 'object' && body !== null && typeof body.error === 'string' && typeof body.message === 'string';
  } catch {
    return false;
  }
}
