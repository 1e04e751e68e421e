import { KeyObject, sign } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { createCarrier } from '@plugin-license/api';
import type { RelayConfig } from './config.js';
import type { SigningKey } from './keys.js';
import type { ServiceCarrier } from './service.js';
import type { Relay } from './relay.js';
import { originOf } from './start-line.js';

/** A relay listening on Node. */
export interface RelayServer {
  /** `http://HOST:PORT`. */
  origin: string;
  port: number;
  /**
   * Stops listening, lets the requests in flight finish (their answers are written), closes
   * idle connections, and resolves once the last connection is gone.
   */
  close(): Promise<void>;
}

/**
 * Serves a relay's handler on Node (node:http through `@hono/node-server`, which turns each
 * request into a web `Request` and the `Response` back).
 *
 * `ownProcess`: this process serves nothing else (see below).
 *
 * @example
 * const relay = createRelay(await loadRelayConfig(process.env));
 * const server = await serveRelay(relay, { host: '127.0.0.1', port: 0 });
 * console.log(startLine(server.origin, relay.keys));
 */
export async function serveRelay(relay: Relay, o: { host?: string; port?: number; ownProcess?: boolean } = {}): Promise<RelayServer> {
  const host = o.host ?? '127.0.0.1';
  // A process that serves the relay alone (`relay serve`) lets the adapter put its lighter Request
  // and Response in place of the globals: a request is then read and an answer written without
  // web streams, at a fraction of the CPU. Embedded in another program, the globals stay its own.
  const server = createAdaptorServer({ fetch: (request: Request) => relay.fetch(request), overrideGlobalObjects: o.ownProcess === true }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Once closing, a connection whose answer has gone is closed at once rather than kept alive.
  let closing = false;
  server.on('request', (_req, res: ServerResponse) => res.once('finish', () => closing && setImmediate(() => server.closeIdleConnections())));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: originOf(host, port),
    port,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/**
 * How the relay reaches the service on Node: the api's carrier (Node's own keep-alive HTTP, or
 * undici through a proxy the standard variables name, HTTPS_PROXY and NO_PROXY), which costs a
 * fraction of what `fetch` does per request. Pass it as `createRelay`'s `carrier`.
 *
 * @example
 * const relay = createRelay(config, { carrier: await nodeCarrier() });
 */
export async function nodeCarrier(env: Record<string, string | undefined> = process.env): Promise<ServiceCarrier & { close(): Promise<void> }> {
  return createCarrier({ timeoutMs: 8_000, env });
}

/**
 * The configuration with its keys signing through node:crypto (synchronous, in this thread)
 * instead of `crypto.subtle` (a job on the thread pool per signature): the same keys and bytes,
 * at a fraction of the CPU.
 *
 * @example
 * const relay = createRelay(withNodeSigning(await loadRelayConfig(process.env)));
 */
export function withNodeSigning(config: RelayConfig): RelayConfig {
  const keys = config.keys.map((k): SigningKey => {
    const key = KeyObject.from(k.privateKey);
    return { ...k, sign: async (bytes) => new Uint8Array(sign(null, bytes, key)) };
  });
  return { ...config, keys };
}
