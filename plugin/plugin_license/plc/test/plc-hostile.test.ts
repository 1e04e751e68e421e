// The C client against hostile local parts, as real processes on real sockets: another user who
// holds the agent's path, peers that flood every wait, answers whose id is not ours, and files
// that are not files (FIFOs, devices, folders, links).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { asOtherUser, otherUserUnavailable } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { answer, requestId, SAMPLE_STATE, useFixtureServer } from './helpers/fixture-server.js';
import { plc as plcOf, spawnLines, type LineProcess } from './helpers/run.js';
import { hasCc, hasTool, useBinaries, useSocketDir } from './helpers/toolchain.js';

type Answer = Record<string, unknown>;
const NOBODY = 65534;
const hasMkfifo = hasTool('mkfifo');
const otherUserReason = otherUserUnavailable() ?? '';
if (hasCc && otherUserReason) console.log(`plc: skipping the other-user tests: ${otherUserReason}`);

describe.skipIf(!hasCc)('plc against hostile local parts', () => {
  const bin = useBinaries();
  const sockets = useSocketDir();
  const servers: LineProcess[] = [];
  const cleanups: Array<() => void> = [];

  beforeAll(() => {
    // Another user runs plc-flood from here.
    chmodSync(bin.dir, 0o755);
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.stop('SIGKILL');
    for (const c of cleanups.splice(0)) c();
  });

  async function serve(path: string, mode: string, asUser?: number): Promise<LineProcess> {
    const server = asUser === undefined
      ? spawnLines(bin.flood, ['serve', path, mode])
      : spawnLines(...asOtherUser([bin.flood, 'serve', path, mode], asUser));
    servers.push(server);
    await server.waitFor(/"event":"ready"/, `plc-flood serve ${mode}`);
    return server;
  }

  const plc = (args: string[], env: NodeJS.ProcessEnv = {}) => plcOf(bin, args, env);

  describe.skipIf(otherUserReason !== '')('only the user\'s own agent: who holds the path is checked before a byte is sent', () => {
    /** A folder in /tmp owned by `uid` with `mode`, as another user would have made it first. */
    const folder = (name: string, uid: number, mode: number): string => {
      const dir = join('/tmp', name);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir);
      chownSync(dir, uid, uid);
      chmodSync(dir, mode);
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      return dir;
    };

    it.each([
      ['mode 0700', 0o700],
      ['mode 0755', 0o755],
      ['mode 0777', 0o777],
    ])('another user made /tmp/APP-UID first (%s) and listens: activate and check send nothing and name the owner', async (_name, mode) => {
      // Without XDG_RUNTIME_DIR the default path is /tmp/APP-UID/agent.sock.
      const app = `plc-own-${Math.random().toString(36).slice(2, 8)}`;
      const dir = folder(`${app}-${process.getuid!()}`, NOBODY, mode);
      const server = await serve(join(dir, 'agent.sock'), 'record', NOBODY);
      const env = { XDG_RUNTIME_DIR: '', PLUGIN_LICENSE_SOCKET: '', PLUGIN_LICENSE_APP: app };
      const code = 'AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE';
      const activated = await plc(['activate', '-', 'p1', code], env);
      const checked = await plc(['-', 'p1', '5000'], env);
      for (const r of [activated, checked]) {
        expect(r.code).toBe(2);
        expect(r.answers[0]).toMatchObject({ status: 'foreign_folder' });
        expect(r.answers[0]!.message).toBe(
          `the agent's socket folder ${dir} belongs to user ${NOBODY} (nobody), not to you (0), who may have made it to receive your activation code; ` +
            'nothing was sent: have it removed, or set PLUGIN_LICENSE_SOCKET to a path in a private folder of yours',
        );
      }
      expect(JSON.stringify(activated.answers)).not.toContain(code);
      // Each connection closed with nothing received.
      await server.waitFor(/"event":"received"/, 'the first connection to end');
      await expect.poll(() => server.lines.filter((l) => l.includes('"received"'))).toHaveLength(2);
      expect(server.lines.filter((l) => l.includes('"received"'))).toEqual(['{"event":"received","bytes":0}', '{"event":"received","bytes":0}']);
    });

    it('a link in a private folder of ours to another user\'s socket: the peer\'s user is checked, nothing sent', async () => {
      const theirs = folder(`plc-theirs-${Math.random().toString(36).slice(2, 8)}`, NOBODY, 0o755);
      const server = await serve(join(theirs, 'agent.sock'), 'record', NOBODY);
      const ours = mkdtempSync('/tmp/plc-ours-');
      cleanups.push(() => rmSync(ours, { recursive: true, force: true }));
      symlinkSync(join(theirs, 'agent.sock'), join(ours, 'agent.sock'));
      const r = await plc(['activate', join(ours, 'agent.sock'), 'p1', 'SECRET-CODE-1234']);
      expect(r.answers[0]).toMatchObject({
        status: 'foreign_agent',
        message: `the program on the agent's socket ${join(ours, 'agent.sock')} runs as user ${NOBODY} (nobody), not as you (0); nothing was sent to it (start your own agent, or ask your administrator)`,
      });
      expect(await server.waitFor(/"event":"received"/, 'the connection to end')).toBe('{"event":"received","bytes":0}');
    });

    it('a folder of ours that others may write to, or that is a link, is refused though our own program listens', async () => {
      const open = mkdtempSync('/tmp/plc-open-');
      cleanups.push(() => rmSync(open, { recursive: true, force: true }));
      chmodSync(open, 0o777);
      const server = await serve(join(open, 'agent.sock'), 'record');
      const wide = await plc(['activate', join(open, 'agent.sock'), 'p1', 'SECRET-CODE-1234']);
      expect(wide.answers[0]).toMatchObject({
        status: 'foreign_folder',
        message: `the agent's socket folder ${open} is writable by other users (mode 777); nothing was sent: make it private to you (mode 700), or set PLUGIN_LICENSE_SOCKET to a path in a private folder of yours`,
      });
      chmodSync(open, 0o770);
      expect((await plc([join(open, 'agent.sock'), 'p1'])).answers[0]).toMatchObject({ status: 'foreign_folder', message: expect.stringContaining('(mode 770)') });
      chmodSync(open, 0o700);
      const link = `/tmp/plc-link-${Math.random().toString(36).slice(2, 8)}`;
      symlinkSync(open, link);
      cleanups.push(() => rmSync(link, { force: true }));
      const linked = await plc(['activate', join(link, 'agent.sock'), 'p1', 'SECRET-CODE-1234']);
      expect(linked.answers[0]).toMatchObject({ status: 'foreign_folder', message: expect.stringMatching(new RegExp(`^the agent's socket folder ${link} is a symbolic link \\(owned by user 0`)) });
      await expect.poll(() => server.lines.filter((l) => l.includes('"received"'))).toHaveLength(3);
      expect(new Set(server.lines.filter((l) => l.includes('"received"')))).toEqual(new Set(['{"event":"received","bytes":0}']));
      // The same folder, private again and named directly: the request goes through.
      await plc([join(open, 'agent.sock'), 'p1', '300']);
      await expect.poll(() => server.lines.filter((l) => l.includes('"received"'))).toHaveLength(4);
      expect(server.lines.filter((l) => l.includes('"received"'))[3]).toMatch(/"bytes":[1-9]/);
    });
  });

  describe('every wait has one deadline and can be interrupted, whatever arrives meanwhile', () => {
    const SLACK_MS = 2_000;
    const cases: Array<[verb: string, mode: string]> = [
      ['check', 'flood'],
      ['activate', 'flood'],
      ['refresh', 'flood'],
      ['subscribe', 'flood'],
      ['wait-change', 'subscribed'],
      ['connect', 'stalled'],
    ];

    /** A `mode` peer and plc-flood's one `verb` call against it (time-out `timeoutMs`), the call begun. */
    async function against(verb: string, mode: string, timeoutMs: number): Promise<{ server: LineProcess; client: LineProcess }> {
      const path = sockets.path(`w${Math.random().toString(36).slice(2, 8)}.sock`);
      const server = await serve(path, mode);
      const client = spawnLines(bin.flood, ['call', verb, path, String(timeoutMs)], {}, { stdin: true });
      servers.push(client);
      if (verb === 'wait-change') {
        // The flood queued up before the wait begins: every read finds bytes waiting.
        await client.waitFor(/"event":"subscribed"/, 'the subscription');
        await server.waitFor(/"event":"flooding"/, 'the flood');
        client.child.stdin!.write('go\n');
      }
      return { server, client };
    }

    it.each(cases)('%s against a %s peer returns the time-out at its deadline', async (verb, mode) => {
      const { server, client } = await against(verb, mode, 300);
      const result = JSON.parse(await client.waitFor(/"status"/, 'the call\'s end')) as Answer;
      expect(result).toMatchObject({ status: 'timeout' });
      expect(result!.elapsed_ms as number).toBeGreaterThanOrEqual(299);
      expect(result!.elapsed_ms as number).toBeLessThan(300 + SLACK_MS);
      if (mode !== 'stalled') expect(server.lines).toContain('{"event":"flooding"}');
    });

    it.each(cases)('%s against a %s peer returns at once when interrupted from another thread', async (verb, mode) => {
      const { server, client } = await against(verb, mode, 60_000);
      await client.waitFor(/"event":"calling"/, 'the call');
      // The control: the flood is flowing (1 MiB went out to the waiting call), then the interrupt.
      if (mode !== 'stalled') await server.waitFor(/"event":"flooding"/, 'the flood');
      client.child.stdin!.write('interrupt\n');
      const result = JSON.parse(await client.waitFor(/"status"/, 'the call\'s end')) as Answer;
      expect(result).toMatchObject({ status: 'interrupted' });
      expect(result.after_interrupt_ms as number).toBeLessThan(SLACK_MS);
    });
  });

  describe('ids are exact integers: only the token we sent is our answer', () => {
    const { serve } = useFixtureServer();
    const RIGHT = { ...SAMPLE_STATE, code_hint: 'RIGHT' };
    const wrong = (token: string) => `{"jsonrpc":"2.0","id":${token},"result":${JSON.stringify({ ...SAMPLE_STATE, code_hint: 'WRONG' })}}\n`;

    it.each([
      ['1.9'], ['1e0'], ['1E0'], ['1e5'], ['1.0'], ['1.00'], ['-1'], ['-0'], ['0'], ['10'], ['11'],
      ['18446744073709551617'], ['1' + '0'.repeat(400)], ['"1"'], ['" 1"'], ['[1]'], ['{"id":1}'], ['true'],
    ])('id %s is another request\'s answer: skipped, and the answer with id 1 is taken', async (token) => {
      const path = await serve((line, s) => {
        expect(requestId(line)).toBe(1);
        s.write(wrong(token) + answer(1, RIGHT));
      });
      const r = await plc([path, 'p1', '5000']);
      expect(r.answers[0]).toMatchObject({ status: 'ok', code_hint: 'RIGHT' });
    });

    it.each([['01'], ['+1'], ['1x'], ['1 x'], ['1.'], ['.5'], ['--1'], ['1e'], ['0x1'], ['1,,']])(
      'id %s is not JSON: a protocol error, never taken as ours',
      async (token) => {
        const path = await serve((_line, s) => s.write(wrong(token) + answer(1, RIGHT)));
        const r = await plc([path, 'p1', '5000']);
        expect(r.answers[0]).toMatchObject({ status: 'protocol' });
      },
    );
  });

  describe('a file the user picks is read only if it is a regular file, and bounded (plc_read_document)', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync('/tmp/plc-doc-');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const read = async (path: string, cap?: number) => (await plc(cap === undefined ? ['read-document', path] : ['read-document', path, String(cap)])).answers[0]!;
    const NOT_A_FILE = 'this is not a regular file (a pipe, a device or a folder); nothing was read: choose the file itself';

    it('reads a regular file, and a link to one, whatever its name holds', async () => {
      for (const name of ['response.txt', 'a b.txt', "it's \"q\" $HOME `x` \\ *.txt", 'line\nbreak.txt', 'réponse-応答.txt']) {
        const file = join(dir, name);
        writeFileSync(file, 'PLO1.abc\n');
        expect(await read(file)).toEqual({ status: 'ok', bytes: 9, text_bytes: 9 });
      }
      symlinkSync(join(dir, 'response.txt'), join(dir, 'link-to-file'));
      expect(await read(join(dir, 'link-to-file'))).toMatchObject({ status: 'ok', bytes: 9 });
      writeFileSync(join(dir, 'empty'), '');
      expect(await read(join(dir, 'empty'))).toMatchObject({ status: 'ok', bytes: 0 });
      // A NUL inside is reported through the lengths (the import refuses such a text).
      writeFileSync(join(dir, 'nul'), 'ab\0cd');
      expect(await read(join(dir, 'nul'))).toMatchObject({ status: 'ok', bytes: 5, text_bytes: 2 });
    });

    it('reads up to the limit, and refuses one byte more before reading', async () => {
      writeFileSync(join(dir, 'at-limit'), 'x'.repeat(99));
      expect(await read(join(dir, 'at-limit'), 100)).toMatchObject({ status: 'ok', bytes: 99 });
      writeFileSync(join(dir, 'over-limit'), 'x'.repeat(100));
      expect(await read(join(dir, 'over-limit'), 100)).toMatchObject({ status: 'file_too_large', bytes: 0 });
      writeFileSync(join(dir, 'huge'), Buffer.alloc(1024 * 1024, 0x41));
      expect(await read(join(dir, 'huge'))).toMatchObject({
        status: 'file_too_large',
        message: 'the file is far larger than the document it should be; nothing was read: choose the right file',
      });
    });

    it.skipIf(!hasMkfifo)('refuses a FIFO (no writer ever comes), a device, a folder, a socket and links to them, at once', async () => {
      const fifo = join(dir, 'fifo');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      symlinkSync(fifo, join(dir, 'link-to-fifo'));
      mkdirSync(join(dir, 'folder'));
      symlinkSync(join(dir, 'folder'), join(dir, 'link-to-folder'));
      symlinkSync('/dev/zero', join(dir, 'link-to-zero'));
      const path = sockets.path('doc.sock');
      await serve(path, 'record');
      for (const target of [fifo, join(dir, 'link-to-fifo'), '/dev/zero', join(dir, 'link-to-zero'), '/dev/null', '/dev/urandom', join(dir, 'folder'), join(dir, 'link-to-folder'), dir, path]) {
        // plc-check is killed after 30 s: a read that blocked or ran on would fail here.
        expect({ target, ...(await read(target)) }).toEqual({ target, status: 'not_a_file', bytes: 0, text_bytes: 0, message: NOT_A_FILE });
      }
    });

    it('says what is missing or unreadable', async () => {
      expect(await read(join(dir, 'missing'))).toMatchObject({ status: 'no_file', message: 'no such file' });
      expect(await read(join(dir, 'response.txt', 'below-a-file'))).toMatchObject({ status: 'no_file' });
      symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'));
      expect(await read(join(dir, 'dangling'))).toMatchObject({ status: 'no_file' });
      expect(await read('')).toMatchObject({ status: 'invalid_argument' });
    });
  });
});
