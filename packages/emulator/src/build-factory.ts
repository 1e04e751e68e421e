import { randomUUID } from 'node:crypto';
import type { Format, Platform, ReleaseType } from '@plugin-license/api';
import type { EmulatorContext } from './context.js';
import { newSchedule } from './build-lifecycle.js';
import { emit } from './build-engine.js';
import { HttpError } from './errors.js';
import type { BuildRecord, ProjectRecord } from './state.js';

/** Builds allowed per calendar month (UTC) and account; the interface does not show plan values. */
export const BUILD_QUOTA = 100;
export const EXTRA_BUILDS = 0;
export const DEFAULT_PLATFORMS: Platform[] = ['macos', 'windows'];
export const DEFAULT_FORMATS: Format[] = ['vst3', 'au'];

export interface Usage {
  period: string;
  used: number;
  limit: number;
  remaining: number;
  extra_builds: number;
  reset_at: string;
}

/** Builds queued in the current calendar month (UTC, emulator clock) across the account's projects. */
export function usageOf(ctx: EmulatorContext, ownerId: string): Usage {
  const now = new Date(ctx.clock.now());
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  const start = Date.UTC(year, month, 1);
  const end = Date.UTC(year, month + 1, 1);
  const owned = ctx.store.ownedProjectIds(ownerId);
  const used = ctx.store.data.builds.filter((b) => {
    const queued = Date.parse(b.queued_at);
    return owned.has(b.project_id) && queued >= start && queued < end;
  }).length;
  return {
    period: `${year}-${String(month + 1).padStart(2, '0')}`,
    used,
    limit: BUILD_QUOTA,
    remaining: Math.max(0, BUILD_QUOTA + EXTRA_BUILDS - used),
    extra_builds: EXTRA_BUILDS,
    reset_at: new Date(end).toISOString(),
  };
}

/** major/minor/patch bump the project's version; dev, release and none reuse it. */
export function nextVersion(current: string, release: ReleaseType | null): string {
  const [major = 1, minor = 0, patch = 0] = current.split('.').map((n) => Number.parseInt(n, 10) || 0);
  switch (release) {
    case 'major':
      return `${major + 1}.0.0`;
    case 'minor':
      return `${major}.${minor + 1}.0`;
    case 'patch':
      return `${major}.${minor}.${patch + 1}`;
    default:
      return `${major}.${minor}.${patch}`;
  }
}

export interface NewBuild {
  status: 'pending' | 'queued';
  source: 'api' | 'trigger' | 'push' | 'release';
  platforms?: Platform[] | undefined;
  formats?: Format[] | undefined;
  release_type?: ReleaseType | undefined;
  flags?: Record<string, unknown> | undefined;
  clean_build?: boolean | undefined;
  ref?: string | undefined;
  commit_sha?: string | undefined;
  version?: string | undefined;
}

/**
 * Records a new build of a project after checking the account's quota (403 forbidden when used
 * up), with its schedule on the emulator clock (build-lifecycle.ts).
 */
export async function createBuild(ctx: EmulatorContext, project: ProjectRecord, spec: NewBuild): Promise<BuildRecord> {
  const usage = usageOf(ctx, project.owner_id);
  if (usage.used >= usage.limit + usage.extra_builds) {
    throw new HttpError(
      403,
      'forbidden',
      `the build quota of ${usage.period} is used up (${usage.used} of ${usage.limit}); wait until ${usage.reset_at} or buy extra builds`,
      { period: usage.period, used: usage.used, limit: usage.limit, extra_builds: usage.extra_builds, reset_at: usage.reset_at },
    );
  }
  const version = spec.version ?? nextVersion(project.version, spec.release_type ?? null);
  const flags: Record<string, boolean> = {};
  for (const [key, value] of Object.entries(spec.flags ?? {})) if (typeof value === 'boolean') flags[key] = value;
  const build: BuildRecord = {
    id: randomUUID(),
    project_id: project.id,
    status: spec.status,
    version_number: version,
    build_number: project.next_build_number,
    platforms: spec.platforms ?? [...DEFAULT_PLATFORMS],
    formats: spec.formats ?? [...DEFAULT_FORMATS],
    metadata: { current_step: spec.status, step_progress: 0 },
    queued_at: ctx.clock.iso(),
    started_at: null,
    completed_at: null,
    github_run_url: null,
    release_type: spec.release_type ?? null,
    flags,
    clean_build: spec.clean_build ?? false,
    source: spec.source,
    ref: spec.ref ?? null,
    commit_sha: spec.commit_sha ?? null,
    artifacts: [],
    schedule: newSchedule(ctx.store.data.build_settings, ctx.clock.now()),
  };
  project.version = version;
  project.next_build_number += 1;
  ctx.store.data.builds.push(build);
  // A triggered build starts queued: that is its first status change (an API build's is pending -> queued).
  if (build.status === 'queued') emit(ctx, [{ build, event: 'build.queued', at: ctx.clock.now() }]);
  await ctx.store.commit();
  return build;
}
