import picomatch from 'picomatch';
import type { TriggerConfig } from './state.js';

/*
 * Push and release triggers (interface section 6, "Incoming triggers"), matched with picomatch:
 * `*` stays within one path segment (`release/*` matches `release/1.2`, not `release/1.2/hotfix`),
 * `**` crosses segments, and dot files match like any other.
 */

const GLOB_OPTIONS = { dot: true } as const;

export interface PushEvent {
  branch: string;
  files: readonly string[];
}

export type TriggerDecision = { trigger: TriggerConfig; index: number } | { trigger: null; reason: string };

/** `refs/heads/main` and `main` name the same branch. */
export function branchName(branch: string): string {
  return branch.replace(/^refs\/heads\//, '');
}

function normalizePath(file: string): string {
  return file.replace(/\\/g, '/').replace(/^(\.\/|\/)+/, '');
}

function matcher(globs: readonly string[] | undefined): ((s: string) => boolean) | undefined {
  return globs === undefined || globs.length === 0 ? undefined : picomatch([...globs], GLOB_OPTIONS);
}

/** Why this push trigger does not build the push, or null when it does. */
function pushRefusal(trigger: TriggerConfig, push: PushEvent): string | null {
  const branch = branchName(push.branch);
  const onBranch = matcher(trigger.branches);
  if (onBranch && !onBranch(branch)) return `branch "${branch}" matches none of branches ${JSON.stringify(trigger.branches)}`;
  const files = push.files.map(normalizePath);
  const excluded = matcher(trigger.paths?.exclude);
  // A file matching exclude never triggers; the others are what include looks at.
  const candidates = excluded ? files.filter((f) => !excluded(f)) : files;
  if (files.length > 0 && candidates.length === 0) return `every changed file matches paths.exclude ${JSON.stringify(trigger.paths?.exclude)}`;
  const included = matcher(trigger.paths?.include);
  if (included && !candidates.some((f) => included(f))) return `no changed file matches paths.include ${JSON.stringify(trigger.paths?.include)}`;
  return null;
}

function decide(triggers: readonly TriggerConfig[], kind: TriggerConfig['trigger'], refusal: (t: TriggerConfig) => string | null): TriggerDecision {
  const reasons: string[] = [];
  for (const [index, trigger] of triggers.entries()) {
    if (trigger.trigger !== kind) continue;
    if (!trigger.enabled) {
      reasons.push(`trigger ${index}: disabled`);
      continue;
    }
    const why = refusal(trigger);
    if (why === null) return { trigger, index };
    reasons.push(`trigger ${index}: ${why}`);
  }
  return { trigger: null, reason: reasons.length === 0 ? `the project has no ${kind} trigger` : reasons.join('; ') };
}

/** The first enabled push trigger that builds this push, or why none does. */
export function matchPush(triggers: readonly TriggerConfig[], push: PushEvent): TriggerDecision {
  return decide(triggers, 'push', (t) => pushRefusal(t, push));
}

/** The first enabled release trigger listing this release type, or why none does. */
export function matchRelease(triggers: readonly TriggerConfig[], releaseType: string): TriggerDecision {
  return decide(triggers, 'release', (t) => ((t.release_types ?? []).includes(releaseType) ? null : `release type "${releaseType}" is not among ${JSON.stringify(t.release_types)}`));
}
