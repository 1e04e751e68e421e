// The peers tests talk to besides the emulator, each on 127.0.0.1:0: a real forwarding proxy, a
// server that never answers, and a CONNECT proxy that alters or holds back what its tunnels carry.
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { createProxy } from 'proxy';

function closing(server: Server, sockets: Set<Socket>): () => Promise<void> {
  return () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A real HTTP proxy (CONNECT tunnels included) on loopback, recording every tunnel it opened. */
export interface TestProxy {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The `host:port` of every CONNECT tunnel, in order. */
  tunnels: string[];
  close(): Promise<void>;
}

/**
 * Starts a forwarding proxy (the `proxy` package) on 127.0.0.1:0, as a studio's or company's
 * proxy would stand between a machine and the service.
 *
 * @example
 * const proxy = await startConnectProxy();
 * try { new License({ ..., proxy: proxy.url }) } finally { await proxy.close(); }
 */
export async function startConnectProxy(): Promise<TestProxy> {
  const server = createProxy(createHttpServer());
  const tunnels: string[] = [];
  server.on('connect', (req: { url?: string }) => tunnels.push(req.url ?? ''));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    tunnels,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

/** A server that accepts every connection, reads what it is sent and never answers. */
export interface SilentServer {
  /** `http://127.0.0.1:PORT`: a hung service, or (as HTTP_PROXY) a hung proxy. */
  url: string;
  /** Resolves when the next request arrives: its sender is then waiting for the answer. */
  asked(): Promise<void>;
  /** When the first request arrived (Date.now()), if one has. */
  firstHeard(): number | undefined;
  /** How many connections it accepted. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Starts a {@link SilentServer}: the peer for every deadline and time-out test.
 *
 * @example
 * const hung = await startSilentServer();
 * try { await cli(['status'], { PLUGIN_LICENSE_BASE_URL: `${hung.url}/functions/v1` }); } finally { await hung.close(); }
 */
export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let heard: () => void = () => undefined;
  let first: number | undefined;
  const server = createServer((s) => {
    sockets.add(s);
    s.on('data', () => {
      first ??= Date.now();
      heard();
    });
    s.on('error', () => undefined);
  });
  return {
    url: await listening(server),
    asked: () => new Promise<void>((resolve) => (heard = resolve)),
    firstHeard: () => first,
    connections: () => sockets.size,
    close: closing(server, sockets),
  };
}

/**
 * Starts a CONNECT proxy whose tunnels pass what the client sends as it is, and send back what
 * `tamper` makes of each chunk from the server (`offset`: the bytes of this tunnel before it); a
 * tunnel whose chunks it empties stays open with nothing more arriving, as a stalled download.
 *
 * @example
 * // One byte flipped at offset 60 000: small answers pass, a large download arrives corrupted.
 * const proxy = await startTamperingProxy((chunk, offset) => { ... return chunk; });
 */
export async function startTamperingProxy(tamper: (chunk: Buffer, offset: number) => Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once('data', (head) => {
      const target = /^CONNECT ([^\s:]+):(\d+)/.exec(head.toString('latin1'));
      if (!target) return client.destroy();
      const upstream = connect(Number(target[2]), target[1]!, () => client.write('HTTP/1.1 200 Connection Established\r\n\r\n'));
      sockets.add(upstream);
      let offset = 0;
      upstream.on('data', (chunk: Buffer) => {
        const sent = tamper(chunk, offset);
        offset += chunk.length;
        if (sent.length > 0) client.write(sent);
      });
      client.on('data', (d) => upstream.write(d));
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  return { url: await listening(server), close: closing(server, sockets) };
}
