// The rules of `plugins` as pure functions, each with a table of hostile inputs: where each format
// goes on each platform (win32 and darwin asked for on Linux), an item's name, the Desktop Entry
// quoting, the tree digest, the rescan line, a bundle's code moved out first (loadableFiles) and
// the paths inside a bundle a record may name.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { productIdOf, productIdProblem, reservedNameConflict } from '@plugin-license/licensing';
import { afterAll, describe, expect, it } from 'vitest';
import { desktopEntry, desktopExec, desktopExecArgument, desktopFileName, desktopString } from '../src/plugins/desktop-entry.js';
import { loadableFiles } from '../src/plugins/loadable.js';
import { pluginPlaces } from '../src/plugins/places.js';
import { isInsideRel, isOwnScratch, type ProductRecord } from '../src/plugins/record.js';
import { licenseKeptFor } from '../src/plugins/products.js';
import { rescanLine } from '../src/plugins/rescan.js';
import { itemNameProblem } from '../src/plugins/staged.js';
import { fileDigest, linkDigest, treeDigest, TreeDigestError } from '../src/plugins/tree-digest.js';

describe('where each format goes (pluginPlaces)', () => {
  const cases: Array<[string, string, Record<string, string>, string, Record<string, string | undefined>, { kind: string; folder: string } | undefined]> = [
    ['linux, a home with spaces, quotes and $', 'linux', { HOME: '/home/Jo "J" $x' }, '/opt/Acme Audio', { vst3: '/home/Jo "J" $x/.vst3', clap: '/home/Jo "J" $x/.clap', au: undefined, standalone: '/opt/Acme Audio' }, { kind: 'desktop', folder: '/home/Jo "J" $x/.local/share/applications' }],
    ['linux, XDG_DATA_HOME absolute', 'linux', { HOME: '/home/u', XDG_DATA_HOME: '/data/ü*' }, '/home/u/.local/share/acme', { vst3: '/home/u/.vst3', clap: '/home/u/.clap', au: undefined, standalone: '/home/u/.local/share/acme' }, { kind: 'desktop', folder: '/data/ü*/applications' }],
    ['linux, XDG_DATA_HOME relative is ignored', 'linux', { HOME: '/home/u', XDG_DATA_HOME: 'rel' }, '/x/', { vst3: '/home/u/.vst3', clap: '/home/u/.clap', au: undefined, standalone: '/x/' }, { kind: 'desktop', folder: '/home/u/.local/share/applications' }],
    ['darwin', 'darwin', { HOME: '/Users/Zoë Q' }, '/Applications/Acme', { vst3: '/Users/Zoë Q/Library/Audio/Plug-Ins/VST3', clap: '/Users/Zoë Q/Library/Audio/Plug-Ins/CLAP', au: '/Users/Zoë Q/Library/Audio/Plug-Ins/Components', standalone: '/Applications/Acme' }, { kind: 'link', folder: '/Users/Zoë Q/Applications' }],
    ['win32', 'win32', { LOCALAPPDATA: 'C:\\Users\\Zoë $Q\\AppData\\Local', HOME: '/ignored' }, 'C:\\Users\\Zoë $Q\\AppData\\Local\\Programs\\Acme', { vst3: 'C:\\Users\\Zoë $Q\\AppData\\Local\\Programs\\Common\\VST3', clap: 'C:\\Users\\Zoë $Q\\AppData\\Local\\Programs\\Common\\CLAP', au: undefined, standalone: 'C:\\Users\\Zoë $Q\\AppData\\Local\\Programs\\Acme' }, undefined],
    ['win32, the variable spelled as Windows lets it be', 'win32', { LocalAppData: 'D:/Local' }, 'D:\\P\\Acme', { vst3: 'D:\\Local\\Programs\\Common\\VST3', clap: 'D:\\Local\\Programs\\Common\\CLAP', au: undefined, standalone: 'D:\\P\\Acme' }, undefined],
    ['win32, a share', 'win32', { LOCALAPPDATA: '\\\\server\\share\\u' }, '\\\\server\\share\\u\\Programs\\Acme', { vst3: '\\\\server\\share\\u\\Programs\\Common\\VST3', clap: '\\\\server\\share\\u\\Programs\\Common\\CLAP', au: undefined, standalone: '\\\\server\\share\\u\\Programs\\Acme' }, undefined],
  ];
  it.each(cases)('%s', (_name, platform, env, exeFolder, folders, menu) => {
    const places = pluginPlaces({ platform, env, exeFolder });
    expect(places.folders).toEqual(Object.fromEntries(Object.entries(folders).filter(([, v]) => v !== undefined)));
    expect(places.menu).toEqual(menu);
  });

  const refused: Array<[string, string, Record<string, string>, string, RegExp]> = [
    ['win32 without LOCALAPPDATA', 'win32', { HOME: 'C:\\Users\\u' }, 'C:\\P', /LOCALAPPDATA is not set/],
    ['win32, LOCALAPPDATA relative', 'win32', { LOCALAPPDATA: 'AppData\\Local' }, 'C:\\P', /LOCALAPPDATA is 'AppData\\Local', not a full path with a drive/],
    ['win32, LOCALAPPDATA root-relative', 'win32', { LOCALAPPDATA: '\\Users\\u' }, 'C:\\P', /not a full path with a drive/],
    ['win32, LOCALAPPDATA drive-relative', 'win32', { LOCALAPPDATA: 'C:Users' }, 'C:\\P', /not a full path with a drive/],
    ['linux without HOME', 'linux', {}, '/opt', /HOME is not set/],
    ['darwin, HOME relative', 'darwin', { HOME: 'Users/u' }, '/opt', /HOME is 'Users\/u', not a full path/],
    ['linux, executable folder relative', 'linux', { HOME: '/h' }, 'opt', /not a full path/],
    ['another platform', 'freebsd', { HOME: '/h' }, '/opt', /Linux, macOS and Windows; this computer runs freebsd/],
  ];
  it.each(refused)('refuses %s with words (exit 2)', (_name, platform, env, exeFolder, message) => {
    let err: unknown;
    try {
      pluginPlaces({ platform, env, exeFolder });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ exit: 2, message: expect.stringMatching(message) });
  });
});

describe("an item's name (itemNameProblem)", () => {
  const fine: Array<[string, 'vst3' | 'clap' | 'au' | 'standalone', 'linux' | 'win32' | 'darwin']> = [
    ['Acme Gain.vst3', 'vst3', 'linux'],
    ['Acme "Gain" $HOME *.vst3', 'vst3', 'linux'],
    ["it's a \\ back.vst3", 'vst3', 'linux'],
    ['Ünïcødé 音.clap', 'clap', 'linux'],
    ['Acme $Gain', 'standalone', 'linux'],
    ['Acme Gain.exe', 'standalone', 'win32'],
    ['Acme Gain.VST3', 'vst3', 'win32'],
    ["Acme 'Gain' $x.component", 'au', 'darwin'],
    ['Acme Gain.app', 'standalone', 'darwin'],
  ];
  it.each(fine)('accepts %j as %s on %s', (name, format, platform) => expect(itemNameProblem(name, format, platform)).toBeUndefined());

  const refused: Array<[string, 'vst3' | 'clap' | 'au' | 'standalone', 'linux' | 'win32' | 'darwin', RegExp]> = [
    ['Acme\nGain.vst3', 'vst3', 'linux', /control character/],
    ['Acme\tGain.vst3', 'vst3', 'linux', /control character/],
    ['.hidden.vst3', 'vst3', 'linux', /starts with a dot/],
    ['Acme Gain', 'vst3', 'linux', /must end in \.vst3/],
    ['.vst3', 'vst3', 'linux', /starts with a dot/],
    ['Acme.component', 'au', 'linux', /AU is not a format of Linux/],
    ['Acme.component', 'au', 'win32', /AU is not a format of Windows/],
    ['Acme *.vst3', 'vst3', 'win32', /Windows cannot store/],
    ['Acme "Gain".vst3', 'vst3', 'win32', /Windows cannot store/],
    ['back\\slash.vst3', 'vst3', 'win32', /Windows cannot store/],
    ['CON.vst3', 'vst3', 'win32', /reserved on Windows/],
    ['Acme Gain', 'standalone', 'win32', /must end in \.exe/],
    ['Acme Gain', 'standalone', 'darwin', /must end in \.app/],
    [`${'a'.repeat(251)}.vst3`, 'vst3', 'linux', /longer than 255 bytes/],
  ];
  it.each(refused)('refuses %j as %s on %s', (name, format, platform, problem) => expect(itemNameProblem(name, format, platform)).toMatch(problem));
});

describe('Desktop Entry quoting (desktopExecArgument, desktopString)', () => {
  // What the file holds, and what a reader following the specification gets back.
  const table: Array<[string, string]> = [
    ['/opt/Acme Gain', '"/opt/Acme Gain"'],
    ['/opt/Acme $Gain', '"/opt/Acme \\\\$Gain"'],
    ['/opt/a"b', '"/opt/a\\\\"b"'],
    ['/opt/a`b', '"/opt/a\\\\`b"'],
    ['/opt/a\\b', '"/opt/a\\\\\\\\b"'],
    ['/opt/100% *gain*', '"/opt/100%% *gain*"'],
    ["/opt/it's", '"/opt/it\'s"'],
    ['/opt/Ünïcødé 音', '"/opt/Ünïcødé 音"'],
  ];
  /** The reader: string escapes first (\\ → \, \s → space), then the Exec quoting, then %% → %. */
  const unquote = (value: string): string => {
    const unescaped = value.replace(/\\([\\snrt])/g, (_m, c: string) => ({ '\\': '\\', s: ' ', n: '\n', r: '\r', t: '\t' })[c]!);
    expect(unescaped.startsWith('"') && unescaped.endsWith('"')).toBe(true);
    return unescaped.slice(1, -1).replace(/\\([\\"`$])/g, '$1').replace(/%%/g, '%');
  };
  it.each(table)('%j is written %s and read back whole', (path, written) => {
    expect(desktopExecArgument(path)).toBe(written);
    expect(unquote(written)).toBe(path);
  });
  it.each(['/opt/a\nb', '/opt/a\tb', '/opt/\u007f'])('refuses %j: a control character is never written half-escaped', (path) => {
    expect(() => desktopExecArgument(path)).toThrow(/control character/);
  });
  it('writes a string value with its backslashes doubled and a leading space kept', () => {
    expect(desktopString('Acme \\ "Gain" $x %u', 'n')).toBe('Acme \\\\ "Gain" $x %u');
    expect(desktopString(' Acme', 'n')).toBe('\\sAcme');
    expect(() => desktopString('a\nb', 'the product name')).toThrow(/the product name holds a control character/);
  });
  it('names the file by vendor and product, in desktop file id characters, never two names on one file', () => {
    expect(desktopFileName('acme-audio', 'Acme Gain')).toMatch(/^acme-audio-acme-gain-[0-9a-f]{8}\.desktop$/);
    expect(desktopFileName('acme-audio', 'Acme Gain')).not.toBe(desktopFileName('acme-audio', 'Acme-Gain'));
    expect(desktopFileName('acme-audio', '音 "$*')).toMatch(/^acme-audio-standalone-[0-9a-f]{8}\.desktop$/);
    const entry = desktopEntry('Acme "$Gain"', '/opt/Acme Audio/Acme $Gain');
    expect(entry).toContain('\nName=Acme "$Gain"\n');
    expect(entry).toContain('\nExec="/opt/Acme Audio/Acme \\\\$Gain"\n');
  });
  it('starts a path with a % through sh, whose argument GLib expands before it runs it (GLib looks for the program itself before)', () => {
    expect(desktopExec('/opt/Acme/Boost 100%')).toBe('sh -c "exec \\\\"\\\\$0\\\\"" "/opt/Acme/Boost 100%%"');
    expect(desktopExec('/opt/Acme/Boost')).toBe('"/opt/Acme/Boost"');
  });
});

const missingDesktopTools = ['desktop-file-validate', 'gio'].filter((tool) => spawnSync(tool, ['--help'], { stdio: 'ignore' }).error !== undefined);
if (missingDesktopTools.length > 0) console.warn(`skipping the menu entries' check by desktop-file-validate and GLib: ${missingDesktopTools.join(' and ')} not installed (Debian: apt-get install desktop-file-utils libglib2.0-bin)`);

describe.skipIf(missingDesktopTools.length > 0)('every menu entry desktopEntry writes is valid (desktop-file-validate) and starts its program through GLib (gio launch)', () => {
  const root = mkdtempSync(join(tmpdir(), 'plc-desktop-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  // Names a vendor may give a Standalone, in a program folder with a plain name, and one with a hostile name of its own (a % in it too).
  const names = ['Boost 100%', 'Boost %% 50', '%u %f', 'Acme $HOME $(id)', 'Acme `id`', 'Acme "Gain"', "it's", 'back\\slash', 'semi;colon & pipe | <lt> >gt', 'star * ? [x] #hash ~tilde', 'Ünïcødé 音', ' leading space', 'trailing space ', 'equals=sign', '-dash', 'Acme Gain'];
  const folders = [join(root, 'home', 'Acme Audio'), join(root, `home "q" $x \\ 'y' %u =`, 'Acme Audio')];
  it.each(folders.flatMap((folder) => names.map((name) => [name, folder])))('%j in %s', async (name, folder) => {
    mkdirSync(folder, { recursive: true });
    const program = join(folder, name);
    const ran = join(root, `ran-${Buffer.from(name + folder).toString('hex').slice(-80)}`);
    writeFileSync(program, `#!/bin/sh\nprintf '%s' "$0" > '${ran}'\n`);
    chmodSync(program, 0o755);
    const file = join(folder, '..', `${desktopFileName('acme-audio', name)}`);
    writeFileSync(file, desktopEntry(name, program));
    const valid = spawnSync('desktop-file-validate', [file], { encoding: 'utf8' });
    expect(valid.stdout + valid.stderr).toBe('');
    expect(valid.status).toBe(0);
    const launched = spawnSync('gio', ['launch', file], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: root }, timeout: 20_000 });
    expect(launched.stderr).toBe('');
    expect(launched.status).toBe(0);
    await expect.poll(() => (existsSync(ran) ? readFileSync(ran, 'utf8') : undefined)).toBe(program);
  });
  it.each(['Acme\nGain', 'Acme\tGain', 'Acme\rGain'])('refuses %j in words: a menu entry cannot carry it', (name) => {
    expect(() => desktopEntry(name, join(folders[0]!, name))).toThrow(/control character/);
  });
});

describe('the tree digest (treeDigest)', () => {
  const root = mkdtempSync(join(tmpdir(), 'plc-digest-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const tree = (files: Record<string, string>, links: Record<string, string> = {}): string => {
    const dir = join(root, `t${n++}`, 'Acme Gain.vst3');
    for (const [rel, body] of Object.entries(files)) {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), body);
    }
    for (const [rel, target] of Object.entries(links)) {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      symlinkSync(target, join(dir, rel));
    }
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const base = { 'Contents/x86_64-linux/Acme Gain.so': 'code', 'Contents/Resources/moduleinfo.json': '{}' };

  it('is the same for the same tree wherever it is, and differs for any change of contents, name, shape or link target', async () => {
    const a = await treeDigest(tree(base));
    expect(await treeDigest(tree(base))).toBe(a);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    const variants = [
      tree({ ...base, 'Contents/x86_64-linux/Acme Gain.so': 'code2' }),
      tree({ 'Contents/x86_64-linux/Acme gain.so': 'code', 'Contents/Resources/moduleinfo.json': '{}' }),
      tree({ ...base, 'Contents/extra': '' }),
      tree(base, { 'Contents/link': 'x86_64-linux' }),
      tree({ 'Contents/x86_64-linux/Acme Gain.so': 'code', 'Contents/Resources/moduleinfo.json/x': '{}' }),
    ];
    const digests = await Promise.all(variants.map((v) => treeDigest(v)));
    expect(new Set([a, ...digests]).size).toBe(variants.length + 1);
    expect(await treeDigest(tree(base, { 'Contents/link': 'x86_64-linux' }))).not.toBe(await treeDigest(tree(base, { 'Contents/link': 'Resources' })));
  });

  it("never follows a link: a link's digest is its target, whatever is there", async () => {
    const target = join(root, 'target.txt');
    writeFileSync(target, 'one');
    const link = join(root, 'link');
    symlinkSync(target, link);
    const first = await treeDigest(link);
    writeFileSync(target, 'two');
    expect(await treeDigest(link)).toBe(first);
    expect(first).toBe(linkDigest(target));
  });

  it('of a single file is fileDigest of its bytes (a menu entry we write is checked by the same rule)', async () => {
    const file = join(root, 'entry.desktop');
    writeFileSync(file, 'Name=$Acme "Gain"\n');
    expect(await treeDigest(file)).toBe(fileDigest('Name=$Acme "Gain"\n'));
  });

  it('refuses a FIFO or a device anywhere, naming it, without opening it (a FIFO would block)', async () => {
    const dir = tree(base);
    const fifo = join(dir, 'Contents', 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await expect(treeDigest(dir)).rejects.toThrow(new TreeDigestError(fifo, 'a FIFO'));
    await expect(treeDigest('/dev/null')).rejects.toThrow(/\/dev\/null is a device/);
  });

  it('says ENOENT for a missing root', async () => {
    await expect(treeDigest(join(root, 'nothing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe("a bundle's code, moved out before the bundle (loadableFiles)", () => {
  const dir = mkdtempSync(join(tmpdir(), 'plc-loadable-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const bundle = join(dir, 'Acme "Gain" $x ü.vst3');
  const files: Array<[string, Buffer | string, boolean]> = [
    ['Contents/x86_64-win/Acme "Gain" $x ü.vst3', Buffer.from('MZ\x90\x00rest', 'latin1'), true],
    ['Contents/arm64x-win/a b.dll', 'MZ', true],
    ['Contents/x86_64-linux/Acme.so', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1]), true],
    ['Contents/MacOS/Acme', Buffer.from([0xcf, 0xfa, 0xed, 0xfe, 7, 0]), true],
    ['Contents/MacOS/Universal', Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2]), true],
    ['Contents/MacOS/Old32', Buffer.from([0xce, 0xfa, 0xed, 0xfe]), true],
    ['Contents/Resources/moduleinfo.json', '{"Name":"MZ"}', false],
    ['Contents/Resources/one-byte', 'M', false],
    ['Contents/Resources/empty', '', false],
    ['Contents/Resources/ELF but text', 'ELF', false],
  ];
  for (const [rel, bytes] of files) {
    mkdirSync(join(bundle, ...rel.split('/').slice(0, -1)), { recursive: true });
    writeFileSync(join(bundle, ...rel.split('/')), bytes);
  }
  // A link to a DLL and a FIFO: neither followed nor opened.
  symlinkSync(join(bundle, 'Contents/arm64x-win/a b.dll'), join(bundle, 'Contents', 'link.dll'));
  spawnSync('mkfifo', [join(bundle, 'Contents', 'pipe.dll')]);

  it('lists the files that start as PE, ELF or Mach-O, sorted, by their path inside the bundle', async () => {
    expect(await loadableFiles(bundle)).toEqual(files.filter(([, , yes]) => yes).map(([rel]) => rel).sort());
  });
  it('none for a single-file item (it is moved whole) or a missing path', async () => {
    expect(await loadableFiles(join(bundle, 'Contents/arm64x-win/a b.dll'))).toEqual([]);
    expect(await loadableFiles(join(dir, 'missing.vst3'))).toEqual([]);
  });
});

describe('a path inside a bundle a record may name (isInsideRel)', () => {
  it.each([
    ['Contents/x86_64-win/Acme.vst3', true],
    ['Contents/Acme "Gain" $x * ü.dll', true],
    ['a', true],
    ['', false],
    ['../x', false],
    ['Contents/../../x', false],
    ['Contents\\..\\..\\x', false],
    ['./x', false],
    ['/abs', false],
    ['Contents//x', false],
    ['C:x', false],
    ['x.dll:stream', false],
    [42, false],
  ] as const)('%j: %s', (rel, ok) => {
    expect(isInsideRel(rel)).toBe(ok);
  });
});

describe("the names the installers keep in the program's folder (reservedNameConflict)", () => {
  it.each([
    ['linux', 'acme-license', 'uninstall.sh', 'uninstall.sh'],
    ['linux', 'acme-license', 'uninstall-acme-gain.sh', 'uninstall-…\\.sh'],
    ['linux', 'acme-license', 'install.sh', 'install.sh'],
    ['linux', 'acme-license', 'plugins', 'plugins'],
    ['linux', 'acme-license', 'acme-license', 'acme-license \\(the program itself\\)'],
    ['linux', 'acme-license', 'installed-plugins', 'installed-plugins'],
    ['linux', 'acme-license', 'installed-plugins.json.lock-pid', 'installed-plugins.json…'],
    ['linux', 'acme-license', 'config.json', 'config.json'],
    ['darwin', 'acme-license', 'Uninstall.SH', 'uninstall.sh'],
    ['darwin', 'acme-license', 'tickets', 'tickets'],
    ['darwin', 'acme-license', 'agent.sock', 'agent.sock'],
    ['win32', 'acme-license.exe', 'Acme-License.EXE', 'acme-license.exe'],
    ['win32', 'acme-license.exe', 'UNINSTALL.exe', 'uninstall.exe'],
    ['win32', 'acme-license.exe', 'uninstall-acme-gain.exe', 'uninstall-…\\.exe'],
    ['win32', 'acme-license.exe', 'acme-license.new.exe', 'acme-license.new.exe'],
    ['win32', 'acme-license.exe', 'acme-license.old-20250101.exe', 'acme-license.old-…\\.exe'],
    ['win32', 'acme-license.exe', 'Install.log', 'install.log'],
  ] as const)('%s, program %s: %j is taken by %s', (platform, program, name, taken) => {
    expect(reservedNameConflict(platform, program, name)).toMatch(new RegExp(`^${taken}`));
  });
  it.each([
    ['linux', 'acme-license', 'Uninstall.sh'],
    ['linux', 'acme-license', 'Acme Gain'],
    ['linux', 'acme-license', 'uninstall-.sh.bak'],
    ['win32', 'acme-license.exe', 'Acme Gain.exe'],
    ['win32', '', 'Acme Gain.exe'],
    ['darwin', 'acme-license', 'Acme Gain.app'],
  ] as const)('%s, program %j: %j is free', (platform, program, name) => expect(reservedNameConflict(platform, program, name)).toBeUndefined());
  it('the program itself may take its own name (--name), never another reserved one', () => {
    expect(reservedNameConflict('linux', 'acme-license', 'acme-license', { asProgram: true })).toBeUndefined();
    expect(reservedNameConflict('linux', 'uninstall.sh', 'uninstall.sh', { asProgram: true })).toMatch(/^uninstall\.sh/);
    expect(reservedNameConflict('win32', 'uninstall.exe', 'uninstall.exe', { asProgram: true })).toMatch(/^uninstall\.exe/);
  });
});

describe('a product id (productIdOf, productIdProblem)', () => {
  it.each([
    ['Acme Gain', 'acme-gain'],
    ['Acme "Gain" 2 $x', 'acme-gain-2-x'],
    ['  --Acme__Reverb--  ', 'acme-reverb'],
    ['Ünïcødé Synth', 'n-c-d-synth'],
    ['音', undefined],
    ['Earlier Installer', undefined],
    [`${'a'.repeat(39)} b`, 'a'.repeat(39)],
  ] as const)('%j gives %j', (product, id) => expect(productIdOf(product)).toBe(id));
  it.each(['acme-gain', 'a', '2-b-3'])('%j is an id', (id) => expect(productIdProblem(id)).toBeUndefined());
  it.each(['', 'Acme', 'acme--gain', '-acme', 'acme-', 'acme_gain', 'acme.gain', 'earlier-installer', 'a'.repeat(41)])('%j is not', (id) => expect(productIdProblem(id)).toBeDefined());
});

describe("the temporary names a record may ask to remove (isOwnScratch)", () => {
  const places = pluginPlaces({ platform: 'linux', env: { HOME: '/home/u' }, exeFolder: '/home/u/.local/lib/acme' });
  it.each([
    ['/home/u/.vst3/.Acme Gain.vst3.old-4242', true],
    ['/home/u/.vst3/.Acme Gain.vst3.old-4242-2', true],
    ['/home/u/.clap/.Acme "$x".clap.new-7', true],
    ['/home/u/.local/share/applications/.acme-audio-acme-gain-1a2b3c4d.desktop.new-9', true],
    ['/home/u/.local/lib/acme/.Acme Gain.new-12', true],
    ['/home/u/.vst3/.OtherVendor Presets', false],
    ['/home/u/.local/share/applications/.hidden-other', false],
    ['/home/u/.vst3/Acme Gain.vst3.old-1', false],
    ['/home/u/.vst3/.Acme.old-', false],
    ['/home/u/.vst3/.Acme.old-0', false],
    ['/home/u/.vst3/.Acme.old-1x', false],
    ['/home/u/.vst3/.Acme.kept-1', false],
    ['/home/u/.x.old-1', false],
    ['/etc/.x.old-1', false],
    ['/home/u/.vst3/../.ssh/.k.old-1', false],
    ['/home/u/.vst3/./.k.old-1', false],
    ['/home/u/.vst3//.k.old-1', false],
    ['/home/u/.vst3/sub/.k.old-1', false],
    ['.vst3/.k.old-1', false],
    ['', false],
  ] as const)('%j: %s', (path, ok) => expect(isOwnScratch(places, path)).toBe(ok));
});

describe("which licenses a product's uninstaller gives back (licenseKeptFor)", () => {
  const P = { gain: '11111111-1111-4111-8111-111111111111', reverb: '22222222-2222-4222-8222-222222222222', shared: '33333333-3333-4333-8333-333333333333', stray: '44444444-4444-4444-8444-444444444444' };
  const record = (id: string, name: string | null, projects: string[]): ProductRecord => ({ version: 2, product_id: id, product: name, projects: projects.map((projectId) => ({ projectId, name: id })), items: [], scratch: [] });
  const gain = record('acme-gain', 'Acme Gain', [P.gain, P.shared]);
  const reverb = record('acme-reverb', 'Acme Reverb', [P.reverb, P.shared]);
  it.each([
    ['the last product: every license', [gain], 'acme-gain', P.stray, undefined],
    ['the last product, its own', [gain], 'acme-gain', P.gain, undefined],
    ['no product recorded (plain Node): every license', [], 'acme-gain', P.reverb, undefined],
    ['another product remains: its own, not shared', [gain, reverb], 'acme-gain', P.gain, undefined],
    ['another product remains: the other one\'s', [gain, reverb], 'acme-gain', P.reverb, 'Acme Reverb, another product of this vendor installed here, uses it'],
    ['another product remains: one both name', [gain, reverb], 'acme-gain', P.shared.toUpperCase(), 'Acme Reverb, another product of this vendor installed here, uses it'],
    ['another product remains: one no product names', [gain, reverb], 'acme-gain', P.stray, "not one of this product's plugins, and other products of this vendor are still installed here (Acme Reverb)"],
    ['a product not recorded, others are', [reverb], 'acme-gain', P.gain, "not one of this product's plugins, and other products of this vendor are still installed here (Acme Reverb)"],
    ['the earlier installer\'s plugins keep the program too', [gain, record('earlier-installer', null, [])], 'acme-gain', P.gain, undefined],
  ] as const)('%s', (_what, products, productId, projectId, kept) => expect(licenseKeptFor(products, productId, projectId)).toBe(kept));
});

describe('the rescan line (rescanLine)', () => {
  it.each([
    ['linux', ['Acme Gain'], 'Rescan plugins in your music software if it does not list Acme Gain: most find new plugins when they start; FL Studio and Ardour need a manual rescan.'],
    ['win32', ['Acme Gain', 'Acme "Verb"', 'Acme Gain'], 'Rescan plugins in your music software if it does not list Acme Gain and Acme "Verb": most find new plugins when they start; FL Studio and Ardour need a manual rescan.'],
    ['darwin', ['A', 'B', 'C'], 'Rescan plugins in your music software if it does not list A, B and C: Logic Pro and GarageBand check new Audio Units when they start; FL Studio and Ardour need a manual rescan.'],
  ] as const)('%s %j', (platform, names, line) => expect(rescanLine(platform, [...names])).toBe(line));
  it('says nothing when no plugin a host loads was placed', () => expect(rescanLine('linux', [])).toBeUndefined());
});
