import { resolve } from 'node:path';
import * as z from 'zod';
import { buildApp, SERVICE_PREFIX } from './app.js';
import { decodeKey } from './auth.js';
import { EmulatorClock } from './clock.js';
import type { EmulatorContext } from './context.js';
import { loadDataFile } from './data-file.js';
import { EmulatorError } from './errors.js';
import { runClock } from './build-engine.js';
import { NO_FAULT } from './faults.js';
import { HeldRequests } from './held.js';
import { DEFAULT_DELIVERY_TIMEOUT_MS, Outbox } from './outbox.js';
import { isLoopbackHost } from './loopback.js';
import { DEFAULT_RATE_LIMITS, FixedWindowRateLimiter, type RateLimits } from './rate-limiter.js';
import { createIdentity, createStartState } from './seed.js';
import { EmulatorStore } from './store.js';
import { createTlsIdentity } from './tls.js';

/** Options of {@link startEmulator}. */
export interface EmulatorOptions {
  /** Loopback address to listen on; anything else is refused. Default 127.0.0.1. */
  host?: string;
  /** Port; 0 (default) picks a free one. */
  port?: number;
  /** JSON file holding the state across restarts (atomic writes after each change). */
  dataFile?: string;
  /** Base clock in epoch milliseconds; `/__emulator/clock` moves the emulator's clock relative to it. Default Date.now. */
  now?: () => number;
  /** Requests per minute per client and scope; defaults are those of the interface (60/10/100/10). */
  rateLimits?: Partial<RateLimits>;
  /** Log one line per request to stderr (pino). Default false. */
  logger?: boolean;
  /** Answer build downloads with a 302 to the file instead of `{url, expires_at}`. Default false. */
  downloadRedirect?: boolean;
  /** Serve HTTPS with a certificate generated at start (its PEM file is `caFile`). Default false. */
  tls?: boolean;
  /** Real time an outgoing notification may take before the attempt counts as failed. Default 10 000 ms. */
  deliveryTimeoutMs?: number;
  /** The demo project's id (a vendor's fixed project id, compiled into a plugin); default a random UUID. */
  projectId?: string;
}

/** A running emulator. */
export interface Emulator {
  /** Service base URL, `http://127.0.0.1:PORT/functions/v1` (`https://` with `tls`). */
  baseUrl: string;
  /** `http://127.0.0.1:PORT`; the controls live under `${origin}/__emulator`. */
  origin: string;
  /** With `tls`: the PEM file of the certificate, to trust as a CA. */
  caFile?: string;
  /** With `tls`: that certificate's PEM text. */
  ca?: string;
  /** Bearer JWT of the demo account (owner of projectId). */
  token: string;
  /** The demo project. */
  projectId: string;
  /** Webhook secret of the demo project (manual trigger). */
  webhookSecret: string;
  /** A project of another account: the token gets 403 forbidden on it. */
  otherProjectId: string;
  /** Stops listening, ends open connections and finishes pending writes of the data file. */
  close(): Promise<void>;
}

function checkLimits(limits: Partial<RateLimits> | undefined): RateLimits {
  const merged = { ...DEFAULT_RATE_LIMITS, ...limits };
  for (const [scope, value] of Object.entries(merged)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new EmulatorError('invalid_option', `rate limit ${scope} must be a positive whole number of requests per minute (got ${String(value)})`, {
        context: { scope },
      });
    }
  }
  return merged;
}

function formatHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/**
 * Starts the service emulator on loopback.
 *
 * @example
 * const emulator = await startEmulator();
 * const res = await fetch(`${emulator.baseUrl}/sdk/status`, { headers: { authorization: `Bearer ${emulator.token}` } });
 * await emulator.close();
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) {
    throw new EmulatorError(
      'host_not_loopback',
      `refusing to listen on ${host}: the emulator has no real security and only listens on loopback; use 127.0.0.1, ::1 or localhost`,
      { context: { host } },
    );
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new EmulatorError('invalid_option', `port must be a whole number from 0 to 65535 (got ${String(port)})`, { context: { port } });
  }
  const limits = checkLimits(options.rateLimits);
  const clock = new EmulatorClock(options.now ?? Date.now);
  const dataFile = options.dataFile === undefined ? undefined : resolve(options.dataFile);

  const projectId = options.projectId?.toLowerCase();
  if (projectId !== undefined && !z.uuid().safeParse(projectId).success) {
    throw new EmulatorError('invalid_option', `projectId must be a UUID such as 123e4567-e89b-12d3-a456-426614174000 (got '${String(options.projectId).slice(0, 64)}')`, { context: { projectId: options.projectId } });
  }
  const loaded = dataFile === undefined ? undefined : await loadDataFile(dataFile);
  if (loaded && projectId !== undefined && loaded.identity.project_id !== projectId) {
    throw new EmulatorError('invalid_option', `the data file ${dataFile} holds project ${loaded.identity.project_id}, not ${projectId}; use another --data file for that project id, or leave --project-id out`, {
      context: { projectId, dataFile },
    });
  }
  const data = loaded ?? createStartState(await createIdentity(clock.now(), projectId), clock.now());
  const store = new EmulatorStore(data, dataFile);
  if (!loaded) await store.commit();

  const deliveryTimeoutMs = options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS;
  if (!Number.isInteger(deliveryTimeoutMs) || deliveryTimeoutMs < 1 || deliveryTimeoutMs > 600_000) {
    throw new EmulatorError('invalid_option', `deliveryTimeoutMs must be a whole number of ms from 1 to 600000 (got ${String(deliveryTimeoutMs)})`, {
      context: { deliveryTimeoutMs },
    });
  }
  let origin = '';
  const shutdown = new AbortController();
  const signingKey = decodeKey(data.identity.signing_key);
  const ctx: EmulatorContext = {
    store,
    clock,
    limiter: new FixedWindowRateLimiter(limits, () => clock.now()),
    faults: { fault: { ...NO_FAULT } },
    held: new HeldRequests(shutdown.signal),
    signingKey,
    origin: () => origin,
    downloadRedirect: options.downloadRedirect ?? false,
    outbox: new Outbox({ store, clock, signingKey, origin: () => origin }, deliveryTimeoutMs, shutdown.signal),
  };
  const tls = options.tls ? createTlsIdentity(host, dataFile) : undefined;
  const app = buildApp(ctx, { logger: options.logger ?? false, shutdown: shutdown.signal, ...(tls ? { https: { key: tls.key, cert: tls.cert } } : {}) });
  try {
    await app.listen({ host, port });
  } catch (error) {
    await app.close().catch(() => undefined);
    tls?.cleanup();
    throw new EmulatorError('listen_failed', `cannot listen on ${host}:${port}: ${(error as Error).message}; pick another port or stop what uses it`, {
      cause: error,
      context: { host, port },
    });
  }
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address !== null ? address.port : port;
  origin = `${tls ? 'https' : 'http'}://${formatHost(host)}:${actualPort}`;
  // Builds also move with real time, and retries go out, when nobody sends a request.
  const ticker = setInterval(() => {
    runClock(ctx).catch(() => undefined);
  }, 250);
  ticker.unref();

  let closing: Promise<void> | undefined;
  const identity = store.data.identity;
  return {
    baseUrl: `${origin}${SERVICE_PREFIX}`,
    origin,
    token: identity.token,
    projectId: identity.project_id,
    webhookSecret: identity.webhook_secret,
    otherProjectId: identity.other_project_id,
    ...(tls ? { caFile: tls.caFile, ca: tls.cert } : {}),
    close: () => {
      closing ??= (async () => {
        clearInterval(ticker);
        shutdown.abort();
        await ctx.outbox.settle();
        await app.close();
        await store.flush();
        tls?.cleanup();
      })();
      return closing;
    },
  };
}
