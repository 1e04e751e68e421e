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
let legacy: string;
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
  record = join(app, 'installed-plugins', `${PRODUCT_ID}.json`);
  legacy = join(app, 'installed-plugins.json');
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

const env = (extra: Record<string, string> = {}): Record<string, string> => ({ PATH: process.env.PATH!, HOME: home, PLUGIN_LICENSE_HOME: plh, PLUGIN_LICENSE_APP: 'acme-audio', ...extra });
/** The product of these runs; install and uninstall name it, as a product's installer does. */
const PRODUCT_ID = 'acme-gain';
const productArgs = (args: string[], id = PRODUCT_ID): string[] => (['install', 'uninstall'].includes(args[0]!) ? ['--product-id', id] : []);
const plugins = (args: string[], extra: Record<string, string> = {}, id = PRODUCT_ID): Promise<Run> => cli(['plugins', ...args, ...productArgs(args, id), '--folder', app], env(extra));

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
    expect(again).toMatchObject({ code: 0, stdout: `no plugins are recorded for ${PRODUCT_ID} in ${app}: nothing to remove\n` });
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

/** A product's staged folder: each named VST3 bundle (its version in a file), CLAP file and Standalone. */
function stageProduct(parts: { vst3?: string[]; clap?: string[]; standalone?: string[] }, version = 1): string {
  const dir = join(work, `stage-${Math.random().toString(36).slice(2, 8)}`);
  for (const name of parts.vst3 ?? []) {
    mkdirSync(join(dir, 'vst3', `${name}.vst3`, 'Contents', 'x86_64-linux'), { recursive: true });
    writeFileSync(join(dir, 'vst3', `${name}.vst3`, 'Contents', 'x86_64-linux', `${name}.so`), `${name} v${version}`);
  }
  for (const name of parts.clap ?? []) {
    mkdirSync(join(dir, 'clap'), { recursive: true });
    writeFileSync(join(dir, 'clap', `${name}.clap`), `${name} v${version}`);
  }
  for (const name of parts.standalone ?? []) {
    mkdirSync(join(dir, 'standalone'), { recursive: true });
    writeFileSync(join(dir, 'standalone', name), `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
  }
  return dir;
}

describe('one vendor, several products: each owns only its own plugins', () => {
  const A = { id: 'acme-gain', name: 'Acme Gain', parts: { vst3: ['Acme Gain'], standalone: ['Acme Gain'] }, project: '11111111-1111-4111-8111-111111111111' };
  const B = { id: 'acme-reverb', name: 'Acme "Reverb" $x', parts: { vst3: ['Acme Reverb'], clap: ['Acme Reverb'], standalone: ['Acme Reverb'] }, project: '22222222-2222-4222-8222-222222222222' };
  const C = { id: 'acme-delay', name: 'Acme Delay', parts: { vst3: ['Acme Delay'] }, project: '33333333-3333-4333-8333-333333333333' };
  type Product = typeof A | typeof B | typeof C;
  const install = (p: Product, version = 1): Promise<Run> => cli(['plugins', 'install', '--product-id', p.id, '--product', p.name, '--project', `${p.project}=${p.name} Plugin`, '--from', stageProduct(p.parts, version), '--folder', app, '--json'], env());
  const uninstall = (p: Product | undefined): Promise<Run> => cli(['plugins', 'uninstall', ...(p ? ['--product-id', p.id] : []), '--folder', app, '--json'], env());
  const products = async (): Promise<Array<{ product_id: string; product: string | null; projects: Array<{ project_id: string; name: string }> }>> => (jsonOf(await cli(['plugins', 'products', '--folder', app, '--json'], env())) as { products: [] }).products;
  /** Everything of a product in place, byte for byte as staged at `version`. */
  const placed = (p: Product, version = 1): void => {
    for (const v of p.parts.vst3 ?? []) expect(readFileSync(join(vst3(), `${v}.vst3`, 'Contents', 'x86_64-linux', `${v}.so`), 'utf8')).toBe(`${v} v${version}`);
    for (const c of 'clap' in p.parts ? p.parts.clap : []) expect(readFileSync(join(clap(), `${c}.clap`), 'utf8')).toBe(`${c} v${version}`);
    for (const s of 'standalone' in p.parts ? p.parts.standalone : []) expect(readFileSync(join(app, s), 'utf8')).toBe(`#!/bin/sh\necho ${version}\n`);
  };
  const gone = (p: Product): void => {
    for (const v of p.parts.vst3 ?? []) expect(existsSync(join(vst3(), `${v}.vst3`))).toBe(false);
    for (const c of 'clap' in p.parts ? p.parts.clap : []) expect(existsSync(join(clap(), `${c}.clap`))).toBe(false);
    for (const s of 'standalone' in p.parts ? p.parts.standalone : []) expect(existsSync(join(app, s))).toBe(false);
  };
  const menuEntries = (): string[] => (existsSync(menuFolder()) ? readdirSync(menuFolder()).sort() : []);

  it('install A, B, C; uninstall B (the middle): A and C intact and named; upgrade A; uninstall A, then C: nothing of theirs is left', async () => {
    const check = usersOwn();
    for (const p of [A, B, C]) {
      const run = await install(p);
      expect(run.code, run.stderr).toBe(0);
      expect((jsonOf(run) as { removed: unknown[]; kept: unknown[] })).toMatchObject({ removed: [], kept: [] });
    }
    for (const p of [A, B, C]) placed(p);
    expect(menuEntries()).toHaveLength(2);
    expect((await products()).map((p) => [p.product_id, p.product, p.projects])).toEqual([
      [C.id, C.name, [{ project_id: C.project, name: `${C.name} Plugin` }]],
      [A.id, A.name, [{ project_id: A.project, name: `${A.name} Plugin` }]],
      [B.id, B.name, [{ project_id: B.project, name: `${B.name} Plugin` }]],
    ]);
    // The middle one goes: only its own.
    const removedB = await uninstall(B);
    expect(removedB.code, removedB.stderr).toBe(0);
    expect(jsonOf(removedB)).toMatchObject({ kept: [], remaining: [{ product_id: C.id, product: C.name }, { product_id: A.id, product: A.name }] });
    gone(B);
    placed(A);
    placed(C);
    expect(menuEntries()).toEqual([expect.stringMatching(/^acme-audio-acme-gain-[0-9a-f]{8}\.desktop$/)]);
    expect((await products()).map((p) => p.product_id)).toEqual([C.id, A.id]);
    // A's upgrade replaces A's, touches nothing of C's.
    const upgraded = await install(A, 2);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    placed(A, 2);
    placed(C);
    // Uninstalled in any order, the last one leaves nothing: no record, no folder of records.
    for (const p of [A, C]) {
      const run = await uninstall(p);
      expect(run.code, run.stderr).toBe(0);
      gone(p);
    }
    expect(jsonOf(await uninstall(C))).toMatchObject({ record_found: false, remaining: [] });
    expect(readdirSync(app)).toEqual([]);
    expect(menuEntries()).toEqual([]);
    expect(hidden()).toEqual([]);
    check();
  });

  it('a plugin two products ship (a bundle and a suite): the second install takes it as the vendor\'s, not a stranger\'s; it goes with the last of them', async () => {
    const suite = { id: 'acme-suite', name: 'Acme Suite', parts: { vst3: ['Acme Gain', 'Acme Delay'] }, project: '44444444-4444-4444-8444-444444444444' };
    expect((await install(A)).code).toBe(0);
    const both = await install(suite, 2);
    expect(both.code, both.stderr).toBe(0);
    expect(jsonOf(both)).toMatchObject({ kept: [], installed: expect.arrayContaining([expect.objectContaining({ name: 'Acme Gain.vst3', replaced: true })]) });
    expect(readdirSync(vst3()).filter((n) => n.includes('kept'))).toEqual([]);
    const first = await uninstall(A);
    expect(first.code, first.stderr).toBe(0);
    // A's own Standalone and menu entry go; the bundle the suite has too stays.
    expect(jsonOf(first)).toMatchObject({ removed: [expect.objectContaining({ format: 'standalone' }), expect.objectContaining({ format: 'menu' })], kept: [{ path: join(vst3(), 'Acme Gain.vst3'), reason: 'also part of Acme Suite, so it stays' }] });
    placed(suite, 2);
    const last = await uninstall(suite);
    expect(last.code, last.stderr).toBe(0);
    gone(suite);
    expect(readdirSync(app)).toEqual([]);
  });

  /** The previous release's one record, as it wrote it: product A's items, in `installed-plugins.json`. */
  async function legacyOf(p: Product): Promise<void> {
    expect((await install(p)).code).toBe(0);
    const written = JSON.parse(readFileSync(join(app, 'installed-plugins', `${p.id}.json`), 'utf8')) as { items: unknown[] };
    rmSync(join(app, 'installed-plugins'), { recursive: true });
    // An editor's byte order mark too: the record is read all the same.
    writeFileSync(legacy, `\uFEFF${JSON.stringify({ version: 1, items: written.items, scratch: [] }, null, 2)}\n`);
  }

  it("an earlier release's record is the product's that wrote it: its upgrade takes it over, and nothing is removed", async () => {
    await legacyOf(A);
    const run = await install(A, 2);
    expect(run.code, run.stderr).toBe(0);
    expect(jsonOf(run)).toMatchObject({ removed: [], kept: [] });
    placed(A, 2);
    expect(existsSync(legacy)).toBe(false);
    expect((await products()).map((p) => p.product_id)).toEqual([A.id]);
  });

  it("an earlier release's record of another product stays that product's: a new product's install and uninstall leave its plugins; its own (earlier) uninstaller removes them, then stops while the new product uses the program", async () => {
    await legacyOf(A);
    expect((await install(B)).code).toBe(0);
    placed(A);
    placed(B);
    // Kept, emptied, so the earlier uninstaller still asks the program before it removes anything.
    expect(JSON.parse(readFileSync(legacy, 'utf8'))).toEqual({ version: 1, items: [], scratch: [] });
    expect((await products()).map((p) => [p.product_id, p.product])).toEqual([[B.id, B.name], ['earlier-installer', null]]);
    expect((await cli(['plugins', 'products', '--folder', app], env())).stdout).toBe(`${B.name}\nan earlier installer's plugins\n`);
    // The earlier release's uninstaller runs "plugins uninstall": its plugins go, and it learns the program stays.
    for (const round of [1, 2]) {
      const old = await uninstall(undefined);
      expect(old.code, `round ${round}`).toBe(1);
      expect(jsonOf(old)).toMatchObject({ error: { code: 'program_in_use', message: `the earlier installer's plugins are removed, but the program stays: ${B.name} still uses it. Uninstall that product to remove it` } });
      gone(A);
      placed(B);
      expect(existsSync(legacy)).toBe(true);
    }
    const last = await uninstall(B);
    expect(last.code, last.stderr).toBe(0);
    expect(readdirSync(app)).toEqual([]);
  });
});

describe("a record's list of temporary names: only this command's own, in its own places, are ever removed", () => {
  it('ignores (says once, drops) every other path an edited record lists: another vendor\'s hidden folder, a hidden menu file, other folders, .. and relative paths; removes ours, a link of that pattern as a link', async () => {
    expect((await plugins(['install', '--from', stage(1)])).code).toBe(0);
    const outside = join(work, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'theirs');
    const theirs = [
      join(vst3(), '.OtherVendor Presets'),
      join(menuFolder(), '.hidden-other'),
      join(home, '.x.old-1'),
      join(outside, '.y.new-2'),
      join(vst3(), '..', '.z.old-3'),
      `${vst3()}/./.w.old-4`,
      join(vst3(), 'Visible.vst3'),
      join(vst3(), '.no-pid.old-'),
      join(vst3(), '.spoof.old-1x'),
      'relative/.a.old-1',
    ];
    for (const path of theirs.filter((p) => p.startsWith('/'))) {
      mkdirSync(path, { recursive: true });
      writeFileSync(join(path, 'file'), 'not ours');
    }
    const ours = [join(vst3(), `.${VST3_NAME}.old-99`), join(clap(), `.${CLAP_NAME}.new-7-2`)];
    for (const path of ours) mkdirSync(path);
    const link = join(vst3(), '.link.old-5');
    symlinkSync(outside, link);
    const recorded = JSON.parse(readFileSync(record, 'utf8')) as { scratch: string[] };
    writeFileSync(record, JSON.stringify({ ...recorded, scratch: [...theirs, ...ours, link] }));
    const run = await plugins(['install', '--from', stage(1)]);
    expect(run.code, run.stderr).toBe(0);
    const ignored = run.stdout.split('\n').filter((l) => l.startsWith('ignored '));
    expect(ignored).toEqual(theirs.map((p) => `ignored ${p}: the record listed it among its temporary files, but it is not one, so it was left alone`));
    for (const path of theirs.filter((p) => p.startsWith('/'))) expect(readFileSync(join(path, 'file'), 'utf8'), path).toBe('not ours');
    for (const path of [...ours, link]) expect(existsSync(path), path).toBe(false);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('theirs');
    expect((JSON.parse(readFileSync(record, 'utf8')) as { scratch: string[] }).scratch).toEqual([]);
    // Said once: the record no longer lists them.
    const again = await plugins(['install', '--from', stage(1)]);
    expect(again.stdout).not.toContain('ignored');
  });
});

describe('names no file system can give as text, and names the program keeps for itself', () => {
  it.each([
    ['a bundle', (dir: string) => mkdirSync(Buffer.concat([Buffer.from(join(dir, 'vst3', 'Acme ')), Buffer.from([0xff, 0xfe]), Buffer.from('.vst3')]), { recursive: true })],
    ['a file inside a bundle', (dir: string) => (mkdirSync(join(dir, 'vst3', 'Acme.vst3', 'Contents'), { recursive: true }), writeFileSync(Buffer.concat([Buffer.from(join(dir, 'vst3', 'Acme.vst3', 'Contents', 'preset-')), Buffer.from([0xc3, 0x28])]), 'x'))],
    ['a format folder', (dir: string) => mkdirSync(Buffer.concat([Buffer.from(join(dir, 'vst')), Buffer.from([0xe9])]), { recursive: true })],
  ])('a staged name with bytes that are not UTF-8 (%s): exit 2, one line saying so, nothing placed', async (_what, make) => {
    const dir = join(work, 'staged');
    mkdirSync(dir);
    make(dir);
    const run = await plugins(['install', '--from', dir]);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^plugin-license: .* is named with bytes that are not UTF-8 text \(([0-9a-f]{2} ?)+\), which cannot be copied by name; the vendor must rename it$/)]);
    expect(run.code).toBe(2);
    expect(readdirSync(app)).toEqual([]);
  });

  it.each(['uninstall.sh', 'uninstall-acme-gain.sh', 'install.sh', 'installed-plugins', 'installed-plugins.json', 'installed-plugins.json.lock', 'config.json', 'plugins'])('a Standalone named %j, a name the installers keep beside the program: exit 2, saying which, nothing placed', async (name) => {
    const dir = stageProduct({ vst3: ['Acme Gain'], standalone: [name] });
    const run = await plugins(['install', '--from', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^plugin-license: .*/standalone/${name.replace(/[.]/g, '\\.')}: a Standalone goes beside the program, where this name is taken by .+: rename it$`))]);
    expect(readdirSync(app)).toEqual([]);
    expect(existsSync(vst3())).toBe(false);
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

  it('under node without --folder: says to give it (there is no executable folder); install without a product: says to name it', async () => {
    const run = await cli(['plugins', 'list'], env());
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('this is not a packaged executable, so it has no folder of its own for the records of installed plugins (installed-plugins/): give --folder DIR');
    const unnamed = await cli(['plugins', 'install', '--from', stage(1), '--folder', app], env());
    expect(unnamed).toMatchObject({ code: 2, stdout: '' });
    expect(unnamed.stderr.trim()).toBe('plugin-license: give --product-id ID: the product these plugins belong to (each product installer of a vendor owns only its own)');
    for (const id of ['Acme Gain', 'acme--gain', '-acme', 'earlier-installer', 'a'.repeat(41)]) {
      const bad = await cli(['plugins', 'install', '--from', stage(1), '--folder', app, '--product-id', id], env());
      expect(bad.code, id).toBe(2);
      expect(bad.stderr).toContain(`--product-id ${JSON.stringify(id)}: `);
    }
    expect(readdirSync(app)).toEqual([]);
    const json = await cli(['plugins', 'install', '--from', work, '--product-id', PRODUCT_ID, '--json'], env());
    expect(json.code).toBe(2);
    expect(jsonOf(json)).toMatchObject({ error: { code: 'usage' } });
  });

  const records: Array<[string, () => void, RegExp]> = [
    ['not JSON', () => writeFileSync(legacy, '{"version": 1, "items": ['), /is not JSON; nothing was changed/],
    ['another document', () => writeFileSync(legacy, '{"version": 1, "items": [{"path": "/etc"}], "scratch": []}'), /is not a record of installed plugins this version reads/],
    ['a FIFO (never waited on)', () => spawnSync('mkfifo', [legacy]), /is not a regular file; nothing was changed/],
    ['a link', () => symlinkSync(join(work, 'elsewhere.json'), legacy), /is a link, not a regular file; nothing was changed/],
    ["a product's record that is not JSON", () => (mkdirSync(dirname(record)), writeFileSync(record, '\uFEFF{"version": 2,')), /is not JSON; nothing was changed/],
    ["a product's record of another product", () => (mkdirSync(dirname(record)), writeFileSync(record, JSON.stringify({ version: 2, product_id: 'other', product: 'x', projects: [], items: [], scratch: [] }))), /is not a record of installed plugins this version reads/],
    ...(['../../x', 'Contents/../../x', '/etc/passwd', 'Contents\\..\\..\\x', ''].map((rel) => [
      `an intent whose code to put back names ${JSON.stringify(rel)}`,
      () => writeFileSync(legacy, JSON.stringify({ version: 1, items: [], intent: [{ format: 'vst3', name: 'A.vst3', product: 'A', path: join(vst3(), 'A.vst3'), digests: [], modules: [{ from: join(vst3(), '.A.vst3.old-1-2'), rel }] }], scratch: [] })),
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
      const [file, argv] = asOtherUser([process.execPath, shared.path('bin', 'cli.cjs'), 'plugins', ...args, ...productArgs(args), '--folder', app]);
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
