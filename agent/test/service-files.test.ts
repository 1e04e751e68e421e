// Hostile paths and values through each per-user service format, read back by the real reader
// where one runs here: systemd 252's own parser (`systemd-analyze verify` for the program path,
// `systemd --test --user`'s dump for the command line), an XML parser for the launchd property
// list and the Task Scheduler task (written to disk as UTF-16 by the installer).
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { XMLParser } from 'fast-xml-parser';
import { parse as parsePlist } from 'plist';
import { asOtherUser, otherUserUnavailable } from '@plugin-license/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceFile, type ServiceFile, type ServiceSpec } from '../src/index.js';
import { installService, oneLine, serviceProblemSentence } from '../src/service-install.js';
import { shortDir } from './helpers.js';

/** Where a value goes: the program path or an argument, per format. */
type Place = 'systemd program' | 'systemd argument' | 'plist' | 'task program' | 'task argument';

/** Hostile values and the places that must refuse them (every other place must carry them exactly). */
const TABLE: Array<{ name: string; value: string; refusedIn: Place[] }> = [
  { name: 'spaces', value: 'two  words ', refusedIn: [] },
  { name: 'a variable', value: '$HOME', refusedIn: [] },
  { name: 'a doubled dollar', value: '$$', refusedIn: [] },
  { name: 'a braced variable', value: '${PATH}x', refusedIn: [] },
  { name: 'a specifier', value: '%h', refusedIn: [] },
  { name: 'two percent signs', value: '%USERPROFILE%', refusedIn: ['task program', 'task argument'] },
  { name: 'a double quote', value: 'say "hi"', refusedIn: ['systemd program', 'task program'] },
  { name: 'a single quote', value: "o'brien", refusedIn: ['systemd program'] },
  { name: 'a backslash', value: 'back\\slash\\', refusedIn: ['systemd program'] },
  { name: 'a newline that would inject a line', value: 'x\nExecStartPre=/bin/sh -c id', refusedIn: ['systemd program', 'task program'] },
  { name: 'a tab', value: 'a\tb', refusedIn: ['systemd program', 'task program'] },
  { name: 'a carriage return', value: 'a\rb', refusedIn: ['systemd program', 'task program'] },
  { name: 'a semicolon', value: ';', refusedIn: [] },
  { name: 'a glob', value: '*?[a-z]', refusedIn: [] },
  { name: 'XML markup', value: '<&amp;>', refusedIn: [] },
  { name: 'non-ASCII', value: 'Café ☕ 𝄞 日本', refusedIn: [] },
  { name: 'a line separator and NEL', value: 'a\u2028b\u0085c', refusedIn: [] },
  { name: 'a control character', value: 'a\u0001b', refusedIn: ['systemd program', 'plist', 'task program', 'task argument'] },
  { name: 'DEL', value: 'a\u007fb', refusedIn: ['systemd program'] },
  { name: 'U+FFFE', value: 'a\ufffeb', refusedIn: ['systemd program', 'systemd argument', 'plist', 'task program', 'task argument'] },
  { name: 'a non-character XML allows', value: 'a\ufdd0b\u{1fffe}', refusedIn: ['systemd program', 'systemd argument'] },
  { name: 'a lone surrogate', value: 'a\ud800b', refusedIn: ['systemd program', 'systemd argument', 'plist', 'task program', 'task argument'] },
  { name: 'NUL', value: 'a\u0000b', refusedIn: ['systemd program', 'systemd argument', 'plist', 'task program', 'task argument'] },
];

const AGENT_CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'plugin-license-agent.js');
const NAMESPACE = 'acme';
const spec = (command: string[], runArgs: string[], dir = '/home/ann'): ServiceSpec => ({
  namespace: NAMESPACE,
  command,
  runArgs,
  homedir: dir,
  xdgConfigHome: join(dir, 'cfg'),
  dataDir: join(dir, 'data'),
  logDir: join(dir, 'logs'),
  uid: 1000,
  username: 'PC\\ann',
});
const argsOf = (value: string) => ['--home', value, '--base-url', `https://x.example/${value}/`];
const expectedArgv = (command: string[], value: string) => [...command, 'run', '--app', NAMESPACE, ...argsOf(value)];
const REFUSAL = /^cannot write the (systemd unit|launchd property list|Task Scheduler task): the (program|--home value|--base-url value) ".*" .+; .+/s;

const dirs: Array<() => void> = [];
afterAll(() => dirs.forEach((c) => c()));

describe('systemd --user unit, read back by systemd 252', () => {
  const hasSystemd = spawnSync('systemd-analyze', ['--version']).status === 0;

  it('refuses with words what systemd cannot start, and writes the rest so that systemd runs the exact program with the exact arguments', (ctx) => {
    if (!hasSystemd) return ctx.skip('systemd-analyze is not installed (apt package systemd)');
    const noOtherUser = otherUserUnavailable();
    if (noOtherUser !== undefined) return ctx.skip(`the dump of systemd --test --user is read as another user, which ${noOtherUser}`);
    const d = shortDir();
    dirs.push(d.cleanup);
    chmodSync(d.dir, 0o755);
    const unitDir = join(d.dir, 'cfg', 'systemd', 'user');
    mkdirSync(unitDir, { recursive: true });
    mkdirSync(join(d.dir, 'run'), { mode: 0o700 });
    chownSync(join(d.dir, 'run'), 65534, 65534);
    const plain = join(d.dir, 'bin', 'agent');
    makeProgram(plain);

    const expected = new Map<string, string[]>();
    TABLE.forEach((row, i) => {
      const program = join(d.dir, 'bin', `${i} ${row.value}`, 'agent');
      const unit = (what: string, command: string[], value: string): void => {
        const name = `case-${i}-${what}.service`;
        writeFileSync(join(unitDir, name), serviceFile('linux', spec(command, argsOf(value), d.dir)).contents);
        expected.set(name, expectedArgv(command, value));
      };
      if (row.refusedIn.includes('systemd program')) {
        expect(() => serviceFile('linux', spec([program], [], d.dir)), row.name).toThrow(expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(REFUSAL) }));
      } else {
        makeProgram(program);
        unit('program', [program], 'plain');
      }
      if (row.refusedIn.includes('systemd argument')) {
        expect(() => serviceFile('linux', spec([plain], argsOf(row.value), d.dir)), row.name).toThrow(expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(REFUSAL) }));
      } else {
        unit('argument', [plain], row.value);
      }
    });
    const names = [...expected.keys()];
    writeFileSync(join(unitDir, 'cases.target'), `[Unit]\nWants=${names.join(' ')}\n`);

    // verify loads each unit and checks that its program exists at the path systemd parsed.
    const verify = spawnSync('systemd-analyze', ['verify', '--man=no', ...names.map((n) => join(unitDir, n))], { encoding: 'utf8' });
    expect(verify.stdout + verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    // The same check fails when the program is not exactly there.
    const missing = join(unitDir, 'missing.service');
    writeFileSync(missing, serviceFile('linux', spec([join(d.dir, 'bin', 'not here $x', 'agent')], [], d.dir)).contents);
    const verifyMissing = spawnSync('systemd-analyze', ['verify', '--man=no', missing], { encoding: 'utf8' });
    expect(verifyMissing.status).not.toBe(0);
    expect(verifyMissing.stderr).toContain(`Command ${join(d.dir, 'bin', 'not here $x', 'agent')} is not executable`);

    // The command line as systemd stored it (argv[0] first, after "@"), from its own dump.
    const dump = spawnSync(
      ...asOtherUser(['/lib/systemd/systemd', '--test', '--user', '--unit=cases.target', '--no-pager', '--log-target=console']),
      { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: d.dir, XDG_CONFIG_HOME: join(d.dir, 'cfg'), XDG_RUNTIME_DIR: join(d.dir, 'run') }, timeout: 60_000 },
    );
    expect(dump.status, dump.stderr).toBe(0);
    const lines = commandLines(dump.stdout);
    for (const [name, argv] of expected) {
      const stored = lines.get(name);
      expect(stored, name).toBeDefined();
      // Nothing left for systemd to expand at start: every "$" is doubled, and "$$" gives "$".
      for (const word of stored!) expect(word, name).toMatch(/^(?:[^$]|\$\$)*$/s);
      expect(stored!.map((w) => w.replace(/\$\$/g, '$')), name).toEqual(argv);
    }
  });

  it('install through the command line: a program path systemd refuses is said once, nothing written; a hostile --home is written so systemd reads it back', (ctx) => {
    if (!hasSystemd) return ctx.skip('systemd-analyze is not installed (apt package systemd)');
    const d = shortDir();
    dirs.push(d.cleanup);
    const env = { PATH: process.env.PATH, HOME: d.dir, XDG_CONFIG_HOME: join(d.dir, 'cfg') };
    const unit = join(d.dir, 'cfg', 'systemd', 'user', 'acme-agent.service');
    // A Node whose own path holds an apostrophe (process.execPath is where the binary really is).
    const node = join(d.dir, "o'brien", 'node');
    mkdirSync(join(node, '..'));
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
    const refused = spawnSync(node, [AGENT_CLI, 'install', '--no-enable', '--app', 'acme'], { env, encoding: 'utf8', timeout: 60_000 });
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `plugin-license-agent: cannot write the systemd unit: the program ${JSON.stringify(node)} contains a quote, a backslash or a control character, which systemd refuses in the path of the program a service runs; install the program to a folder whose path does not have it and run install from there\n`,
    );
    expect(existsSync(unit)).toBe(false);

    const home = join(d.dir, 'home $HOME 100% "x"\nExecStartPre=/bin/sh');
    const written = spawnSync(process.execPath, [AGENT_CLI, 'install', '--no-enable', '--app', 'acme', '--home', home], { env, encoding: 'utf8', timeout: 60_000 });
    expect(written.stderr).toBe('');
    expect(written.status).toBe(0);
    const contents = readFileSync(unit, 'utf8');
    expect(contents.split('\n').filter((l) => l.startsWith('ExecStart'))).toHaveLength(1);
    const verify = spawnSync('systemd-analyze', ['verify', '--man=no', unit], { encoding: 'utf8' });
    expect(verify.stdout + verify.stderr).toBe('');
    expect(verify.status).toBe(0);
  });

  it('a namespace outside the namespace rule is refused in every format', () => {
    for (const platform of ['linux', 'darwin', 'win32'] as const) {
      expect(() => serviceFile(platform, { ...spec(['/x/agent'], []), namespace: 'a\nExecStartPre=/bin/sh' })).toThrow(/namespace .* is not usable as a folder name/s);
    }
  });
});

describe('launchd property list, read back by a plist parser', () => {
  it.each(TABLE)('$name', ({ value, refusedIn }) => {
    const command = [`/Applications/A ${value}.app/Contents/MacOS/agent`];
    const s = { ...spec(command, argsOf(value)), logDir: `/Users/ann/Library/Logs/${value}` };
    if (refusedIn.includes('plist')) {
      expect(() => serviceFile('darwin', s)).toThrow(expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(REFUSAL) }));
      return;
    }
    const parsed = parsePlist(serviceFile('darwin', s).contents) as Record<string, unknown>;
    expect(parsed.ProgramArguments).toEqual(expectedArgv(command, value));
    expect(parsed.StandardOutPath).toBe(`/Users/ann/Library/Logs/${value}/launchd.out.log`);
    expect(parsed.StandardErrorPath).toBe(`/Users/ann/Library/Logs/${value}/launchd.err.log`);
  });
});

describe('Task Scheduler task, written as UTF-16 and read back by an XML parser', () => {
  const xml = new XMLParser({ trimValues: false, parseTagValue: false, processEntities: true, htmlEntities: true });

  it.each(TABLE)('$name', ({ value, refusedIn }) => {
    const program = `C:\\Users\\ann\\A ${value}\\agent.exe`;
    const d = shortDir();
    dirs.push(d.cleanup);
    const refusedArgs = refusedIn.includes('task argument');
    if (refusedIn.includes('task program')) {
      expect(() => serviceFile('win32', spec([program], []))).toThrow(expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(REFUSAL) }));
    } else {
      writeTask(serviceFile('win32', spec([program], [])), d.dir);
      expect(taskAction(xml, join(d.dir, 'agent-task.xml')).Command).toBe(program);
    }
    const plain = 'C:\\Program Files\\Acme\\agent.exe';
    if (refusedArgs) {
      expect(() => serviceFile('win32', spec([plain], argsOf(value)))).toThrow(expect.objectContaining({ code: 'config_invalid', message: expect.stringMatching(REFUSAL) }));
      return;
    }
    writeTask(serviceFile('win32', spec([plain], argsOf(value))), d.dir);
    const action = taskAction(xml, join(d.dir, 'agent-task.xml'));
    expect(action.Command).toBe(plain);
    expect(windowsCommandLineArgs(action.Arguments)).toEqual(expectedArgv([], value));
  });

  it('refuses a program path that is not absolute on Windows', () => {
    expect(() => serviceFile('win32', spec(['/usr/bin/agent'], []))).toThrow(/the program "\/usr\/bin\/agent" is not an absolute path with a drive or a share; give its absolute path/);
  });
});

/** The installer's own write of a task file, into a folder of this computer instead of the Windows one it names. */
function writeTask(file: ServiceFile, dir: string): void {
  installService({ ...file, path: join(dir, 'agent-task.xml') }, { dryRun: false, manage: false });
}

function makeProgram(path: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '#!/bin/sh\n', { mode: 0o755 });
}

/** The Exec action of a task file as written: a UTF-16LE byte order mark, then the XML. */
function taskAction(xml: XMLParser, path: string): { Command: string; Arguments: string } {
  const bytes = readFileSync(path);
  expect([...bytes.subarray(0, 2)]).toEqual([0xff, 0xfe]);
  const doc = xml.parse(bytes.subarray(2).toString('utf16le')) as { Task: { Actions: { Exec: { Command: string; Arguments?: string } } } };
  const exec = doc.Task.Actions.Exec;
  return { Command: exec.Command, Arguments: exec.Arguments ?? '' };
}

/**
 * Microsoft's documented rules for splitting a command line into arguments (the C runtime's and
 * CommandLineToArgvW's, which agree on what the quoting rule writes): Task Scheduler itself
 * cannot run here, so this stands in for the program that reads the task's arguments.
 */
function windowsCommandLineArgs(line: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < line.length) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) break;
    let arg = '';
    let quoted = false;
    for (; i < line.length; i++) {
      const c = line[i]!;
      if (c === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n++;
          i++;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(n >> 1);
          if (n % 2 === 1) arg += '"';
          else quoted = !quoted;
        } else {
          arg += '\\'.repeat(n);
          i--;
        }
      } else if (c === '"') {
        quoted = !quoted;
      } else if (!quoted && (c === ' ' || c === '\t')) {
        break;
      } else {
        arg += c;
      }
    }
    args.push(arg);
  }
  return args;
}

/**
 * The `Command Line:` of each unit's ExecStart in `systemd --test`'s dump, split into words:
 * systemd prints each word bare or double-quoted with C escapes (`\$` for a dollar, octal for
 * other bytes).
 */
function commandLines(dump: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let unit: string | undefined;
  let inExecStart = false;
  for (const line of dump.split('\n')) {
    const u = /^\s*-> Unit (\S+):$/.exec(line);
    if (u) {
      unit = u[1];
      inExecStart = false;
    } else if (/^\s*-> ExecStart:$/.test(line)) {
      inExecStart = true;
    } else if (inExecStart && unit !== undefined && /^\s*Command Line: /.test(line)) {
      out.set(unit, dumpWords(line.replace(/^\s*Command Line: /, '')));
      inExecStart = false;
    }
  }
  return out;
}

function dumpWords(text: string): string[] {
  const words: string[] = [];
  const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11 };
  let i = 0;
  while (i < text.length) {
    if (text[i] === ' ') {
      i++;
      continue;
    }
    const bytes: number[] = [];
    const quoted = text[i] === '"';
    if (quoted) i++;
    while (i < text.length && (quoted ? text[i] !== '"' : text[i] !== ' ')) {
      if (text[i] === '\\') {
        const e = text[i + 1]!;
        if (/[0-7]/.test(e)) {
          bytes.push(parseInt(text.slice(i + 1, i + 4), 8));
          i += 4;
        } else {
          bytes.push(simple[e] ?? e.charCodeAt(0));
          i += 2;
        }
      } else {
        const cp = text.codePointAt(i)!;
        bytes.push(...Buffer.from(String.fromCodePoint(cp)));
        i += cp > 0xffff ? 2 : 1;
      }
    }
    if (quoted) i++;
    words.push(Buffer.from(bytes).toString('utf8'));
  }
  return words;
}

describe('install where the service manager cannot be reached or refuses (a stand-in runner: no such manager runs here)', () => {
  const linux = (dir: string): ServiceFile => ({ ...serviceFile('linux', spec(['/opt/acme/agent'], ['run'])), path: join(dir, 'user', 'acme-agent.service') });
  const hostile = 'Failed to connect to bus: "quoted" $HOME \\back\\slash * é ☕\r\nsecond line\n';

  it('no manager: the probe fails, nothing is written, one sentence names what is missing and what to do', () => {
    const { dir, cleanup } = shortDir();
    try {
      const ran: string[] = [];
      const result = installService(linux(dir), { dryRun: false, manage: true, platform: 'linux', run: (c, a) => (ran.push([c, ...a].join(' ')), { ok: false, output: hostile }) });
      expect(ran).toEqual(['systemctl --user show --property=Version']);
      expect(existsSync(join(dir, 'user', 'acme-agent.service'))).toBe(false);
      expect(result).toMatchObject({ ok: false, problem: { code: 'no_service_manager', detail: 'systemctl --user show --property=Version: Failed to connect to bus: "quoted" $HOME \\back\\slash * é ☕' } });
      expect(serviceProblemSentence(result, 'acme-license agent')).toBe(
        'the agent cannot start at login: the systemd user service manager (systemd --user) does not answer for this user on this computer (systemctl --user show --property=Version: Failed to connect to bus: "quoted" $HOME \\back\\slash * é ☕); nothing was registered: plugins start the agent when they need it, or start it now with \'acme-license agent run\'',
      );
    } finally {
      cleanup();
    }
  });

  it('a refusing manager: the file is written, the sentence names the failed command and its first line', () => {
    const { dir, cleanup } = shortDir();
    try {
      const result = installService(linux(dir), { dryRun: false, manage: true, platform: 'linux', run: (_c, a) => ({ ok: !a.includes('enable'), output: a.includes('enable') ? hostile : '' }) });
      expect(existsSync(join(dir, 'user', 'acme-agent.service'))).toBe(true);
      expect(result.problem).toEqual({ code: 'enable_failed', command: 'systemctl --user enable --now acme-agent.service', detail: 'Failed to connect to bus: "quoted" $HOME \\back\\slash * é ☕' });
      expect(serviceProblemSentence(result, 'x agent')).toBe(
        `the service file ${join(dir, 'user', 'acme-agent.service')} was written, but systemctl --user enable --now acme-agent.service failed (Failed to connect to bus: "quoted" $HOME \\back\\slash * é ☕); fix what it says and run that command again, or remove the file with 'x agent uninstall'`,
      );
    } finally {
      cleanup();
    }
  });

  it('oneLine: the first non-empty line, no control characters, at most 200 characters', () => {
    const table: Array<[string, string]> = [
      ['', ''],
      ['\n\n  \r\n', ''],
      ['\r\nfirst\r\nsecond', 'first'],
      ['tab\there\u0007bell\u001b[31mred', 'tab here bell [31mred'],
      ['non-ASCII é ☕ 𝄞', 'non-ASCII é ☕ 𝄞'],
      ['x'.repeat(500), `${'x'.repeat(199)}…`],
    ];
    for (const [output, line] of table) expect([output, oneLine(output)]).toEqual([output, line]);
  });
});
