import { createHmac, timingSafeEqual } from 'node:crypto';
import { ConfigError, WebhookVerificationError } from './errors.js';
import { WebhookPayload } from './schemas.js';

/** Node's `req.headers`, a fetch `Headers`, or any name → value record (names matched case-insensitively). */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The raw request body exactly as received (not re-serialised JSON). */
  body: string | Uint8Array;
  headers: WebhookHeaders;
  /** The project's webhook secret; several during a rotation. */
  secret: string | readonly string[];
  /** Allowed distance between the signed timestamp and now, both directions. Default 300. */
  toleranceSeconds?: number;
  /**
   * Accept the flat payload form signed over the body alone (no timestamp in the signed string).
   * Off by default: such a signature can be replayed, so freshness then rests on the timestamp
   * header when present, else on the payload's own `timestamp` field.
   */
  allowBodyOnlySignature?: boolean;
  /** Clock in ms since the epoch. Default `Date.now`. */
  now?: () => number;
}

export interface VerifiedWebhook {
  payload: WebhookPayload;
  /** `flat` for `event: "build.status"` deliveries, `detailed` otherwise. */
  form: 'detailed' | 'flat';
  /** What the signature covered. `body` only with `allowBodyOnlySignature`. */
  signedOver: 'timestamp_and_body' | 'body';
  /** Unix seconds the delivery was checked against. */
  timestamp: number;
}

export interface SignWebhookOptions {
  /** Unix seconds to sign; default the current time from `now`. */
  timestamp?: number;
  /** Sign the body alone and omit the timestamp header (the flat-form variant). */
  bodyOnly?: boolean;
  now?: () => number;
}

export type WebhookSignatureHeaders = {
  'x-service-signature': string;
  'x-service-timestamp'?: string;
};

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function hmac(secret: string, ...parts: (string | Uint8Array)[]): Buffer {
  const h = createHmac('sha256', secret);
  for (const part of parts) h.update(part);
  return h.digest();
}

function matches(expected: Buffer, secrets: readonly string[], ...parts: (string | Uint8Array)[]): boolean {
  let ok = false;
  // Every secret is tried (no early exit) so timing does not reveal which one matched.
  for (const secret of secrets) {
    const actual = hmac(secret, ...parts);
    if (actual.length === expected.length && timingSafeEqual(actual, expected)) ok = true;
  }
  return ok;
}

function checkFreshness(timestamp: number, toleranceSeconds: number, nowMs: number): void {
  const now = Math.floor(nowMs / 1000);
  if (now - timestamp > toleranceSeconds) {
    throw new WebhookVerificationError(
      'stale',
      `webhook timestamp is ${now - timestamp} s old (tolerance ${toleranceSeconds} s); this may be a replay, so reject it, or check the receiver's clock`,
    );
  }
  if (timestamp - now > toleranceSeconds) {
    throw new WebhookVerificationError(
      'future',
      `webhook timestamp is ${timestamp - now} s in the future (tolerance ${toleranceSeconds} s); check the receiver's clock`,
    );
  }
}

function parsePayload(body: string | Uint8Array): WebhookPayload {
  let data: unknown;
  try {
    data = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
  } catch (cause) {
    throw new WebhookVerificationError('bad_payload', 'webhook body is not JSON; answer the sender with 400', cause);
  }
  const result = WebhookPayload.safeParse(data);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue ? issue.path.map(String).join('.') : '';
    throw new WebhookVerificationError(
      'bad_payload',
      `webhook payload does not match either documented form: field "${path || '(body)'}": ${issue?.message ?? 'invalid'}; answer the sender with 400`,
      result.error,
    );
  }
  return result.data;
}

/**
 * Verifies a webhook delivery and parses its payload. `X-Service-Signature` must be `sha256=` +
 * hex HMAC-SHA256 of `timestamp + "." + rawBody` keyed by the secret, `X-Service-Timestamp`
 * within `toleranceSeconds` of now. Throws `WebhookVerificationError` with `code` one of
 * `missing_header`, `bad_signature`, `bad_timestamp`, `stale`, `future`, `bad_payload`.
 *
 * @example
 * import { createServer } from 'node:http';
 * createServer(async (req, res) => {
 *   const chunks = []; for await (const c of req) chunks.push(c);
 *   try {
 *     const { payload } = verifyWebhook({ body: Buffer.concat(chunks), headers: req.headers, secret: process.env.WEBHOOK_SECRET });
 *     if (!dedupe.isDuplicate(payload)) handle(payload);
 *     res.writeHead(204).end();
 *   } catch (e) {
 *     res.writeHead(isWebhookVerificationError(e) ? 400 : 500).end();
 *   }
 * });
 */
export function verifyWebhook(options: VerifyWebhookOptions): VerifiedWebhook {
  const secrets = (typeof options.secret === 'string' ? [options.secret] : [...(options.secret ?? [])]).filter(
    (s): s is string => typeof s === 'string' && s.length > 0,
  );
  if (secrets.length === 0) throw new ConfigError('verifyWebhook needs the webhook secret (a non-empty string)', 'secret');
  const tolerance = options.toleranceSeconds ?? 300;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new ConfigError(`toleranceSeconds must be a number >= 0 (got ${String(tolerance)})`, 'toleranceSeconds');
  }
  const nowMs = (options.now ?? Date.now)();
  const body = options.body;
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    throw new ConfigError('body must be the raw request body (string or Buffer), not parsed JSON', 'body');
  }

  const signatureHeader = headerOf(options.headers, 'x-service-signature');
  if (!signatureHeader) {
    throw new WebhookVerificationError('missing_header', 'webhook has no X-Service-Signature header; reject it (it was not signed by the service)');
  }
  const match = SIGNATURE.exec(signatureHeader.trim());
  if (!match?.[1]) {
    throw new WebhookVerificationError('bad_signature', 'X-Service-Signature is not of the form sha256=<64 hex digits>; reject the delivery');
  }
  const expected = Buffer.from(match[1], 'hex');

  const timestampHeader = headerOf(options.headers, 'x-service-timestamp')?.trim();
  let timestamp: number | undefined;
  if (timestampHeader !== undefined && timestampHeader !== '') {
    if (!/^\d{1,12}$/.test(timestampHeader)) {
      throw new WebhookVerificationError('bad_timestamp', 'X-Service-Timestamp is not Unix seconds; reject the delivery');
    }
    timestamp = Number(timestampHeader);
    if (matches(expected, secrets, timestampHeader, '.', body)) {
      checkFreshness(timestamp, tolerance, nowMs);
      const payload = parsePayload(body);
      return { payload, form: payload.event === 'build.status' ? 'flat' : 'detailed', signedOver: 'timestamp_and_body', timestamp };
    }
  }

  if (options.allowBodyOnlySignature && matches(expected, secrets, body)) {
    const payload = parsePayload(body);
    if (payload.event !== 'build.status') {
      throw new WebhookVerificationError(
        'bad_signature',
        'a signature over the body alone is accepted only for the flat payload form; detailed deliveries must sign timestamp + "." + body',
      );
    }
    let checked = timestamp;
    if (checked === undefined) {
      const parsed = Date.parse(payload.timestamp);
      if (Number.isNaN(parsed)) {
        throw new WebhookVerificationError('bad_timestamp', 'body-only webhook has neither X-Service-Timestamp nor an ISO timestamp in its payload; reject it');
      }
      checked = Math.floor(parsed / 1000);
    }
    checkFreshness(checked, tolerance, nowMs);
    return { payload, form: 'flat', signedOver: 'body', timestamp: checked };
  }

  if (timestamp === undefined) {
    throw new WebhookVerificationError(
      'missing_header',
      'webhook has no X-Service-Timestamp header; reject it, or pass allowBodyOnlySignature: true if the sender signs the flat form over the body alone',
    );
  }
  throw new WebhookVerificationError(
    'bad_signature',
    'webhook signature does not match; check the webhook secret and that the raw, unmodified body is verified' +
      (options.allowBodyOnlySignature ? '' : ' (for flat deliveries signed over the body alone, pass allowBodyOnlySignature: true)'),
  );
}

/**
 * Signature headers for a webhook delivery, as the service sends them: `X-Service-Signature`
 * (`sha256=` + hex HMAC-SHA256 of `timestamp.body`) and `X-Service-Timestamp` (Unix seconds).
 * With `bodyOnly` the body alone is signed and no timestamp header is produced (the flat variant).
 *
 * @example
 * const body = JSON.stringify(payload);
 * const headers = signWebhook(body, secret);
 * await request(receiverUrl, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
 */
export function signWebhook(body: string | Uint8Array, secret: string, options: SignWebhookOptions = {}): WebhookSignatureHeaders {
  if (typeof secret !== 'string' || secret === '') throw new ConfigError('signWebhook needs the webhook secret (a non-empty string)', 'secret');
  if (options.bodyOnly) return { 'x-service-signature': `sha256=${hmac(secret, body).toString('hex')}` };
  const timestamp = options.timestamp ?? Math.floor((options.now ?? Date.now)() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new ConfigError(`timestamp must be whole Unix seconds (got ${String(timestamp)})`, 'timestamp');
  }
  const ts = String(timestamp);
  return {
    'x-service-signature': `sha256=${hmac(secret, ts, '.', body).toString('hex')}`,
    'x-service-timestamp': ts,
  };
}
