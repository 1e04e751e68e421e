import { createHmac } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeTicket, ticketKeyOf, type TicketFields, type TicketVerdict } from '../src/index.js';

/**
 * The ticket's test vectors (license-ticket.md), made by the library's own encoder from a fixed
 * raw machine id and fixed times, so every reader (this library's `judgeTicket`, `plc`) is held
 * to the same files. `ticket.test.ts` regenerates them and fails when the checked-in set differs;
 * `UPDATE_TICKET_VECTORS=1 pnpm exec vitest run packages/licensing/test/ticket.test.ts` rewrites it.
 */

export const VECTORS_DIR = join(import.meta.dirname, 'ticket-vectors');

/** The raw machine id the vectors' key comes from, as the OS would give it (normalised: lowercase, no dashes). */
export const VECTOR_RAW = '0123456789abcdef0123456789abcdef';
const OTHER_RAW = 'fedcba9876543210fedcba9876543210';
export const VECTOR_APP = 'acme-audio';
export const VECTOR_PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const ISSUED = 1_768_478_400; // 2026-01-15T12:00:00Z
const UNTIL = ISSUED + 30 * 86_400;

export interface VectorCase {
  file: string;
  what: string;
  app: string;
  project_id: string;
  /** The reader's clock, Unix seconds. */
  now: number;
  /** The raw machine id the reader uses (before normalisation). */
  raw_machine_id: string;
  expected: { verdict: TicketVerdict['verdict']; reason: string | null };
}

export interface Vectors {
  manifest: { about: string; key: string; cases: VectorCase[] };
  files: Map<string, Buffer>;
}

const base: TicketFields = {
  v: 1,
  app: VECTOR_APP,
  project_id: VECTOR_PROJECT,
  valid: true,
  reason: null,
  source: 'online',
  code_hint: '…B601',
  issued_at: ISSUED,
  valid_until: UNTIL,
};

function sign(raw: string, app: string, fields: TicketFields): Buffer {
  return Buffer.from(encodeTicket(ticketKeyOf(raw, app), fields), 'utf8');
}

/** Line 1 as given, signed with the vectors' key (for fields the encoder would never write). */
function signLine(line1: string): Buffer {
  const mac = createHmac('sha256', ticketKeyOf(VECTOR_RAW, VECTOR_APP)).update(line1, 'utf8').digest('hex');
  return Buffer.from(`${line1}\n${mac}\n`, 'utf8');
}

export function makeVectors(): Vectors {
  const files = new Map<string, Buffer>();
  const cases: VectorCase[] = [];
  const add = (file: string, what: string, bytes: Buffer, expected: VectorCase['expected'], reader: Partial<VectorCase> = {}): void => {
    files.set(file, bytes);
    cases.push({ file, what, app: VECTOR_APP, project_id: VECTOR_PROJECT, now: ISSUED + 60, raw_machine_id: VECTOR_RAW, expected, ...reader });
  };
  const valid = sign(VECTOR_RAW, VECTOR_APP, base);
  const ok = { verdict: 'valid', reason: null } as const;
  const bad = { verdict: 'tampered', reason: 'cache_invalid' } as const;
  add('valid.ticket', 'a valid ticket, read a minute after it was issued', valid, ok);
  add('valid.ticket', 'the same, read at valid_until exactly', valid, ok, { now: UNTIL });
  add('valid.ticket', 'the same, read one hour before issued_at exactly (the slack)', valid, ok, { now: ISSUED - 3600 });
  add('valid.ticket', 'the same, the clock moved back more than an hour', valid, { verdict: 'clock', reason: 'clock_tampered' }, { now: ISSUED - 3601 });
  add('valid.ticket', 'the same, read a second after valid_until', valid, { verdict: 'expired', reason: 'grace_expired' }, { now: UNTIL + 1 });
  add('valid.ticket', 'the same, the raw id as the OS shows it (upper case, dashes, braces, spaces): normalised', valid, ok, {
    raw_machine_id: ' {01234567-89AB-CDEF-0123-456789ABCDEF}\n',
  });
  add('valid.ticket', 'the same, read by another app', valid, bad, { app: 'other-vendor' });
  add('valid.ticket', 'the same, read by another project', valid, bad, { project_id: '00000000-0000-4000-8000-000000000000' });
  add('valid.ticket', 'the same, read on another machine', valid, bad, { raw_machine_id: OTHER_RAW });
  add('valid.ticket', "the same, the reader's project id in upper case", valid, ok, { project_id: VECTOR_PROJECT.toUpperCase() });
  add('no-final-newline.ticket', 'a valid ticket without the final newline', valid.subarray(0, valid.length - 1), ok);
  add('revoked.ticket', 'an invalid ticket: not licensed with its reason, whatever the clock', sign(VECTOR_RAW, VECTOR_APP, { ...base, valid: false, reason: 'code_revoked', valid_until: ISSUED }), {
    verdict: 'not_licensed',
    reason: 'code_revoked',
  }, { now: ISSUED - 86_400 });
  add('offline.ticket', 'an offline activation, valid until its end', sign(VECTOR_RAW, VECTOR_APP, { ...base, source: 'offline', valid_until: ISSUED + 90 * 86_400 }), ok, {
    now: ISSUED + 60 * 86_400,
  });
  const edited = Buffer.from(valid.toString('utf8').replace(`"valid_until":${UNTIL}`, `"valid_until":${UNTIL + 365 * 86_400}`), 'utf8');
  add('tamper-field.ticket', 'valid_until edited, the MAC left as it was', edited, bad, { now: UNTIL + 86_400 });
  const flipped = Buffer.from(valid);
  flipped[flipped.length - 2] = flipped[flipped.length - 2] === 0x30 ? 0x31 : 0x30;
  add('tamper-mac.ticket', 'the last hex digit of the MAC changed', flipped, bad);
  add('tamper-mac-upper.ticket', 'the MAC in upper-case hex', Buffer.from(valid.toString('utf8').replace(/\n([0-9a-f]{64})\n$/, (_, m: string) => `\n${m.toUpperCase()}\n`), 'utf8'), bad);
  add('tamper-crlf.ticket', 'CRLF line ends', Buffer.from(valid.toString('utf8').replace(/\n/g, '\r\n'), 'utf8'), bad);
  add('tamper-space.ticket', 'a space added in line 1 (the MAC covers the exact bytes)', Buffer.from(valid.toString('utf8').replace('{"v":1,', '{"v":1, '), 'utf8'), bad);
  add('tamper-third-line.ticket', 'a third line', Buffer.concat([valid, Buffer.from('extra\n')]), bad);
  add('truncated.ticket', 'line 1 only', valid.subarray(0, valid.indexOf(0x0a) + 1), bad);
  add('empty.ticket', 'an empty file', Buffer.alloc(0), bad);
  add('other-app.ticket', "another vendor's ticket (its own key and app), copied into this namespace", sign(VECTOR_RAW, 'other-vendor', { ...base, app: 'other-vendor' }), bad);
  add('other-app-field.ticket', "this key, but app names another vendor", sign(VECTOR_RAW, VECTOR_APP, { ...base, app: 'other-vendor' }), bad);
  add('other-project.ticket', "another project's ticket under this project's name", sign(VECTOR_RAW, VECTOR_APP, { ...base, project_id: '00000000-0000-4000-8000-000000000000' }), bad);
  add('other-machine.ticket', 'a ticket made on another computer, copied here', sign(OTHER_RAW, VECTOR_APP, base), bad);
  add('unknown-version.ticket', 'v 2, correctly signed', signLine(JSON.stringify({ ...base, v: 2 })), bad);
  add('wrong-type.ticket', 'valid_until a string, correctly signed', signLine(JSON.stringify({ ...base, valid_until: String(UNTIL) })), bad);
  add('valid-with-reason.ticket', 'valid true with a reason, correctly signed', signLine(JSON.stringify({ ...base, reason: 'code_revoked' })), bad);
  add('hostile-hint.ticket', 'code_hint with quotes, $, backslash, a newline escape and non-ASCII: JSON-escaped, still valid', sign(VECTOR_RAW, VECTOR_APP, { ...base, code_hint: '…"$\\\n\'*é' }), ok);
  const big = JSON.stringify({ ...base, code_hint: 'x'.repeat(4096) });
  add('too-large.ticket', 'a correctly signed ticket over 4096 bytes', signLine(big), bad);
  return {
    manifest: {
      about:
        'Ticket test vectors of license-ticket.md, made by packages/licensing/test/ticket-vectors.ts. Each case: the file, the reader (app, project_id, now in Unix seconds, the raw machine id before normalisation) and the verdict it must reach.',
      key: 'HMAC-SHA256(key = normalised raw id as ASCII text, message = "plugin-license/ticket/v1" NUL app); line 2 = lowercase hex HMAC-SHA256(key, line 1 bytes)',
      cases,
    },
    files,
  };
}

/** Writes the vectors (replacing the folder's ticket files and manifest). */
export function writeVectors(dir = VECTORS_DIR): void {
  const { manifest, files } = makeVectors();
  mkdirSync(dir, { recursive: true });
  for (const name of readdirSync(dir)) if (name.endsWith('.ticket')) rmSync(join(dir, name));
  for (const [name, bytes] of files) writeFileSync(join(dir, name), bytes);
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}
