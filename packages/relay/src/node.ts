import type { AddressInfo } from 'node:net';
import type { Server, ServerResponse } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
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
 * @example
 * const relay = createRelay(await loadRelayConfig(process.env));
 * const server = await serveRelay(relay, { host: '127.0.0.1', port: 0 });
 * console.log(startLine(server.origin, relay.keys));
 */
export async function serveRelay(relay: Relay, o: { host?: string; port?: number } = {}): Promise<RelayServer> {
  const host = o.host ?? '127.0.0.1';
  // overrideGlobalObjects false: the process's own Request and Response stay the platform's.
  const server = createAdaptorServer({ fetch: (request: Request) => relay.fetch(request), overrideGlobalObjects: false }) as Server;
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
