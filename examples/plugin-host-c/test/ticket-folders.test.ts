// A reader trusts nothing in a folder that is not the user's own (docs/architecture.md, "Only the
// user's own files"; docs/license-ticket.md: the socket folder's rule): the data folder and tickets/,
// links resolved, owned by the user and writable by nobody else, and the ticket a file of theirs.
// plc (plc-ticket) and the library (judgeTicket) give one answer on the same folders: only what is
// missing is none; anything there that fails, a folder in the ticket's place included, is tampered.
// Another user (uid 65534, through setpriv) writing into an open tickets folder licenses nothing;
// the library's writer makes the folders 0700 again, or refuses another user's, with words.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { encodeTicket, isLicenseError, judgeTicket, License, ticketKeyOf, ticketPath, type TicketFields } from '@plugin-license/licensing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCode } from './helpers/agent.js';
import { compile, C_FLAGS, hasCc, hasTool, PLC_C } from './helpers/toolchain.js';

const APP = 'acme-audio';
const PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const OTHER_PROJECT = '0b8a3c2e-5f61-4d7a-9e2b-3c4d5e6f7a8b';
const RAW = '0123456789abcdef0123456789abcdef';
const NOW = 1_768_478_460;
const NOBODY = 65534;
const isRoot = process.getuid?.() === 0;
const linux = process.platform === 'linux';
const asNobody = ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups'];
const hasSetpriv = hasTool('setpriv');

const fields = (projectId: string): TicketFields => ({ v: 1, app: APP, project_id: projectId, valid: true, reason: null, source: 'online', code_hint: null, issued_at: NOW - 60, valid_until: NOW + 30 * 86_400 });
const ticketOf = (projectId = PROJECT): string => encodeTicket(ticketKeyOf(RAW, APP), fields(projectId));

interface Answer {
  verdict: string;
  reason: string | null;
  problem: string | null;
}

describe.skipIf(!hasCc || !linux)('the folder rule: plc and the library alike', () => {
  let dir: string;
  let tool: string;
  /** Both readers on HOME's ticket of projectId: plc-ticket (the path by plc's rule) and judgeTicket (the library's). */
  const both = (home: string, projectId = PROJECT): { plc: Answer; library: Answer } => {
    const r = spawnSync(tool, ['--app', APP, '--now', String(NOW), '--machine-id', RAW, projectId], { encoding: 'utf8', env: { ...process.env, PLUGIN_LICENSE_HOME: home } });
    const c = JSON.parse(r.stdout) as Answer;
    const lib = judgeTicket(ticketPath({ home, namespace: APP }, projectId), { app: APP, projectId, now: NOW, rawMachineId: RAW });
    return { plc: { verdict: c.verdict, reason: c.reason, problem: c.problem }, library: { verdict: lib.verdict, reason: lib.reason, problem: 'problem' in lib ? lib.problem : null } };
  };
  /** A home as the library leaves it: DATA and tickets/ 0700, a valid 0600 ticket. */
  const home = (): { home: string; data: string; tickets: string; file: string } => {
    const h = mkdtempSync(join(dir, 'home-'));
    const file = ticketPath({ home: h, namespace: APP }, PROJECT);
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, ticketOf(), { mode: 0o600 });
    return { home: h, data: dirname(dirname(file)), tickets: dirname(file), file };
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-folders-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('cc', [...C_FLAGS, 'plc-ticket.c', join(dir, 'plc.o'), '-o', (tool = join(dir, 'plc-ticket'))]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  type Layout = { home: string; data: string; tickets: string; file: string };
  const fifo = (path: string): void => {
    expect(spawnSync('mkfifo', [path]).status).toBe(0);
  };
  // [what, how the home is changed, the verdict both give, words both say (a pattern)]
  const cases: Array<[string, (h: Layout) => void, 'valid' | 'tampered' | 'none', RegExp | null]> = [
    ['as the library makes them (0700 folders, a 0600 ticket)', () => undefined, 'valid', null],
    ['tickets/ 0755: others may read, not write', (h) => chmodSync(h.tickets, 0o755), 'valid', null],
    ['DATA 0755', (h) => chmodSync(h.data, 0o755), 'valid', null],
    ['a 0644 ticket', (h) => chmodSync(h.file, 0o644), 'valid', null],
    ['tickets/ 0777', (h) => chmodSync(h.tickets, 0o777), 'tampered', /^the tickets folder .*writable by others \(mode 777\)/],
    ['tickets/ 0770: its group may write', (h) => chmodSync(h.tickets, 0o770), 'tampered', /^the tickets folder .*writable by others \(mode 770\)/],
    ['tickets/ 1777: sticky, still open to others', (h) => chmodSync(h.tickets, 0o1777), 'tampered', /^the tickets folder .*writable by others/],
    ['DATA 0777', (h) => chmodSync(h.data, 0o777), 'tampered', /^the data folder .*writable by others \(mode 777\)/],
    ['DATA 0775', (h) => chmodSync(h.data, 0o775), 'tampered', /^the data folder .*writable by others \(mode 775\)/],
    ['a 0666 ticket', (h) => chmodSync(h.file, 0o666), 'tampered', /writable by others/],
    ['a 0620 ticket: its group may write', (h) => chmodSync(h.file, 0o620), 'tampered', /writable by others/],
    ['tickets/ a link to a private folder of the user (links resolved)', (h) => {
      const real = join(h.home, 'real-tickets');
      renameSync(h.tickets, real);
      symlinkSync(real, h.tickets);
    }, 'valid', null],
    ['tickets/ a link to a 0777 folder', (h) => {
      const open = join(h.home, 'open');
      mkdirSync(open);
      chmodSync(open, 0o777);
      renameSync(h.file, join(open, `${PROJECT}.ticket`));
      rmSync(h.tickets, { recursive: true });
      symlinkSync(open, h.tickets);
    }, 'tampered', /^the tickets folder .*writable by others \(mode 777\)/],
    ['DATA a link to a private folder of the user', (h) => {
      const real = join(h.home, 'real-data');
      renameSync(h.data, real);
      symlinkSync(real, h.data);
    }, 'valid', null],
    ['DATA a link to a 0777 folder holding a private tickets/', (h) => {
      const open = join(h.home, 'open');
      mkdirSync(open);
      chmodSync(open, 0o777);
      renameSync(h.tickets, join(open, 'tickets'));
      rmSync(h.data, { recursive: true });
      symlinkSync(open, h.data);
    }, 'tampered', /^the data folder .*writable by others \(mode 777\)/],
    // A path component that is not a folder: there, so not "none" (only a missing ticket is).
    ['DATA/tickets a regular file', (h) => {
      rmSync(h.tickets, { recursive: true });
      writeFileSync(h.tickets, ticketOf(), { mode: 0o600 });
    }, 'tampered', /^the tickets folder .*a file, not a folder/],
    ['DATA/tickets a FIFO', (h) => {
      rmSync(h.tickets, { recursive: true });
      fifo(h.tickets);
    }, 'tampered', /^the tickets folder .*a FIFO, not a folder/],
    ['DATA a regular file', (h) => {
      rmSync(h.data, { recursive: true });
      writeFileSync(h.data, 'x');
    }, 'tampered', /^the data folder .*a file, not a folder/],
    ['DATA a FIFO', (h) => {
      rmSync(h.data, { recursive: true });
      fifo(h.data);
    }, 'tampered', /^the data folder .*a FIFO, not a folder/],
    ['PLUGIN_LICENSE_HOME a regular file (DATA under a file)', (h) => {
      rmSync(h.home, { recursive: true });
      writeFileSync(h.home, 'x');
    }, 'tampered', /^the data folder .*under a file, not a folder/],
    ['no ticket', (h) => rmSync(h.file), 'none', null],
    ['no tickets/', (h) => rmSync(h.tickets, { recursive: true }), 'none', null],
    ['no DATA', (h) => rmSync(h.data, { recursive: true }), 'none', null],
    ['no tickets/ in a 0777 DATA (nothing there, nothing trusted)', (h) => {
      rmSync(h.tickets, { recursive: true });
      chmodSync(h.data, 0o777);
    }, 'tampered', /^the data folder .*writable by others/],
  ];
  it.each(cases)('%s', (_, change, verdict, words) => {
    const h = home();
    change(h);
    const { plc, library } = both(h.home);
    expect({ plc: plc.verdict, library: library.verdict }).toEqual({ plc: verdict, library: verdict });
    expect({ plc: plc.reason, library: library.reason }).toEqual(verdict === 'tampered' ? { plc: 'cache_invalid', library: 'cache_invalid' } : { plc: null, library: null });
    if (words) {
      expect(plc.problem).toMatch(words);
      expect(library.problem).toMatch(words);
    }
  });

  describe.skipIf(!isRoot)('folders and tickets of another user (root makes them: chown)', () => {
    it.each([
      ['tickets/ of user 65534', (h: Layout) => chownSync(h.tickets, NOBODY, NOBODY), /^the tickets folder .*belongs to user 65534, not to this one/],
      ['DATA of user 65534', (h: Layout) => chownSync(h.data, NOBODY, NOBODY), /^the data folder .*belongs to user 65534, not to this one/],
      ['a ticket of user 65534 in the user\'s own folder', (h: Layout) => chownSync(h.file, NOBODY, NOBODY), /belongs to .*user/],
    ])('%s: tampered', (_, change, words) => {
      const h = home();
      change(h);
      const { plc, library } = both(h.home);
      expect({ plc: plc.verdict, library: library.verdict }).toEqual({ plc: 'tampered', library: 'tampered' });
      expect(plc.problem).toMatch(words);
      expect(library.problem).toMatch(words);
    });
  });
  if (!isRoot) console.log('ticket-folders: skipping the cases of another user: they need root (chown, setpriv)');

  describe.skipIf(!isRoot || !hasSetpriv)('user 65534 (setpriv) writes a valid ticket into an open tickets folder', () => {
    /** Writes bytes at path as user 65534; undefined when done, else why it could not. */
    const writeAsNobody = (path: string, bytes: string): string | undefined => {
      const r = spawnSync(asNobody[0]!, [...asNobody.slice(1), 'sh', '-c', 'cat > "$1"', 'sh', path], { input: bytes, encoding: 'utf8' });
      return r.status === 0 ? undefined : `user ${NOBODY} cannot write ${path} (${r.stderr.trim() || r.status}): it cannot reach this temporary folder`;
    };

    it("another project's ticket, forged by user 65534: tampered for plc and the library, before and after the folder is repaired", (ctx) => {
      const h = home();
      // The folders above the tickets folder are open for user 65534 to pass through (a home of 0755; DATA and tickets/ left 0777).
      for (const d of [dirname(h.home), h.home]) if ((statSync(d).mode & 0o005) !== 0o005) chmodSync(d, statSync(d).mode | 0o005);
      chmodSync(h.data, 0o777);
      chmodSync(h.tickets, 0o777);
      const forged = ticketPath({ home: h.home, namespace: APP }, OTHER_PROJECT);
      const why = writeAsNobody(forged, ticketOf(OTHER_PROJECT));
      if (why !== undefined) return ctx.skip(why);
      expect(statSync(forged).uid).toBe(NOBODY);
      // The bytes are a ticket both readers would take from the user's own folder (the honest model: anyone on this computer can compute the key).
      expect(judgeTicket(readFileSync(forged), { app: APP, projectId: OTHER_PROJECT, now: NOW, rawMachineId: RAW }).verdict).toBe('valid');
      const open = both(h.home, OTHER_PROJECT);
      expect(open.plc).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid', problem: expect.stringMatching(/^the data folder .*writable by others/) });
      expect(open.library).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid', problem: expect.stringMatching(/^the data folder .*writable by others/) });
      // The folders made private again (as the library's next write does): the forged file is still another user's.
      chmodSync(h.data, 0o700);
      chmodSync(h.tickets, 0o700);
      const repaired = both(h.home, OTHER_PROJECT);
      expect(repaired.plc).toMatchObject({ verdict: 'tampered', problem: expect.stringMatching(/belongs to another user/) });
      expect(repaired.library).toMatchObject({ verdict: 'tampered', problem: expect.stringMatching(/belongs to user 65534/) });
      // The user's own ticket in the same folder is valid to both.
      expect(both(h.home)).toMatchObject({ plc: { verdict: 'valid' }, library: { verdict: 'valid' } });
    });
  });

  describe('the library writes the ticket into folders of the user\'s own only', () => {
    let emulator: Emulator;
    beforeAll(async () => {
      emulator = await startEmulator();
    });
    afterAll(async () => {
      await emulator?.close();
    });
    const license = (home: string): License => new License({ projectId: emulator.projectId, baseUrl: emulator.baseUrl, home, namespace: APP, rawMachineIdProvider: () => RAW });
    const judged = (home: string) => {
      const r = spawnSync(tool, ['--app', APP, '--machine-id', RAW, emulator.projectId], { encoding: 'utf8', env: { ...process.env, PLUGIN_LICENSE_HOME: home } });
      const lib = judgeTicket(ticketPath({ home, namespace: APP }, emulator.projectId), { app: APP, projectId: emulator.projectId, now: Math.floor(Date.now() / 1000), rawMachineId: RAW });
      return { plc: (JSON.parse(r.stdout) as Answer).verdict, library: lib.verdict };
    };

    it('activation on a DATA and tickets/ left 0777 makes them 0700: then both readers say valid', async () => {
      const h = mkdtempSync(join(dir, 'live-'));
      const tickets = dirname(ticketPath({ home: h, namespace: APP }, emulator.projectId));
      mkdirSync(tickets, { recursive: true });
      chmodSync(dirname(tickets), 0o777);
      chmodSync(tickets, 0o777);
      expect(judged(h)).toEqual({ plc: 'tampered', library: 'tampered' });
      const l = license(h);
      try {
        expect(await l.activate(await generateCode(emulator))).toMatchObject({ valid: true });
      } finally {
        await l.close();
      }
      expect({ data: statSync(dirname(tickets)).mode & 0o777, tickets: statSync(tickets).mode & 0o777 }).toEqual({ data: 0o700, tickets: 0o700 });
      expect(judged(h)).toEqual({ plc: 'valid', library: 'valid' });
    });

    it.skipIf(!isRoot)("a tickets folder of another user: the state is stored, the ticket refused in words, nothing written there", async () => {
      const h = mkdtempSync(join(dir, 'live-'));
      const tickets = dirname(ticketPath({ home: h, namespace: APP }, emulator.projectId));
      mkdirSync(tickets, { recursive: true, mode: 0o700 });
      chownSync(tickets, NOBODY, NOBODY);
      const l = license(h);
      try {
        const e = await l.activate(await generateCode(emulator)).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(isLicenseError(e) && e.code).toBe('cache_io');
        expect((e as Error).message).toMatch(new RegExp(`^the license state was stored, but its ticket .* could not be written \\(the tickets folder ${tickets} belongs to user 65534, not to this one \\(0\\), and that user could put their own files in it; have it removed`));
        expect(l.check()).toMatchObject({ valid: true });
      } finally {
        await l.close();
      }
      expect(spawnSync('ls', ['-A', tickets], { encoding: 'utf8' }).stdout).toBe('');
      expect(judged(h)).toEqual({ plc: 'tampered', library: 'tampered' });
    });
  });
});
