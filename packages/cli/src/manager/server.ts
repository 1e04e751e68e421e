import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import assets from 'manager-page:assets';

/** A failure the page shows: a stable code and one line in the CLI's words. */
export interface PageError {
  status: number;
  code: string;
  message: string;
}

/** What the page can see and do; the server adds the security around it (manager.ts implements it). */
export interface ManagerBackend {
  /** The current view: the agent, the namespace, the licenses. Sent whole on every change. */
  snapshot(): unknown;
  /** Calls `listener` after every change of the snapshot; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** The actions, by name: `POST /api/NAME` with a JSON body. A throw is turned into a PageError by `fail`. */
  actions: Readonly<Record<string, (body: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>>>;
  /** A thrown error as the page shows it. */
  fail(err: unknown): PageError;
}

/** Timers, injected: the tests drive the idle stop without waiting. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface ManagerServerOptions {
  /** 0: any free port. */
  port: number;
  /** Stop after this long with no page connected (the `--idle-minutes`). */
  idleMs: number;
  backend: ManagerBackend;
  /** Called once when the idle time has passed. */
  onIdle: () => void;
  /** Called once when the start token has been exchanged (the redirect file has served its purpose). */
  onSession?: () => void;
  /** One line per event worth a log (never a token, a session or a code). */
  log?: (line: string) => void;
  timers?: Timers;
  /**
   * The secret of `POST /api/stop` (`{"token": …}`), kept by the manager in a file only its user
   * reads (`manager stop` reads it): asked with it, the server answers its pid and `onStop` is called.
   */
  stop?: { token: string; onStop: () => void };
}

/** Largest request body: an offline document is a few KiB, and at most 64 KiB on disk. */
export const MAX_BODY_BYTES = 128 * 1024;
/** A comment line on the live view this often: a connection that died without a FIN is found and dropped. */
const HEARTBEAT_MS = 25_000;

// Only the page's own files: no inline script or style, no frames, no form posts, no plug-ins.
// No Cross-Origin-Opener-Policy: it costs a process swap (~50 ms of the first render); a window
// another page opens (which gets a copy of its tab's sessionStorage) is refused by the page
// itself: a page with an opener does not use a stored session (app.ts, `storedSession`).
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};
const STATIC: Record<string, { body: string; type: string }> = {
  '/': { body: assets['index.html'], type: 'text/html; charset=utf-8' },
  '/app.js': { body: assets['app.js'], type: 'text/javascript; charset=utf-8' },
  '/style.css': { body: assets['style.css'], type: 'text/css; charset=utf-8' },
};

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();
/** Equal in constant time (both sides hashed first, so their lengths never show either). */
const sameSecret = (candidate: string, hash: Buffer): boolean => timingSafeEqual(sha256(candidate), hash);

/**
 * The header that carries the page's session: `Authorization: Bearer SESSION` (RFC 6750). Never
 * a cookie: cookies are shared by every port of 127.0.0.1, so any other local server the browser
 * visits would receive one. A header is sent only by a script of this origin, which alone can
 * read the page's sessionStorage; another origin's script that tries needs a preflight, which
 * this server never grants. `Authorization` rather than a name of ours: browsers' and proxies'
 * "sanitized" exports (a HAR file sent to support) leave it out.
 */
export const SESSION_HEADER = 'authorization';
const SESSION_SCHEME = /^Bearer ([A-Za-z0-9_-]{1,128})$/i;

class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The license manager's HTTP server on 127.0.0.1: the page's files, its session, its live view
 * (an event stream the page reads with `fetch`) and its actions. Every rule of docs/license-manager.md's
 * Security is here, in one place, before any route runs: the Host (DNS rebinding), the session
 * header (anything but the page's files), the Origin (anything that changes something), no
 * cookie and no CORS ever.
 */
export class ManagerServer {
  readonly #o: ManagerServerOptions;
  readonly #timers: Timers;
  readonly #server: Server;
  /** The start token, hashed; it is exchanged once for a session. */
  #tokenHash: Buffer | undefined;
  #tokenUsed = false;
  readonly #sessions: Buffer[] = [];
  readonly #streams = new Set<ServerResponse>();
  #idle: unknown;
  #port = 0;
  #closed = false;
  readonly #abort = new AbortController();

  constructor(options: ManagerServerOptions) {
    this.#o = options;
    this.#timers = options.timers ?? { setTimeout: (fn, ms) => setTimeout(fn, ms), clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout) };
    this.#server = createServer((req, res) => void this.#handle(req, res));
    // A browser keeps idle connections open; they must not keep a stopping manager alive.
    this.#server.keepAliveTimeout = 5000;
  }

  /** Listens on 127.0.0.1 and returns the page's URL with a new start token in its fragment. */
  async listen(): Promise<{ port: number; url: string }> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen({ host: '127.0.0.1', port: this.#o.port, exclusive: true }, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    // 256 bits, per start. Only its hash stays in memory.
    const token = randomBytes(32).toString('base64url');
    this.#tokenHash = sha256(token);
    this.#armIdle();
    return { port: this.#port, url: `http://127.0.0.1:${this.#port}/#token=${token}` };
  }

  /** Pages connected now (open event streams). */
  get pages(): number {
    return this.#streams.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#disarmIdle();
    this.#abort.abort();
    for (const res of this.#streams) res.end();
    this.#streams.clear();
    await new Promise<void>((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  #armIdle(): void {
    this.#disarmIdle();
    if (this.#closed) return;
    this.#idle = this.#timers.setTimeout(() => {
      this.#idle = undefined;
      if (this.#streams.size === 0 && !this.#closed) this.#o.onIdle();
    }, this.#o.idleMs);
  }

  #disarmIdle(): void {
    if (this.#idle !== undefined) this.#timers.clearTimeout(this.#idle);
    this.#idle = undefined;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    const path = (req.url ?? '/').split('?')[0] as string;
    const api = path.startsWith('/api/');
    try {
      const origin = this.#checkHost(req);
      if (!api) return this.#static(req, res, path);
      if (req.method === 'POST') this.#checkOrigin(req, origin);
      else if (req.method === 'GET') this.#checkFetchSite(req);
      else throw new Refusal(405, 'method_not_allowed', `${req.method} is not allowed here`);
      if (path === '/api/session' && req.method === 'POST') return await this.#exchange(req, res);
      if (path === '/api/stop' && req.method === 'POST') return await this.#stop(req, res);
      this.#checkSession(req);
      if (path === '/api/events' && req.method === 'GET') return this.#events(req, res);
      const name = path.slice('/api/'.length);
      const action = req.method === 'POST' && Object.hasOwn(this.#o.backend.actions, name) ? this.#o.backend.actions[name] : undefined;
      if (action === undefined) throw new Refusal(404, 'not_found', `no such request: ${req.method} ${path}`);
      const body = await readJson(req);
      let result: unknown;
      try {
        result = await action(body, this.#abort.signal);
      } catch (err) {
        const f = this.#o.backend.fail(err);
        return send(res, f.status, { error: { code: f.code, message: f.message } });
      }
      send(res, 200, result ?? {});
    } catch (err) {
      const r = err instanceof Refusal ? err : new Refusal(500, 'internal', `the license manager failed: ${(err as Error).message}`);
      if (r.status >= 500) this.#o.log?.(`${req.method} ${path}: ${r.message}`);
      // The scheme RFC 6750 asks a 401 to name; browsers prompt for none (only Basic and the like).
      if (r.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="license manager"');
      if (!api) {
        res.writeHead(r.status, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${r.message}\n`);
        return;
      }
      send(res, r.status, { error: { code: r.code, message: r.message } });
    }
  }

  /** DNS rebinding: a page of another site, whose name now points at 127.0.0.1, sends its own Host. */
  #checkHost(req: IncomingMessage): string {
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== `127.0.0.1:${this.#port}` && host !== `localhost:${this.#port}`) {
      throw new Refusal(421, 'wrong_host', `this server answers only as 127.0.0.1:${this.#port} or localhost:${this.#port}`);
    }
    return `http://${host}`;
  }

  /** CSRF: anything that changes something comes from this page's own origin, said by the browser. */
  #checkOrigin(req: IncomingMessage, origin: string): void {
    if (req.headers.origin !== origin) throw new Refusal(403, 'foreign_origin', 'requests that change something must come from the license manager page itself');
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new Refusal(415, 'not_json', 'send a JSON body (Content-Type: application/json)');
  }

  /** A read by another site (which the browser says in Sec-Fetch-Site) is refused too. */
  #checkFetchSite(req: IncomingMessage): void {
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') throw new Refusal(403, 'foreign_origin', 'the license manager answers only its own page');
  }

  /** The session, from its header only (never a cookie, a query or a body), compared in constant time. */
  #checkSession(req: IncomingMessage): void {
    const value = SESSION_SCHEME.exec(req.headers[SESSION_HEADER] ?? '')?.[1];
    const known = value !== undefined && this.#sessions.some((hash) => sameSecret(value, hash));
    if (!known) throw new Refusal(401, 'no_session', 'this page has no session with the license manager: open it again from your plugin or installer (each start of the manager makes a new link)');
  }

  /** `manager stop` (an uninstaller), with the stop secret from the manager's registration file: its pid, then the stop. */
  async #stop(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    const token = typeof body.token === 'string' ? body.token : '';
    const stop = this.#o.stop;
    if (stop === undefined || !sameSecret(token, sha256(stop.token))) throw new Refusal(403, 'bad_token', 'this is not the secret that stops this license manager');
    send(res, 200, { pid: process.pid });
    stop.onStop();
  }

  /** The start token, once, for a session the page keeps in its sessionStorage; the token is then spent. */
  async #exchange(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    const token = typeof body.token === 'string' ? body.token : '';
    const matches = this.#tokenHash !== undefined && sameSecret(token, this.#tokenHash);
    if (!matches) throw new Refusal(403, 'bad_token', 'this link is not the license manager\'s: open it again from your plugin or installer');
    if (this.#tokenUsed) throw new Refusal(403, 'token_used', 'this link was already used: open the license manager again from your plugin or installer (each link opens one page)');
    this.#tokenUsed = true;
    const session = randomBytes(32).toString('base64url');
    this.#sessions.push(sha256(session));
    this.#o.onSession?.();
    send(res, 200, { session });
  }

  /** The live view: the snapshot at once, then again on each change. A connected page keeps the manager running. */
  #events(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
    const push = (): void => void res.write(`event: state\ndata: ${JSON.stringify(this.#o.backend.snapshot())}\n\n`);
    res.write('retry: 2000\n\n');
    push();
    this.#streams.add(res);
    this.#disarmIdle();
    const unsubscribe = this.#o.backend.onChange(push);
    const heartbeat = setInterval(() => res.write(': still here\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    req.socket.setKeepAlive(true, HEARTBEAT_MS);
    res.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      this.#streams.delete(res);
      if (this.#streams.size === 0) this.#armIdle();
    });
  }

  #static(req: IncomingMessage, res: ServerResponse, path: string): void {
    const file = STATIC[path === '/index.html' ? '/' : path];
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new Refusal(405, 'method_not_allowed', `${req.method} is not allowed here`);
    if (file === undefined) throw new Refusal(404, 'not_found', `${path} is not part of the license manager`);
    res.writeHead(200, { 'Content-Type': file.type, 'Content-Length': Buffer.byteLength(file.body) });
    res.end(req.method === 'HEAD' ? undefined : file.body);
  }
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** A JSON object body of at most MAX_BODY_BYTES; anything else is a 400 or a 413 that says so. */
async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Refusal(413, 'too_large', `the request is larger than ${MAX_BODY_BYTES / 1024} KiB: an offline file is a few KiB; choose the right file`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refusal(400, 'bad_json', 'the request body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Refusal(400, 'bad_json', 'the request body must be a JSON object');
  return value as Record<string, unknown>;
}
