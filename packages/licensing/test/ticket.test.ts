// The license ticket (docs/license-ticket.md): the checked-in vectors judged by the library's reader,
// every write path of a real License against the emulator leaving the right ticket, hostile
// files at the ticket's path, and a data folder that refuses the write.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readOnlyFolder, rejection } from '@plugin-license/test-utils';
import {
  answerOfflineRequest,
  createOfflineRequest,
  importOfflineResponse,
  encodeTicket,
  isLicenseError,
  judgeTicket,
  ticketKeyOf,
  offlineText,
  releaseOffline,
  ticketPath,
  type TicketVerdict,
} from '../src/index.js';
import { makeVectors, VECTORS_DIR, writeVectors, type VectorCase } from './ticket-vectors.js';
import { RAW_A, RAW_B, tempHome, useLicenses } from './helpers.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const APP = 'acme-audio';
const verdictOf = (v: TicketVerdict) => ({ verdict: v.verdict, reason: v.reason });

describe('the checked-in vectors', () => {
  if (process.env.UPDATE_TICKET_VECTORS === '1') writeVectors();
  const { manifest, files } = makeVectors();

  it('are exactly what the library makes today (regenerate: UPDATE_TICKET_VECTORS=1)', () => {
    const onDisk = JSON.parse(readFileSync(join(VECTORS_DIR, 'manifest.json'), 'utf8')) as typeof manifest;
    expect(onDisk).toEqual(manifest);
    const names = readdirSync(VECTORS_DIR).filter((n) => n.endsWith('.ticket')).sort();
    expect(names).toEqual([...files.keys()].sort());
    for (const [name, bytes] of files) expect(readFileSync(join(VECTORS_DIR, name)).equals(bytes), name).toBe(true);
  });

  // From a path, a reader takes a ticket only from folders of the user's own: a copy in DATA/tickets of a private home.
  let home: { dir: string; cleanup: () => void };
  beforeAll(() => {
    home = tempHome();
    mkdirSync(join(home.dir, 'data', 'tickets'), { recursive: true, mode: 0o700 });
    for (const name of files.keys()) writeFileSync(join(home.dir, 'data', 'tickets', name), readFileSync(join(VECTORS_DIR, name)), { mode: 0o600 });
  });
  afterAll(() => home.cleanup());

  it.each(manifest.cases.map((c): [string, VectorCase] => [`${c.file}: ${c.what}`, c]))('%s', (_, c) => {
    const reader = { app: c.app, projectId: c.project_id, now: c.now, rawMachineId: c.raw_machine_id };
    // From the path (the plugin's way) and from the bytes: the same verdict.
    expect(verdictOf(judgeTicket(join(home.dir, 'data', 'tickets', c.file), reader))).toEqual(c.expected);
    expect(verdictOf(judgeTicket(readFileSync(join(VECTORS_DIR, c.file)), reader))).toEqual(c.expected);
  });
});

describe('what is at the ticket path', () => {
  let home: { dir: string; cleanup: () => void };
  const projectId = '123e4567-e89b-12d3-a456-426614174000';
  const reader = { app: APP, projectId, now: 1_768_478_400, rawMachineId: RAW_A };
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => home.cleanup());
  const at = (): string => {
    const file = ticketPath({ home: home.dir, namespace: APP }, projectId);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    return file;
  };

  it('the path is DATA/tickets/ID.ticket with the id in lower case', () => {
    expect(ticketPath({ home: home.dir, namespace: APP }, projectId.toUpperCase())).toBe(join(home.dir, 'data', 'tickets', `${projectId}.ticket`));
    expect(() => ticketPath({ home: home.dir }, '../x')).toThrow(/not a UUID/);
  });

  it('nothing there is none; only that', () => {
    expect(judgeTicket(ticketPath({ home: home.dir, namespace: APP }, projectId), reader)).toEqual({ verdict: 'none', reason: null });
  });

  const hostile: Array<[string, (file: string) => void]> = [
    ['a FIFO with no writer', (f) => execFileSync('mkfifo', [f])],
    ['a folder', (f) => mkdirSync(f)],
    ['a link to /dev/zero', (f) => symlinkSync('/dev/zero', f)],
    ['a link to a valid ticket elsewhere', (f) => symlinkSync(join(VECTORS_DIR, 'valid.ticket'), f)],
    ['a 10 MB file', (f) => writeFileSync(f, Buffer.alloc(10 * 1024 * 1024, 0x41))],
    ['a file of 4097 bytes', (f) => writeFileSync(f, Buffer.alloc(4097, 0x41))],
    ['garbage with quotes, $, backslashes, globs and non-ASCII', (f) => writeFileSync(f, '{"v":1 \'"$HOME\\*?é\n\u0000\n')],
  ];
  it.each(hostile)('%s: a known "not licensed" (cache_invalid), at once', (_, make) => {
    const file = at();
    make(file);
    const started = performance.now();
    const v = judgeTicket(file, reader);
    expect(verdictOf(v)).toEqual({ verdict: 'tampered', reason: 'cache_invalid' });
    // A bound on failing (the behaviour under test): no block on a FIFO, no 10 MB read.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('a valid ticket in a tickets folder or data folder others may write (0777, 0775): not trusted, tampered; 0755 is fine', () => {
    const file = at();
    writeFileSync(file, encodeTicket(ticketKeyOf(RAW_A, APP), { v: 1, app: APP, project_id: projectId, valid: true, reason: null, source: 'online', code_hint: null, issued_at: reader.now, valid_until: reader.now + 86_400 }), { mode: 0o600 });
    expect(verdictOf(judgeTicket(file, reader))).toEqual({ verdict: 'valid', reason: null });
    for (const [folder, mode, verdict] of [
      [dirname(file), 0o777, 'tampered'],
      [dirname(file), 0o775, 'tampered'],
      [dirname(file), 0o755, 'valid'],
      [dirname(dirname(file)), 0o777, 'tampered'],
      [dirname(dirname(file)), 0o700, 'valid'],
    ] as const) {
      chmodSync(folder, mode);
      expect({ folder, mode, verdict: judgeTicket(file, reader).verdict }).toEqual({ folder, mode, verdict });
    }
    chmodSync(file, 0o666);
    expect(judgeTicket(file, reader)).toMatchObject({ verdict: 'tampered', problem: 'the file is writable by others (mode 666)' });
  });

  it('a tickets folder that is a file, or a data folder that is: tampered, never none (only a missing ticket is)', () => {
    const file = at();
    rmSync(dirname(file), { recursive: true });
    writeFileSync(dirname(file), '');
    expect(judgeTicket(file, reader)).toMatchObject({ verdict: 'tampered', problem: expect.stringMatching(/^the tickets folder .* is a file, not a folder$/) });
    rmSync(dirname(dirname(file)), { recursive: true });
    writeFileSync(dirname(dirname(file)), '');
    expect(judgeTicket(file, reader)).toMatchObject({ verdict: 'tampered', problem: expect.stringMatching(/^the data folder .* is a file, not a folder$/) });
  });

  it('/dev/zero itself, and a device of the reader\'s choosing, are not tickets', () => {
    expect(verdictOf(judgeTicket('/dev/zero', reader))).toEqual({ verdict: 'tampered', reason: 'cache_invalid' });
    expect(verdictOf(judgeTicket('/dev/null', reader))).toEqual({ verdict: 'tampered', reason: 'cache_invalid' });
  });
});

describe('every write of the state writes the ticket', () => {
  const { service, home, clock, license } = useLicenses({ license: { namespace: APP } });
  const file = (): string => ticketPath({ home: home.dir, namespace: APP }, service.emulator.projectId);
  const judge = (raw = RAW_A): TicketVerdict => judgeTicket(file(), { app: APP, projectId: service.emulator.projectId, now: Math.floor(clock.now() / 1000), rawMachineId: raw });
  const fields = () => {
    const v = judge();
    if (!('ticket' in v)) throw new Error(`no readable ticket: ${JSON.stringify(v)}`);
    return v.ticket;
  };
  const s = (ms: number): number => Math.floor(ms / 1000);

  it('activation writes a valid ticket until the end of grace (0600 in a 0700 folder, no code, no raw id); another machine can\'t use it', async () => {
    const code = await service.code(3);
    await license().activate(code);
    expect(verdictOf(judge())).toEqual({ verdict: 'valid', reason: null });
    expect(fields()).toEqual({
      v: 1,
      app: APP,
      project_id: service.emulator.projectId,
      valid: true,
      reason: null,
      source: 'online',
      code_hint: `${code.slice(0, 4)}…${code.slice(-4)}`,
      issued_at: s(clock.now()),
      valid_until: s(clock.now() + 30 * DAY),
    });
    const text = readFileSync(file(), 'utf8');
    expect(text).not.toContain(code);
    expect(text).not.toContain(RAW_A);
    expect(text.split('\n')).toHaveLength(3);
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(file())).mode & 0o777).toBe(0o700);
    expect(readdirSync(dirname(file()))).toEqual([`${service.emulator.projectId}.ticket`]);
    expect(verdictOf(judge(RAW_B))).toEqual({ verdict: 'tampered', reason: 'cache_invalid' });
    // The reader's own rule past the deadline, with the agent and the library gone.
    clock.advance(31 * DAY);
    expect(verdictOf(judge())).toEqual({ verdict: 'expired', reason: 'grace_expired' });
  });

  it('a validation that moves the deadline moves the ticket; a transport failure leaves it valid until the same end', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    const first = fields().valid_until;
    clock.advance(2 * DAY);
    await l.validate({ force: true });
    expect(fields().valid_until).toBe(first + 2 * 86_400);
    expect(fields().issued_at).toBe(s(clock.now()));
    await service.control.faults({ mode: 'offline' });
    clock.advance(DAY);
    expect(await l.validate({ force: true })).toMatchObject({ valid: true, source: 'cache' });
    expect(fields()).toMatchObject({ valid: true, source: 'cache', valid_until: first + 2 * 86_400, issued_at: s(clock.now()) });
  });

  it('a revocation writes an invalid ticket (valid_until = issued_at); a deactivation writes not_activated', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    await service.control.revoke(code);
    clock.advance(HOUR);
    await l.validate({ force: true });
    expect(verdictOf(judge())).toEqual({ verdict: 'not_licensed', reason: 'code_revoked' });
    expect(fields().valid_until).toBe(fields().issued_at);

    const code2 = await service.code();
    await l.activate(code2);
    expect(verdictOf(judge())).toEqual({ verdict: 'valid', reason: null });
    await l.deactivate();
    expect(verdictOf(judge())).toEqual({ verdict: 'not_licensed', reason: 'not_activated' });
    expect(fields()).toMatchObject({ valid: false, code_hint: null, valid_until: fields().issued_at });
  });

  it('a clock found tampered writes clock_tampered; the next online success writes valid again', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    clock.advance(3 * HOUR);
    l.check();
    await service.control.faults({ mode: 'offline' });
    await l.validate({ force: true }); // stores the highest time seen
    clock.advance(-5 * HOUR);
    await l.validate({ force: true });
    expect(verdictOf(judge())).toEqual({ verdict: 'not_licensed', reason: 'clock_tampered' });
    await service.control.faults({ mode: 'none' });
    await l.validate({ force: true });
    expect(verdictOf(judge())).toEqual({ verdict: 'valid', reason: null });
  });

  it('a data folder and tickets folder left open (0777, 0755) are made 0700 by the next write; readers refused the open one before', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    chmodSync(dirname(dirname(file())), 0o777);
    chmodSync(dirname(file()), 0o755);
    expect(judge()).toMatchObject({ verdict: 'tampered', problem: expect.stringMatching(/^the data folder .* is writable by others \(mode 777\): nothing in it is trusted/) });
    clock.advance(2 * DAY);
    await l.validate({ force: true });
    expect({ data: statSync(dirname(dirname(file()))).mode & 0o777, tickets: statSync(dirname(file())).mode & 0o777 }).toEqual({ data: 0o700, tickets: 0o700 });
    expect(verdictOf(judge())).toEqual({ verdict: 'valid', reason: null });
  });

  it('a tickets folder that is a file: the state is stored, the ticket refused naming it (cache_io)', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    rmSync(dirname(file()), { recursive: true });
    writeFileSync(dirname(file()), '');
    clock.advance(2 * DAY);
    const e = await rejection(l.validate({ force: true }), isLicenseError);
    expect(e).toMatchObject({ code: 'cache_io', path: file() });
    expect(e.message).toMatch(/^the license state was stored, but its ticket .* could not be written \(the tickets folder .* is not a folder; remove it \(the library makes the folder\)\); plugins cannot read the license without the agent until it is$/);
    expect(l.check()).toMatchObject({ valid: true });
  });

  it('acting for another computer (a machine id not this one\'s) writes no ticket', async () => {
    const code = await service.code(2);
    await license({ machineId: 'studio-pc-7' }).activate(code);
    expect(existsSync(file())).toBe(false);
    expect(existsSync(dirname(file()))).toBe(false);
  });

  it('offline import writes a ticket valid until the activation ends; release makes it not_activated', async () => {
    const code = await service.code(2);
    const at = { home: home.dir, namespace: APP, rawMachineIdProvider: () => RAW_A, now: clock.now };
    const request = await createOfflineRequest({ projectId: service.emulator.projectId, code, ...at });
    const response = await answerOfflineRequest(offlineText(request), { baseUrl: service.emulator.baseUrl, dispatcher: service.dispatcher, validDays: 10 });
    await importOfflineResponse(offlineText(response), at);
    expect(verdictOf(judge())).toEqual({ verdict: 'valid', reason: null });
    expect(fields()).toMatchObject({ source: 'offline', valid_until: s(Date.parse(response.valid_until)) });
    await releaseOffline({ projectId: service.emulator.projectId, ...at });
    expect(verdictOf(judge())).toEqual({ verdict: 'not_licensed', reason: 'not_activated' });
  });

  it('a cache edited by hand: the ticket says cache_invalid at the next read', async () => {
    const code = await service.code();
    await license().activate(code);
    const cache = join(home.dir, 'data', 'licenses', `${service.emulator.projectId}.json`);
    writeFileSync(cache, readFileSync(cache, 'utf8').replace('"failures":0', '"failures":1'));
    expect(await license().validate()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(verdictOf(judge())).toEqual({ verdict: 'not_licensed', reason: 'cache_invalid' });
  });

  it('a cache edited by hand and found by check() first: the ticket does not outlive the state', async () => {
    const code = await service.code();
    await license().activate(code);
    const cache = join(home.dir, 'data', 'licenses', `${service.emulator.projectId}.json`);
    writeFileSync(cache, readFileSync(cache, 'utf8').replace('"failures":0', '"failures":1'));
    expect(license().check()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(verdictOf(judge())).toEqual({ verdict: 'none', reason: null });
  });

  it('a tickets folder that refuses the write: cache_io naming the ticket, the state is stored, check() unaffected', async (ctx) => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    const ro = readOnlyFolder(dirname(file()));
    if (!ro.ok) return ctx.skip(ro.reason);
    try {
      clock.advance(2 * DAY);
      const e = await rejection(l.validate({ force: true }), isLicenseError);
      expect(e).toMatchObject({ code: 'cache_io', path: file(), systemCode: 'EROFS' });
      expect(e.message).toMatch(/state was stored, but its ticket .* could not be written/);
      expect(e.message).not.toContain(code);
      // The state moved on (memory and disk); check() answers without touching the ticket.
      expect(l.check()).toMatchObject({ valid: true, source: 'online' });
      expect(l.check().graceUntil?.getTime()).toBe(clock.now() + 30 * DAY);
      expect(license().check().graceUntil?.getTime()).toBe(clock.now() + 30 * DAY);
      // Deactivation: a ticket that cannot say "not licensed" first stops it before the service is asked.
      const d = await rejection(l.deactivate(), isLicenseError);
      expect(d).toMatchObject({ code: 'cache_io', path: file(), systemCode: 'EROFS' });
      expect(d.message).toMatch(/could not make the ticket .* say "not licensed" before giving back the slot .*nothing was released/);
      expect(l.check()).toMatchObject({ valid: true });
      expect((await service.admin.activation.status(code)).activations).toBe(1);
    } finally {
      ro.undo();
    }
    // Once writable, the next write repairs it: a re-activation, then a deactivation makes it not_activated.
    await l.activate(code);
    expect(verdictOf(judge())).toEqual({ verdict: 'valid', reason: null });
    await l.deactivate();
    expect(verdictOf(judge())).toEqual({ verdict: 'not_licensed', reason: 'not_activated' });
  });
});
