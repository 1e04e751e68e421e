import * as z from 'zod';
import { Artifact, BuildStatus, WebhookEvent, DiscoverableRepo, Format, HostingConnection, Platform, ReleaseType, Visibility } from '@plugin-license/api';

/*
 * Everything the emulator holds. One zod schema serves both as the type and as the check of a
 * `--data` file read back at start, so a hand-edited or truncated file is refused with a clear
 * message instead of failing later inside a request.
 */

const Iso = z.string().min(1);

/** A glob of branch names or file paths (picomatch syntax). */
const Glob = z.string().min(1).max(500);
const Globs = z.array(Glob).max(100);

/** Interface section 2, "Trigger configuration", as the web portal would store it. */
export const TriggerConfig = z
  .strictObject({
    trigger: z.enum(['push', 'release']),
    enabled: z.boolean().default(true),
    branches: Globs.optional(),
    paths: z.strictObject({ include: Globs.optional(), exclude: Globs.optional() }).optional(),
    release_types: z.array(z.string().min(1).max(100)).max(20).optional(),
    build_config: z
      .strictObject({
        platforms: z.array(Platform).min(1).optional(),
        formats: z.array(z.enum(['vst3', 'au'])).min(1).optional(),
        release_type: ReleaseType.optional(),
        flags: z.record(z.string().max(100), z.boolean()).optional(),
      })
      .default({}),
  })
  .superRefine((t, ctx) => {
    if (t.trigger === 'push' && t.release_types !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['release_types'], message: 'release_types belongs to release triggers; a push trigger filters on branches and paths' });
    }
    if (t.trigger === 'release' && (t.branches !== undefined || t.paths !== undefined)) {
      ctx.addIssue({ code: 'custom', path: [t.branches !== undefined ? 'branches' : 'paths'], message: 'branches and paths belong to push triggers; a release trigger filters on release_types' });
    }
    if (t.trigger === 'release' && (t.release_types ?? []).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['release_types'], message: 'a release trigger needs release_types (for example ["published"])' });
    }
  });
export type TriggerConfig = z.infer<typeof TriggerConfig>;

/** Where a project's outgoing notifications go and in which form. */
export const NotificationConfig = z.strictObject({
  url: z.string().min(1).max(2000),
  events: z.array(WebhookEvent).max(5),
  form: z.enum(['detailed', 'flat']).default('detailed'),
});
export type NotificationConfig = z.infer<typeof NotificationConfig>;

/** `PUT /__emulator/build-settings`: step duration on the emulator clock, failure rate, seed. */
export const BuildSettings = z.object({
  step_ms: z.number().int().min(1).max(86_400_000),
  fail_rate: z.number().min(0).max(1),
  seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  /** Builds created since the seed was set: the position in the seeded sequence of outcomes. */
  draws: z.number().int().min(0),
});
export type BuildSettings = z.infer<typeof BuildSettings>;
export const DEFAULT_BUILD_SETTINGS: BuildSettings = { step_ms: 5000, fail_rate: 0, seed: 0, draws: 0 };

/** How a build runs, decided when it is created: each phase lasts `step_ms`; `failure` names the step it fails at. */
export const BuildSchedule = z.object({
  step_ms: z.number().int().min(1),
  next_at: Iso.nullable(),
  failure: z.object({ step: z.string(), message: z.string(), logs: z.string() }).nullable(),
});
export type BuildSchedule = z.infer<typeof BuildSchedule>;

export const DeliveryAttempt = z.object({
  at: Iso,
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().min(0),
});

/** One outgoing notification and every attempt to deliver it. */
export const DeliveryRecord = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  build_id: z.uuid(),
  event: WebhookEvent,
  occurred_at: Iso,
  url: z.string(),
  form: z.enum(['detailed', 'flat']),
  attempts: z.array(DeliveryAttempt),
  delivered: z.boolean(),
  gave_up: z.boolean(),
  next_attempt_at: Iso.nullable(),
});
export type DeliveryRecord = z.infer<typeof DeliveryRecord>;

/** What survives `/__emulator/reset` and restarts: signing key, token, ids and secrets. */
export const Identity = z.object({
  signing_key: z.string().min(43),
  token: z.string().min(1),
  owner_id: z.string().min(1),
  project_id: z.uuid(),
  webhook_secret: z.string().min(1),
  other_owner_id: z.string().min(1),
  other_project_id: z.uuid(),
  other_webhook_secret: z.string().min(1),
});
export type Identity = z.infer<typeof Identity>;

export const ProjectRecord = z.object({
  id: z.uuid(),
  owner_id: z.string(),
  name: z.string(),
  description: z.string(),
  visibility: Visibility,
  source_repo_url: z.string().nullable(),
  branch: z.string().nullable(),
  webhook_secret: z.string(),
  version: z.string(),
  next_build_number: z.number().int().min(1),
  /** What the web portal would store: push and release triggers (`PUT /__emulator/projects/:id/triggers`). */
  triggers: z.array(TriggerConfig).default([]),
  /** Where outgoing notifications go (`PUT /__emulator/projects/:id/notifications`); null: none. */
  notifications: NotificationConfig.nullable().default(null),
});
export type ProjectRecord = z.infer<typeof ProjectRecord>;

export const CodeRecord = z.object({
  code: z.string(),
  project_id: z.uuid(),
  key_type: z.string(),
  max_activations: z.number().int().min(1),
  notes: z.string().nullable(),
  created_at: Iso,
  is_revoked: z.boolean(),
  revoked_at: Iso.nullable(),
  slots: z.array(z.object({ machine_id: z.string(), activated_at: Iso })),
  released: z.array(z.object({ machine_id: z.string(), deactivated_at: Iso })),
});
export type CodeRecord = z.infer<typeof CodeRecord>;

export const ArtifactRecord = Artifact;
export type ArtifactRecord = z.infer<typeof ArtifactRecord>;

export const BuildRecord = z.object({
  id: z.uuid(),
  project_id: z.uuid(),
  status: BuildStatus,
  version_number: z.string(),
  build_number: z.number().int().min(1),
  platforms: z.array(Platform),
  formats: z.array(Format),
  metadata: z.object({ current_step: z.string(), step_progress: z.number() }),
  queued_at: Iso,
  started_at: Iso.nullable(),
  completed_at: Iso.nullable(),
  github_run_url: z.string().nullable(),
  release_type: ReleaseType.nullable(),
  flags: z.record(z.string(), z.boolean()),
  clean_build: z.boolean(),
  source: z.enum(['api', 'trigger', 'push', 'release', 'seed']),
  ref: z.string().nullable(),
  commit_sha: z.string().nullable(),
  artifacts: z.array(ArtifactRecord),
  /** How the build runs, fixed when it is created (see build-lifecycle.ts); null for finished seed builds. */
  schedule: BuildSchedule.nullable().default(null),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

// What the emulator stores of these is exactly what it serves.
export const HostingRecord = HostingConnection;
export type HostingRecord = z.infer<typeof HostingRecord>;

export const RepoRecord = DiscoverableRepo;
export type RepoRecord = z.infer<typeof RepoRecord>;

export const EmulatorData = z.object({
  version: z.literal(1),
  identity: Identity,
  projects: z.array(ProjectRecord),
  codes: z.array(CodeRecord),
  builds: z.array(BuildRecord),
  hosting: HostingRecord,
  repos: z.array(RepoRecord),
  build_settings: BuildSettings.default(DEFAULT_BUILD_SETTINGS),
  deliveries: z.array(DeliveryRecord).default([]),
});
export type EmulatorData = z.infer<typeof EmulatorData>;
