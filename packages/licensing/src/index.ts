export { License } from './license.js';
export type { LicenseOptions, CallOptions, ValidateOptions } from './license.js';
export type { LicenseStatus, Reason, CodeStatus } from './license-status.js';
export { listIntentProjects } from './intent-file.js';
export { askServiceAbout, readCachedStatus } from './inspect.js';
export type { CachedLicense, ReadCachedStatusOptions, ServiceView } from './inspect.js';
export { LicenseError, isLicenseError } from './errors.js';
export type { LicenseErrorCode, LicenseErrorOptions } from './errors.js';
export { DEFAULT_POLICY, resolvePolicy } from './policy.js';
export { createLicenseClient } from './service-client.js';
export type { LicenseClientOptions } from './service-client.js';
export type { LicensePolicy } from './policy.js';
export { backoffDelay, revalidationDelay, retryAfterFailure, earliestRequestAt, revalidationDueAt, loadCheckDue } from './schedule.js';
export type { Random, ScheduleState, LoadCheckState } from './schedule.js';
export { getMachineId } from './machine-id.js';
export type { MachineId, MachineIdSource, MachineIdOptions, RawMachineIdProvider } from './machine-id.js';
export { resolvePaths, userHome, xdgDir, moveDataIntoGroup, resolveNamespace, listCachedProjects, cacheFilePath, ticketPath, signedTicketPath, assertProjectId, DEFAULT_NAMESPACE } from './paths.js';
export { judgeTicket, encodeTicket, ticketOf, ticketProjectId, writeTicket, removeTicket, readTicketFile, MAX_TICKET_BYTES, TICKET_CLOCK_SLACK_S } from './ticket.js';
// The signed ticket (docs/signed-ticket.md): keys, writing, verifying, and the reader's one rule.
export {
  parseTicketKeys,
  encodeSignedTicket,
  verifySignedTicket,
  verifyEd25519,
  ed25519SignatureProblem,
  ed25519KeyProblem,
  judgeLicense,
  judgeLicenseFiles,
  readSignedTicketFile,
  signedTicketFileOf,
  SIGNED_TICKET_CONTEXT,
  MAX_SIGNED_TICKET_BYTES,
} from './signed-ticket.js';
// The client side of signed tickets: an answer's checked before it is stored, a status read by the rule, a stored one summarized.
export { checkSignedAnswer, signedStatus, summarizeSignedTicket, signedTicketText } from './signed-status.js';
export type { SignedAnswer, SignedAnswerReader, SignedContext, SignedTicketSummary } from './signed-status.js';
export type { TicketKey, SignedTicketFields, SignedTicketClaims, SignedTicketCheck, SignedTicketReader, SignedVerdict, LicenseAnswer, SignedTicketInput } from './signed-ticket.js';
export type { TicketFields, TicketVerdict, JudgeOptions, TicketContext } from './ticket.js';
export { readSmallFile } from './small-file.js';
// The one rule of "the user's own" (owner, not writable by others): the agent's socket folder and the ticket's folders.
export { notOwn } from './own-folder.js';
export { acquireFileLock } from './file-lock.js';
export type { FileLockOptions } from './file-lock.js';
export type { SmallFileRead } from './small-file.js';
export { ticketKeyOf, normalizeRawId, machineIdOf } from './machine-id.js';
export type { PathOptions, LicensePaths } from './paths.js';
export { normalizeCode, normalizeBaseUrl } from './input.js';
export { APP_GROUP_PATTERN, checkAppGroup, chooseAppGroup } from './app-group.js';
export type { AppGroupSource } from './app-group.js';
export { resolveConfig, relayKeysProblem } from './config.js';
export type { ConfigFlags, ConfigSource, ConfigValue, ResolvedConfig, ResolveOptions } from './config.js';
export {
  createOfflineRequest,
  answerOfflineRequest,
  importOfflineResponse,
  releaseOffline,
  confirmOfflineRelease,
  DEFAULT_OFFLINE_VALID_DAYS,
} from './offline.js';
export type { OfflineMachineOptions, OfflineRequestOptions, OfflineImportOptions, OfflineServiceOptions, OfflineAnswerOptions, OfflineReleaseResult } from './offline.js';
export {
  parseOfflineDocument,
  offlineJson,
  offlineText,
  offlineFileName,
  canonicalResponseBytes,
  generateOfflineKeyPair,
  keyIdOf,
  SIGNED_PREFIX,
  OFFLINE_VERSION,
  MAX_OFFLINE_FILE_BYTES,
} from './offline-format.js';
export type { OfflineRequest, OfflineResponse, OfflineRelease, OfflineDocument, OfflineDocumentType, OfflineSignature, OfflineKeyPair } from './offline-format.js';
export { DEFAULT_OFFLINE_MAX_DAYS } from './config.js';
export { offlineDir } from './paths.js';
// The one atomic replace of a file we own, kept in @plugin-license/fs and re-exported here.
export { writeFileAtomic } from '@plugin-license/fs';
export { executableInfo, chooseNamespace, hostTarget, versionLine, appArgument, agentCommandHint, programName, EXECUTABLE_INFO_ASSET, productName, productNames, productNameProblem, projectNameError, readBakedProjects, MAX_PRODUCT_NAME_LENGTH } from './executable.js';
export type { ExecutableInfo, ChosenNamespace, NamedProject, GivenProject } from './executable.js';
// The program's folder, shared by a vendor's product installers: product ids and the names it reserves.
export { productIdProblem, productIdOf, programFile, reservedNameConflict, EARLIER_PRODUCT_ID, MAX_PRODUCT_ID_LENGTH } from './program-folder.js';
export type { InstallerPlatform } from './program-folder.js';
// The one rename rule lives in @plugin-license/fs (the emulator and the CLI use it too); re-exported here.
export { renameRetrying, renameRetryingSync, RENAME_RETRY_MS } from '@plugin-license/fs';
export type { RenameEnvironment } from '@plugin-license/fs';
