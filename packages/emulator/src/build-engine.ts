import { advanceBuild, type BuildTransition } from './build-lifecycle.js';
import type { EmulatorContext } from './context.js';
import { makeArtifact, repoUrl, ACCOUNT_LOGIN } from './seed.js';
import type { ArtifactRecord, BuildRecord, ProjectRecord } from './state.js';

const EXTENSION: Record<string, string> = { vst3: 'vst3', au: 'component', standalone: 'app' };

/** One artifact per platform × format of a successful build; `au` exists only for macOS. */
export function artifactsOf(project: ProjectRecord | undefined, build: BuildRecord, atIso: string): ArtifactRecord[] {
  const name = (project?.name ?? 'Plugin').replace(/[^A-Za-z0-9]+/g, '') || 'Plugin';
  const artifacts: ArtifactRecord[] = [];
  for (const platform of build.platforms) {
    for (const format of build.formats) {
      if (format === 'au' && platform !== 'macos') continue;
      const extension = format === 'standalone' && platform === 'windows' ? 'exe' : (EXTENSION[format] ?? format);
      artifacts.push(makeArtifact(platform, format, `${name}-${build.version_number}-${platform}.${extension}.zip`, atIso));
    }
  }
  return artifacts;
}

function runUrlOf(project: ProjectRecord | undefined, build: BuildRecord): string {
  const repo = project?.source_repo_url ?? repoUrl(`${ACCOUNT_LOGIN}/${build.project_id}`);
  return `${repo}/actions/runs/${build.build_number}`;
}

/** Hands status changes to the outbox (a delivery per selected event) and starts what is due. */
export function emit(ctx: EmulatorContext, transitions: readonly BuildTransition[]): void {
  ctx.outbox.record(transitions);
  ctx.outbox.dispatchDue(ctx.clock.now());
}

/**
 * Brings every build up to the emulator's current time, records the notifications of what
 * changed, starts the deliveries due, and persists. Called before every request, by the clock
 * control and by a 250 ms timer, so builds move with real time too.
 */
export async function runClock(ctx: EmulatorContext): Promise<void> {
  const now = ctx.clock.now();
  const transitions: BuildTransition[] = [];
  for (const build of ctx.store.data.builds) {
    if (build.schedule?.next_at == null) continue;
    const project = ctx.store.project(build.project_id);
    transitions.push(...advanceBuild(build, now, runUrlOf(project, build), (b, at) => artifactsOf(project, b, at)));
  }
  transitions.sort((a, b) => a.at - b.at);
  emit(ctx, transitions);
  if (transitions.length > 0) await ctx.store.commit();
}
