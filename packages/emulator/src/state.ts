import { z } from 'zod';
import { Artifact, BuildStatus, DiscoverableRepo, Format, HostingConnection, Platform, ReleaseType, Visibility } from '@plugin-license/api';

/*
 * Everything the emulator holds. One zod schema serves both as the type and as the check of a
 * `--data` file read back at start, so a hand-edited or truncated file is refused with a clear
 * message instead of failing later inside a request.
 */

const Iso = z.string().min(1);

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
  source: z.enum(['api', 'trigger', 'seed']),
  ref: z.string().nullable(),
  commit_sha: z.string().nullable(),
  artifacts: z.array(ArtifactRecord),
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
});
export type EmulatorData = z.infer<typeof EmulatorData>;
