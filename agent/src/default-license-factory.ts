import { License, type LicensePolicy } from '@plugin-license/licensing';
import type { LicenseFactory, LicenseHandle } from './license-handle.js';

/** Creates `@plugin-license/licensing` `License` objects for the agent. */
export function defaultLicenseFactory(policy?: Partial<LicensePolicy>): LicenseFactory {
  return (o) =>
    new License({
      projectId: o.projectId,
      baseUrl: o.baseUrl,
      namespace: o.namespace,
      ...(o.home === undefined ? {} : { home: o.home }),
      ...(o.token === undefined ? {} : { token: o.token }),
      ...(o.client === undefined ? {} : { client: o.client }),
      ...(policy === undefined ? {} : { policy }),
      now: o.now,
    }) satisfies LicenseHandle;
}
