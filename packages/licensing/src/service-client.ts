import { isApiError, ServiceClient, type ServiceClientOptions } from '@plugin-license/api';
import { LicenseError } from './errors.js';
import { resolvePolicy, type LicensePolicy } from './policy.js';

type Dispatcher = NonNullable<ServiceClientOptions['dispatcher']>;

export interface LicenseClientOptions {
  baseUrl: string;
  token?: string;
  dispatcher?: Dispatcher;
  policy?: Partial<LicensePolicy>;
  /** A proxy URL, or `false` for none; default the standard proxy variables (HTTPS_PROXY, NO_PROXY, …). */
  proxy?: string | false;
  /** PEM certificate(s) trusted in addition to Node's default roots (a private CA). */
  ca?: string | Buffer | Array<string | Buffer>;
}

/**
 * The service client a `License` makes for itself, for hosts that share one among many licenses
 * (one keep-alive pool, one place that sees the rate-limit headers): the policy's request
 * time-out, one quick retry inside a call, and nothing longer, since the policy's back-off handles
 * outages between calls.
 *
 * @example
 * const client = createLicenseClient({ baseUrl: 'https://licenses.example/functions/v1' });
 * const a = new License({ projectId: idA, baseUrl, client });
 * const b = new License({ projectId: idB, baseUrl, client });
 */
export function createLicenseClient(options: LicenseClientOptions): ServiceClient {
  const policy = resolvePolicy(options.policy);
  const timeoutMs = Math.max(1, policy.requestTimeoutMs);
  try {
    return new ServiceClient({
      baseUrl: options.baseUrl,
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
      ...(options.proxy === undefined ? {} : { proxy: options.proxy }),
      ...(options.ca === undefined ? {} : { ca: options.ca }),
      timeoutMs,
      // A wait the service asks for is the schedule's (retryAfterFailure), not the call's.
      retry: { retries: 1, minDelayMs: 200, maxDelayMs: 1000, deadlineMs: timeoutMs, maxServiceWaitMs: 1000 },
    });
  } catch (e) {
    if (!isApiError(e)) throw e;
    throw new LicenseError('invalid_argument', e.message, { cause: e });
  }
}
