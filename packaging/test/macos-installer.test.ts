// The macOS installer's scripts, run by sh here with the macOS commands replaced by recorders
// (launchctl, stat, sudo, id) and the program by a recording stand-in: no Mac runs here, so what
// launchd and Installer.app then do is not tested, only what the scripts ask of them and in what
// order. The real build of the .pkg (build-pkg.sh: codesign, pkgbuild, productbuild, notarytool)
// runs on the vendor's Mac.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runBare } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { brand, brandValues } from '../src/installers.mjs';

const KIT = resolve(import.meta.dirname, '..', '..', 'examples', 'installers', 'macos');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'plc-mac-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const exe = (path: string, text: string): void => {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
};

/** A kit with the scripts branded as pnpm package does, a fake Mac (PATH) and a fake home. */
function world(options: { root: boolean; console?: string; programWorks?: boolean; installed?: boolean; agentAtLogin?: boolean; pluginsFail?: boolean }) {
  const w = mkdtempSync(join(dir, 'w-'));
  const home = join(w, 'Users', 'alice');
  const dest = join(home, 'Library', 'Application Support', 'acme-audio');
  const scripts = join(w, 'scripts');
  const bin = join(w, 'bin');
  const log = join(w, 'calls.log');
  for (const d of [dest, scripts, bin]) mkdirSync(d, { recursive: true });
  const values = { ...brandValues({ name: 'acme-license', app: 'acme-audio', baseUrl: 'https://licenses.acme.example/functions/v1', product: 'Acme Licenses', productId: 'acme-licenses', company: 'Acme Audio', agentAtLogin: options.agentAtLogin === true }, '1.2.3'), TARGET: 'darwin-arm64', ARCH: 'arm64' };
  for (const f of ['preinstall', 'postinstall', 'common.sh']) writeFileSync(join(scripts, f), brand(f, readFileSync(join(KIT, 'scripts', f), 'utf8'), values), { mode: 0o755 });
  // The macOS commands, recorded; sudo and launchctl asuser run what they were given.
  exe(join(bin, 'id'), `#!/bin/sh\necho "id $*" >> "${log}"\nif [ "$1" = -u ] && [ $# -eq 1 ]; then echo ${options.root ? 0 : 501}; else echo 501; fi\n`);
  exe(join(bin, 'stat'), `#!/bin/sh\necho "stat $*" >> "${log}"\necho ${options.console ?? 'alice'}\n`);
  exe(join(bin, 'launchctl'), `#!/bin/sh\necho "launchctl $*" >> "${log}"\nif [ "$1" = asuser ]; then shift 2; exec "$@"; fi\n`);
  exe(join(bin, 'sudo'), `#!/bin/sh\necho "sudo $*" >> "${log}"\nwhile [ "$1" = -u ] || [ "$1" = -H ]; do [ "$1" = -u ] && shift; shift; done\nexec "$@"\n`);
  exe(join(bin, 'sleep'), '#!/bin/sh\nexit 0\n');
  // The program: records its arguments; the agent answers once it was installed.
  if (options.installed !== false) {
    exe(
      join(dest, 'acme-license'),
      `#!/bin/sh\necho "program $*" >> "${log}"\ncase "$*" in\n  --version) ${options.programWorks === false ? 'exit 1' : 'echo "1.2.3 (node 22.23.2, darwin-arm64, namespace acme-audio)"'} ;;\n  *"agent status"*) grep -q "program .*agent install" "${log}" ;;\n  "plugins install"*) ${options.pluginsFail ? 'echo "~/Library/Audio/Plug-Ins/VST3 is not writable" >&2; exit 1' : 'echo "VST3 Acme Gain: ~/Library/Audio/Plug-Ins/VST3/Acme Gain.vst3"'} ;;\nesac\n`,
    );
  }
  const run = (script: string) => runBare('sh', [join(scripts, script), join(w, 'pkg'), dest, '/', '/'], { PATH: `${bin}:/usr/bin:/bin`, HOME: home });
  const calls = (): string[] => {
    try {
      return readFileSync(log, 'utf8').trim().split('\n');
    } catch {
      return [];
    }
  };
  return { run, calls, dest };
}

/**
 * What preinstall and postinstall ask of the program in every install, in order: preinstall
 * unregisters and stops the installed agent; postinstall checks the new program starts, saves the
 * service address, stops an agent an older program could not, and installs the plugins.
 */
const EVERY_INSTALL = [
  'program --app acme-audio agent uninstall',
  'program --app acme-audio agent stop',
  'program --version',
  'program --app acme-audio config set base_url https://licenses.acme.example/functions/v1',
  'program --app acme-audio agent stop',
  'program plugins install --product-id acme-licenses',
];

describe('macOS installer scripts (macOS commands recorded)', () => {
  it('by default no resident agent: preinstall stops and unregisters the installed one, postinstall saves the address and registers nothing', async () => {
    const w = world({ root: false });
    expect((await w.run('preinstall')).code).toBe(0);
    const post = await w.run('postinstall');
    expect(post.code, post.stderr).toBe(0);
    expect(w.calls().filter((c) => c.startsWith('program '))).toEqual(EVERY_INSTALL);
  });

  it('packaged with --agent-at-login: preinstall stops the installed agent, postinstall saves the address, registers the LaunchAgent and waits for it', async () => {
    const w = world({ root: false, agentAtLogin: true });
    expect((await w.run('preinstall')).code).toBe(0);
    const post = await w.run('postinstall');
    expect(post.code, post.stderr).toBe(0);
    const program = w.calls().filter((c) => c.startsWith('program '));
    expect(program).toEqual([
      ...EVERY_INSTALL,
      'program --app acme-audio agent install',
      'program --app acme-audio agent status',
    ]);
    // As the user: nothing went through sudo or launchctl asuser.
    expect(w.calls().some((c) => c.startsWith('sudo') || c.startsWith('launchctl asuser'))).toBe(false);
  });

  it('an install run as root acts for the user at the console (launchctl asuser, sudo -u)', async () => {
    const w = world({ root: true, console: 'alice', agentAtLogin: true });
    expect((await w.run('postinstall')).code).toBe(0);
    const calls = w.calls();
    expect(calls).toContain('stat -f%Su /dev/console');
    expect(calls).toContain(`launchctl asuser 501 sudo -u alice -H ${w.dest}/acme-license --app acme-audio agent install`);
    expect(calls.filter((c) => c.startsWith('program ')).at(-1)).toBe('program --app acme-audio agent status');
  });

  it('as root with nobody at the console: says the agent starts at the next login, and does not fail', async () => {
    const w = world({ root: true, console: 'root', agentAtLogin: true });
    const post = await w.run('postinstall');
    expect(post.code).toBe(0);
    expect(post.stderr).toContain('no user is logged in at the console; the agent starts at the next login');
    expect(w.calls().some((c) => c.includes('agent install'))).toBe(false);
  });

  it('a program that does not start (unsigned, wrong architecture) fails the install with what to check', async () => {
    const w = world({ root: false, programWorks: false });
    const post = await w.run('postinstall');
    expect(post.code).toBe(1);
    expect(post.stderr).toMatch(/^Acme Licenses: the installed program does not start on this Mac \(is it signed and notarized for this architecture\?\)/);
    expect(w.calls().some((c) => c.includes('agent install'))).toBe(false);
  });

  it("the vendor's plugins in the payload: placed by the program as the console user, then the staging copy removed", async () => {
    const w = world({ root: true, console: 'alice' });
    const staged = join(w.dest, 'plugins', 'vst3', 'Acme $HOME "Gain".vst3', 'Contents', 'MacOS');
    mkdirSync(staged, { recursive: true });
    writeFileSync(join(staged, 'Acme'), 'x');
    const post = await w.run('postinstall');
    expect(post.code, post.stderr).toBe(0);
    expect(post.stdout).toContain('VST3 Acme Gain: ~/Library/Audio/Plug-Ins/VST3/Acme Gain.vst3');
    expect(w.calls()).toContain(`launchctl asuser 501 sudo -u alice -H ${w.dest}/acme-license plugins install --product-id acme-licenses --from ${w.dest}/plugins`);
    expect(existsSync(join(w.dest, 'plugins'))).toBe(false);
  });

  it('plugins that cannot be placed fail the install with the reason and what to run; the staging copy stays for that', async () => {
    const w = world({ root: false, pluginsFail: true });
    mkdirSync(join(w.dest, 'plugins', 'vst3', 'Acme.vst3'), { recursive: true });
    const post = await w.run('postinstall');
    expect(post.code).toBe(1);
    expect(post.stderr).toContain('~/Library/Audio/Plug-Ins/VST3 is not writable\n');
    expect(post.stderr).toContain(`Acme Licenses: your plugins could not be installed (the lines above say why); run this installer again, or: "${w.dest}/acme-license" plugins install --product-id acme-licenses --from "${w.dest}/plugins"`);
    expect(existsSync(join(w.dest, 'plugins', 'vst3', 'Acme.vst3'))).toBe(true);
  });

  it('without plugins in the payload, postinstall records the product as installed, with none (the program stays while one product is)', async () => {
    const w = world({ root: false });
    expect((await w.run('postinstall')).code).toBe(0);
    expect(w.calls().filter((c) => c.includes('plugins'))).toEqual([`program plugins install --product-id acme-licenses`]);
  });

  it("an earlier release's one uninstaller goes once the program took its plugins over; it stays while its record lists another product's", async () => {
    const w = world({ root: false });
    writeFileSync(join(w.dest, 'uninstall.sh'), '#!/bin/sh\n');
    writeFileSync(join(w.dest, 'installed-plugins.json'), '{"version":1,"items":[],"scratch":[]}\n');
    expect((await w.run('postinstall')).code).toBe(0);
    expect(existsSync(join(w.dest, 'uninstall.sh'))).toBe(true);
    rmSync(join(w.dest, 'installed-plugins.json'));
    expect((await w.run('postinstall')).code).toBe(0);
    expect(existsSync(join(w.dest, 'uninstall.sh'))).toBe(false);
  });

  it('a first install: preinstall finds nothing to stop', async () => {
    const w = world({ root: false, installed: false });
    expect((await w.run('preinstall')).code).toBe(0);
    expect(w.calls().filter((c) => c.startsWith('program '))).toEqual([]);
  });
});
