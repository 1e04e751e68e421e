import { createHmac, timingSafeEqual } from 'node:crypto';
import { dirname } from 'node:path';
import { codeHint } from '@plugin-license/api';
import { jsonIntegersOnly, ticketProjectId } from '@plugin-license/api/signed-ticket';
import type { StoredLicense } from './cache-file.js';
import { ensureDir, removeFileDurably, writeFileAtomic } from '@plugin-license/fs';
import { checkOwnFolder, repairOwnFolder } from './own-folder.js';
import { readSmallFile, type SmallFileRead } from './small-file.js';
import type { Reason } from './license-status.js';
import { ticketKeyOf } from './machine-id.js';
import type { LicensePolicy } from './policy.js';
import { bucketOf, EXPIRED, TAMPERED, validUntilOf } from './status-rules.js';

/**
 * The license ticket (docs/license-ticket.md): one small file per project that a plugin verifies by
 * itself, written by the library in the same step as the license state. This module is the one
 * writer's encoder and the one reader's rules of this language.
 */

/** Largest ticket a reader takes (the contract's 4 KB); a larger file is not one. */
export const MAX_TICKET_BYTES = 4096;
/** A reader's clock may be this far before `issued_at` (seconds) before it is `clock_tampered`. */
export const TICKET_CLOCK_SLACK_S = 3600;

// The one rule of project ids in tickets (ASCII letters folded) lives with the signed ticket's format.
export { ticketProjectId };

/** The reasons a ticket says (never `unsigned`: the ticket is written as before signed tickets, for the plugins that read only it). */
type TicketReason = Exclude<Reason, 'unsigned'>;

const REASONS: readonly TicketReason[] = ['not_activated', 'code_revoked', 'code_not_found', 'deactivated', 'grace_expired', 'clock_tampered', 'cache_invalid'];

/** Line 1 of a ticket, in the order it is written. */
export interface TicketFields {
  v: 1;
  app: string;
  project_id: string;
  valid: boolean;
  reason: TicketReason | null;
  source: 'online' | 'cache' | 'offline';
  code_hint: string | null;
  issued_at: number;
  valid_until: number;
}

/** What a reader decides (the contract's six answers). */
export type TicketVerdict =
  | { verdict: 'valid'; reason: null; ticket: TicketFields }
  | { verdict: 'not_licensed'; reason: TicketReason; ticket: TicketFields }
  | { verdict: 'none'; reason: null }
  | { verdict: 'tampered'; reason: 'cache_invalid'; problem: string }
  | { verdict: 'expired'; reason: 'grace_expired'; ticket: TicketFields }
  | { verdict: 'clock'; reason: 'clock_tampered'; ticket: TicketFields };

export interface JudgeOptions {
  /** The namespace (vendor) the reader belongs to. */
  app: string;
  /** The reader's project id (any case). */
  projectId: string;
  /** The reader's clock in Unix seconds (as the ticket's times). */
  now: number;
  /** The raw machine id as the OS gives it (normalised here by the library's one rule), or the generated secret. */
  rawMachineId: string;
}

/** Serialises a ticket: line 1 the JSON fields in the contract's order, line 2 the hex HMAC of line 1. */
export function encodeTicket(key: Buffer, fields: TicketFields): string {
  const line1 = JSON.stringify({
    v: fields.v,
    app: fields.app,
    project_id: fields.project_id,
    valid: fields.valid,
    reason: fields.reason,
    source: fields.source,
    code_hint: fields.code_hint,
    issued_at: fields.issued_at,
    valid_until: fields.valid_until,
  });
  return `${line1}\n${createHmac('sha256', key).update(line1, 'utf8').digest('hex')}\n`;
}

/** What the writer needs besides the state: whose ticket, the clock and the rules the status follows. */
export interface TicketContext {
  app: string;
  projectId: string;
  /** Writer's clock, epoch ms. */
  now: number;
  policy: Pick<LicensePolicy, 'graceMs' | 'clockToleranceMs'>;
  /** False when an offline activation is signed by none of the configured keys (then it is not valid here). */
  trusted?: (license: StoredLicense) => boolean;
}

/**
 * The ticket of a stored state at the writer's time: everything the writer knows (grace, clock
 * memory, revocation, an untrusted offline grant) is applied here, so a reader needs only the
 * contract's rules. `cacheInvalid` (the state was set aside as invalid) gives an invalid ticket.
 */
export function ticketOf(license: StoredLicense | null, ctx: TicketContext, cacheInvalid = false): TicketFields {
  const issued = Math.floor(ctx.now / 1000);
  const base = { v: 1 as const, app: ctx.app, project_id: ticketProjectId(ctx.projectId), issued_at: issued };
  if (license === null) {
    return { ...base, valid: false, reason: cacheInvalid ? 'cache_invalid' : 'not_activated', source: 'cache', code_hint: null, valid_until: issued };
  }
  const source = license.offline !== undefined ? 'offline' : license.attemptedAt !== null && license.attemptedAt === license.answeredAt ? 'online' : 'cache';
  const hint = codeHint(license.code);
  if (license.offline !== undefined && ctx.trusted !== undefined && !ctx.trusted(license)) {
    return { ...base, valid: false, reason: 'cache_invalid', source, code_hint: hint, valid_until: issued };
  }
  const validUntil = validUntilOf(license, ctx.policy);
  // The clock memory is the stored one: every writer folds what it has seen into `maxSeenAt`.
  const bucket = bucketOf(license, ctx.now, license.maxSeenAt, ctx.policy.clockToleranceMs, validUntil);
  let reason: TicketReason | null = null;
  if (license.status !== 'active') reason = license.reason ?? 'not_activated';
  else if (bucket === TAMPERED) reason = 'clock_tampered';
  else if (bucket === EXPIRED) reason = 'grace_expired';
  if (reason !== null) return { ...base, valid: false, reason, source, code_hint: hint, valid_until: issued };
  return { ...base, valid: true, reason: null, source, code_hint: hint, valid_until: Math.floor(validUntil / 1000) };
}

/**
 * Writes a ticket atomically (the one atomic writer: temp file, fsync, rename), mode 0600 in a
 * 0700 folder. The folders it sits in, `DATA/tickets/`, are held to the readers' folder rule
 * first: repaired to 0700 when they are the user's own, refused (`cache_io`) when they are not.
 */
export async function writeTicket(file: string, key: Buffer, fields: TicketFields): Promise<void> {
  await writeTicketFile(file, encodeTicket(key, fields));
}

/**
 * The one writer of a file in `DATA/tickets/` (the ticket, the signed ticket stored byte for
 * byte): the folders held to the readers' folder rule first (repaired to 0700 when they are the
 * user's own, refused with `cache_io` when they are not), then the one atomic write (temp file,
 * fsync, rename; mode 0600).
 */
export async function writeTicketFile(file: string, text: string): Promise<void> {
  const tickets = dirname(file);
  await ensureDir(tickets);
  repairOwnFolder(dirname(tickets), 'the data folder');
  repairOwnFolder(tickets, 'the tickets folder');
  await writeFileAtomic(file, text);
}

/** Removes a ticket durably (nothing to remove is fine). */
export async function removeTicket(file: string): Promise<void> {
  await removeFileDurably(file);
}

/**
 * The reader's rules, exactly as the contract states them, on a ticket's bytes or its path. A
 * path is `DATA/tickets/NAME`: both folders must be the user's own, links resolved (the folder
 * rule, {@link checkOwnFolder}); the file is opened so that it cannot block (non-blocking, no link
 * followed), taken only when it is a regular file of the user's own of at most 4 KB, and read at
 * most 4 KB + 1 byte. Only a missing ticket (or a missing folder it would be in) is `none`;
 * anything there that fails a rule, a folder included, is `tampered` (`cache_invalid`). The
 * project ids compare by {@link ticketProjectId}. Never throws.
 *
 * @example
 * const v = judgeTicket(ticketPath({ namespace: 'acme-audio' }, projectId), { app: 'acme-audio', projectId, now: Math.floor(Date.now() / 1000), rawMachineId });
 * if (v.verdict === 'valid') play();
 */
export function judgeTicket(input: Uint8Array | string, options: JudgeOptions): TicketVerdict {
  let bytes: Uint8Array;
  if (typeof input === 'string') {
    const read = readTicketFile(input);
    if (read.kind === 'missing') return { verdict: 'none', reason: null };
    if (read.kind === 'bad') return tampered(read.problem);
    bytes = read.bytes;
  } else {
    bytes = input;
  }
  if (bytes.length > MAX_TICKET_BYTES) return tampered(`${bytes.length} bytes, more than a ticket's ${MAX_TICKET_BYTES}`);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const nl = text.indexOf(0x0a);
  if (nl < 0) return tampered('not two lines');
  const line1 = text.subarray(0, nl);
  let line2 = text.subarray(nl + 1);
  if (line2.length > 0 && line2[line2.length - 1] === 0x0a) line2 = line2.subarray(0, line2.length - 1);
  if (!/^[0-9a-f]{64}$/.test(line2.toString('latin1'))) return tampered('line 2 is not a lowercase hex HMAC-SHA256');
  const expected = createHmac('sha256', ticketKeyOf(options.rawMachineId, options.app)).update(line1).digest();
  if (!timingSafeEqual(expected, Buffer.from(line2.toString('latin1'), 'hex'))) {
    return tampered('authentication tag does not match (edited, another app, or written on another machine)');
  }
  let parsed: unknown;
  let json: string;
  try {
    json = new TextDecoder('utf-8', { fatal: true }).decode(line1);
    parsed = JSON.parse(json);
  } catch {
    return tampered('line 1 is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return tampered('line 1 is not a JSON object');
  const f = parsed as Record<string, unknown>;
  if (f.app !== options.app) return tampered('belongs to another app');
  if (typeof f.project_id !== 'string' || f.project_id !== ticketProjectId(options.projectId)) return tampered('belongs to another project');
  if (f.v !== 1) return tampered(`unknown version ${JSON.stringify(f.v)}`);
  const fields = asFields(f, jsonIntegersOnly(json));
  if (fields === null) return tampered('a field of version 1 is missing or of the wrong type');
  if (!fields.valid) return { verdict: 'not_licensed', reason: fields.reason ?? 'not_activated', ticket: fields };
  if (options.now < fields.issued_at - TICKET_CLOCK_SLACK_S) return { verdict: 'clock', reason: 'clock_tampered', ticket: fields };
  if (options.now > fields.valid_until) return { verdict: 'expired', reason: 'grace_expired', ticket: fields };
  return { verdict: 'valid', reason: null, ticket: fields };
}

/**
 * The one way a reader takes a file from `DATA/tickets/` (the ticket, the signed ticket): both
 * folders the user's own, links resolved ({@link checkOwnFolder}; a missing one holds nothing),
 * then the file opened so that it cannot block, no link followed, a regular file of the user's
 * own of at most 4 KB ({@link readSmallFile}). `missing` only when the file or a folder is not
 * there; anything else that fails is `bad` with the problem in words. Never throws.
 *
 * @example
 * const read = readTicketFile(ticketPath({ namespace: 'acme-audio' }, projectId));
 */
export function readTicketFile(file: string): SmallFileRead {
  const tickets = dirname(file);
  for (const [folder, name] of [[dirname(tickets), 'the data folder'], [tickets, 'the tickets folder']] as const) {
    const check = checkOwnFolder(folder, name);
    if (check.kind !== 'ok') return check;
  }
  return readSmallFile(file, MAX_TICKET_BYTES, { followLinks: false, ownOnly: true });
}

function tampered(problem: string): TicketVerdict {
  return { verdict: 'tampered', reason: 'cache_invalid', problem };
}

function asFields(f: Record<string, unknown>, integers: boolean): TicketFields | null {
  const time = (x: unknown): x is number => integers && Number.isSafeInteger(x);
  if (typeof f.valid !== 'boolean' || !time(f.issued_at) || !time(f.valid_until)) return null;
  if (f.reason !== null && !REASONS.includes(f.reason as TicketReason)) return null;
  if (f.valid && f.reason !== null) return null;
  if (f.source !== 'online' && f.source !== 'cache' && f.source !== 'offline') return null;
  if (f.code_hint !== null && typeof f.code_hint !== 'string') return null;
  return {
    v: 1,
    app: f.app as string,
    project_id: f.project_id as string,
    valid: f.valid,
    reason: f.reason as TicketReason | null,
    source: f.source,
    code_hint: f.code_hint,
    issued_at: f.issued_at,
    valid_until: f.valid_until,
  };
}

