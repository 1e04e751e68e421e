// The direct connection's carrier (Node's http/https with a keep-alive agent) against real
// loopback servers doing what the emulator never does: stalling in the body, dropping the
// connection mid-answer, closing idle keep-alive connections.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient, isNetworkError, isSchemaError, isTimeoutError, type NetworkError } from '../src/index.js';
import { rejection } from '@plugin-license/test-utils';

const code = 'C0DE1234-ABCD-4EF0-9876-FEDCBA987654';
const statusBody = JSON.stringify({ activations: 0, max_activations: 2, available: 2, is_revoked: false });

let server: Server | undefined;
let client: ServiceClient | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  await client?.close();
  for (const s of sockets) s.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  client = undefined;
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void, keepAliveTimeout = 5_000): Promise<{ baseUrl: string; connections: () => number }> {
  let connections = 0;
  server = createServer(handler);
  server.keepAliveTimeout = keepAliveTimeout;
  server.on('connection', (s: Socket) => {
    connections += 1;
    sockets.add(s);
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/functions/v1`, connections: () => connections };
}

describe('the direct carrier (node:http)', () => {
  it('keeps one connection alive across requests and closes it with the client', async () => {
    const s = await serve((_req, res) => res.setHeader('content-type', 'application/json').end(statusBody));
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false });
    for (let i = 0; i < 3; i++) expect((await client.activation.status(code)).available).toBe(2);
    expect(s.connections()).toBe(1);
    const [socket] = [...sockets];
    const closed = new Promise((resolve) => socket?.once('close', resolve));
    await client.close();
    await closed;
    expect((await rejection(client.activation.status(code))).message).toMatch(/was closed/);
  });

  it('a pause in the body longer than timeoutMs is a TimeoutError', async () => {
    const s = await serve((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.write(statusBody.slice(0, 10)); // then nothing more
    });
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false, timeoutMs: 150 });
    const e = await rejection(client.activation.status(code));
    expect(isTimeoutError(e), String(e)).toBe(true);
    expect(e.message).toContain('within 150 ms');
  });

  it('no headers within timeoutMs is a TimeoutError', async () => {
    const s = await serve(() => undefined);
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false, timeoutMs: 150 });
    expect(await rejection(client.activation.status(code))).toSatisfy(isTimeoutError);
  });

  it('a connection dropped in the middle of the body is a NetworkError of reading the answer, never a code in it', async () => {
    const s = await serve((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('content-length', String(statusBody.length));
      res.write(statusBody.slice(0, 10));
      setTimeout(() => req.socket.destroy(), 20);
    });
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false });
    const e = (await rejection(client.activation.status(code))) as NetworkError;
    expect(isNetworkError(e), String(e)).toBe(true);
    expect(e.message).toMatch(/^could not read the answer of GET \/plugin-activation\/status\/:code at 127\.0\.0\.1:\d+ \(/);
    expect(e.message).not.toContain(code);
  });

  it('a body that is not JSON, or not the documented shape, is a SchemaError saying so, and the connection stays usable', async () => {
    let answer = '<html>proxy login</html>';
    const s = await serve((_req, res) => res.setHeader('content-type', 'text/html').end(answer));
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false });
    const notJson = await rejection(client.activation.status(code));
    expect(isSchemaError(notJson), String(notJson)).toBe(true);
    expect(notJson.message).toMatch(/is not JSON; check that the base URL points at the service/);
    answer = JSON.stringify({ activations: 'three' });
    const wrongShape = await rejection(client.activation.status(code));
    expect(isSchemaError(wrongShape)).toBe(true);
    expect(wrongShape.message).toContain('does not match the documented shape');
    expect(wrongShape.message).not.toContain(code);
    answer = statusBody;
    expect((await client.activation.status(code)).available).toBe(2);
    expect(s.connections()).toBe(1);
  });

  it('an idle connection the server closes (its Keep-Alive hint) is not reused: the next request succeeds', async () => {
    const s = await serve((_req, res) => res.setHeader('content-type', 'application/json').end(statusBody), 1_200);
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false });
    await client.activation.status(code);
    await new Promise((resolve) => setTimeout(resolve, 1_400));
    expect((await client.activation.status(code)).available).toBe(2);
    expect(s.connections()).toBe(2);
  });

  it('an abort signal ends the request with its reason', async () => {
    const s = await serve(() => undefined);
    client = new ServiceClient({ baseUrl: s.baseUrl, proxy: false, retry: false });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user cancelled')), 50);
    const e = await rejection(client.activation.status(code, { signal: controller.signal }));
    expect(e.message).toBe('user cancelled');
  });
});

describe('trusted certificates', () => {
  it('a given ca is added to Node\'s default roots, not put in their place', async () => {
    const { rootCertificates } = await import('node:tls');
    const { trustedCa } = await import('../src/dispatcher.js');
    const pem = '-----BEGIN CERTIFICATE-----\nprivate\n-----END CERTIFICATE-----\n';
    const one = await trustedCa(pem);
    expect(one.length).toBe(rootCertificates.length + 1);
    expect(one.slice(0, -1)).toEqual([...rootCertificates]);
    expect(one.at(-1)).toBe(pem);
    expect((await trustedCa([pem, Buffer.from(pem)])).length).toBe(rootCertificates.length + 2);
  });
});
