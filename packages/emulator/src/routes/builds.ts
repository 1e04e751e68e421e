import { Build, CreateBuildRequest, CreatedBuild, ListBuildsQuery } from '@plugin-license/api';
import type { FastifyRequest } from 'fastify';
import { emit } from '../build-engine.js';
import { createBuild, usageOf } from '../build-factory.js';
import { cancelBuild } from '../build-lifecycle.js';
import type { EmulatorContext, RouteDef } from '../context.js';
import { downloadLink } from '../download-url.js';
import { HttpError } from '../errors.js';
import { parseWith, requireProject, requireSubject, requireUuidParam } from '../request-helpers.js';
import type { BuildRecord } from '../state.js';

const DEFAULT_LIST_LIMIT = 20;
const CANCELLABLE = new Set(['pending', 'queued', 'running']);

function requireBuild(ctx: EmulatorContext, request: FastifyRequest, subject: string): BuildRecord {
  const id = requireUuidParam(request, 'id');
  const build = ctx.store.build(id);
  if (!build) throw new HttpError(404, 'not_found', `build ${id} does not exist; check the build id`, { field: 'id', build_id: id });
  requireProject(ctx, subject, build.project_id, 'id');
  return build;
}

/**
 * A build as an answer shows it: the fields the interface's schema names (`Build`, `CreatedBuild`),
 * in its order. The list also shows the build number and the time queued, which its items' schema
 * leaves open.
 */
function view(build: BuildRecord, fields: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f, build[f as keyof BuildRecord]]));
}
const FULL = Object.keys(Build.shape);
const CREATED = Object.keys(CreatedBuild.shape);
const LISTED = ['id', 'project_id', 'status', 'version_number', 'build_number', 'queued_at', 'completed_at'];

export function buildRoutes(ctx: EmulatorContext): RouteDef[] {
  return [
    {
      method: 'POST',
      url: '/builds',
      bucket: 'builds',
      handler: async (request, reply) => {
        const subject = requireSubject(request);
        const body = parseWith(CreateBuildRequest, request.body, 'body');
        const project = requireProject(ctx, subject, body.project_id, 'project_id');
        const build = await createBuild(ctx, project, { ...body, status: 'pending', source: 'api' });
        reply.code(201);
        return view(build, CREATED);
      },
    },
    {
      method: 'GET',
      url: '/builds',
      bucket: 'builds',
      handler: async (request) => {
        const subject = requireSubject(request);
        const query = parseWith(ListBuildsQuery, request.query, 'query');
        const projects = query.project_id
          ? new Set([requireProject(ctx, subject, query.project_id, 'project_id').id])
          : ctx.store.ownedProjectIds(subject);
        const matching = ctx.store.data.builds
          .filter((b) => projects.has(b.project_id) && (query.status === undefined || b.status === query.status))
          .sort((a, b) => b.queued_at.localeCompare(a.queued_at) || b.build_number - a.build_number);
        const limit = query.limit ?? DEFAULT_LIST_LIMIT;
        const offset = query.offset ?? 0;
        return {
          builds: matching.slice(offset, offset + limit).map((b) => view(b, LISTED)),
          total: matching.length,
          limit,
          offset,
        };
      },
    },
    {
      method: 'GET',
      url: '/builds/usage',
      bucket: 'builds',
      handler: async (request) => usageOf(ctx, requireSubject(request)),
    },
    {
      method: 'GET',
      url: '/builds/:id',
      bucket: 'builds',
      handler: async (request) => view(requireBuild(ctx, request, requireSubject(request)), FULL),
    },
    {
      method: 'GET',
      url: '/builds/:id/artifacts',
      bucket: 'builds',
      handler: async (request) => {
        const build = requireBuild(ctx, request, requireSubject(request));
        return { artifacts: build.artifacts };
      },
    },
    {
      method: 'GET',
      url: '/builds/:id/download/:artifactId',
      bucket: 'builds',
      handler: async (request, reply) => {
        const build = requireBuild(ctx, request, requireSubject(request));
        const artifactId = requireUuidParam(request, 'artifactId');
        const artifact = build.artifacts.find((a) => a.id === artifactId);
        if (!artifact) {
          throw new HttpError(404, 'not_found', `build ${build.id} has no artifact ${artifactId}; list its artifacts first`, {
            field: 'artifactId',
            artifact_id: artifactId,
          });
        }
        const link = downloadLink(ctx.origin(), ctx.signingKey, artifact, ctx.clock.now());
        artifact.download_count += 1;
        await ctx.store.commit();
        const redirect = (request.query as Record<string, unknown>).redirect;
        if (ctx.downloadRedirect || redirect === '1' || redirect === 'true') return reply.redirect(link.url, 302);
        return link;
      },
    },
    {
      method: 'POST',
      url: '/builds/:id/cancel',
      bucket: 'builds',
      handler: async (request) => {
        const build = requireBuild(ctx, request, requireSubject(request));
        if (!CANCELLABLE.has(build.status)) {
          throw new HttpError(
            400,
            'bad_request',
            `build ${build.id} is already ${build.status}; only pending, queued or running builds can be cancelled`,
            { field: 'status', status: build.status },
          );
        }
        emit(ctx, [cancelBuild(build, ctx.clock.now())]);
        await ctx.store.commit();
        return { id: build.id, status: build.status };
      },
    },
  ];
}
