import { createHash } from 'node:crypto';
import type { WebhookEvent } from '@plugin-license/api';
import type { ArtifactRecord, BuildRecord, BuildSchedule, BuildSettings } from './state.js';

/*
 * How a build moves on the emulator clock. Every phase lasts `step_ms`:
 *
 *   pending ──► queued ──► running: checkout, configure, compile, sign, package, upload ──► success
 *                                     └─ the step a failing build fails at ──► failed
 *
 * A build made by the API starts `pending`; a triggered one (manual trigger, push, release)
 * starts `queued`. Each transition happens at its scheduled instant, whenever the emulator
 * notices it (a request, the clock control, a 250 ms timer), so timestamps do not depend on when
 * anyone looked. Whether and where a build fails is drawn when it is created, from the seeded
 * sequence of `PUT /__emulator/build-settings`: the same seed and the same builds in the same
 * order give the same outcomes.
 */

export const BUILD_STEPS = ['checkout', 'configure', 'compile', 'sign', 'package', 'upload'] as const;

const FAILURES: Record<(typeof BUILD_STEPS)[number], { message: string; log: string }> = {
  checkout: { message: 'checkout failed: the commit is not reachable from the repository', log: 'fatal: reference is not a tree' },
  configure: { message: 'configure failed: CMake could not find the JUCE modules', log: 'CMake Error at CMakeLists.txt:12 (find_package): JUCE not found' },
  compile: { message: 'compile failed: 1 error in Source/PluginProcessor.cpp', log: "Source/PluginProcessor.cpp:42:5: error: use of undeclared identifier 'gainParam'" },
  sign: { message: 'sign failed: the code-signing certificate has expired', log: 'codesign: Developer ID Application certificate expired' },
  package: { message: 'package failed: the installer manifest is invalid', log: 'pkgbuild: error: invalid component property list' },
  upload: { message: 'upload failed: artifact storage answered 503', log: 'PUT artifact: 503 Service Unavailable after 3 attempts' },
};

/** The webhook event of each status a build can enter (none for `pending`). */
export const EVENT_OF_STATUS: Partial<Record<BuildRecord['status'], WebhookEvent>> = {
  queued: 'build.queued',
  running: 'build.started',
  success: 'build.success',
  failed: 'build.failed',
  cancelled: 'build.cancelled',
};

/** A status change of a build, at its instant on the emulator clock (epoch ms). */
export interface BuildTransition {
  build: BuildRecord;
  event: WebhookEvent;
  at: number;
}

/** Draws the next outcome of the seeded sequence: null for success, else the step it fails at. */
function drawFailure(settings: BuildSettings): BuildSchedule['failure'] {
  const h = createHash('sha256').update(`${settings.seed}:${settings.draws}`).digest();
  settings.draws += 1;
  if (h.readUInt32BE(0) / 2 ** 32 >= settings.fail_rate) return null;
  const step = BUILD_STEPS[h.readUInt32BE(4) % BUILD_STEPS.length] ?? 'compile';
  const failure = FAILURES[step];
  const logs = BUILD_STEPS.slice(0, BUILD_STEPS.indexOf(step))
    .map((s) => `[${s}] ok`)
    .concat(`[${step}] ${failure.log}`, `[${step}] exit code 1`)
    .join('\n');
  return { step, message: failure.message, logs };
}

/** The schedule of a build created at `createdAtMs` under the current settings (advances the seeded sequence). */
export function newSchedule(settings: BuildSettings, createdAtMs: number): BuildSchedule {
  return { step_ms: settings.step_ms, next_at: new Date(createdAtMs + settings.step_ms).toISOString(), failure: drawFailure(settings) };
}

function progressOf(stepIndex: number): number {
  return Math.round((100 * stepIndex) / BUILD_STEPS.length);
}

/**
 * Applies every transition of `build` due at `nowMs`; returns them in order. `finish` makes the
 * artifacts of a successful build. A finished or cancelled build has no `next_at` and stays put.
 */
export function advanceBuild(build: BuildRecord, nowMs: number, runUrl: string, finish: (build: BuildRecord, atIso: string) => ArtifactRecord[]): BuildTransition[] {
  const schedule = build.schedule;
  const transitions: BuildTransition[] = [];
  while (schedule?.next_at != null && Date.parse(schedule.next_at) <= nowMs) {
    const at = Date.parse(schedule.next_at);
    const atIso = schedule.next_at;
    const before = build.status;
    let next: number | null = at + schedule.step_ms;
    if (build.status === 'pending') {
      build.status = 'queued';
      build.metadata = { current_step: 'queued', step_progress: 0 };
    } else if (build.status === 'queued') {
      build.status = 'running';
      build.started_at = atIso;
      build.github_run_url = runUrl;
      build.metadata = { current_step: BUILD_STEPS[0], step_progress: 0 };
    } else {
      const index = BUILD_STEPS.indexOf(build.metadata.current_step as (typeof BUILD_STEPS)[number]);
      if (schedule.failure !== null && schedule.failure.step === build.metadata.current_step) {
        build.status = 'failed';
        build.completed_at = atIso;
        next = null;
      } else if (index >= 0 && index + 1 < BUILD_STEPS.length) {
        build.metadata = { current_step: BUILD_STEPS[index + 1] ?? 'upload', step_progress: progressOf(index + 1) };
      } else {
        build.status = 'success';
        build.completed_at = atIso;
        build.metadata = { current_step: 'completed', step_progress: 100 };
        build.artifacts = finish(build, atIso);
        next = null;
      }
    }
    schedule.next_at = next === null ? null : new Date(next).toISOString();
    // A new step is not a status change: only status changes are events.
    const event = build.status === before ? undefined : EVENT_OF_STATUS[build.status];
    if (event) transitions.push({ build, event, at });
  }
  return transitions;
}

/** Cancels a pending, queued or running build at `nowMs`. */
export function cancelBuild(build: BuildRecord, nowMs: number): BuildTransition {
  build.status = 'cancelled';
  build.completed_at = new Date(nowMs).toISOString();
  build.metadata = { ...build.metadata, current_step: 'cancelled' };
  if (build.schedule) build.schedule.next_at = null;
  return { build, event: 'build.cancelled', at: nowMs };
}
