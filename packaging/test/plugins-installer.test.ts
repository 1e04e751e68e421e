// The vendor's plugins in the installers: `pnpm package --plugin` with the example plugin's VST3
// and Standalone (built by pnpm build:plugin, reusing its build folder) and a product name. The
// release's layout (the tarball's plugins/ folder as the plugins command reads it, the branded
// scripts, manifest.json, the names baked into the executable, the Windows installer built by
// makensis with hostile names); then the tarball's install.sh as a musician runs it: the bundle
// under ~/.vst3 byte for byte, loaded from there by the console VST3 host, an upgrade with a
// changed bundle while that host has the old one loaded, and an uninstall that leaves another
// vendor's bundle and the user's own files.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { runBare, spawnLines, type LineProcess } from '@plugin-license/test-utils';
import { bearer, raw, session } from '../../packages/cli/test/manager-helpers.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { packageRelease, parseOptions } from '../src/build.mjs';
// @ts-expect-error: plain JavaScript, no types
import { pluginsNsh } from '../src/installers.mjs';
// @ts-expect-error: plain JavaScript, no types
import { buildPlugin, missingForBuild, PRODUCT } from '../../examples/juce-plugin/build.mjs';

const PROJECT_ID = '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84';
const missing = missingForBuild() as string[];
const canBuild = process.platform === 'linux' && missing.length === 0;
if (!canBuild) console.warn(`skipping the plugins-in-the-installer tests: the example plugin cannot be built here (missing ${missing.join(', ') || 'Linux'}; Debian: apt-get install cmake g++ juce-modules-source juce-tools)`);

interface Manifest {
  version: string;
  projects: Array<{ project_id: string; name: string }>;
  plugins: Array<{ format: string; name: string; platforms: string[]; installers: string[] }>;
  targets: Array<{ target: string; file: string }>;
  installers: Array<{ file: string }>;
}

/** A folder's tree, comparable: each entry's relative path, kind, and bytes' hash or link target, and whether it is executable. */
function tree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      const rel = relative(root, path);
      if (st.isSymbolicLink()) out.push(`${rel} -> ${readlinkSync(path)}`);
      else if (st.isDirectory()) {
        out.push(`${rel}/`);
        walk(path);
      } else out.push(`${rel} ${createHash('sha256').update(readFileSync(path)).digest('hex')} ${st.mode & 0o111 ? 'x' : '-'}`);
    }
  };
  walk(root);
  return out;
}

describe.skipIf(!canBuild)('pnpm package --plugin: the example plugin in the Linux installer', () => {
  let dir: string;
  let release: string;
  let manifest: Manifest;
  let built: { vst3: string; standalone: string; testHost: string };
  /** A plugin with a hostile name: spaces, $, quotes, *, a backslash and non-ASCII. */
  const HOSTILE = `Acme $HOME 'Gain' "x" * \\ ü`;
  const homes: string[] = [];
  const hosts: LineProcess[] = [];

  beforeAll(async () => {
    // Incremental: the build folder (and ccache) make this quick when nothing changed.
    built = (await buildPlugin({ tests: true, quiet: true })) as typeof built;
    dir = mkdtempSync(join(tmpdir(), 'plc-plugins-pkg-'));
    const hostile = join(dir, `${HOSTILE}.vst3`);
    cpSync(built.vst3, hostile, { recursive: true, verbatimSymlinks: true });
    release = join(dir, 'release');
    const options = parseOptions(['--targets', 'linux-x64', '--name', 'acme-license', '--app', 'acme-audio', '--product', 'Acme Audio', '--plugin', built.vst3, '--plugin', built.standalone, '--plugin', hostile, '--project', `${PROJECT_ID.toUpperCase()}=Example Gain`, '--out', release]);
    manifest = (await packageRelease(options, { log: () => {} })) as Manifest;
  }, 20 * 60_000);

  afterAll(async () => {
    for (const h of hosts) await h.stop().catch(() => undefined);
    if (dir) rmSync(dir, { recursive: true, force: true });
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  const tarball = (): string => join(release, manifest.installers[0]!.file);
  // The installer is the product's (--product "Acme Audio": acme-audio).
  const base = (): string => `acme-license-${manifest.version}-linux-x64`;
  const unpack = (): string => {
    const into = mkdtempSync(join(dir, 'tar-'));
    execFileSync('tar', ['-xzf', tarball(), '-C', into]);
    return join(into, base());
  };
  const newHome = (): string => {
    const home = mkdtempSync(join('/tmp', 'plp-'));
    homes.push(home);
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    return home;
  };
  const bareEnv = (home: string): NodeJS.ProcessEnv => ({ PATH: '/usr/bin:/bin', HOME: home, XDG_RUNTIME_DIR: join(home, 'run') });
  const sh = (script: string, args: string[], env: NodeJS.ProcessEnv) => runBare('sh', [script, ...args], env);

  describe('the release', () => {
    it('manifest.json names the products and where each plugin went', () => {
      expect(manifest.projects).toEqual([{ project_id: PROJECT_ID, name: 'Example Gain' }]);
      const tar = manifest.installers[0]!.file;
      expect(manifest.plugins).toEqual([
        { format: 'vst3', name: PRODUCT, platforms: ['linux-x64'], installers: [tar] },
        { format: 'standalone', name: PRODUCT, platforms: ['linux-x64'], installers: [tar] },
        { format: 'vst3', name: HOSTILE, platforms: ['linux-x64'], installers: [tar] },
      ]);
    });

    it('the tarball holds plugins/<format>/<item> beside the executable, each byte for byte as built, and nothing else there', () => {
      const kit = unpack();
      expect(readdirSync(kit).sort()).toEqual(['acme-license', 'install.sh', 'plugins', 'uninstall.sh']);
      expect(readdirSync(join(kit, 'plugins')).sort()).toEqual(['standalone', 'vst3']);
      expect(readdirSync(join(kit, 'plugins', 'vst3')).sort()).toEqual([`${HOSTILE}.vst3`, `${PRODUCT}.vst3`].sort());
      expect(readdirSync(join(kit, 'plugins', 'standalone'))).toEqual([PRODUCT]);
      expect(tree(join(kit, 'plugins', 'vst3', `${PRODUCT}.vst3`))).toEqual(tree(built.vst3));
      expect(tree(join(kit, 'plugins', 'vst3', `${HOSTILE}.vst3`))).toEqual(tree(built.vst3));
      expect(readFileSync(join(kit, 'plugins', 'standalone', PRODUCT)).equals(readFileSync(built.standalone))).toBe(true);
    });

    it('install.sh places them with the program, uninstall.sh removes them as its record says', () => {
      const kit = unpack();
      const install = readFileSync(join(kit, 'install.sh'), 'utf8');
      expect(install).toContain('[ -d "$HERE/plugins" ] && FROM=$HERE/plugins\nif ! out=$("$EXE" plugins install --product-id "$PRODUCT_ID" ${FROM:+--from "$FROM"} 2>&1); then');
      // After the program is in place (its link made), before the agent's step.
      expect(install.indexOf('plugins install')).toBeGreaterThan(install.indexOf('ln -sf -- "$EXE" "$BIN/$NAME"'));
      const uninstall = readFileSync(join(kit, 'uninstall.sh'), 'utf8');
      expect(uninstall).toContain("\nPRODUCT_ID='acme-audio'\n");
      expect(uninstall).toContain('if ! out=$("$EXE" plugins uninstall --product-id "$PRODUCT_ID" 2>&1); then');
      expect(uninstall.indexOf('plugins uninstall')).toBeGreaterThan(uninstall.indexOf('deactivate --all'));
      expect(uninstall.indexOf('plugins uninstall')).toBeLessThan(uninstall.indexOf('rm -f -- "$EXE"'));
    });

    it('the executable carries the product names (executable.json)', () => {
      const bytes = readFileSync(join(release, manifest.targets[0]!.file));
      expect(bytes.includes(Buffer.from(JSON.stringify({ projects: [{ project_id: PROJECT_ID, name: 'Example Gain' }] }).slice(1, -1)))).toBe(true);
    });
  });

  describe('install.sh, upgrade and uninstall.sh as a musician runs them (needs the plugins command)', () => {
    const vst3Home = (home: string): string => join(home, '.vst3', `${PRODUCT}.vst3`);
    const lib = (home: string): string => join(home, '.local', 'lib', 'acme-audio');

    it('installs the VST3 under ~/.vst3 byte for byte, the Standalone beside the program, and says where; the console host loads it from there', async () => {
      const home = newHome();
      const r = await sh(join(unpack(), 'install.sh'), [], bareEnv(home));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(tree(vst3Home(home))).toEqual(tree(built.vst3));
      expect(tree(join(home, '.vst3', `${HOSTILE}.vst3`))).toEqual(tree(built.vst3));
      expect(readFileSync(join(lib(home), PRODUCT)).equals(readFileSync(built.standalone))).toBe(true);
      expect(existsSync(join(lib(home), 'installed-plugins', 'acme-audio.json'))).toBe(true);
      expect(r.stdout).toContain(vst3Home(home));
      expect(r.stdout).toMatch(/rescan/i);
      const host = spawnLines(built.testHost, [vst3Home(home), '1', '60'], { HOME: home, PLUGIN_LICENSE_HOME: join(home, 'data'), PLUGIN_LICENSE_SOCKET: join(home, 'run', 'none.sock') }, { stdin: true });
      hosts.push(host);
      expect(JSON.parse(await host.waitFor(/"event":"loaded"/, 'the plugin loaded from ~/.vst3'))).toMatchObject({ instances: 1, name: PRODUCT });
      await host.stop();
      // The installed program's license manager names the product before any activation.
      const program = join(lib(home), 'acme-license');
      const manager = spawnLines(program, ['manager', '--no-open', '--port', '0'], bareEnv(home));
      hosts.push(manager);
      try {
        const u = new URL((JSON.parse(await manager.waitFor(/"url"/, "the manager's line")) as { url: string }).url);
        const m = { port: Number(u.port), origin: u.origin, token: u.hash.replace(/^#token=/, '') };
        const events = await raw(m.port, 'GET', '/api/events', bearer(await session(m)));
        const state = JSON.parse(/^data: (.*)$/m.exec(events.body)![1]!) as { products: unknown; licenses: unknown[] };
        expect(state.products).toEqual([{ project_id: PROJECT_ID, name: 'Example Gain' }]);
        expect(state.licenses).toEqual([]);
      } finally {
        await manager.stop();
        await runBare(program, ['agent', 'stop'], bareEnv(home));
      }
    }, 120_000);

    it('an upgrade with a changed bundle replaces it whole while a host has the old one loaded; the host plays on', async () => {
      const home = newHome();
      const env = bareEnv(home);
      // The first version carries a file the second does not, and the other way round.
      const first = unpack();
      writeFileSync(join(first, 'plugins', 'vst3', `${PRODUCT}.vst3`, 'Contents', 'old-only.txt'), 'v1');
      expect((await sh(join(first, 'install.sh'), [], env)).code).toBe(0);
      const host = spawnLines(built.testHost, [vst3Home(home), '1', '120'], { HOME: home, PLUGIN_LICENSE_HOME: join(home, 'data'), PLUGIN_LICENSE_SOCKET: join(home, 'run', 'none.sock') }, { stdin: true });
      hosts.push(host);
      await host.waitFor(/"event":"loaded"/, 'the first version loaded');
      const second = unpack();
      const next = join(second, 'plugins', 'vst3', `${PRODUCT}.vst3`);
      writeFileSync(join(next, 'Contents', 'new-only.txt'), 'v2');
      const upgrade = await sh(join(second, 'install.sh'), [], env);
      expect(upgrade.code, upgrade.stderr + upgrade.stdout).toBe(0);
      expect(tree(vst3Home(home))).toEqual(tree(next));
      expect(readdirSync(join(home, '.vst3')).filter((f) => f.startsWith('.'))).toEqual([]);
      // The host, which loaded the old library, runs on after the swap: it answers, and ends cleanly.
      expect(host.child.exitCode).toBeNull();
      host.child.stdin!.write('quit\n');
      const done = JSON.parse(await host.waitFor(/"event":"done"/, 'the host finished')) as { blocks: number };
      expect(done.blocks).toBeGreaterThan(0);
      expect(await host.exited).toBe(0);
    }, 180_000);

    it("uninstall removes the vendor's plugins and leaves another vendor's bundle, a same-named bundle it did not put there, and the user's files", async () => {
      const home = newHome();
      const env = bareEnv(home);
      // Before the install: another vendor's bundle and the user's own notes in ~/.vst3.
      const other = join(home, '.vst3', 'Other Vendor Reverb.vst3');
      mkdirSync(join(other, 'Contents', 'x86_64-linux'), { recursive: true });
      writeFileSync(join(other, 'Contents', 'x86_64-linux', 'Other Vendor Reverb.so'), 'theirs');
      writeFileSync(join(home, '.vst3', 'my notes.txt'), 'mine');
      const kit = unpack();
      expect((await sh(join(kit, 'install.sh'), [], env)).code).toBe(0);
      // The musician replaced one of ours by a same-named bundle of their own since.
      const hostile = join(home, '.vst3', `${HOSTILE}.vst3`);
      rmSync(hostile, { recursive: true });
      mkdirSync(join(hostile, 'Contents'), { recursive: true });
      writeFileSync(join(hostile, 'Contents', 'theirs.txt'), 'not from the installer');
      const removed = await sh(join(lib(home), 'uninstall-acme-audio.sh'), [], env);
      expect(removed.code, removed.stderr + removed.stdout).toBe(0);
      expect(existsSync(vst3Home(home))).toBe(false);
      expect(existsSync(join(lib(home), PRODUCT))).toBe(false);
      expect(existsSync(lib(home))).toBe(false);
      expect(readFileSync(join(other, 'Contents', 'x86_64-linux', 'Other Vendor Reverb.so'), 'utf8')).toBe('theirs');
      expect(readFileSync(join(home, '.vst3', 'my notes.txt'), 'utf8')).toBe('mine');
      expect(readFileSync(join(hostile, 'Contents', 'theirs.txt'), 'utf8')).toBe('not from the installer');
      expect(removed.stdout + removed.stderr).toContain(HOSTILE);
      // Nothing of ours left in the menu either.
      const apps = join(home, '.local', 'share', 'applications');
      expect(existsSync(apps) ? readdirSync(apps) : []).toEqual([]);
    }, 120_000);
  });

  describe('one vendor, three products: each installer owns only its own plugins; the program, shared, names them all', () => {
    /** A product of Acme Audio: its installer is made from the example plugin, renamed. */
    interface Product {
      name: string;
      id: string;
      project: string;
      plugin: string;
      kit: () => string;
    }
    const projects = { gain: '11111111-1111-4111-8111-111111111111', reverb: '22222222-2222-4222-8222-222222222222', delay: '33333333-3333-4333-8333-333333333333' };
    const products: Record<'gain' | 'reverb' | 'delay', Product> = {} as never;

    beforeAll(async () => {
      for (const [key, plugin] of [['gain', 'Acme Gain'], ['reverb', 'Acme "Reverb" $x'], ['delay', 'Acme Delay']] as const) {
        const src = mkdtempSync(join(dir, `src-${key}-`));
        cpSync(built.vst3, join(src, `${plugin}.vst3`), { recursive: true, verbatimSymlinks: true });
        cpSync(built.standalone, join(src, plugin));
        const out = join(dir, `release-${key}`);
        const name = plugin.replace(' "Reverb" $x', ' Reverb');
        const m = (await packageRelease(parseOptions(['--targets', 'linux-x64', '--name', 'acme-license', '--app', 'acme-audio', '--product', name, '--plugin', join(src, `${plugin}.vst3`), '--plugin', join(src, plugin), '--project', `${projects[key]}=${plugin} Plugin`, '--out', out]), { log: () => {} })) as Manifest & { product_id: string };
        products[key] = {
          name,
          id: m.product_id,
          project: projects[key],
          plugin,
          kit: () => {
            const into = mkdtempSync(join(dir, 'tar-'));
            execFileSync('tar', ['-xzf', join(out, m.installers[0]!.file), '-C', into]);
            return join(into, `acme-license-${m.version}-linux-x64`);
          },
        };
      }
    }, 20 * 60_000);

    const lib = (home: string): string => join(home, '.local', 'lib', 'acme-audio');
    const bundleOf = (home: string, p: Product): string => join(home, '.vst3', `${p.plugin}.vst3`);
    const install = async (home: string, p: Product, kit = p.kit()): Promise<void> => {
      const r = await sh(join(kit, 'install.sh'), [], bareEnv(home));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.stdout).not.toMatch(/^removed /m);
    };
    const uninstall = async (home: string, p: Product): Promise<string> => {
      const r = await sh(join(lib(home), `uninstall-${p.id}.sh`), [], bareEnv(home));
      expect(r.code, r.stderr + r.stdout).toBe(0);
      return r.stdout;
    };
    /** Everything of a product in place, byte for byte (its bundle as `bundle`, else as built). */
    const intact = (home: string, p: Product, bundle = built.vst3): void => {
      expect(tree(bundleOf(home, p))).toEqual(tree(bundle));
      expect(readFileSync(join(lib(home), p.plugin)).equals(readFileSync(built.standalone))).toBe(true);
      expect(existsSync(join(lib(home), `uninstall-${p.id}.sh`))).toBe(true);
    };
    const gone = (home: string, p: Product): void => {
      expect(existsSync(bundleOf(home, p))).toBe(false);
      expect(existsSync(join(lib(home), p.plugin))).toBe(false);
      expect(existsSync(join(lib(home), `uninstall-${p.id}.sh`))).toBe(false);
    };
    const menu = (home: string): string[] => {
      const apps = join(home, '.local', 'share', 'applications');
      return existsSync(apps) ? readdirSync(apps).sort() : [];
    };
    /** The plugin names the installed program's license manager offers, before any activation. */
    async function named(home: string): Promise<unknown> {
      const manager = spawnLines(join(lib(home), 'acme-license'), ['manager', '--no-open', '--port', '0'], bareEnv(home));
      hosts.push(manager);
      try {
        const u = new URL((JSON.parse(await manager.waitFor(/"url"/, "the manager's line")) as { url: string }).url);
        const events = await raw(Number(u.port), 'GET', '/api/events', bearer(await session({ port: Number(u.port), origin: u.origin, token: u.hash.replace(/^#token=/, '') })));
        return (JSON.parse(/^data: (.*)$/m.exec(events.body)![1]!) as { products: Array<{ project_id: string; name: string }> }).products.sort((a, b) => a.project_id.localeCompare(b.project_id));
      } finally {
        await manager.stop();
        await runBare(join(lib(home), 'acme-license'), ['agent', 'stop'], bareEnv(home));
      }
    }
    const names = (...ps: Product[]): unknown => ps.map((p) => ({ project_id: p.project, name: `${p.plugin} Plugin` })).sort((a, b) => a.project_id.localeCompare(b.project_id));

    it('install A, B, C; uninstall B (the middle): A and C intact and named; upgrade A; uninstall A, then C: nothing of theirs, no program, agent or manager left', async () => {
      const { gain: A, reverb: B, delay: C } = products;
      const home = newHome();
      // Another vendor's bundle and the user's own file: never touched.
      mkdirSync(join(home, '.vst3', 'Other Vendor.vst3', 'Contents'), { recursive: true });
      writeFileSync(join(home, '.vst3', 'Other Vendor.vst3', 'Contents', 'theirs.so'), 'theirs');
      writeFileSync(join(home, '.vst3', 'my notes.txt'), 'mine');
      for (const p of [A, B, C]) await install(home, p);
      for (const p of [A, B, C]) intact(home, p);
      expect(menu(home)).toHaveLength(3);
      expect((await runBare(join(lib(home), 'acme-license'), ['plugins', 'products'], bareEnv(home))).stdout.split('\n').filter(Boolean).sort()).toEqual([A.name, B.name, C.name].sort());
      // The program is C's (the last installed); it names all three, from what is installed.
      expect(await named(home)).toEqual(names(A, B, C));

      const removedB = await uninstall(home, B);
      expect(removedB).toContain('The license program and your licenses stay, for:');
      gone(home, B);
      intact(home, A);
      intact(home, C);
      expect(menu(home)).toHaveLength(2);
      expect(await named(home)).toEqual(names(A, C));

      // A's newer release: its bundle changed; C's plugins untouched.
      const next = A.kit();
      writeFileSync(join(next, 'plugins', 'vst3', `${A.plugin}.vst3`, 'Contents', 'v2.txt'), 'A v2');
      await install(home, A, next);
      intact(home, A, join(next, 'plugins', 'vst3', `${A.plugin}.vst3`));
      intact(home, C);
      expect(await named(home)).toEqual(names(A, C));

      await uninstall(home, A);
      gone(home, A);
      intact(home, C);
      // A license manager left open (by hand, or by a plugin's "Manage licenses…"): the last uninstall stops it.
      const manager = spawnLines(join(lib(home), 'acme-license'), ['manager', '--no-open', '--port', '0'], bareEnv(home));
      hosts.push(manager);
      await manager.waitFor(/"url"/, "the manager's line");
      const last = await uninstall(home, C);
      expect(last).toContain('Acme Delay is removed. Its license data is kept');
      expect(await manager.exited).toBe(0);
      gone(home, C);
      expect(existsSync(lib(home))).toBe(false);
      expect(existsSync(join(home, '.local', 'bin', 'acme-license'))).toBe(false);
      expect(menu(home)).toEqual([]);
      expect(readdirSync(join(home, '.vst3')).sort()).toEqual(['Other Vendor.vst3', 'my notes.txt']);
      expect(readFileSync(join(home, '.vst3', 'Other Vendor.vst3', 'Contents', 'theirs.so'), 'utf8')).toBe('theirs');
    }, 300_000);

    it('install B, then A; uninstall A, whose program it was: B intact and still named, from its record', async () => {
      const { gain: A, reverb: B } = products;
      const home = newHome();
      await install(home, B);
      await install(home, A);
      await uninstall(home, A);
      gone(home, A);
      intact(home, B);
      expect(await named(home)).toEqual(names(B));
      await uninstall(home, B);
      expect(existsSync(lib(home))).toBe(false);
    }, 300_000);

    it("over an earlier release's install of the same product: its one record and uninstaller are taken over, nothing removed", async () => {
      const { gain: A } = products;
      const home = newHome();
      await install(home, A);
      // The earlier release's layout: one record, installed-plugins.json, and one uninstall.sh.
      const record = JSON.parse(readFileSync(join(lib(home), 'installed-plugins', `${A.id}.json`), 'utf8')) as { items: unknown[] };
      rmSync(join(lib(home), 'installed-plugins'), { recursive: true });
      rmSync(join(lib(home), `uninstall-${A.id}.sh`));
      writeFileSync(join(lib(home), 'installed-plugins.json'), JSON.stringify({ version: 1, items: record.items, scratch: [] }));
      writeFileSync(join(lib(home), 'uninstall.sh'), '#!/bin/sh\necho the earlier uninstaller\n', { mode: 0o755 });
      await install(home, A);
      intact(home, A);
      expect(readdirSync(lib(home)).sort()).toEqual(['Acme Gain', 'acme-license', 'installed-plugins', `uninstall-${A.id}.sh`]);
      await uninstall(home, A);
      expect(existsSync(lib(home))).toBe(false);
    }, 300_000);
  });
});

const hasMakensis = spawnSync('makensis', ['-VERSION'], { stdio: 'ignore' }).status === 0;
if (!hasMakensis) console.warn('skipping the Windows installer with plugins: makensis is not installed (Debian: apt-get install nsis)');

describe('pnpm package --plugin: the Windows installer', () => {
  it('pluginsNsh writes every name through nsisString: $, quotes and backslashes stay text', () => {
    const text = pluginsNsh([
      { format: 'vst3', name: 'Acme $INSTDIR', file: 'Acme $INSTDIR.vst3' },
      { format: 'standalone', name: `Acme $0 'Synth' ü`, file: `Acme $0 'Synth' ü.exe` },
    ]) as string;
    expect(text).toContain(`CreateShortCut "$SMPROGRAMS\\Acme $$0 'Synth' ü.lnk" "$INSTDIR\\Acme $$0 'Synth' ü.exe"`);
    expect(text).toContain(`Delete "$SMPROGRAMS\\Acme $$0 'Synth' ü.lnk"`);
    expect(text).toContain('!define PLUGINS_WHERE "VST3 plugins: $LOCALAPPDATA\\Programs\\Common\\VST3$\\r$\\nStandalone applications: $INSTDIR, in the Start menu"');
    expect(text).not.toContain('$INSTDIR.vst3');
  });

  it.skipIf(!hasMakensis)('makensis builds the installer with a VST3 and a Standalone of hostile names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plc-plugins-win-'));
    try {
      // A Windows DLL and program: headers as the linker writes them are all pnpm package reads.
      const pe = Buffer.alloc(1024);
      pe.write('MZ', 0, 'latin1');
      pe.writeUInt32LE(0x80, 0x3c);
      pe.writeUInt32BE(0x50450000, 0x80);
      pe.writeUInt16LE(0x8664, 0x84);
      const vst3 = join(dir, "Acme $INSTDIR 'Gain' ü.vst3");
      mkdirSync(join(vst3, 'Contents', 'x86_64-win'), { recursive: true });
      writeFileSync(join(vst3, 'Contents', 'x86_64-win', "Acme $INSTDIR 'Gain' ü.vst3"), pe);
      const exe = join(dir, 'Acme $0 Synth.exe');
      writeFileSync(exe, pe);
      const out = join(dir, 'release');
      const m = (await packageRelease(parseOptions(['--targets', 'win-x64', '--name', 'acme-license', '--product', 'Acme Gain', '--plugin', vst3, '--plugin', exe, '--project', `${PROJECT_ID}=Acme "Gain" $INSTDIR`, '--out', out], { ...process.env, PLUGIN_LICENSE_INSTALLER_COMPRESSION: 'fast' }), { log: () => {} })) as Manifest;
      const setup = `acme-license-${m.version}-win-x64-setup.exe`;
      expect(m.installers.map((i) => i.file)).toEqual([setup]);
      expect(m.plugins.map((p) => p.installers)).toEqual([[setup], [setup]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
