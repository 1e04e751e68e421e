import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { authenticate } from './auth.js';
import { redactPath, redactUnknownPath } from './code-format.js';
import type { EmulatorContext, RouteDef } from './context.js';
import { HttpError, isEmulatorError, wireCodeForStatus } from './errors.js';
import { consumeFault } from './faults.js';
import { isLoopbackAddress } from './loopback.js';
import type { Bucket } from './rate-limiter.js';
import { activationRoutes } from './routes/activation.js';
import { runClock } from './build-engine.js';
import { buildControlRoutes } from './routes/build-controls.js';
import { buildRoutes } from './routes/builds.js';
import { controlRoutes } from './routes/controls.js';
import { hostingRoutes } from './routes/hosting.js';
import { repoRoutes } from './routes/repos.js';
import { sdkRoutes } from './routes/sdk.js';
import { triggerRoutes } from './routes/trigger.js';

export const SERVICE_PREFIX = '/functions/v1';
export const CONTROL_PREFIX = '/__emulator';
/** Largest request body accepted; bigger ones get 400 bad_request. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Longest path parameter the router accepts (codes and ids are far shorter); longer ones get 400. */
const MAX_PARAM_LENGTH = 200;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function isServicePath(path: string): boolean {
  return path === SERVICE_PREFIX || path.startsWith(`${SERVICE_PREFIX}/`);
}

function isJsonType(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(contentType.trim());
}

/** Registers routes, and a 405 answer with an Allow header for every other method on their paths. */
function registerRoutes(app: FastifyInstance, prefix: string, defs: RouteDef[]): void {
  const byUrl = new Map<string, RouteDef[]>();
  for (const def of defs) {
    app.route({
      method: def.method,
      url: prefix + def.url,
      config: { bucket: def.bucket ?? undefined, lenientContentType: def.lenientContentType ?? def.bucket === null },
      handler: def.handler,
    });
    byUrl.set(def.url, [...(byUrl.get(def.url) ?? []), def]);
  }
  for (const [url, list] of byUrl) {
    const allowed = new Set<string>(list.map((d) => d.method));
    if (allowed.has('GET')) allowed.add('HEAD');
    const allow = [...allowed].join(', ');
    const others = METHODS.filter((m) => !allowed.has(m));
    app.route({
      method: others,
      url: prefix + url,
      // Lenient so that no Content-Type, however malformed, turns the 405 into a 400.
      config: { bucket: list[0]?.bucket ?? undefined, methodNotAllowed: true, lenientContentType: true },
      handler: async (request) => {
        throw new HttpError(405, 'method_not_allowed', `${request.method} is not allowed on ${redactPath(request.url)}; use ${allow}`, {
          method: request.method,
          allow: [...allowed],
        }, { Allow: allow });
      },
    });
  }
}

/**
 * Authenticates the request and counts it in its rate-limit window: sets the three
 * X-RateLimit headers, and throws 429 rate_limited past the limit.
 */
async function countRequest(ctx: EmulatorContext, request: FastifyRequest, reply: FastifyReply, bucket: Bucket): Promise<void> {
  request.auth = await authenticate(request.headers.authorization, ctx.signingKey, ctx.clock.now());
  const projectParam = (request.params as Record<string, string | undefined> | null | undefined)?.project_id;
  const clientKey =
    bucket === 'trigger'
      ? `project:${(projectParam ?? '').toLowerCase()}`
      : request.auth.kind === 'valid'
        ? `sub:${request.auth.subject}`
        : `ip:${request.ip}`;
  const decision = ctx.limiter.hit(bucket, clientKey);
  reply.header('X-RateLimit-Limit', String(decision.limit));
  reply.header('X-RateLimit-Remaining', String(decision.remaining));
  reply.header('X-RateLimit-Reset', String(decision.resetSeconds));
  if (!decision.allowed) {
    const resetAt = new Date(decision.resetSeconds * 1000).toISOString();
    throw new HttpError(
      429,
      'rate_limited',
      bucket === 'trigger'
        ? `too many trigger requests for this project: the limit is ${decision.limit} per minute per project, and every request counts, unauthenticated or wrongly signed ones too; retry after ${resetAt}`
        : `too many ${bucket} requests: the limit is ${decision.limit} per minute; retry after ${resetAt}`,
      { scope: bucket, limit: decision.limit, reset_at: resetAt },
      { 'Retry-After': String(Math.max(0, decision.resetSeconds - Math.floor(ctx.clock.now() / 1000))) },
    );
  }
}

/**
 * Routes that parse JSON whatever the Content-Type drop the header: an empty or malformed one
 * would otherwise make fastify refuse the body (415) before any parser runs.
 */
function acceptAnyContentType(request: FastifyRequest): void {
  delete request.raw.headers['content-type'];
}

/**
 * Requests fastify refuses before routing (a path with broken percent-encoding, a path parameter
 * over the length limit) get the interface's 400 bad_request body and, on service paths, the
 * rate-limit headers, like every other answer. The path is not echoed: it may hold a code.
 */
function frameworkErrorAnswer(ctx: EmulatorContext, error: { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const issue = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? `a path segment is longer than ${MAX_PARAM_LENGTH} characters` : 'the path is not validly percent-encoded';
  let answer = new HttpError(400, 'bad_request', `the request URL is malformed: ${issue}; check the path`, { field: 'url', issue });
  const send = (): void => {
    for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
    reply.code(answer.status).send(answer.toBody());
  };
  if (!isServicePath(pathOf(request.url))) {
    send();
    return;
  }
  countRequest(ctx, request, reply, 'general').then(send, (limited: unknown) => {
    if (limited instanceof HttpError) answer = limited;
    send();
  });
}

/** Maps anything thrown while handling a request to an answer in the interface's error shape. */
function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  const e = error as { code?: string; statusCode?: number; message?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new HttpError(400, 'bad_request', `the request body is larger than ${BODY_LIMIT_BYTES} bytes (1 MiB); send a smaller body`, {
      field: 'body',
      issue: 'too large',
      limit_bytes: BODY_LIMIT_BYTES,
    });
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    const status = [401, 403, 404, 429].includes(e.statusCode) ? e.statusCode : 400;
    return new HttpError(status, wireCodeForStatus(status), `the request was refused: ${e.message ?? 'malformed request'}; fix the request and retry`, {
      framework_code: e.code ?? null,
    });
  }
  if (isEmulatorError(error) && error.code === 'data_file_unwritable') {
    // Not a bug: the disk refused. The change stays in memory and goes out with the next write.
    return new HttpError(500, 'internal_error', `${error.message}; the change is kept in memory and saved with the next one`, error.context);
  }
  return new HttpError(500, 'internal_error', 'the emulator failed to handle this request; this is an emulator bug, please report it with its log', {});
}

/** The fastify app of the emulator: parsers, hooks (faults, auth, rate limits), routes, error shapes. */
export function buildApp(ctx: EmulatorContext, options: { logger: boolean; shutdown: AbortSignal; https?: { key: string; cert: string } }): FastifyInstance {
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    logger: options.logger ? { level: 'info', stream: process.stderr } : false,
    // Our own onResponse line logs the path with codes redacted; fastify's would log them whole.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    forceCloseConnections: true,
    frameworkErrors: (error, request, reply) => frameworkErrorAnswer(ctx, error, request, reply),
  });

  app.decorateRequest('rawBody', null);
  app.decorateRequest('auth', null);

  // One parser for every content type: the body is kept raw (trigger signatures) and parsed as
  // JSON with fastify's own prototype-poisoning-safe parser.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
    request.rawBody = raw;
    const config = request.routeOptions.config;
    if (request.is404 || config.methodNotAllowed || raw.length === 0) {
      done(null, undefined);
      return;
    }
    const contentType = request.headers['content-type'];
    if (!config.lenientContentType && !isJsonType(contentType)) {
      done(
        new HttpError(400, 'bad_request', `the request body must be JSON sent as Content-Type: application/json (got ${JSON.stringify(contentType ?? '')})`, {
          field: 'content-type',
          issue: 'expected application/json',
        }),
      );
      return;
    }
    jsonParser(request, raw.toString('utf8'), (error, value) => {
      if (error) {
        // JSON.parse messages quote the input, which may hold a code: say where, never what.
        const position = /position (\d+)/.exec(error.message)?.[1];
        const issue = /prototype|constructor/i.test(error.message) ? 'forbidden property name' : `invalid JSON${position ? ` at position ${position}` : ''}`;
        done(new HttpError(400, 'bad_request', `the request body is not valid JSON (${issue}); send a JSON object`, { field: 'body', issue }));
        return;
      }
      done(null, value);
    });
  });

  const latencyOf = new WeakMap<FastifyRequest, number>();
  const toHold = new WeakSet<FastifyRequest>();

  // The Date header follows the emulator's clock like X-RateLimit-Reset does, so a moved clock
  // simulates a service whose clock is off as a whole (clients measure waits against Date).
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('date', new Date(ctx.clock.now()).toUTCString());
    return payload;
  });

  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.lenientContentType) acceptAnyContentType(request);
    const path = pathOf(request.url);
    if (path === CONTROL_PREFIX || path.startsWith(`${CONTROL_PREFIX}/`)) {
      if (!isLoopbackAddress(request.socket.remoteAddress)) {
        throw new HttpError(403, 'forbidden', 'emulator controls answer loopback clients only', {});
      }
      await runClock(ctx);
      return;
    }
    if (!isServicePath(path)) return;
    // Builds are brought up to the emulator's time before anything reads them.
    await runClock(ctx);

    const fault = consumeFault(ctx.faults);
    if (fault.mode === 'latency' && fault.latency_ms > 0) latencyOf.set(request, fault.latency_ms);
    if (fault.mode === 'hold') toHold.add(request);
    if (fault.mode === 'offline') {
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }

    await countRequest(ctx, request, reply, request.routeOptions.config.bucket ?? 'general');
    if (fault.mode === 'error') {
      throw new HttpError(
        fault.status,
        wireCodeForStatus(fault.status),
        `injected fault: the emulator answers ${fault.status}; POST /__emulator/faults {"mode":"none"} to stop`,
        { fault: 'error' },
      );
    }
  });

  // The latency is served once the request is in (body parsed), before it is handled: like a
  // real service, the emulator then acts on it even if the caller has gone away meanwhile, which
  // is the window where a client killed mid-request must not lose a slot.
  // A held request waits at the same point until a test releases it (no window of real time).
  app.addHook('preHandler', async (request, reply) => {
    const ms = latencyOf.get(request);
    const hold = toHold.has(request);
    if (ms === undefined && !hold) return;
    try {
      if (ms !== undefined) await sleep(ms, undefined, { signal: options.shutdown });
      if (hold) await ctx.held.hold(request, { method: request.method, path: redactPath(request.url), arrived_at: ctx.clock.iso() });
    } catch {
      reply.hijack();
      request.raw.socket.destroy();
    }
  });
  // A release answers once the requests it let go have been answered (caller gone or not).
  app.addHook('onSend', async (request, _reply, payload) => {
    ctx.held.handled(request);
    return payload;
  });

  if (options.logger) {
    app.addHook('onResponse', async (request, reply) => {
      request.log.info({ method: request.method, path: redactPath(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    });
  }

  app.setErrorHandler(async (error, request, reply) => {
    const http = toHttpError(error);
    if (http.status === 500 && !(error instanceof HttpError)) request.log.error({ err: error, path: redactPath(request.url) }, 'request failed');
    for (const [name, value] of Object.entries(http.headers)) reply.header(name, value);
    return reply.code(http.status).send(http.toBody());
  });

  app.setNotFoundHandler(async (request) => {
    const path = redactUnknownPath(request.url);
    throw new HttpError(404, 'not_found', `no endpoint ${request.method} ${path}; check the path (service paths start with ${SERVICE_PREFIX})`, {
      method: request.method,
      path,
    });
  });

  registerRoutes(app, SERVICE_PREFIX, [
    ...activationRoutes(ctx),
    ...buildRoutes(ctx),
    ...triggerRoutes(ctx),
    ...hostingRoutes(ctx),
    ...repoRoutes(ctx),
    ...sdkRoutes(ctx),
  ]);
  registerRoutes(app, CONTROL_PREFIX, [...controlRoutes(ctx), ...buildControlRoutes(ctx)]);
  return app;
}
