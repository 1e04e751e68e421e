import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { TriggerRequest } from '@plugin-license/api';
import type { FastifyRequest } from 'fastify';
import * as z from 'zod';
import { createBuild } from '../build-factory.js';
import type { EmulatorContext, RouteDef } from '../context.js';
import { HttpError } from '../errors.js';
import { parseWith } from '../request-helpers.js';

function sameSecret(a: string, b: string): boolean {
  // Hash first so the comparison is constant-time whatever the lengths.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * X-Webhook-Secret, when present, decides alone; otherwise X-Signature must be
 * "sha256=" + hex HMAC-SHA256 of the raw request body (exact bytes), keyed by the webhook secret.
 */
function checkTriggerAuth(request: FastifyRequest, secret: string): void {
  const given = header(request, 'x-webhook-secret');
  if (given !== undefined) {
    if (!sameSecret(given, secret)) {
      throw new HttpError(401, 'unauthorized', "X-Webhook-Secret does not match the project's webhook secret; copy it again from the project settings", {
        header: 'x-webhook-secret',
      });
    }
    return;
  }
  const signature = header(request, 'x-signature');
  if (signature === undefined) {
    throw new HttpError(
      401,
      'unauthorized',
      'the trigger needs X-Webhook-Secret: <secret> or X-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed by the webhook secret>',
      { header: 'x-signature' },
    );
  }
  const match = /^sha256=([0-9a-f]{64})$/i.exec(signature.trim());
  const expected = createHmac('sha256', secret).update(request.rawBody ?? Buffer.alloc(0)).digest();
  if (!match?.[1] || !timingSafeEqual(expected, Buffer.from(match[1], 'hex'))) {
    throw new HttpError(
      401,
      'unauthorized',
      'X-Signature does not match: it must be sha256= + lowercase hex HMAC-SHA256 of the exact raw body, keyed by the webhook secret',
      { header: 'x-signature' },
    );
  }
}

/** `refs/tags/v1.2.3` (or `v1.2.3`) → `1.2.3`. */
export function versionFromRef(ref: string | undefined): string | undefined {
  const match = ref === undefined ? null : /^(?:refs\/tags\/)?v?(\d+\.\d+\.\d+[\w.+-]*)$/.exec(ref);
  return match?.[1];
}

export function triggerRoutes(ctx: EmulatorContext): RouteDef[] {
  return [
    {
      method: 'POST',
      url: '/external-builds/:project_id/trigger',
      bucket: 'trigger',
      lenientContentType: true,
      handler: async (request, reply) => {
        const projectId = (request.params as { project_id: string }).project_id;
        const project = z.uuid().safeParse(projectId).success ? ctx.store.project(projectId) : undefined;
        if (!project) {
          throw new HttpError(404, 'not_found', `project ${projectId} does not exist; check the project id in the trigger URL`, {
            field: 'project_id',
          });
        }
        checkTriggerAuth(request, project.webhook_secret);
        const body = parseWith(TriggerRequest, request.body ?? {}, 'body');
        const build = await createBuild(ctx, project, {
          status: 'queued',
          source: 'trigger',
          platforms: body.platforms,
          formats: body.formats,
          release_type: body.release_type,
          ref: body.ref,
          commit_sha: body.commit_sha,
          version: versionFromRef(body.ref),
        });
        reply.code(201);
        return { build_id: build.id, status: build.status };
      },
    },
  ];
}
