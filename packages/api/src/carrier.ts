import type { Agent as HttpAgent, ClientRequest, IncomingMessage, request as httpRequest } from 'node:http';
import type { Dispatcher, request as undiciRequest } from 'undici';
import { closeDispatcher, connectionRoute, createDispatcher, trustedCa, type ConnectionOptions } from './dispatcher.js';
import { loadUndici } from './undici-loader.js';

/** Response header values as both carriers give them (lower-case names). */
export type HeaderValues = Record<string, string | string[] | undefined>;

/** One request to the service, as the transport hands it over. */
export interface CarriedRequest {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Time-out of the attempt: connecting, waiting for the headers, and any pause in the body. */
  timeoutMs: number;
  signal: AbortSignal | undefined;
}

/** What came back: the status and headers at once, the body when asked (its own failure stage). */
export interface CarriedAnswer {
  status: number;
  headers: HeaderValues;
  text(): Promise<string>;
}

/**
 * How requests reach the service. A direct connection goes over Node's own `http`/`https` with a
 * keep-alive agent; a proxy (given or from the environment) and an injected undici dispatcher go
 * through undici. The split is about the resident agent: undici and its WebAssembly HTTP parser
 * cost about 11 MB of a process's memory for the few requests a day the agent makes, while
 * Node's parser is already in the binary; undici keeps what Node lacks, the proxy agents and
 * their `NO_PROXY` rules, and callers' own dispatchers.
 */
export interface Carrier {
  send(url: string, request: CarriedRequest): Promise<CarriedAnswer>;
  close(): Promise<void>;
}

/**
 * Error codes of an attempt that ran out of time, from either carrier: undici's, and the one the
 * Node carrier gives its own time-out.
 */
export const TIMEOUT_CODES: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_PLC_TIMEOUT']);

/** The carrier of a connection: Node's for a direct one, undici's through a proxy (loaded then). */
export async function createCarrier(o: ConnectionOptions): Promise<Carrier> {
  if (connectionRoute(o).via === 'direct') return nodeCarrier(o);
  return undiciCarrier(await createDispatcher(o), true);
}

/** A carrier over an undici dispatcher; `owned` says whether `close()` closes it. */
export function undiciCarrier(dispatcher: Dispatcher, owned: boolean): Carrier {
  let request: typeof undiciRequest | undefined;
  // An attempt ended before its answer (time-out or abort) may leave a connection that never
  // ends by itself (a proxy that never answers CONNECT): then closing waits for nothing.
  let stuck = false;
  return {
    async send(url, r) {
      // An injected dispatcher may come before undici's module is loaded here; after that, no await.
      request ??= (await loadUndici()).request;
      // One deadline for the whole attempt, whatever stage it hangs in: undici's time-outs cover
      // the headers and pauses in the body, not a proxy that accepts and never answers CONNECT,
      // and undici does not abort that stage either. So the attempt ends on the deadline itself;
      // a connection left stuck is ended when the client is closed (closeDispatcher).
      const deadline = AbortSignal.timeout(r.timeoutMs);
      const signal = r.signal ? AbortSignal.any([r.signal, deadline]) : deadline;
      const late = (e: unknown): unknown => (deadline.aborted && !r.signal?.aborted ? attemptTimedOut(r.timeoutMs) : e);
      const pending = request(url, {
        method: r.method as Dispatcher.HttpMethod,
        headers: r.headers,
        body: r.body,
        dispatcher,
        signal,
        headersTimeout: r.timeoutMs,
        bodyTimeout: r.timeoutMs,
      });
      let stop: (() => void) | undefined;
      const ended = new Promise<never>((_resolve, reject) => {
        stop = () => reject(late(signal.reason));
        signal.addEventListener('abort', stop, { once: true });
      });
      ended.catch(() => undefined);
      const response = await Promise.race([pending, ended])
        .catch((e: unknown) => {
          if (signal.aborted) stuck = true;
          pending.then((res) => res.body.destroy(), () => undefined); // whatever it brings later is dropped
          throw late(e);
        })
        .finally(() => signal.removeEventListener('abort', stop as () => void));
      return {
        status: response.statusCode,
        headers: response.headers as HeaderValues,
        text: () =>
          response.body.text().catch((e: unknown) => {
            throw late(e);
          }),
      };
    },
    async close() {
      if (owned) await closeDispatcher(dispatcher, stuck ? 0 : undefined);
    },
  };
}

function attemptTimedOut(ms: number): Error {
  return Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ERR_PLC_TIMEOUT' });
}

/** Idle keep-alive connections are closed after this (undici's default keepAliveTimeout as well). */
const KEEP_ALIVE_IDLE_MS = 10_000;

/** Node's `http`/`https` with one keep-alive agent per scheme, made on first use. */
export function nodeCarrier(o: Pick<ConnectionOptions, 'ca'>): Carrier {
  type Way = { agent: HttpAgent; request: typeof httpRequest };
  let plain: Way | undefined;
  let secure: Way | undefined;
  // Each module loads on the first request of its scheme (node:https brings TLS): none at import,
  // which would cost every process start, the agent's above all.
  const load = async (isSecure: boolean): Promise<Way> => {
    if (isSecure) {
      const https = await import('node:https');
      const tls = o.ca === undefined ? {} : { ca: await trustedCa(o.ca) };
      return (secure ??= { agent: new https.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS, ...tls }), request: https.request });
    }
    const http = await import('node:http');
    return (plain ??= { agent: new http.Agent({ keepAlive: true, timeout: KEEP_ALIVE_IDLE_MS }), request: http.request });
  };
  const send = ({ request, agent }: Way, url: string, r: CarriedRequest): Promise<CarriedAnswer> =>
    new Promise<CarriedAnswer>((resolve, reject) => {
      let failure: Error | undefined;
      let answered = false;
      const req: ClientRequest = request(url, { method: r.method, headers: r.headers, agent, ...(r.signal ? { signal: r.signal } : {}) }, (res) => {
        answered = true;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: () => readBody(res, () => failure) });
      });
      // Socket inactivity: covers connecting, waiting for the headers, and pauses in the body.
      // One deadline for the whole attempt (a server that trickles a byte now and then does not
      // reset it): one timer, cleared when the answer has been read or has failed.
      const timer = setTimeout(() => {
        const stage = answered ? 'body' : 'headers';
        req.destroy(Object.assign(new Error(`no ${stage} within ${r.timeoutMs} ms`), { code: 'ERR_PLC_TIMEOUT' }));
      }, r.timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        failure = e;
        reject(e);
      });
      req.on('close', () => clearTimeout(timer));
      req.end(r.body);
    });
  return {
    send(url, r) {
      const isSecure = url.startsWith('https:');
      const way = isSecure ? secure : plain;
      return way ? send(way, url, r) : load(isSecure).then((loaded) => send(loaded, url, r));
    },
    async close() {
      plain?.agent.destroy();
      secure?.agent.destroy();
    },
  };
}

/** The whole body as UTF-8; a connection lost or timed out before its end rejects with why. */
function readBody(res: IncomingMessage, failure: () => Error | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', (e) => reject(failure() ?? e));
    res.on('close', () => {
      if (!res.complete) reject(failure() ?? Object.assign(new Error('the connection closed before the answer ended'), { code: 'ECONNRESET' }));
    });
  });
}
