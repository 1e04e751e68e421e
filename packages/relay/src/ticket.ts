import { codeHint } from '@plugin-license/api/code-hint';
import { formatSignedTicket } from '@plugin-license/api/signed-ticket';
import type { SigningKey } from './keys.js';

const DAY_S = 86_400;

/**
 * The signed ticket the relay hands over when the service said a code is valid for a machine
 * (the format is `@plugin-license/api/signed-ticket`'s): signed by `key`, `source` online,
 * `issued_at` now on the relay's clock, `valid_until` `ticketDays` later, the code only as its
 * hint. The one place the relay states a license.
 *
 * @example
 * const text = await issueTicket({ key, app: 'acme-audio', projectId, machineId: 'm1_…', code, nowMs: Date.now(), ticketDays: 30 });
 */
export function issueTicket(o: { key: SigningKey; app: string; projectId: string; machineId: string; code: string; nowMs: number; ticketDays: number }): Promise<string> {
  const issuedAt = Math.floor(o.nowMs / 1000);
  return formatSignedTicket(
    {
      app: o.app,
      project_id: o.projectId,
      machine_id: o.machineId,
      code_hint: codeHint(o.code),
      source: 'online',
      issued_at: issuedAt,
      valid_until: issuedAt + o.ticketDays * DAY_S,
    },
    o.key.kid,
    (message) => o.key.sign(message),
  );
}
