// `plugins install|uninstall|list` driven through the built CLI with a temporary HOME: bundles
// with hostile names placed byte for byte, an upgrade while a real process holds the old .so
// mapped, an item the new version dropped removed, uninstall removing exactly ours, runs killed
// (a real SIGKILL) at every step and settled by the next, bad input, read-only places and
// another user's home (setpriv).
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { asOtherUser, otherUserUnavailable, OTHER_UID, shareWithOtherUser, type SharedCopy } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUILT, cli, jsonOf, type Run } from './helpers.js';

const VST3_NAME = 'Acme "Gain" $HOME *.vst3';
const CLAP_NAME = "it's a \\ Ünïcødé.clap";
const STANDALONE_NAME = "Acme $Gain 'x'";
const OLD_NAME = 'Acme Old.vst3';

let work: string;
let home: string;
let app: string;
let record: string;
let plh: string;
let tools: string;
beforeAll(() => {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run "pnpm build" first`);
  tools = mkdtempSync(join(tmpdir(), 'plc-plugins-tools-'));
  chmodSync(tools, 0o755);
  // A plugin's code in two versions, and a host that maps it and calls it on every line of input.
  writeFileSync(join(tools, 'plugin.c'), 'const char *plugin_tag = "TAG"; int plugin_value(void) { return VALUE; }\n');
  writeFileSync(
    join(tools, 'host.c'),
    `#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h) { fprintf(stderr, "%s\\n", dlerror()); return 1; }
  int (*f)(void) = (int (*)(void))dlsym(h, "plugin_value");
  char line[64];
  printf("loaded %d\\n", f()); fflush(stdout);
  while (fgets(line, sizeof line, stdin)) { printf("value %d\\n", f()); fflush(stdout); }
  return 0;
}
`,
  );
  for (const v of [1, 2, 3]) {
    const r = spawnSync('cc', ['-shared', '-fPIC', `-DVALUE=${v}`, `-DTAG=v${v}`, '-o', join(tools, `plugin${v}.so`), join(tools, 'plugin.c')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  }
  const host = spawnSync('cc', ['-o', join(tools, 'host'), join(tools, 'host.c'), '-ldl'], { encoding: 'utf8' });
  expect(host.status, host.stderr).toBe(0);
});
afterAll(() => rmSync(tools, { recursive: true, force: true }));

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'plc-plugins-'));
  chmodSync(work, 0o755);
  home = join(work, 'home with "quotes" $x');
  app = join(work, 'Acme Audio');
  plh = join(work, 'plh');
  for (const d of [home, app, plh]) mkdirSync(d);
  record = join(app, 'installed-plugins.json');
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

const env = (extra: Record<string, string> = {}): Record<string, string> => ({ PATH: process.env.PATH!, HOME: home, PLUGIN_LICENSE_HOME: plh, PLUGIN_LICENSE_APP: 'acme-audio', ...extra });
const plugins = (args: string[], extra: Record<string, string> = {}): Promise<Run> => cli(['plugins', ...args, '--record', record], env(extra));

/** A staged plugin folder: the VST3 holds `plugin<version>.so`; `drop` leaves the old product out. */
function stage(version: 1 | 2 | 3, o: { old?: boolean; standalone?: boolean } = {}): string {
  const dir = join(work, `stage-${version}-${Math.random().toString(36).slice(2, 8)}`);
  const bundle = join(dir, 'vst3', VST3_NAME);
  mkdirSync(join(bundle, 'Contents', 'x86_64-linux'), { recursive: true });
  mkdirSync(join(bundle, 'Contents', 'Resources'), { recursive: true });
  cpSync(join(tools, `plugin${version}.so`), join(bundle, 'Contents', 'x86_64-linux', 'Acme Gain.so'));
  writeFileSync(join(bundle, 'Contents', 'Resources', 'moduleinfo.json'), JSON.stringify({ Name: 'Acme "Gain"', Version: `${version}.0.0` }));
  symlinkSync('x86_64-linux', join(bundle, 'Contents', 'current'));
  mkdirSync(join(dir, 'clap'));
  writeFileSync(join(dir, 'clap', CLAP_NAME), `clap v${version}\n`);
  if (o.old) {
    mkdirSync(join(dir, 'vst3', OLD_NAME, 'Contents'), { recursive: true });
    writeFileSync(join(dir, 'vst3', OLD_NAME, 'Contents', 'old.so'), 'old');
  }
  if (o.standalone !== false) {
    mkdirSync(join(dir, 'standalone'));
    writeFileSync(join(dir, 'standalone', STANDALONE_NAME), `#!/bin/sh\necho v${version}\n`, { mode: 0o755 });
  }
  return dir;
}

/** Every entry under `dir`: kind, relative path, contents' hash or link target, and permission bits. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (path: string, rel: string): void => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) out.push(`l ${rel} -> ${readlinkSync(path)}`);
    else if (st.isFile()) out.push(`f ${rel} ${(st.mode & 0o777).toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
    else if (st.isDirectory()) {
      out.push(`d ${rel}`);
      for (const name of readdirSync(path)) walk(join(path, name), `${rel}/${name}`);
    } else out.push(`? ${rel}`);
  };
  if (existsSync(dir)) walk(dir, '');
  return out.sort();
}

const vst3 = (): string => join(home, '.vst3');
const clap = (): string => join(home, '.clap');
const menuFolder = (): string => join(home, '.local', 'share', 'applications');
/** Hidden entries of ours (`.<name>.new-…`, `.<name>.old-…`) anywhere we place things. */
const hidden = (): string[] => [vst3(), clap(), app, menuFolder()].flatMap((d) => (existsSync(d) ? readdirSync(d).filter((n) => n.startsWith('.')).map((n) => join(d, n)) : []));

/** The user's own things in ~/.vst3 and another vendor's bundle: never touched. */
function usersOwn(): () => void {
  mkdirSync(join(vst3(), 'Other Vendor.vst3', 'Contents'), { recursive: true });
  writeFileSync(join(vst3(), 'Other Vendor.vst3', 'Contents', 'other.so'), 'another vendor');
  writeFileSync(join(vst3(), 'my notes *.txt'), 'mine');
  mkdirSync(join(vst3(), 'My Folder'));
  const before = snapshot(vst3()).filter((l) => /Other Vendor|my notes|My Folder/.test(l));
  return () => expect(snapshot(vst3()).filter((l) => /Other Vendor|my notes|My Folder/.test(l))).toEqual(before);
}

/** A process that maps a .so and calls it on each line we send. */
async function hostOf(so: string): Promise<{ child: ChildProcessWithoutNullStreams; next: () => Promise<string> }> {
  const child = spawn(join(tools, 'host'), [so]);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const r = await lines.next();
    if (r.done) throw new Error('the host ended');
    return r.value;
  };
  return { child, next };
}

describe('plugins install', () => {
  it('places every item byte for byte in its folder, with hostile names; one line each, then the rescan line', async () => {
    const dir = stage(1);
    const run = await plugins(['install', '--from', dir]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const target = join(vst3(), VST3_NAME);
    expect(snapshot(target)).toEqual(snapshot(join(dir, 'vst3', VST3_NAME)));
    expect(readFileSync(join(clap(), CLAP_NAME), 'utf8')).toBe('clap v1\n');
    expect(snapshot(join(app, STANDALONE_NAME))).toEqual(snapshot(join(dir, 'standalone', STANDALONE_NAME)));
    const desktop = readdirSync(menuFolder());
    expect(desktop).toEqual([expect.stringMatching(/^acme-audio-acme-gain-x-[0-9a-f]{8}\.desktop$/)]);
    const entry = readFileSync(join(menuFolder(), desktop[0]!), 'utf8');
    expect(entry).toContain(`\nName=${STANDALONE_NAME}\n`);
    expect(entry).toContain(`\nExec="${join(app, STANDALONE_NAME).replace('$', '\\\\$')}"\n`);
    expect(run.stdout.trim().split('\n')).toEqual([
      `CLAP ${CLAP_NAME}: ${join(clap(), CLAP_NAME)}`,
      `Standalone ${STANDALONE_NAME}: ${join(app, STANDALONE_NAME)}`,
      `menu entry ${STANDALONE_NAME}: ${join(menuFolder(), desktop[0]!)}`,
      `VST3 ${VST3_NAME}: ${target}`,
      `Rescan plugins in your music software if it does not list it's a \\ Ünïcødé and Acme "Gain" $HOME *: most find new plugins when they start; FL Studio and Ardour need a manual rescan.`,
    ]);
    const recorded = JSON.parse(readFileSync(record, 'utf8')) as { items: Array<{ path: string }>; intent?: unknown; scratch: string[] };
    expect(recorded.items.map((i) => i.path).sort()).toEqual([join(clap(), CLAP_NAME), join(app, STANDALONE_NAME), join(menuFolder(), desktop[0]!), target].sort());
    expect(recorded.intent).toBeUndefined();
    expect(recorded.scratch).toEqual([]);
    expect(hidden()).toEqual([]);

    // Again, as --json: one document; nothing to copy.
    const again = await plugins(['install', '--from', dir, '--json']);
    expect(again.code).toBe(0);
    const doc = jsonOf(again) as { installed: Array<{ path: string; unchanged?: boolean; replaced: boolean }>; removed: unknown[]; kept: unknown[]; rescan: string };
    expect(doc.installed).toHaveLength(4);
    expect(doc.installed.every((i) => i.unchanged === true && i.replaced === false)).toBe(true);
    expect(doc).toMatchObject({ removed: [], kept: [], rescan: expect.stringContaining('Rescan plugins') });
  });

  it('upgrades while a host has the old .so mapped: the host keeps running the old code, the new bundle is in place whole, an item the new version dropped is removed, nothing hidden is left', async () => {
    const check = usersOwn();
    expect((await plugins(['install', '--from', stage(1, { old: true })])).code).toBe(0);
    const so = join(vst3(), VST3_NAME, 'Contents', 'x86_64-linux', 'Acme Gain.so');
    const host = await hostOf(so);
    try {
      expect(await host.next()).toBe('loaded 1');
      const v2 = stage(2);
      const run = await plugins(['install', '--from', v2]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`VST3 ${VST3_NAME}: ${join(vst3(), VST3_NAME)} (replaced the previous version)\n`);
      expect(run.stdout).toContain(`removed ${join(vst3(), OLD_NAME)} (no longer part of these plugins)\n`);
      // The running host still calls the old code, from a mapping of a file no longer named.
      host.child.stdin.write('\n');
      expect(await host.next()).toBe('value 1');
      // Its code was moved out of the bundle first (the rule Windows needs for a loaded DLL), then removed.
      const maps = readFileSync(`/proc/${host.child.pid}/maps`, 'utf8');
      expect(maps).toContain(`${join(vst3(), `.${VST3_NAME}.old-`)}`);
      expect(maps).toMatch(/\.old-\d+-\d+ \(deleted\)\n/);
      // A fresh load gets the new one; the bundle is byte for byte the staged one.
      const fresh = await hostOf(so);
      expect(await fresh.next()).toBe('loaded 2');
      fresh.child.stdin.end();
      expect(snapshot(join(vst3(), VST3_NAME))).toEqual(snapshot(join(v2, 'vst3', VST3_NAME)));
      expect(existsSync(join(vst3(), OLD_NAME))).toBe(false);
      expect(hidden()).toEqual([]);
      check();
    } finally {
      host.child.stdin.end();
      await new Promise((r) => host.child.once('close', r));
    }
  });

  it('--log FILE: the lines it prints, also written to FILE (replaced each run) for an installer run silently; a failure part-way is its last line; a log that cannot be written is said once and changes nothing', async () => {
    const log = join(app, 'install "log" $x.log');
    const run = await plugins(['install', '--from', stage(1), '--log', log]);
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines[0]).toMatch(/^plugins install, \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines.slice(1).join('\n')).toBe(run.stdout);
    expect(run.stdout).toMatch(/Rescan plugins in your music software/);
    // A failure before anything is placed (a Standalone's name taken beside the executable), and bad input: the log's last line.
    const v2 = stage(2);
    rmSync(join(app, STANDALONE_NAME));
    writeFileSync(join(app, STANDALONE_NAME), 'not ours');
    for (const from of [v2, join(work, 'missing')]) {
      const failed = await plugins(['install', '--from', from, '--log', log]);
      expect(failed.code).not.toBe(0);
      const text = readFileSync(log, 'utf8').trim().split('\n');
      expect(text.at(-1)).toBe(`failed: ${failed.stderr.trim().replace(/^plugin-license: /, '')}`);
      expect(text).toHaveLength(2);
    }
    rmSync(join(app, STANDALONE_NAME));
    const plain = join(work, 'plain');
    writeFileSync(plain, '');
    const un = await plugins(['uninstall', '--log', join(plain, 'x.log')]);
    expect(un.code, un.stderr).toBe(0);
    expect(un.stderr.trim().split('\n')).toEqual([`could not write the log ${join(plain, 'x.log')} (ENOTDIR); the plugins are as said above`]);
    expect(existsSync(join(vst3(), VST3_NAME))).toBe(false);
  });

  it('keeps a same-named bundle it did not put there (copied by hand) under NAME.kept-TIME, which hosts do not load, and says so; uninstall leaves it', async () => {
    const check = usersOwn();
    const byHand = join(vst3(), VST3_NAME);
    mkdirSync(join(byHand, 'Contents'), { recursive: true });
    writeFileSync(join(byHand, 'Contents', 'hand.so'), 'an older build copied by hand');
    const handmade = snapshot(byHand);
    const run = await plugins(['install', '--from', stage(1), '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = jsonOf(run) as { kept: Array<{ path: string; reason: string }> };
    expect(doc.kept).toEqual([{ path: expect.stringMatching(/\.vst3\.kept-\d{8}-\d{6}$/), reason: expect.stringContaining('was already there, not put there by this installer') }]);
    const kept = doc.kept[0]!.path;
    expect(snapshot(kept)).toEqual(handmade);
    const un = await plugins(['uninstall']);
    expect(un.code, un.stderr).toBe(0);
    expect(snapshot(kept)).toEqual(handmade);
    expect(existsSync(byHand)).toBe(false);
    check();
  });

  it('refuses a Standalone whose name is taken beside the executable by something not ours, before placing anything', async () => {
    writeFileSync(join(app, STANDALONE_NAME), 'the installer owns this');
    const run = await plugins(['install', '--from', stage(1)]);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([`plugin-license: ${STANDALONE_NAME} was already there, not put there by this installer: ${join(app, STANDALONE_NAME)}; nothing was placed. Move it away (it is not one of these plugins' files) and run the installer again`]);
    expect(existsSync(vst3())).toBe(false);
    expect(readFileSync(join(app, STANDALONE_NAME), 'utf8')).toBe('the installer owns this');
  });
});

describe('plugins uninstall', () => {
  it("removes exactly what the record lists: another vendor's bundle, the user's own files and a bundle the user replaced after install stay, said in one line", async () => {
    const check = usersOwn();
    expect((await plugins(['install', '--from', stage(1)])).code).toBe(0);
    // The user replaces the CLAP with their own file of the same name.
    writeFileSync(join(clap(), CLAP_NAME), 'the user put their own here');
    const desktop = readdirSync(menuFolder())[0]!;
    const run = await plugins(['uninstall']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n').sort()).toEqual(
      [
        `kept ${join(clap(), CLAP_NAME)}: changed since it was installed (your own edit, or another program put its own there), so it was left in place`,
        `removed ${join(app, STANDALONE_NAME)}`,
        `removed ${join(menuFolder(), desktop)}`,
        `removed ${join(vst3(), VST3_NAME)}`,
      ].sort(),
    );
    expect(readFileSync(join(clap(), CLAP_NAME), 'utf8')).toBe('the user put their own here');
    expect(existsSync(join(vst3(), VST3_NAME))).toBe(false);
    expect(existsSync(join(app, STANDALONE_NAME))).toBe(false);
    expect(readdirSync(menuFolder())).toEqual([]);
    expect(existsSync(record)).toBe(false);
    expect(hidden()).toEqual([]);
    check();
    // Nothing recorded: nothing to do, said.
    const again = await plugins(['uninstall']);
    expect(again).toMatchObject({ code: 0, stdout: `no plugins are recorded in ${record}: nothing to remove\n` });
  });
});

describe('a run killed at any step (a real SIGKILL at a chosen point)', () => {
  const steps = ['intent', 'copied', 'copied#2', 'modules', 'aside', 'placed', 'placed#3', 'removing', 'removed'];
  it.each(steps)('killed at %s during an upgrade: list reads only and says so; uninstall then leaves nothing of ours and the user\'s files as they were', async (step) => {
    const check = usersOwn();
    expect((await plugins(['install', '--from', stage(1, { old: true })])).code).toBe(0);
    const killed = await plugins(['install', '--from', stage(2)], { PLUGIN_LICENSE_TEST_KILL_AT: step });
    expect(killed.code).toBeNull();
    const before = [snapshot(work), snapshot(plh)];
    const list = await plugins(['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('an install or uninstall was interrupted; the next install or uninstall finishes it');
    expect(snapshot(work)).toEqual(before[0]);
    const un = await plugins(['uninstall']);
    expect(un.code, un.stderr).toBe(0);
    for (const d of [vst3(), clap()]) expect(readdirSync(d).filter((n) => !/^(Other Vendor\.vst3|my notes \*\.txt|My Folder)$/.test(n))).toEqual([]);
    expect(readdirSync(menuFolder())).toEqual([]);
    expect(readdirSync(app)).toEqual([]);
    check();
  });

  it.each(steps)('killed at %s during an upgrade: the next install ends where an unbroken one would', async (step) => {
    const check = usersOwn();
    expect((await plugins(['install', '--from', stage(1, { old: true })])).code).toBe(0);
    const v2 = stage(2);
    expect((await plugins(['install', '--from', v2], { PLUGIN_LICENSE_TEST_KILL_AT: step })).code).toBeNull();
    const run = await plugins(['install', '--from', v2]);
    expect(run.code, run.stderr).toBe(0);
    expect(snapshot(join(vst3(), VST3_NAME))).toEqual(snapshot(join(v2, 'vst3', VST3_NAME)));
    expect(readFileSync(join(clap(), CLAP_NAME), 'utf8')).toBe('clap v2\n');
    expect(existsSync(join(vst3(), OLD_NAME))).toBe(false);
    expect(hidden()).toEqual([]);
    const listed = jsonOf(await plugins(['list', '--json'])) as { items: Array<{ state: string }>; interrupted: boolean };
    expect(listed.interrupted).toBe(false);
    expect(listed.items.map((i) => i.state)).toEqual(['in place', 'in place', 'in place', 'in place']);
    check();
  });
});

describe('an uninstall killed at any step (a real SIGKILL at a chosen point)', () => {
  it.each(['intent', 'modules', 'removing', 'removed'])('killed at %s: the bundle is whole or gone, never without its code; the next uninstall ends where an unbroken one would', async (step) => {
    const check = usersOwn();
    const v1 = stage(1);
    expect((await plugins(['install', '--from', v1])).code).toBe(0);
    expect((await plugins(['uninstall'], { PLUGIN_LICENSE_TEST_KILL_AT: step })).code).toBeNull();
    const bundle = join(vst3(), VST3_NAME);
    if (existsSync(bundle)) {
      // The kill came before the bundle moved: the next run puts its code back before anything else.
      const listed = jsonOf(await plugins(['list', '--json'])) as { interrupted: boolean };
      expect(listed.interrupted).toBe(true);
    }
    const run = await plugins(['uninstall']);
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(bundle)).toBe(false);
    expect(existsSync(record)).toBe(false);
    expect(hidden()).toEqual([]);
    check();
  });

  it('killed after the code moved out: an install puts it back, finds the bundle still ours and unchanged, and copies nothing', async () => {
    const v1 = stage(1);
    expect((await plugins(['install', '--from', v1])).code).toBe(0);
    expect((await plugins(['uninstall'], { PLUGIN_LICENSE_TEST_KILL_AT: 'modules' })).code).toBeNull();
    const bundle = join(vst3(), VST3_NAME);
    expect(existsSync(join(bundle, 'Contents', 'x86_64-linux', 'Acme Gain.so'))).toBe(false);
    const run = await plugins(['install', '--from', v1, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const doc = jsonOf(run) as { installed: Array<{ name: string; unchanged?: boolean }> };
    expect(doc.installed.find((i) => i.name === VST3_NAME)).toMatchObject({ unchanged: true });
    expect(snapshot(bundle)).toEqual(snapshot(join(v1, 'vst3', VST3_NAME)));
    expect(hidden()).toEqual([]);
  });
});

describe('bad input: a clear error, said once, exit 2, nothing placed', () => {
  const cases: Array<[string, (dir: string) => void, RegExp]> = [
    ['a missing folder', () => undefined, /--from .*: no such folder/],
    ['a plain file', (d) => writeFileSync(d, 'x'), /is not a folder; give the staged plugin folder/],
    ['an empty folder', (d) => mkdirSync(d), /holds no plugins; stage them as vst3\/<Name>\.vst3/],
    ['another entry', (d) => mkdirSync(join(d, 'vst2'), { recursive: true }), /vst2 is not a format folder/],
    ['a plain file in place of a format folder', (d) => (mkdirSync(d), writeFileSync(join(d, 'vst3'), '')), /vst3 must be a folder of VST3 items/],
    ['a file where a bundle is expected', (d) => (mkdirSync(join(d, 'vst3'), { recursive: true }), writeFileSync(join(d, 'vst3', 'A.vst3'), '')), /A\.vst3 must be a folder \(a VST3 bundle\), not a file/],
    ['a folder where a file is expected', (d) => mkdirSync(join(d, 'clap', 'A.clap'), { recursive: true }), /A\.clap must be a file, not a folder/],
    ['a link as an item', (d) => (mkdirSync(join(d, 'vst3'), { recursive: true }), symlinkSync(tmpdir(), join(d, 'vst3', 'A.vst3'))), /A\.vst3 is a link; stage the VST3 item itself/],
    ['a FIFO as an item', (d) => (mkdirSync(join(d, 'clap'), { recursive: true }), spawnSync('mkfifo', [join(d, 'clap', 'A.clap')])), /A\.clap must be a file, not a special file/],
    ['a FIFO inside a bundle', (d) => (mkdirSync(join(d, 'vst3', 'A.vst3'), { recursive: true }), spawnSync('mkfifo', [join(d, 'vst3', 'A.vst3', 'pipe')])), /A\.vst3\/pipe is a FIFO; a plugin holds only files, folders and links/],
    ['an AU on Linux', (d) => mkdirSync(join(d, 'au', 'A.component'), { recursive: true }), /AU is not a format of Linux/],
    ['a name with a new line', (d) => mkdirSync(join(d, 'vst3', 'A\nB.vst3'), { recursive: true }), /control character/],
    ['a hidden name', (d) => mkdirSync(join(d, 'vst3', '.A.vst3'), { recursive: true }), /starts with a dot/],
  ];
  it.each(cases)('%s', async (_name, make, message) => {
    const dir = join(work, 'staged $ "x" *');
    make(dir);
    const run = await plugins(['install', '--from', dir]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
    expect(readdirSync(home)).toEqual([]);
    expect(readdirSync(app)).toEqual([]);
  });

  it('under node without --record: says to give it (there is no executable folder)', async () => {
    const run = await cli(['plugins', 'list'], env());
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('this is not a packaged executable, so it has no folder of its own for installed-plugins.json: give --record FILE');
    const json = await cli(['plugins', 'install', '--from', work, '--json'], env());
    expect(json.code).toBe(2);
    expect(jsonOf(json)).toMatchObject({ error: { code: 'usage' } });
  });

  const records: Array<[string, () => void, RegExp]> = [
    ['not JSON', () => writeFileSync(record, '{"version": 1, "items": ['), /is not JSON; nothing was changed/],
    ['another document', () => writeFileSync(record, '{"version": 1, "items": [{"path": "/etc"}], "scratch": []}'), /is not a record of installed plugins this version reads/],
    ['a FIFO (never waited on)', () => spawnSync('mkfifo', [record]), /is not a regular file; nothing was changed/],
    ['a link', () => symlinkSync(join(work, 'elsewhere.json'), record), /is a link, not a regular file; nothing was changed/],
    ...(['../../x', 'Contents/../../x', '/etc/passwd', 'Contents\\..\\..\\x', ''].map((rel) => [
      `an intent whose code to put back names ${JSON.stringify(rel)}`,
      () => writeFileSync(record, JSON.stringify({ version: 1, items: [], intent: [{ format: 'vst3', name: 'A.vst3', product: 'A', path: join(vst3(), 'A.vst3'), digests: [], modules: [{ from: join(vst3(), '.A.vst3.old-1-2'), rel }] }], scratch: [] })),
      /is not a record of installed plugins this version reads/,
    ]) as Array<[string, () => void, RegExp]>),
  ];
  it.each(records)('a record that is %s: exit 1, nothing changed, for install, uninstall and list', async (_name, make, message) => {
    make();
    const dir = stage(1);
    for (const args of [['install', '--from', dir], ['uninstall'], ['list']]) {
      const run = await plugins(args);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(readdirSync(home)).toEqual([]);
  });
});

const unavailable = otherUserUnavailable();
describe.skipIf(unavailable !== undefined)(`another user (uid ${OTHER_UID}, by setpriv)`, () => {
  // That user runs the CLI's one-file build from a copy every user can read: the checkout may sit
  // in a private home (root's, 0700), closed to it.
  let shared: SharedCopy;
  beforeAll(() => {
    shared = shareWithOtherUser([dirname(BUILT)]);
  });
  afterAll(() => shared?.cleanup());
  const asOther = (args: string[], extra: Record<string, string> = {}): Promise<Run> =>
    new Promise((resolve) => {
      const [file, argv] = asOtherUser([process.execPath, shared.path('bin', 'cli.cjs'), 'plugins', ...args, '--record', record]);
      const child = spawn(file, argv, { env: env(extra) });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const own = (...paths: string[]): void => paths.forEach((p) => chownSync(p, OTHER_UID, OTHER_UID));

  it('a plug-in folder the user may not write: "could not place … (EACCES) …; the previous version is still in place", exit 1', async () => {
    own(home, app, plh);
    const v1 = stage(1, { standalone: false });
    spawnSync('chmod', ['-R', 'a+rX', work]);
    const first = await asOther(['install', '--from', v1]);
    expect(first.code, first.stderr).toBe(0);
    const before = snapshot(join(vst3(), VST3_NAME));
    chmodSync(vst3(), 0o555);
    const v2 = stage(2, { standalone: false });
    spawnSync('chmod', ['-R', 'a+rX', v2]);
    const run = await asOther(['install', '--from', v2]);
    expect(run.code).toBe(1);
    // The CLAP went in first; the VST3 could not, and says so once.
    expect(run.stdout).toBe(`CLAP ${CLAP_NAME}: ${join(clap(), CLAP_NAME)} (replaced the previous version)\n`);
    expect(run.stderr.trim().split('\n')).toEqual([`plugin-license: could not place ${VST3_NAME} in ${vst3()} (EACCES): you may not write there; check the folder's owner and permissions; the previous version is still in place`]);
    expect(snapshot(join(vst3(), VST3_NAME))).toEqual(before);
    chmodSync(vst3(), 0o755);
    expect(hidden()).toEqual([]);
    const listed = jsonOf(await asOther(['list', '--json'])) as { items: Array<{ name: string; state: string }> };
    expect(listed.items.map((i) => `${i.name} ${i.state}`).sort()).toEqual([`${CLAP_NAME} in place`, `${VST3_NAME} in place`].sort());
  });

  it("a HOME that belongs to another user (sudo kept HOME): refused before anything is written, exit 2", async () => {
    own(app, plh);
    chmodSync(home, 0o777);
    const dir = stage(1);
    spawnSync('chmod', ['-R', 'a+rX', work]);
    const run = await asOther(['install', '--from', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([`plugin-license: HOME (${home}) belongs to user 0, and this runs as user ${OTHER_UID}: plugins would be placed in another user's folders. Run it as that user (not with sudo)`]);
    expect(readdirSync(home)).toEqual([]);
    expect(existsSync(record)).toBe(false);
    expect(statSync(home).uid).toBe(0);
  });
});
