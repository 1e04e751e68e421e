// plc_start_agent, plc_start_program and plc_default_executable, compiled with cc and run for real: the started
// program's descriptors, session, parent, working folder, environment and arguments read from
// /proc, for executables at hostile paths; and what is refused, in words.
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { run, WAIT } from './helpers/run.js';
import { C_FLAGS, compile, CXX_FLAGS, hasCc, hasCxx, PLC_C } from './helpers/toolchain.js';

const linux = process.platform === 'linux';

describe.skipIf(!hasCc || !hasCxx || !linux)('plc_start_agent: detached, nothing inherited', () => {
  let dir: string;
  let probe: string;
  const started: number[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-start-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('c++', [...CXX_FLAGS, '-pthread', 'tools/monitor-probe.cpp', join(dir, 'plc.o'), '-o', join(dir, 'monitor-probe')]);
    probe = join(dir, 'monitor-probe');
  });
  afterAll(() => {
    for (const pid of started) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** A stand-in agent at `path`: records its arguments, folder and pid, then waits to be looked at. */
  function fakeAgent(path: string, record: string): void {
    mkdirSync(record, { recursive: true });
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    writeFileSync(
      path,
      `#!/bin/sh\nprintf '%s\\n' "$@" > ${q(join(record, 'args'))}\npwd > ${q(join(record, 'cwd'))}\n` +
        `echo "$PROBE_MARK" > ${q(join(record, 'env'))}\necho $$ > ${q(join(record, 'pid.tmp'))} && mv ${q(join(record, 'pid.tmp'))} ${q(join(record, 'pid'))}\nexec sleep 60\n`,
    );
    chmodSync(path, 0o755);
  }

  /** The pid the stand-in agent recorded once it ran. */
  const startedPid = (record: string): Promise<number> => vi.waitFor(() => Number(readFileSync(join(record, 'pid'), 'utf8').trim()), WAIT);

  const hostile = [
    'plain',
    'with space',
    "quote ' single",
    'quote " double',
    'dollar $HOME and `tick`',
    'glob * ? [a]',
    'back\\slash',
    'new\nline',
    'non-ascii é ü 日本',
  ];

  it.each(hostile)('starts the program at a hostile path (%j) with exactly agent run --app APP, in its own session, with no descriptor of the host', async (name) => {
    const folder = join(dir, `case-${hostile.indexOf(name)}`, name);
    mkdirSync(folder, { recursive: true });
    const record = join(dir, `record-${hostile.indexOf(name)}`);
    const exe = join(folder, `agent ${name}`);
    fakeAgent(exe, record);
    const home = join(dir, `home ${hostile.indexOf(name)} $x *`);
    mkdirSync(home);
    const r = await run(probe, ['start', exe, 'acme-audio'], { HOME: home, PROBE_MARK: `mark ${name}` });
    const answer = JSON.parse(r.stdout) as { status: string; marker_fd: number; children: number; pid: number };
    expect(answer).toMatchObject({ status: 'ok', children: 0 });
    expect(answer.marker_fd).toBe(300);
    const pid = await startedPid(record);
    started.push(pid);
    await expect.poll(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim(), { message: 'the exec of sleep' }).toBe('sleep');
    expect(readFileSync(join(record, 'args'), 'utf8')).toBe('agent\nrun\n--app\nacme-audio\n');
    expect(readFileSync(join(record, 'cwd'), 'utf8')).toBe(`${home}\n`);
    expect(readFileSync(join(record, 'env'), 'utf8')).toBe(`mark ${name}\n`);
    // Only the standard streams, all on /dev/null: not the marked descriptor, not the report pipe.
    // Read until it settles: while the exec and `sleep`'s own start run, a descriptor may be open a
    // moment (the shell's script until close-on-exec, the locale file `sleep` reads); one inherited
    // from the host would stay for good, so this still fails on a leak (at the bound).
    const described = () =>
      readdirSync(`/proc/${pid}/fd`)
        .map(Number)
        .sort((a, b) => a - b)
        .map((fd) => {
          try {
            return `${fd} ${readlinkSync(`/proc/${pid}/fd/${fd}`)}`;
          } catch {
            return `${fd} (closed)`;
          }
        });
    await expect.poll(described, { message: 'only the standard streams on /dev/null' }).toEqual(['0 /dev/null', '1 /dev/null', '2 /dev/null']);
    // Its own session and group, not the probe's; adopted (not a child of the probe, so never its zombie).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [ppid, pgid, sid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(1, 4).map(Number);
    const probeSid = Number(readFileSync(`/proc/self/stat`, 'utf8').split(') ')[1]!.split(' ')[4]);
    expect(ppid).not.toBe(answer.pid);
    expect(sid).not.toBe(probeSid);
    expect(pgid).toBe(sid);
    expect(sid).not.toBe(pid); // not the session's leader: it can never acquire a terminal
    // No signal left blocked or ignored by the host (the probe ignores none, the agent gets defaults).
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    expect(/SigBlk:\s*0+\n/.test(status)).toBe(true);
  });

  it('starts in / when there is no home', async () => {
    const record = join(dir, 'record-nohome');
    const exe = join(dir, 'agent-nohome');
    fakeAgent(exe, record);
    const r = await run(probe, ['start', exe, 'acme-audio'], { HOME: join(dir, 'no such home') });
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'ok' });
    started.push(await startedPid(record));
    expect(readFileSync(join(record, 'cwd'), 'utf8')).toBe('/\n');
  });

  it('refuses what it cannot start, in words, and starts nothing', async () => {
    const fifo = join(dir, 'a-fifo');
    execFileSync('mkfifo', [fifo]);
    const plain = join(dir, 'not-executable');
    writeFileSync(plain, '#!/bin/sh\nexit 0\n');
    chmodSync(plain, 0o644);
    const link = join(dir, 'link-to-folder');
    symlinkSync(dir, link);
    const cases: [string, string, string][] = [
      [join(dir, 'missing'), 'acme-audio', 'no_file'],
      [dir, 'acme-audio', 'no_file'],
      [fifo, 'acme-audio', 'no_file'],
      [plain, 'acme-audio', 'no_file'],
      [link, 'acme-audio', 'no_file'],
      ['/dev/zero', 'acme-audio', 'no_file'],
      ['relative/agent', 'acme-audio', 'invalid_argument'],
      ['/bin/true', '--home=/tmp', 'invalid_argument'],
      ['/bin/true', 'acme audio', 'invalid_argument'],
      ['/bin/true', 'acme/../x', 'invalid_argument'],
      ['/bin/true', 'x'.repeat(65), 'invalid_argument'],
    ];
    for (const [exe, app, expected] of cases) {
      const r = await run(probe, ['start', exe, app]);
      const answer = JSON.parse(r.stdout) as { status: string; code: number; children: number };
      expect({ exe, app, code: answer.code, children: answer.children }).toEqual({ exe, app, code: expected === 'no_file' ? 18 : 1, children: 0 });
      expect(answer.status.length).toBeGreaterThan(5);
      expect(r.code).toBe(1);
    }
  });

  it('plc_start_program, the one launcher (the JUCE module starts the manager with it): the arguments as given, standard output a pipe to the caller, nothing else inherited, the start\'s errno in words', async () => {
    const exe = join(dir, 'program that prints');
    writeFileSync(exe, '#!/bin/sh\nprintf "%s|" "$@"; pwd; readlink /proc/$$/fd/0 /proc/$$/fd/2; [ -e /proc/$$/fd/300 ] && echo leak; echo to-stderr >&2\n');
    chmodSync(exe, 0o755);
    const home = join(dir, 'home for program');
    mkdirSync(home);
    const args = ['a b', 'q"x', '', 'new\nline', "it's", '$HOME *'];
    const r = await run(probe, ['program', exe, ...args], { HOME: home });
    expect(JSON.parse(r.stdout)).toEqual({ status: 'ok', code: 0, os_error: '', output: `${args.join('|')}|${home}\n/dev/null\n/dev/null\n`, marker_fd: 300, children: 0 });
    expect(r.stderr).toBe('');
    const plain = join(dir, 'program not executable');
    writeFileSync(plain, '#!/bin/sh\n');
    chmodSync(plain, 0o644);
    const refused = async (path: string) => JSON.parse((await run(probe, ['program', path])).stdout) as Record<string, unknown>;
    expect(await refused(plain)).toMatchObject({ code: 18, os_error: 'Permission denied', output: '', children: 0 });
    expect(await refused(join(dir, 'no such program'))).toMatchObject({ code: 18, os_error: 'No such file or directory', children: 0 });
    expect(await refused('relative/program')).toMatchObject({ code: 1, os_error: '', children: 0 });
  });

  it('plc_default_executable: PLUGIN_LICENSE_EXECUTABLE wins, else ~/.local/bin/NAME; the path even when absent; a name that is a path is refused', async () => {
    const home = join(dir, 'home for default');
    mkdirSync(join(home, '.local', 'bin'), { recursive: true });
    const installed = join(home, '.local', 'bin', 'acme license');
    writeFileSync(installed, '#!/bin/sh\n');
    chmodSync(installed, 0o755);
    const q = async (vendor: string, name: string, env: NodeJS.ProcessEnv = {}) =>
      JSON.parse((await run(probe, ['default-executable', vendor, name], { HOME: home, PLUGIN_LICENSE_EXECUTABLE: '', ...env })).stdout) as { code: number; path: string };
    expect(await q('Acme', 'acme license')).toEqual({ status: 'ok', code: 0, path: installed });
    expect(await q('', 'missing one')).toMatchObject({ code: 18, path: join(home, '.local', 'bin', 'missing one') });
    expect(await q('Acme', '')).toMatchObject({ code: 18, path: join(home, '.local', 'bin', 'plugin-license') });
    expect(await q('Acme', 'acme license', { PLUGIN_LICENSE_EXECUTABLE: '/bin/true' })).toMatchObject({ code: 0, path: '/bin/true' });
    // An over-long path is named as the executable's (plc_strerror's words name no path: a socket's is no executable's).
    expect(await q('Acme', 'x', { PLUGIN_LICENSE_EXECUTABLE: `/${'e'.repeat(1100)}` })).toEqual({
      status: expect.stringMatching(/^the executable's path is too long: a path is longer than the platform or the buffer allows/),
      code: 2,
      path: '',
    });
    for (const [vendor, name] of [['Acme', '../acme'], ['Acme', 'a/b'], ['a/b', 'x'], ['..', 'x'], ['Acme', 'new\nline'], ['Acme', '.']]) {
      expect(await q(vendor!, name!), `${vendor} ${name}`).toMatchObject({ code: 1, path: '' });
    }
  });
});
