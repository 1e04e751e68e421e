// install.sh --agent-at-login (pnpm package --agent-at-login) on a Linux computer where the agent
// cannot be registered at login: the tarball's install.sh and the installed executable's
// `agent install`, in temporary homes. No systemd --user answers here: XDG_RUNTIME_DIR is an
// empty folder (no bus socket) and no DBUS_SESSION_BUS_ADDRESS, so that holds on a computer
// that runs systemd too. The case "systemd --user answers but refuses the unit" needs a user
// manager that refuses, which no real part here can produce: a stand-in `systemctl` first on
// the PATH plays it.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { packageRelease, parseOptions } from '../src/build.mjs';
import { runBare } from '@plugin-license/test-utils';

interface Manifest {
  version: string;
  installers: Array<{ file: string }>;
}

let dir: string;
let release: string;
let manifest: Manifest;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'plc-login-'));
  release = join(dir, 'release');
  const options = parseOptions(['--targets', 'linux-x64', '--agent-at-login', '--app', 'acme-audio', '--name', 'acme-license', '--product', 'Acme Audio', '--base-url', 'http://127.0.0.1:9/functions/v1', '--out', release]);
  manifest = await packageRelease(options, { log: () => {} });
}, 300_000);

const homes: string[] = [];
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A musician's home (its name as given, under a fresh folder) with an empty runtime folder: no bus, so no user manager. */
function newHome(name = 'home'): string {
  const base = mkdtempSync(join('/tmp', 'plg-'));
  homes.push(base);
  const home = join(base, name);
  mkdirSync(join(home, 'run'), { recursive: true, mode: 0o700 });
  return home;
}

function bareEnv(home: string, path = '/usr/bin:/bin'): NodeJS.ProcessEnv {
  return { PATH: path, HOME: home, XDG_RUNTIME_DIR: join(home, 'run') };
}

function unpack(): string {
  const into = mkdtempSync(join(dir, 'tar-'));
  execFileSync('tar', ['-xzf', join(release, manifest.installers[0]!.file), '-C', into]);
  return join(into, `acme-license-${manifest.version}-linux-x64`);
}

const unitOf = (home: string): string => join(home, '.config', 'systemd', 'user', 'acme-audio-agent.service');
const installed = (home: string): string => join(home, '.local', 'lib', 'acme-audio', 'acme-license');

describe('install.sh --agent-at-login where no systemd --user answers', () => {
  it('says in short lines: installed, no agent at login here and why, plugins start it anyway; registers nothing; exits 0', async () => {
    const home = newHome();
    const r = await runBare('sh', [join(unpack(), 'install.sh')], bareEnv(home));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n').slice(0, 4)).toEqual([
      'Acme Audio is installed.',
      'Its license agent will NOT start at login on this computer:',
      'no systemd user service manager (systemd --user) runs for you here.',
      'Plugins and acme-license start the agent anyway when they need it.',
    ]);
    expect(r.stdout).toContain(`To activate, open the license manager (a page in your web browser): ${join(home, '.local', 'bin', 'acme-license')} manager\n`);
    expect(r.stdout).not.toMatch(/above|Failed to connect|systemctl/);
    expect(existsSync(unitOf(home))).toBe(false);
    expect(existsSync(installed(home))).toBe(true);
    // An upgrade says the same, once.
    const again = await runBare('sh', [join(unpack(), 'install.sh')], bareEnv(home));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.match(/will NOT start at login/g)).toHaveLength(1);
  });

  it("the executable's agent install: one sentence naming what is missing and what to do, nothing written, exit 1; --json says which problem", async () => {
    const home = newHome();
    expect((await runBare('sh', [join(unpack(), 'install.sh'), '--no-agent-at-login'], bareEnv(home))).code).toBe(0);
    const exe = installed(home);
    const text = await runBare(exe, ['agent', 'install'], bareEnv(home));
    expect(text.code).toBe(1);
    const lines = text.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^acme-license agent: the agent cannot start at login: the systemd user service manager \(systemd --user\) does not answer for this user on this computer \(systemctl --user show --property=Version: .+\); nothing was registered: plugins start the agent when they need it, or start it now with 'acme-license agent run'$/,
    );
    expect(text.stderr + text.stdout).not.toMatch(/above/);
    expect(existsSync(unitOf(home))).toBe(false);

    const json = await runBare(exe, ['agent', 'install', '--json'], bareEnv(home));
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, file: unitOf(home), manager: 'the systemd user service manager (systemd --user)', problem: 'no_service_manager', message: lines[0]!.replace(/^acme-license agent: /, '') });
    expect(existsSync(unitOf(home))).toBe(false);
  });
});

describe('install.sh --agent-at-login where systemd --user answers but refuses the unit', () => {
  /** A stand-in systemctl: answers the probe and daemon-reload, refuses enable with hostile words on two lines. */
  function refusingSystemctl(): string {
    const bin = mkdtempSync(join(dir, 'bin-'));
    const script = join(bin, 'systemctl');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        'case "$*" in',
        '  *enable*) printf \'%s\\n\' \'Failed to enable unit: "quoted" $HOME \\back\\slash * é ☕\' \'a second line that is not shown\' >&2; exit 1 ;;',
        '  *) exit 0 ;;',
        'esac',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    return bin;
  }

  for (const name of ['home', 'a $home with spaces * é']) {
    it(`exits 1 with the agent's one sentence, unescaped, on stderr; the program is installed (${JSON.stringify(name)})`, async () => {
      const home = newHome(name);
      const bin = refusingSystemctl();
      const r = await runBare('sh', [join(unpack(), 'install.sh')], bareEnv(home, `${bin}:/usr/bin:/bin`));
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('Acme Audio is installed, and plugins start its license agent when they need it.\n');
      expect(r.stderr).toBe(
        `Acme Audio: its license agent could not be set to start at login: the service file ${unitOf(home)} was written, but systemctl --user enable --now acme-audio-agent.service failed (Failed to enable unit: "quoted" $HOME \\back\\slash * é ☕); fix what it says and run that command again, or remove the file with 'acme-license agent uninstall'\n`,
      );
      expect(existsSync(installed(home))).toBe(true);
      expect(readFileSync(unitOf(home), 'utf8')).toContain('ExecStart=');
    });
  }

  it('a home whose path a unit cannot hold (a quote, a backslash): exit 1 with the sentence saying so, unescaped', async () => {
    const home = newHome('a "quoted" \\ home');
    const r = await runBare('sh', [join(unpack(), 'install.sh')], bareEnv(home, `${refusingSystemctl()}:/usr/bin:/bin`));
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `Acme Audio: its license agent could not be set to start at login: cannot write the systemd unit: the program ${JSON.stringify(installed(home))} contains a quote, a backslash or a control character, which systemd refuses in the path of the program a service runs; install the program to a folder whose path does not have it and run install from there\n`,
    );
    expect(existsSync(installed(home))).toBe(true);
    expect(existsSync(unitOf(home))).toBe(false);
  });
});
