import * as z from 'zod';

/*
 * Schemas of every resource, request and response of the service interface.
 *
 * Responses are parsed leniently: objects are `looseObject`, so fields the service adds later
 * are kept, while a missing or mistyped documented field is a schema error. Requests are strict
 * about types but also loose about extra fields, matching what a real service tolerates.
 * Wire names stay snake_case, exactly as the service speaks them.
 */

/** ISO 8601 timestamp as the service sends it (kept as a string; never reformatted). */
export const Timestamp = z.string().min(1);
export const Uuid = z.uuid();

export const Platform = z.enum(['macos', 'windows']);
export const Format = z.enum(['vst3', 'au', 'standalone']);
export const ReleaseType = z.enum(['major', 'minor', 'patch', 'dev', 'release']);
export const BuildStatus = z.enum(['pending', 'queued', 'running', 'success', 'failed', 'cancelled']);
export const ValidationReason = z.enum(['not_activated', 'code_revoked', 'code_not_found', 'deactivated']);
export const Visibility = z.enum(['public', 'private']);

export type Platform = z.infer<typeof Platform>;
export type Format = z.infer<typeof Format>;
export type ReleaseType = z.infer<typeof ReleaseType>;
export type BuildStatus = z.infer<typeof BuildStatus>;
export type ValidationReason = z.infer<typeof ValidationReason>;
export type Visibility = z.infer<typeof Visibility>;

// ---------------------------------------------------------------------------------------------
// Resources

export const BuildMetadata = z.looseObject({
  current_step: z.string(),
  step_progress: z.number(),
});
export type BuildMetadata = z.infer<typeof BuildMetadata>;

/** What a build's answers say of it first: the build just created, and the build in full. */
const buildHead = {
  id: Uuid,
  project_id: Uuid,
  status: BuildStatus,
  version_number: z.string(),
  build_number: z.number().int(),
  platforms: z.array(Platform),
  formats: z.array(Format),
};

export const Build = z.looseObject({
  ...buildHead,
  metadata: BuildMetadata,
  queued_at: Timestamp,
  started_at: Timestamp.nullable().optional(),
  completed_at: Timestamp.nullable().optional(),
  github_run_url: z.url().nullable().optional(),
});
export type Build = z.infer<typeof Build>;

export const CreatedBuild = z.looseObject({ ...buildHead, queued_at: Timestamp });
export type CreatedBuild = z.infer<typeof CreatedBuild>;

export const BuildListItem = z.looseObject({
  id: Uuid,
  project_id: Uuid,
  status: BuildStatus,
  version_number: z.string(),
  completed_at: Timestamp.nullable().optional(),
});
export type BuildListItem = z.infer<typeof BuildListItem>;

export const BuildList = z.looseObject({
  builds: z.array(BuildListItem),
  total: z.number().int().nonnegative(),
  limit: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
});
export type BuildList = z.infer<typeof BuildList>;

export const Artifact = z.looseObject({
  id: Uuid,
  platform: z.string(),
  format: z.string(),
  file_name: z.string(),
  file_size: z.number().int().nonnegative(),
  checksum_sha256: z.string(),
  is_signed: z.boolean(),
  download_count: z.number().int().nonnegative(),
  created_at: Timestamp,
});
export type Artifact = z.infer<typeof Artifact>;

export const ArtifactList = z.looseObject({ artifacts: z.array(Artifact) });
export type ArtifactList = z.infer<typeof ArtifactList>;

/** Body form of the download answer; a 302 is turned into the same shape by the client. */
export const DownloadLink = z.looseObject({
  url: z.url(),
  expires_at: Timestamp.nullable().optional(),
});
export type DownloadLink = z.infer<typeof DownloadLink>;

export const CancelledBuild = z.looseObject({ id: Uuid, status: z.literal('cancelled') });
export type CancelledBuild = z.infer<typeof CancelledBuild>;

export const BuildUsage = z.looseObject({
  period: z.string().regex(/^\d{4}-\d{2}$/, 'expected YYYY-MM'),
  used: z.number().int(),
  limit: z.number().int(),
  remaining: z.number().int(),
  extra_builds: z.number().int(),
  reset_at: Timestamp,
});
export type BuildUsage = z.infer<typeof BuildUsage>;

export const TriggerResult = z.looseObject({ build_id: z.string(), status: z.string() });
export type TriggerResult = z.infer<typeof TriggerResult>;

// ---------------------------------------------------------------------------------------------
// Plugin activation

/**
 * What the vendor's license relay adds to an answer that means valid (docs/signed-ticket.md): the
 * text of a signed ticket. Taken as anything here and checked by the licensing library, which
 * refuses what does not verify (a value of another type included) without losing the answer.
 */
const SignedTicketText = z.unknown().optional();

export const ActivateResult = z.looseObject({
  success: z.boolean(),
  activations: z.number().int(),
  max_activations: z.number().int(),
  remaining: z.number().int(),
  /** Added by the vendor's license relay when the activation succeeded. */
  signed_ticket: SignedTicketText,
});
export type ActivateResult = z.infer<typeof ActivateResult>;

export const DeactivateResult = z.looseObject({
  success: z.boolean(),
  activations: z.number().int(),
  max_activations: z.number().int(),
  message: z.string(),
});
export type DeactivateResult = z.infer<typeof DeactivateResult>;

export const ValidateResult = z.looseObject({
  valid: z.boolean(),
  reason: ValidationReason.nullable().optional(),
  /** Added by the vendor's license relay when the answer is `valid: true`. */
  signed_ticket: SignedTicketText,
});
export type ValidateResult = z.infer<typeof ValidateResult>;

export const CodeStatus = z.looseObject({
  activations: z.number().int(),
  max_activations: z.number().int(),
  available: z.number().int(),
  is_revoked: z.boolean(),
});
export type CodeStatus = z.infer<typeof CodeStatus>;

export const GeneratedKey = z.looseObject({
  code: z.string(),
  key_type: z.string(),
  max_activations: z.number().int(),
  created_at: Timestamp,
});
export type GeneratedKey = z.infer<typeof GeneratedKey>;

export const ProjectKey = z.looseObject({
  code: z.string(),
  key_type: z.string(),
  max_activations: z.number().int(),
  current_activations: z.number().int(),
  is_revoked: z.boolean(),
  notes: z.string().nullable().optional(),
  created_at: Timestamp,
});
export type ProjectKey = z.infer<typeof ProjectKey>;

export const ProjectKeys = z.looseObject({ keys: z.array(ProjectKey) });
export type ProjectKeys = z.infer<typeof ProjectKeys>;

// ---------------------------------------------------------------------------------------------
// Code hosting, repositories, SDK

export const HostingConnection = z.looseObject({
  connected: z.boolean(),
  account_login: z.string().nullable().optional(),
  account_type: z.string().nullable().optional(),
  connected_at: Timestamp.nullable().optional(),
});
export type HostingConnection = z.infer<typeof HostingConnection>;

export const SuccessMessage = z.looseObject({ success: z.boolean(), message: z.string() });
export type SuccessMessage = z.infer<typeof SuccessMessage>;

export const DiscoverableRepo = z.looseObject({
  name: z.string(),
  full_name: z.string(),
  description: z.string().nullable().optional(),
  html_url: z.url(),
  topics: z.array(z.string()),
  default_branch: z.string(),
});
export type DiscoverableRepo = z.infer<typeof DiscoverableRepo>;

export const DiscoveredRepos = z.looseObject({ repos: z.array(DiscoverableRepo) });
export type DiscoveredRepos = z.infer<typeof DiscoveredRepos>;

export const LinkResult = z.looseObject({
  success: z.boolean(),
  project_id: Uuid,
  source_repo_url: z.url(),
});
export type LinkResult = z.infer<typeof LinkResult>;

export const UnlinkResult = z.looseObject({ success: z.boolean() });
export type UnlinkResult = z.infer<typeof UnlinkResult>;

export const CreatedProject = z.looseObject({
  project_id: Uuid,
  name: z.string(),
  source_repo_url: z.url(),
});
export type CreatedProject = z.infer<typeof CreatedProject>;

export const SdkDescriptor = z.looseObject({
  available: z.boolean(),
  version: z.string(),
  documentation_url: z.url(),
  distribution_type: z.string(),
  github_connected: z.boolean(),
});
export type SdkDescriptor = z.infer<typeof SdkDescriptor>;

export const SdkDownload = z.looseObject({ url: z.url(), version: z.string() });
export type SdkDownload = z.infer<typeof SdkDownload>;

// ---------------------------------------------------------------------------------------------
// Errors (section 7)

export const ErrorBody = z.looseObject({
  error: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

// ---------------------------------------------------------------------------------------------
// Requests

export const BuildFlags = z.looseObject({
  enableActivationKeys: z.boolean().optional(),
  enableCreatorMode: z.boolean().optional(),
  enableDebugMode: z.boolean().optional(),
});
export type BuildFlags = z.infer<typeof BuildFlags>;

export const CreateBuildRequest = z.looseObject({
  project_id: Uuid,
  project_version_id: z.string().min(1).optional(),
  platforms: z.array(Platform).min(1).optional(),
  formats: z.array(Format).min(1).optional(),
  release_type: ReleaseType.optional(),
  flags: BuildFlags.optional(),
  clean_build: z.boolean().optional(),
});
export type CreateBuildRequest = z.infer<typeof CreateBuildRequest>;

export const ListBuildsQuery = z.object({
  project_id: Uuid.optional(),
  status: BuildStatus.optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  offset: z.coerce.number().int().min(0).optional(),
});
export type ListBuildsQuery = z.infer<typeof ListBuildsQuery>;

export const TriggerRequest = z.looseObject({
  ref: z.string().min(1).optional(),
  commit_sha: z.string().regex(/^[0-9a-f]{7,64}$/i, 'expected a hex commit SHA').optional(),
  platforms: z.array(Platform).min(1).optional(),
  formats: z.array(Format).min(1).optional(),
  release_type: ReleaseType.optional(),
});
export type TriggerRequest = z.infer<typeof TriggerRequest>;

/**
 * Body of activate, deactivate and validate. `plugin_id` is the project id, when known;
 * `project_id` is what the vendor's license relay needs besides (it is not the service's field:
 * the relay takes it off before forwarding).
 */
export const ActivationRequest = z.looseObject({
  code: z.string(),
  machine_id: z.string().min(1),
  plugin_id: z.string().min(1).optional(),
  project_id: z.string().min(1).optional(),
});
export type ActivationRequest = z.infer<typeof ActivationRequest>;

export const GenerateRequest = z.looseObject({
  project_id: Uuid,
  max_activations: z.number().int().min(1).max(1000),
  notes: z.string().max(1000).optional(),
});
export type GenerateRequest = z.infer<typeof GenerateRequest>;

export const LinkRepoRequest = z.looseObject({
  project_id: Uuid,
  repo_full_name: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'expected owner/name'),
  branch: z.string().min(1),
});
export type LinkRepoRequest = z.infer<typeof LinkRepoRequest>;

export const UnlinkRepoRequest = z.looseObject({ project_id: Uuid });
export type UnlinkRepoRequest = z.infer<typeof UnlinkRepoRequest>;

export const CreateAndLinkRequest = z.looseObject({
  repo_full_name: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'expected owner/name'),
  name: z.string().min(1),
  description: z.string(),
  visibility: Visibility,
});
export type CreateAndLinkRequest = z.infer<typeof CreateAndLinkRequest>;

// ---------------------------------------------------------------------------------------------
// Webhooks (section 6)

export const WebhookEvent = z.enum(['build.queued', 'build.started', 'build.success', 'build.failed', 'build.cancelled']);
export type WebhookEvent = z.infer<typeof WebhookEvent>;

export const WebhookArtifact = z.looseObject({
  platform: z.string(),
  format: z.string(),
  file_name: z.string(),
  file_size: z.number().int(),
  download_url: z.string(),
});

export const WebhookBuild = z.looseObject({
  id: z.string(),
  project_id: z.string(),
  version: z.string(),
  build_number: z.number().int(),
  status: z.string(),
  platforms: z.array(z.string()),
  formats: z.array(z.string()),
  duration_seconds: z.number().int().nullable().optional(),
  artifacts: z.array(WebhookArtifact).optional(),
});

export const WebhookFailedBuild = z.looseObject({
  id: z.string(),
  status: z.string(),
  error_message: z.string(),
  error_logs: z.string(),
  failed_at_step: z.string(),
});

export const DetailedWebhookPayload = z.discriminatedUnion('event', [
  z.looseObject({ event: z.literal('build.failed'), timestamp: Timestamp, build: WebhookFailedBuild }),
  z.looseObject({
    event: z.enum(['build.queued', 'build.started', 'build.success', 'build.cancelled']),
    timestamp: Timestamp,
    build: WebhookBuild,
  }),
]);

export const FlatWebhookPayload = z.looseObject({
  event: z.literal('build.status'),
  build_id: z.string(),
  status: z.string(),
  project_id: z.string(),
  version: z.string(),
  timestamp: Timestamp,
});
export type FlatWebhookPayload = z.infer<typeof FlatWebhookPayload>;
export type DetailedWebhookPayload = z.infer<typeof DetailedWebhookPayload>;

/** Either payload form, discriminated on `event` (`build.status` is the flat form). */
export const WebhookPayload = z.discriminatedUnion('event', [DetailedWebhookPayload, FlatWebhookPayload]);
export type WebhookPayload = z.infer<typeof WebhookPayload>;
