import { createHmac } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeTicket, ticketKeyOf, type TicketFields, type TicketVerdict } from '../src/index.js';

/**
 * The ticket's test vectors (docs/license-ticket.md), made by the library's own encoder from a fixed
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
function signLine(line1: string | Buffer): Buffer {
  const bytes = typeof line1 === 'string' ? Buffer.from(line1, 'utf8') : line1;
  const mac = createHmac('sha256', ticketKeyOf(VECTOR_RAW, VECTOR_APP)).update(bytes).digest('hex');
  return Buffer.concat([bytes, Buffer.from(`\n${mac}\n`, 'utf8')]);
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
  // Line 1 as a JSON reader sees it: every reader must parse it as JSON.parse does (plc's too).
  const line = JSON.stringify(base);
  const withTime = (key: string, text: string): string => line.replace(new RegExp(`"${key}":-?\\d+`), `"${key}":${text}`);
  add('bom.ticket', 'line 1 starting with a byte order mark (UTF-8 decoding drops it), correctly signed: valid', signLine(`\uFEFF${line}`), ok);
  add('escaped-app.ticket', 'app written with a \\u escape, correctly signed: the same text, valid', signLine(line.replace('"app":"acme-audio"', '"app":"acme\\u002daudio"')), ok);
  add('escaped-pair.ticket', 'code_hint with an escaped surrogate pair and escapes of every kind, correctly signed: valid', signLine(line.replace(/"code_hint":"[^"]*"/, '"code_hint":"\\ud83c\\udfb9\\"\\\\\\/\\b\\f\\n\\r\\t"')), ok);
  add('duplicate-key.ticket', 'valid_until twice, the last a year later, correctly signed: the last one counts (JSON.parse)', signLine(line.replace('}', `,"valid_until":${UNTIL + 365 * 86_400}}`)), ok, { now: UNTIL + 86_400 });
  add('extra-keys.ticket', 'unknown extra keys, nested 1,000 deep, correctly signed: ignored, valid', signLine(line.replace('}', `,"extra":${'['.repeat(1000)}{"a":[true,false,null,-0,"x"]}${']'.repeat(1000)},"more":{}}`)), ok);
  // A field that is a container which does not close at once (plc's value reader once read past an unset pointer here).
  add('v-array.ticket', 'v an array holding 1, correctly signed: an unknown version', signLine(line.replace('"v":1', '"v":[1]')), bad);
  add('v-object.ticket', 'v an object nested three deep, correctly signed: an unknown version', signLine(line.replace('"v":1', '"v":{"v":[1,{"v":1}]}')), bad);
  add('app-array.ticket', 'app an array holding the app, correctly signed: another app', signLine(line.replace('"app":"acme-audio"', '"app":["acme-audio"]')), bad);
  add('fraction-time.ticket', 'valid_until with a fraction, correctly signed: times are Unix seconds (integers)', signLine(withTime('valid_until', `${UNTIL}.5`)), bad);
  add('exponent-time.ticket', 'issued_at in exponent notation (an integer value), correctly signed: times are written as digits', signLine(withTime('issued_at', '17684784e2')), bad);
  add('zero-fraction-time.ticket', 'valid_until with a zero fraction, correctly signed: written as digits only', signLine(withTime('valid_until', `${UNTIL}.0`)), bad);
  add('fraction-extra.ticket', 'an extra key holding a fraction, correctly signed: every number of line 1 is an integer', signLine(line.replace('}', ',"x":0.5}')), bad);
  add('unsafe-time.ticket', 'valid_until past 2^53 - 1, correctly signed: not a safe integer', signLine(withTime('valid_until', '9007199254740993')), bad);
  add('negative-time.ticket', 'valid_until negative, correctly signed: a time, long past', signLine(withTime('valid_until', '-1')), { verdict: 'expired', reason: 'grace_expired' });
  add('lone-surrogate-app.ticket', 'app ending in a lone surrogate escape, correctly signed: another app', signLine(line.replace('"app":"acme-audio"', '"app":"acme-audio\\ud800"')), bad);
  add('nul-app.ticket', 'app with an escaped NUL after the name, correctly signed: another app', signLine(line.replace('"app":"acme-audio"', '"app":"acme-audio\\u0000"')), bad);
  add('invalid-utf8.ticket', 'a byte that is not UTF-8 inside line 1, correctly signed: not JSON', signLine(Buffer.concat([Buffer.from(line.slice(0, -1)), Buffer.from([0x2c, 0x22, 0x78, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])])), bad);
  add('not-object.ticket', 'line 1 a JSON array, correctly signed', signLine('[1]'), bad);
  add('trailing-comma.ticket', 'line 1 with a trailing comma (not JSON), correctly signed', signLine(line.replace('}', ',}')), bad);
  add('missing-hint.ticket', 'code_hint missing, correctly signed', signLine(line.replace(/,"code_hint":"[^"]*"/, '')), bad);
  add('invalid-no-reason.ticket', 'an invalid ticket with reason null, correctly signed: not licensed, not_activated', signLine(line.replace('"valid":true', '"valid":false')), { verdict: 'not_licensed', reason: 'not_activated' });
  add('unknown-reason.ticket', 'an invalid ticket with a reason no reader knows, correctly signed', signLine(line.replace('"valid":true,"reason":null', '"valid":false,"reason":"stolen"')), bad);
  const big = JSON.stringify({ ...base, code_hint: 'x'.repeat(4096) });
  add('too-large.ticket', 'a correctly signed ticket over 4096 bytes', signLine(big), bad);
  return {
    manifest: {
      about:
        'Ticket test vectors of docs/license-ticket.md, made by packages/licensing/test/ticket-vectors.ts. Each case: the file, the reader (app, project_id, now in Unix seconds, the raw machine id before normalisation) and the verdict it must reach.',
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
