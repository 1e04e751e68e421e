export * from './schemas.js';
export { ServiceClient } from './service-client.js';
export type { ServiceClientOptions, ListBuildsParams, TriggerAuth } from './service-client.js';
export type { CallOptions } from './transport.js';
export { Deadline } from './deadline.js';
export type { DeadlineOptions } from './deadline.js';
export type { RetryOptions } from './retry-policy.js';
export { closeDispatcher, createDispatcher, connectionRoute, checkProxyUrl, PROXY_VARIABLES, NO_PROXY_VARIABLES } from './dispatcher.js';
export type { ConnectionOptions } from './dispatcher.js';
export { createCarrier } from './carrier.js';
export type { Carrier, CarriedRequest, CarriedAnswer, HeaderValues } from './carrier.js';
export { parseRateLimit, parseRetryAfterMs, serviceWaitMs, MAX_SERVICE_WAIT_MS } from './rate-limit.js';
export type { RateLimit } from './rate-limit.js';
export {
  ApiError,
  ServiceError,
  NetworkError,
  TimeoutError,
  SchemaError,
  ConfigError,
  WebhookVerificationError,
  isApiError,
  isServiceError,
  isNetworkError,
  isTimeoutError,
  isSchemaError,
  isConfigError,
  isWebhookVerificationError,
} from './errors.js';
export type { ServiceErrorCode, SchemaIssue, WebhookVerificationReason } from './errors.js';
export { codeHint } from './code-hint.js';
export { assertBaseUrl } from './base-url.js';
export { verifyWebhook, signWebhook } from './webhooks.js';
export type { VerifyWebhookOptions, VerifiedWebhook, SignWebhookOptions, WebhookSignatureHeaders, WebhookHeaders } from './webhooks.js';
export { WebhookDeduplicator } from './webhook-deduplicator.js';
export type { WebhookDeduplicatorOptions } from './webhook-deduplicator.js';
export { signTrigger } from './trigger-signature.js';
// The rename rule is a file-system rule: it lives in @plugin-license/fs, and stays exported here.
export { renameRetrying, renameRetryingSync, RENAME_RETRY_MS } from '@plugin-license/fs';
export type { RenameEnvironment } from '@plugin-license/fs';
