import { MAX_SIGNED_TICKET_BYTES, parseSignedTicket } from '@plugin-license/api/signed-ticket';
import { LicenseError } from './errors.js';
import type { LicenseStatus } from './license-status.js';
import { judgeLicense, verifySignedTicket, type SignedTicketFields, type TicketKey } from './signed-ticket.js';
import type { SmallFileRead } from './small-file.js';
import { TICKET_CLOCK_SLACK_S } from './ticket.js';

/**
 * The signed ticket on the library's side (docs/signed-ticket.md, "The client side"): what an
 * answer handed over is checked before it is stored ({@link checkSignedAnswer}), and a license's
 * status is read by the reader's rule ({@link signedStatus}), so `License`, the agent, the CLI,
 * `doctor` and the license manager say what a plugin with the same keys decides. The rule itself
 * is `judgeLicense`'s (signed-ticket.ts); this file only feeds it.
 */

/** What the reader's rule needs besides a status: the signed ticket as stored and whose rule it is. */
export interface SignedContext {
  /** The signed ticket as read from disk (`LicenseStore.readSigned`), undefined when none is kept here. */
  read: SmallFileRead | undefined;
  /** The vendor's public keys (`ticket_keys`); none: the status stays the service's word, as before. */
  keys: readonly TicketKey[];
  /** The namespace. */
  app: string;
  /** This computer's machine id as sent to the service (`m1_…`). */
  machineId: string;
}

/** The text of a signed ticket as read (a file read, or undefined), or null when there is none to show. */
export function signedTicketText(read: SmallFileRead | undefined): string | null {
  return read?.kind === 'bytes' ? read.bytes.toString('utf8') : null;
}

/**
 * A license's status as the reader's rule reads it: `signedTicket` set from what is stored, and,
 * with keys, `valid`/`reason` by `judgeLicense` over the status's own verdict and that signed
 * ticket (a valid status without a signed ticket that verifies is `unsigned`, or the signed
 * ticket's reason: `cache_invalid`, `grace_expired`, `clock_tampered`). `t` in epoch ms.
 *
 * @example
 * const status = signedStatus(statusOf(…), { read: store.readSigned(), keys, app, machineId }, Date.now());
 */
export function signedStatus(status: LicenseStatus, ctx: SignedContext | undefined, t: number): LicenseStatus {
  const signedTicket = signedTicketText(ctx?.read);
  if (ctx === undefined || (signedTicket === status.signedTicket && ctx.keys.length === 0)) return status;
  let judged: Pick<LicenseStatus, 'valid' | 'reason'> = status;
  if (ctx.keys.length > 0 && status.valid) {
    const v = judgeLicense({ answer: { verdict: 'valid' as const, reason: null }, signed: ctx.read, keys: ctx.keys, app: ctx.app, projectId: status.projectId, machineId: ctx.machineId, now: Math.floor(t / 1000) });
    judged = v.verdict === 'valid' ? { valid: true, reason: null } : { valid: false, reason: v.reason };
  }
  return Object.freeze({ ...status, ...judged, signedTicket });
}

/**
 * The times a stored signed ticket's verdict turns at, in epoch ms, for a holder of a status that
 * recomputes it only when something moves (`License.check()`, a hot path that parses nothing):
 * `from` (`issued_at - 3600`) and `until` (`valid_until`); undefined when there is nothing to time
 * (no keys, no ticket that parses). The verdict itself is `judgeLicense`'s, asked again when `t`
 * crosses one of them ({@link signedPhase}).
 */
export function signedWindow(read: SmallFileRead | undefined, keys: readonly TicketKey[]): { from: number; until: number } | undefined {
  if (keys.length === 0 || read?.kind !== 'bytes') return undefined;
  const parsed = parseSignedTicket(read.bytes);
  if (!parsed.ok) return undefined;
  const { issued_at: issued, valid_until: until } = parsed.ticket.fields;
  return { from: (issued - TICKET_CLOCK_SLACK_S) * 1000, until: until * 1000 + 999 };
}

/** Where `t` (epoch ms) stands in a {@link signedWindow}: 0 before it, 1 within, 2 after; -1 without one. */
export function signedPhase(window: { from: number; until: number } | undefined, t: number): number {
  if (window === undefined) return -1;
  return t < window.from ? 0 : t > window.until ? 2 : 1;
}

/** Whose signed ticket an answer must carry: this computer, this project, the configured keys. */
export interface SignedAnswerReader {
  keys: readonly TicketKey[];
  app: string;
  projectId: string;
  machineId: string;
  /** Unix seconds. */
  now: number;
  /** Who handed it over, for the words: `the license relay`, `the offline response`. */
  from: string;
}

/** What an answer's signed ticket is worth: the text to store, nothing to store, or the refusal to report. */
export type SignedAnswer = { kind: 'verified'; text: string; fields: SignedTicketFields } | { kind: 'none' } | { kind: 'refused'; error: LicenseError };

/**
 * Checks the signed ticket an answer carries (a relay's `signed_ticket`, an offline response's)
 * before anything is stored: with no keys configured, nothing is stored (`none`: nothing to
 * verify it with, and nothing here needs it); none in the answer is `none`; otherwise it must be a
 * text of at most 4 KB that `verifySignedTicket` accepts for this computer, project and time,
 * else `refused` with a `signed_ticket_refused` error naming the signer's key id and the ids this
 * program trusts. Never throws.
 *
 * @example
 * const signed = checkSignedAnswer(result.signed_ticket, { keys, app, projectId, machineId, now, from: 'the license relay' });
 * if (signed.kind === 'verified') await store.update(mutator, { signed: signed.text });
 */
export function checkSignedAnswer(value: unknown, reader: SignedAnswerReader): SignedAnswer {
  if (reader.keys.length === 0 || value === undefined || value === null) return { kind: 'none' };
  const trusted = reader.keys.map((k) => k.kid);
  let check: ReturnType<typeof verifySignedTicket>;
  if (typeof value !== 'string') check = { ok: false, reason: 'cache_invalid', problem: `its signed_ticket is a ${Array.isArray(value) ? 'list' : typeof value}, not the text of one` };
  else if (Buffer.byteLength(value, 'utf8') > MAX_SIGNED_TICKET_BYTES) check = { ok: false, reason: 'cache_invalid', problem: `its signed ticket is over ${MAX_SIGNED_TICKET_BYTES} bytes` };
  else check = verifySignedTicket(value, reader);
  if (check.ok) return { kind: 'verified', text: value as string, fields: check.fields };
  const kid = check.kid;
  const signer = kid === undefined ? 'by a key whose id could not be read' : `by key ${kid}`;
  const unknownKey = kid !== undefined && !trusted.includes(kid);
  const what = unknownKey ? `a ticket signed ${signer}, which is not one this program trusts` : `a ticket signed ${signer} that does not stand here: ${check.problem}`;
  const message = `${reader.from} answered with ${what} (trusted: ${trusted.join(', ')}); it was not stored, so plugins built with the vendor's keys will not play on it. ${
    unknownKey ? "The vendor's relay and this program must share a key: the vendor checks the relay's signing key (RELAY_SIGNING_KEY) against the keys built in here (ticket_keys)" : check.reason === 'clock_tampered' ? "Check this computer's clock (automatic date and time), then try again" : 'Try again; if it stays, the vendor must check the relay'
  }`;
  return { kind: 'refused', error: new LicenseError('signed_ticket_refused', message, { ...(kid === undefined ? {} : { kid }), trustedKids: trusted }) };
}

/** What a stored signed ticket says, for support (`doctor`) and the license manager. */
export interface SignedTicketSummary {
  /** The signer's key id, when line 2 could be read. */
  kid: string | null;
  /** Its `valid_until`, when line 1 could be read. */
  validUntil: Date | null;
  /** `online` (a relay) or `offline` (a signed offline response), when line 1 could be read. */
  source: 'online' | 'offline' | null;
  /** True when it verifies with the keys for this computer, project and time. */
  verifies: boolean;
  /** Why not, in words (null when it verifies). */
  problem: string | null;
}

/**
 * A stored signed ticket's facts and verdict, for `doctor` and the license manager's "signed by
 * the vendor until DATE": who signed it (kid), until when, and whether it stands here
 * (`verifySignedTicket`, whose words say why not). Null when there is none.
 *
 * @example
 * const s = summarizeSignedTicket(license.signedTicket, { keys, app, projectId, machineId, now });
 * if (s?.verifies) console.log(`signed by the vendor until ${s.validUntil?.toLocaleDateString()}`);
 */
export function summarizeSignedTicket(text: string | null | undefined, reader: Omit<SignedAnswerReader, 'from'>): SignedTicketSummary | null {
  if (text === null || text === undefined) return null;
  const parsed = parseSignedTicket(text);
  const fields = parsed.ok ? parsed.ticket.fields : undefined;
  const kid = parsed.ok ? parsed.ticket.kid : (parsed.kid ?? null);
  const check = reader.keys.length === 0 ? { ok: false as const, problem: 'no ticket keys are configured here to verify it with' } : verifySignedTicket(text, reader);
  return {
    kid,
    validUntil: fields === undefined ? null : new Date(fields.valid_until * 1000),
    source: fields?.source ?? null,
    verifies: check.ok,
    problem: check.ok ? null : check.problem,
  };
}
