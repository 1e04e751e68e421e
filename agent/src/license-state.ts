import * as z from 'zod';
import type { LicenseStatus, Reason } from '@plugin-license/licensing';

/** Why a license is not valid; null when it is (the licensing library's `Reason`). */
export type LicenseReason = Reason;

/**
 * `LicenseState` as `AgentClient` returns it: the licensing library's `LicenseStatus`, the same
 * type a `License` gives in-process, so a companion app handles both alike.
 */
export type LicenseState = LicenseStatus;

/** `LicenseState` exactly as it crosses the socket (protocol 1, snake_case). */
export const LicenseStateWire = z.looseObject({
  project_id: z.string(),
  valid: z.boolean(),
  reason: z.string().nullable(),
  source: z.enum(['online', 'cache', 'offline']),
  code_hint: z.string().nullable(),
  activations: z.number().nullable(),
  max_activations: z.number().nullable(),
  validated_at: z.string().nullable(),
  /** Added in protocol 1 (additive): when the service last answered, yes or no. Older agents omit it. */
  checked_at: z.string().nullable().optional(),
  grace_until: z.string().nullable(),
  next_check_at: z.string().nullable(),
  /**
   * Added in protocol 1 (additive): the text of the project's signed ticket, exactly as stored
   * (docs/signed-ticket.md), only when one is; a plugin with the vendor's keys verifies the
   * agent's "valid" with it, without a second file read.
   */
  signed_ticket: z.string().optional(),
});
export type LicenseStateWire = z.infer<typeof LicenseStateWire>;

// The one place where wire names and TypeScript names meet.

/** Agent side: a licensing status as sent on the socket. */
export function toWireState(status: LicenseStatus): LicenseStateWire {
  return {
    project_id: status.projectId,
    valid: status.valid,
    reason: status.valid ? null : (status.reason ?? 'not_activated'),
    source: status.source,
    code_hint: status.codeHint ?? null,
    activations: status.activations ?? null,
    max_activations: status.maxActivations ?? null,
    validated_at: iso(status.validatedAt),
    checked_at: iso(status.checkedAt),
    grace_until: iso(status.graceUntil),
    next_check_at: iso(status.nextCheckAt),
    ...(status.signedTicket === null ? {} : { signed_ticket: status.signedTicket }),
  };
}

/** Client side: a wire state as typed values. Throws a zod error on a malformed state. */
export function fromWireState(value: unknown): LicenseState {
  const w = LicenseStateWire.parse(value);
  return {
    projectId: w.project_id,
    valid: w.valid,
    reason: w.reason as LicenseReason | null,
    source: w.source,
    codeHint: w.code_hint,
    activations: w.activations,
    maxActivations: w.max_activations,
    validatedAt: date(w.validated_at),
    checkedAt: date(w.checked_at === undefined ? w.validated_at : w.checked_at),
    graceUntil: date(w.grace_until),
    nextCheckAt: date(w.next_check_at),
    signedTicket: w.signed_ticket ?? null,
  };
}

// Wire states are immutable once built; `check` answers the same object until it changes, so its
// JSON text is kept with it rather than serialized on every request.
const jsonOf = new WeakMap<object, string>();

/** The JSON text of a wire state (memoized per object). */
export function wireJson(value: object): string {
  let json = jsonOf.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    jsonOf.set(value, json);
  }
  return json;
}

/** The memoized JSON text of an object, if it has one. */
export function cachedJson(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? jsonOf.get(value) : undefined;
}

/** True when two wire states differ in what subscribers act on (timestamps alone don't count; a new signed ticket does: plugins verify with it). */
export function stateChanged(a: LicenseStateWire | undefined, b: LicenseStateWire): boolean {
  if (!a) return true;
  return (
    a.valid !== b.valid ||
    a.reason !== b.reason ||
    a.source !== b.source ||
    a.code_hint !== b.code_hint ||
    a.activations !== b.activations ||
    a.max_activations !== b.max_activations ||
    a.signed_ticket !== b.signed_ticket
  );
}

function iso(d: Date | null | undefined): string | null {
  return d && !Number.isNaN(d.getTime()) ? d.toISOString() : null;
}

function date(s: string | null): Date | null {
  return s === null ? null : new Date(s);
}
