import { createHash } from 'node:crypto';
import { TriggerRequest } from '@plugin-license/api';
import type { FastifyRequest } from 'fastify';
import * as z from 'zod';
import { createBuild } from '../build-factory.js';
import type { EmulatorContext, RouteDef } from '../context.js';
import { HttpError } from '../errors.js';
import { isLoopbackHost } from '../loopback.js';
import { parseWith, requireUuidParam } from '../request-helpers.js';
import { BuildSettings, NotificationConfig, TriggerConfig, type ProjectRecord } from '../state.js';
import { branchName, matchPush, matchRelease, type TriggerDecision } from '../triggers.js';
import { versionFromRef } from './trigger.js';

const MAX_TRIGGERS = 20;
const MAX_PUSH_FILES = 10_000;

/** The settings' own schema, every field optional; `draws` is the emulator's, not the caller's. */
const BuildSettingsRequest = BuildSettings.omit({ draws: true }).partial().strict();

const PushRequest = z.strictObject({
  branch: z.string().min(1).max(255),
  files: z.array(z.string().min(1).max(4096)).max(MAX_PUSH_FILES),
  commit_sha: TriggerRequest.shape.commit_sha,
});

const ReleaseRequest = z.strictObject({
  release_type: z.string().min(1).max(100),
  tag: z.string().min(1).max(255),
});

const NotificationRequest = NotificationConfig.superRefine((config, issues) => {
  let url: URL;
  try {
    url = new URL(config.url);
  } catch {
    issues.addIssue({ code: 'custom', path: ['url'], message: 'expected an absolute http:// or https:// URL' });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    issues.addIssue({ code: 'custom', path: ['url'], message: 'expected an http:// or https:// URL' });
  } else if (!isLoopbackHost(url.hostname)) {
    issues.addIssue({ code: 'custom', path: ['url'], message: 'the emulator delivers to loopback receivers only (127.0.0.1, ::1, localhost)' });
  }
});

function requireProjectParam(ctx: EmulatorContext, request: FastifyRequest): ProjectRecord {
  const id = requireUuidParam(request, 'id');
  const project = ctx.store.project(id);
  if (!project) throw new HttpError(404, 'not_found', `project ${id} does not exist; see GET /__emulator/state for the projects`, { field: 'id', project_id: id });
  return project;
}

/** A commit SHA for a simulated push that names none: derived from what was pushed. */
function commitOf(parts: readonly string[]): string {
  return createHash('sha1').update(parts.join('\0')).digest('hex');
}

/** The answer of a simulated push or release: the build it started, or why none. */
async function buildFrom(
  ctx: EmulatorContext,
  project: ProjectRecord,
  decision: TriggerDecision,
  spec: { source: 'push' | 'release'; ref: string; commit_sha: string; version?: string | undefined },
): Promise<Record<string, unknown>> {
  if (decision.trigger === null) return { build_id: null, reason: decision.reason };
  const config = decision.trigger.build_config;
  const build = await createBuild(ctx, project, {
    status: 'queued',
    source: spec.source,
    platforms: config.platforms,
    formats: config.formats,
    release_type: config.release_type,
    flags: config.flags,
    ref: spec.ref,
    commit_sha: spec.commit_sha,
    version: spec.version,
  });
  return { build_id: build.id, status: build.status, trigger: decision.index };
}

/** The build side's controls: settings, triggers, notifications, simulated pushes and releases, deliveries. */
export function buildControlRoutes(ctx: EmulatorContext): RouteDef[] {
  return [
    {
      method: 'PUT',
      url: '/build-settings',
      bucket: null,
      handler: async (request) => {
        const body = parseWith(BuildSettingsRequest, request.body, 'body');
        const settings = ctx.store.data.build_settings;
        if (body.step_ms !== undefined) settings.step_ms = body.step_ms;
        if (body.fail_rate !== undefined) settings.fail_rate = body.fail_rate;
        // Setting the seed restarts its sequence, so the next builds repeat a run's outcomes.
        if (body.seed !== undefined) {
          settings.seed = body.seed;
          settings.draws = 0;
        }
        await ctx.store.commit();
        return { step_ms: settings.step_ms, fail_rate: settings.fail_rate, seed: settings.seed };
      },
    },
    {
      method: 'PUT',
      url: '/projects/:id/triggers',
      bucket: null,
      handler: async (request) => {
        const project = requireProjectParam(ctx, request);
        const triggers = parseWith(z.array(TriggerConfig).max(MAX_TRIGGERS), request.body, 'body');
        project.triggers = triggers;
        await ctx.store.commit();
        return { project_id: project.id, triggers };
      },
    },
    {
      method: 'PUT',
      url: '/projects/:id/notifications',
      bucket: null,
      handler: async (request) => {
        const project = requireProjectParam(ctx, request);
        const config = parseWith(NotificationRequest, request.body, 'body');
        project.notifications = { ...config, events: [...new Set(config.events)] };
        await ctx.store.commit();
        return { project_id: project.id, notifications: project.notifications };
      },
    },
    {
      method: 'POST',
      url: '/projects/:id/push',
      bucket: null,
      handler: async (request) => {
        const project = requireProjectParam(ctx, request);
        const push = parseWith(PushRequest, request.body, 'body');
        const branch = branchName(push.branch);
        return buildFrom(ctx, project, matchPush(project.triggers, push), {
          source: 'push',
          ref: `refs/heads/${branch}`,
          commit_sha: push.commit_sha?.toLowerCase() ?? commitOf([project.id, branch, ...push.files, ctx.clock.iso()]),
        });
      },
    },
    {
      method: 'POST',
      url: '/projects/:id/release',
      bucket: null,
      handler: async (request) => {
        const project = requireProjectParam(ctx, request);
        const release = parseWith(ReleaseRequest, request.body, 'body');
        return buildFrom(ctx, project, matchRelease(project.triggers, release.release_type), {
          source: 'release',
          ref: `refs/tags/${release.tag}`,
          commit_sha: commitOf([project.id, release.tag]),
          version: versionFromRef(release.tag),
        });
      },
    },
    {
      method: 'GET',
      url: '/deliveries',
      bucket: null,
      handler: async () => {
        // Attempts in flight are awaited, so the answer shows how each one ended.
        await ctx.outbox.settle();
        return { deliveries: ctx.store.data.deliveries };
      },
    },
  ];
}
