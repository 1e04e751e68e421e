import * as z from 'zod';
import { runClock } from '../build-engine.js';
import { codeHint, isWellFormedCode } from '../code-format.js';
import type { EmulatorContext, RouteDef } from '../context.js';
import { verifyDownloadSignature } from '../download-url.js';
import { HttpError } from '../errors.js';
import { FaultRequest, NO_FAULT, faultFrom } from '../faults.js';
import { HeldQuery, ReleaseRequest } from '../held.js';
import { parseWith } from '../request-helpers.js';
import { artifactBytes, createStartState, sdkBytes } from '../seed.js';
import { SDK_FILE_NAME } from './sdk.js';

/** The clock stays within 1970..9999 so timestamps, periods (YYYY-MM) and Unix seconds keep their shapes. */
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

const ClockRequest = z.union([
  z.strictObject({ advance_ms: z.number().int().min(-1e13).max(1e13) }),
  z.strictObject({
    now: z.union([
      z.number().int().min(0).max(LATEST_MS),
      z.string().refine((s) => Number.isFinite(Date.parse(s)), 'expected an ISO 8601 timestamp'),
    ]),
  }),
]);

/** Test and demo controls under /__emulator (no auth; the server only listens on loopback). */
export function controlRoutes(ctx: EmulatorContext): RouteDef[] {
  const clockView = (): Record<string, unknown> => ({ now: ctx.clock.iso(), now_ms: ctx.clock.now(), offset_ms: ctx.clock.offsetMs });
  return [
    {
      method: 'POST',
      url: '/codes/:code/revoke',
      bucket: null,
      handler: async (request) => {
        const code = (request.params as { code: string }).code;
        const record = isWellFormedCode(code) ? ctx.store.code(code) : undefined;
        if (!record) throw new HttpError(404, 'code_not_found', `activation code ${codeHint(code)} does not exist; generate it first`, { field: 'code' });
        if (!record.is_revoked) {
          record.is_revoked = true;
          record.revoked_at = ctx.clock.iso();
          await ctx.store.commit();
        }
        return { code_hint: codeHint(record.code), is_revoked: true, revoked_at: record.revoked_at };
      },
    },
    {
      method: 'POST',
      url: '/faults',
      bucket: null,
      handler: async (request) => {
        ctx.faults.fault = faultFrom(parseWith(FaultRequest, request.body, 'body'));
        // `none` clears everything: requests still held are let go (and answered) first.
        if (ctx.faults.fault.mode === 'none') await ctx.held.release();
        return { ...ctx.faults.fault };
      },
    },
    {
      method: 'GET',
      url: '/held',
      bucket: null,
      handler: async (request) => {
        const query = parseWith(HeldQuery, request.query, 'query');
        return { held: await ctx.held.waitFor(query.at_least, query.wait_ms) };
      },
    },
    {
      method: 'POST',
      url: '/held/release',
      bucket: null,
      handler: async (request) => {
        const body = parseWith(ReleaseRequest, request.body ?? {}, 'body');
        const released = await ctx.held.release(body.count);
        return { released, held: ctx.held.list() };
      },
    },
    {
      method: 'POST',
      url: '/clock',
      bucket: null,
      handler: async (request) => {
        const body = parseWith(ClockRequest, request.body, 'body');
        const target = 'advance_ms' in body ? ctx.clock.now() + body.advance_ms : typeof body.now === 'number' ? body.now : Date.parse(body.now);
        if (target < 0 || target > LATEST_MS) {
          const field = 'advance_ms' in body ? 'advance_ms' : 'now';
          throw new HttpError(400, 'bad_request', `the clock must stay between 1970 and the end of 9999; ${field} would move it out of that range`, {
            field,
            issue: 'out of range',
          });
        }
        ctx.clock.set(target);
        // Everything due by the new time happens before the answer: build transitions, and the
        // delivery attempts they start (awaited, so a test reads their outcome next).
        await runClock(ctx);
        await ctx.outbox.settle();
        return clockView();
      },
    },
    {
      method: 'POST',
      url: '/reset',
      bucket: null,
      handler: async () => {
        ctx.clock.reset();
        ctx.faults.fault = { ...NO_FAULT };
        await ctx.held.release();
        ctx.limiter.reset();
        ctx.store.data = createStartState(ctx.store.data.identity, ctx.clock.now());
        await ctx.store.commit();
        return { reset: true, ...clockView() };
      },
    },
    {
      method: 'GET',
      url: '/state',
      bucket: null,
      handler: async () => {
        const { identity, ...data } = ctx.store.data;
        return {
          clock: clockView(),
          faults: ctx.faults.fault,
          held: ctx.held.list(),
          rate_limits: { limits: ctx.limiter.limits, windows: ctx.limiter.snapshot() },
          download_redirect: ctx.downloadRedirect,
          account: {
            owner_id: identity.owner_id,
            token: identity.token,
            project_id: identity.project_id,
            webhook_secret: identity.webhook_secret,
            other_owner_id: identity.other_owner_id,
            other_project_id: identity.other_project_id,
          },
          ...data,
        };
      },
    },
    {
      method: 'GET',
      url: '/files/artifacts/:artifactId/:fileName',
      bucket: null,
      handler: async (request, reply) => {
        const { artifactId, fileName } = request.params as { artifactId: string; fileName: string };
        const query = request.query as Record<string, unknown>;
        const expires = typeof query.expires === 'string' ? query.expires : '';
        const signature = typeof query.signature === 'string' ? query.signature : '';
        if (!verifyDownloadSignature(ctx.signingKey, artifactId, expires, signature)) {
          throw new HttpError(403, 'forbidden', 'the download link is not valid; ask the service for a new one', { field: 'signature' });
        }
        if (Number(expires) < ctx.clock.now()) {
          throw new HttpError(403, 'forbidden', 'the download link has expired; ask the service for a new one', { field: 'expires' });
        }
        const artifact = ctx.store.data.builds.flatMap((b) => b.artifacts).find((a) => a.id === artifactId && a.file_name === fileName);
        if (!artifact) throw new HttpError(404, 'not_found', 'the artifact no longer exists', { field: 'artifactId' });
        return reply
          .type('application/octet-stream')
          .header('content-disposition', `attachment; filename="${artifact.file_name}"`)
          .send(artifactBytes(artifact.id, artifact.file_name));
      },
    },
    {
      method: 'GET',
      url: '/files/sdk/:fileName',
      bucket: null,
      handler: async (request, reply) => {
        if ((request.params as { fileName: string }).fileName !== SDK_FILE_NAME) {
          throw new HttpError(404, 'not_found', `no SDK file of that name; the current one is ${SDK_FILE_NAME}`, { field: 'fileName' });
        }
        return reply.type('application/zip').send(sdkBytes());
      },
    },
  ];
}
