import { codeHint } from '@plugin-license/api/code-hint';
import { Hono } from 'hono/tiny';
import type { RelayConfig } from './config.js';
import { ProjectCodes } from './project-codes.js';
import { MAX_BODY_BYTES, readActivationBody, readLimitedBody, serviceBody, type ActivationBody } from './request-body.js';
import { askService, errorAnswer, fetchCarrier, type ServiceAnswer, type ServiceCarrier } from './service.js';
import { SingleFlight } from './single-flight.js';
import { issueTicket } from './ticket.js';
import { ValidateCache } from './validate-cache.js';

/** Where a relay's one line per request goes (stderr on Node and Deno, the Worker's log). */
export type RelayLog = (line: string) => void;

export interface RelayOptions {
  /** The clock (epoch ms): tickets' times, the validate cache, the code lists' refresh. Default `Date.now`. */
  now?: () => number;
  /** How to reach the service. Default: the platform's `fetch` ({@link fetchCarrier}). */
  carrier?: ServiceCarrier;
  /** One JSON line per request. Default: none. */
  log?: RelayLog;
}

/** A public key as the relay lists it. */
export interface RelayKey {
  kid: string;
  public_key: string;
}

/** The relay: one `fetch` handler for every runtime (Node's adapter, `Deno.serve`, a Worker). */
export interface Relay {
  fetch(request: Request): Promise<Response>;
  /** Every key, the signing one first. */
  keys: RelayKey[];
}

type Action = 'activate' | 'validate' | 'deactivate';

/** What one request's log line says besides its status and time. */
interface LogFacts {
  route: string;
  code_hint?: string;
  project_id?: string;
  /** sent: this request asked the service; shared: it joined one in flight; cached: a validate answer reused. */
  upstream?: 'sent' | 'shared' | 'cached';
  /** The name of an error the relay failed with (never its message). */
  error?: string;
}

const ROUTES = new Set(['activate', 'validate', 'deactivate']);

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers } });
}

function fromAnswer(a: ServiceAnswer, extra: Record<string, string> = {}): Response {
  return json(a.status, a.body, { ...a.headers, ...extra });
}

/** Whether the service's answer means valid: activate succeeded, or validate said `valid: true`. */
function meansValid(action: Action, a: ServiceAnswer): boolean {
  if (a.status !== 200 || typeof a.body !== 'object' || a.body === null) return false;
  const body = a.body as Record<string, unknown>;
  return action === 'activate' ? body.success === true : action === 'validate' ? body.valid === true : false;
}

/**
 * The license relay (the contract: docs/signed-ticket.md, "The license relay"): forwards the
 * activation endpoints to the service for the projects it serves, and adds a ticket signed with
 * the vendor's key to every answer that means valid. Written against `Request`, `Response`,
 * `fetch` and `crypto.subtle` only, so the same handler runs on Node, Deno and workerd; it keeps
 * no state instances must share (the code lists, the validate answers and the calls in flight
 * are this instance's).
 *
 * @example
 * const relay = createRelay(await loadRelayConfig(process.env), { log: (l) => process.stderr.write(l + '\n') });
 * const res = await relay.fetch(new Request('http://relay/healthz')); // 200
 */
export function createRelay(config: RelayConfig, options: RelayOptions = {}): Relay {
  const now = options.now ?? Date.now;
  const carrier = options.carrier ?? fetchCarrier();
  const log = options.log;
  const signer = config.keys[0]!;
  const keys: RelayKey[] = config.keys.map((k) => ({ kid: k.kid, public_key: k.publicKey }));
  const flights = new SingleFlight<ServiceAnswer>();
  const cache = new ValidateCache(config.validateCacheS * 1000, now);
  const codes = new ProjectCodes(async (projectId) => {
    const a = await askService(carrier, { method: 'GET', url: `${config.serviceUrl}/plugin-activation/project/${projectId}/keys`, token: config.token });
    if (a.status === 200 && Array.isArray((a.body as { keys?: unknown } | null)?.keys)) {
      const list = (a.body as { keys: unknown[] }).keys;
      return { codes: list.flatMap((k) => (typeof (k as { code?: unknown })?.code === 'string' ? [(k as { code: string }).code] : [])) };
    }
    if (a.status === 429 || a.status >= 500) return { failure: a };
    // 401/403/404: the relay's own token or project list is wrong; the client can do nothing about it.
    return { failure: errorAnswer(502, 'relay_misconfigured', `the relay cannot list the codes of project ${projectId} (the service answered ${a.status}); the vendor must check RELAY_SERVICE_TOKEN and RELAY_PROJECTS`) };
  }, now);
  let inFlight = 0;

  /** Asks the service once for every identical request in flight (method, path and body). */
  const ask = async (facts: LogFacts, method: 'GET' | 'POST', path: string, body?: string): Promise<ServiceAnswer> => {
    const key = `${method} ${path}\n${body ?? ''}`;
    let mine = false;
    const answer = await flights.run(key, () => {
      mine = true;
      return askService(carrier, { method, url: `${config.serviceUrl}${path}`, ...(body === undefined ? {} : { body }) });
    });
    facts.upstream = mine ? 'sent' : 'shared';
    return answer;
  };

  const activation = async (action: Action, text: string, facts: LogFacts): Promise<Response> => {
    const read = readActivationBody(text);
    if ('field' in read) return json(400, { error: 'bad_request', message: read.message, details: { field: read.field } });
    const b: ActivationBody = read;
    facts.code_hint = codeHint(b.code);
    facts.project_id = b.project_id;
    if (!config.projects.includes(b.project_id)) {
      return json(403, { error: 'wrong_project', message: `this relay does not serve project ${b.project_id.slice(0, 100)}; check the project id the app was built with`, details: { project_id: b.project_id.slice(0, 100) } });
    }
    const membership = await codes.check(b.project_id, b.code);
    if (membership.member === 'unknown') return fromAnswer(membership.answer);
    if (!membership.member) {
      return json(403, { error: 'wrong_project', message: `this code is not one of project ${b.project_id}'s codes; check that it was bought for this product`, details: { project_id: b.project_id } });
    }
    const cacheKey = ValidateCache.key(b.project_id, b.code, b.machine_id);
    let answer: ServiceAnswer;
    let cacheStatus: Record<string, string> = {};
    if (action === 'validate') {
      const cached = cache.get(cacheKey);
      if (cached !== undefined) {
        facts.upstream = 'cached';
        // The rate-limit headers were the service's then; a reuse did not spend the window.
        answer = { status: cached.status, body: cached.body, headers: {} };
        cacheStatus = { 'cache-status': 'plugin-license-relay; hit' };
      } else {
        const generation = cache.generation(cacheKey);
        answer = await ask(facts, 'POST', '/plugin-activation/validate', serviceBody(b));
        cache.set(cacheKey, answer, generation);
        cacheStatus = { 'cache-status': 'plugin-license-relay; fwd=miss' };
      }
    } else {
      cache.invalidate(cacheKey);
      answer = await ask(facts, 'POST', `/plugin-activation/${action}`, serviceBody(b));
      cache.invalidate(cacheKey);
    }
    if (!meansValid(action, answer)) return fromAnswer(answer, cacheStatus);
    const signed_ticket = await issueTicket({ key: signer, app: config.app, projectId: b.project_id, machineId: b.machine_id, code: b.code, nowMs: now(), ticketDays: config.ticketDays });
    return json(answer.status, { ...(answer.body as Record<string, unknown>), signed_ticket }, { ...answer.headers, ...cacheStatus });
  };

  // Under /functions/v1 like the service (the library's client points at the relay unchanged), and
  // without it too: Supabase hands an Edge Function its path without /functions/v1.
  const api = new Hono<{ Bindings: { facts: LogFacts } }>();
  api.post('/plugin-activation/:action', async (c) => {
    const action = c.req.param('action');
    if (!ROUTES.has(action)) return notFound();
    const facts = c.env.facts;
    facts.route = `POST /plugin-activation/${action}`;
    const text = await readLimitedBody(c.req.raw);
    if (text === undefined) return json(413, { error: 'payload_too_large', message: `the body is over ${MAX_BODY_BYTES / 1024} KB; an activation request is a few hundred bytes`, details: { limit_bytes: MAX_BODY_BYTES } });
    return activation(action as Action, text, facts);
  });
  api.get('/plugin-activation/status/:code', async (c) => {
    const code = c.req.param('code');
    const facts = c.env.facts;
    facts.route = 'GET /plugin-activation/status/:code';
    facts.code_hint = codeHint(code);
    return fromAnswer(await ask(facts, 'GET', `/plugin-activation/status/${encodeURIComponent(code)}`));
  });

  const app = new Hono<{ Bindings: { facts: LogFacts } }>();
  app.get('/.well-known/plugin-license-keys', (c) => {
    c.env.facts.route = 'GET /.well-known/plugin-license-keys';
    return json(200, { keys }, { 'cache-control': 'public, max-age=300' });
  });
  app.get('/healthz', (c) => {
    c.env.facts.route = 'GET /healthz';
    return json(200, { status: 'ok', requests_in_flight: inFlight - 1, service_calls_in_flight: flights.size, code_lists_in_flight: codes.asking });
  });
  app.route('/functions/v1', api);
  app.route('/', api);
  const notFound = (): Response => json(404, { error: 'not_found', message: 'no such path on the license relay', details: {} });
  app.notFound(() => notFound());
  app.onError((err, c) => {
    // Never the error's message: it may hold what the request held.
    c.env.facts.error = (err as { name?: string }).name ?? 'Error';
    return json(500, { error: 'internal_error', message: 'the relay failed to answer; try again later', details: {} });
  });

  return {
    keys,
    async fetch(request: Request): Promise<Response> {
      const started = performance.now();
      const facts: LogFacts = { route: `${request.method} (unknown path)` };
      inFlight += 1;
      let res: Response;
      try {
        res = await app.fetch(request, { facts });
      } finally {
        inFlight -= 1;
      }
      const ms = Math.round((performance.now() - started) * 100) / 100;
      log?.(JSON.stringify({ time: new Date(now()).toISOString(), route: facts.route, status: res.status, ms, ...(facts.code_hint === undefined ? {} : { code_hint: facts.code_hint }), ...(facts.project_id === undefined ? {} : { project_id: facts.project_id }), ...(facts.upstream === undefined ? {} : { upstream: facts.upstream }), ...(facts.error === undefined ? {} : { error: facts.error }) }));
      return res;
    },
  };
}
