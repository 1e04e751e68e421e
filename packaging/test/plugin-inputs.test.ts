// pnpm package --plugin and --project with bad input: each one clear error (exit 2), said once,
// before anything is built, the previous release folder as it was. And inspectPlugin's reading of
// what a plugin is built for, from its binaries' headers.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { asOtherUser, OTHER_UID, otherUserUnavailable, readableByOtherUser } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { binaryKind, inspectPlugin } from '../src/plugins.mjs';

const MAIN = resolve(import.meta.dirname, '..', 'src', 'main.mjs');
const ID = '123e4567-e89b-12d3-a456-426614174000';
let dir: string;
let release: string;
let so: string;

/** A header as the linker writes it: the bytes inspectPlugin reads (4 KiB at most). */
const headers = {
  pe: (machine = 0x8664, o: { program?: boolean } = {}): Buffer => {
    const b = Buffer.alloc(512);
    b.write('MZ', 0, 'latin1');
    b.writeUInt32LE(0x80, 0x3c);
    b.writeUInt32BE(0x50450000, 0x80);
    b.writeUInt16LE(machine, 0x84);
    b.writeUInt16LE(o.program === true ? 0x0022 : 0x2022, 0x80 + 22); // a program, or a DLL
    return b;
  },
  /** A thin Mach-O: a program (MH_EXECUTE, 2) unless told (6 a dylib, 8 a bundle). */
  macho: (cpu = 0x0100000c, filetype = 2): Buffer => {
    const b = Buffer.alloc(64);
    b.writeUInt32LE(0xfeedfacf, 0);
    b.writeUInt32LE(cpu, 4);
    b.writeUInt32LE(filetype, 12);
    return b;
  },
  /** A universal Mach-O: each architecture's thin header at its offset, 4 KiB apart, as the linker aligns them. */
  universal: (...cpus: number[]): Buffer => universalOf(cpus.map((cpu) => [cpu, 2])),
};

function universalOf(slices: Array<[cpu: number, filetype: number]>): Buffer {
  const b = Buffer.alloc(4096 * (slices.length + 1));
  b.writeUInt32BE(0xcafebabe, 0);
  b.writeUInt32BE(slices.length, 4);
  slices.forEach(([cpu, filetype], i) => {
    b.writeUInt32BE(cpu, 8 + i * 20);
    b.writeUInt32BE(4096 * (i + 1), 8 + i * 20 + 8);
    headers.macho(cpu, filetype).copy(b, 4096 * (i + 1));
  });
  return b;
}

/** A bundle folder: each entry a relative path and its bytes. */
function bundle(path: string, files: Record<string, Buffer | string>): string {
  for (const [rel, bytes] of Object.entries(files)) {
    mkdirSync(join(path, rel, '..'), { recursive: true });
    writeFileSync(join(path, rel), bytes);
  }
  return path;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'plc-plugins-'));
  release = join(dir, 'out', 'release');
  mkdirSync(release, { recursive: true });
  writeFileSync(join(release, 'SHA256SUMS'), 'the previous release\n');
  // A real Linux x86-64 library, as the compiler makes it.
  writeFileSync(join(dir, 'p.c'), 'int plugin_entry(void) { return 1; }\n');
  so = join(dir, 'p.so');
  execFileSync('cc', ['-shared', '-fPIC', '-o', so, join(dir, 'p.c')]);
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function pkg(args: string[], user?: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const [file, argv] = user === undefined ? [process.execPath, [MAIN, ...args]] : asOtherUser([process.execPath, MAIN, ...args], user);
  try {
    const { stdout, stderr } = await promisify(execFile)(file, argv, { timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The release folder as the test made it, and nothing beside it. */
function releaseUntouched(): void {
  expect(readdirSync(release)).toEqual(['SHA256SUMS']);
  expect(readFileSync(join(release, 'SHA256SUMS'), 'utf8')).toBe('the previous release\n');
  expect(readdirSync(join(release, '..'))).toEqual(['release']);
}

const linuxVst3 = (name: string): string => {
  const path = join(dir, 'ok', name);
  mkdirSync(join(path, 'Contents', 'x86_64-linux'), { recursive: true });
  copyFileSync(so, join(path, 'Contents', 'x86_64-linux', 'p.so'));
  return path;
};

type Case = [string, () => string[], RegExp];
const cases: Case[] = [
  ['a missing path', () => ['--plugin', join(dir, 'nowhere', 'Acme Gain.vst3')], /^--plugin: .*nowhere\/Acme Gain\.vst3 does not exist; give a built plugin: a \.vst3 bundle folder, a \.clap, a macOS \.component, or a Standalone application/],
  ['a plain file named .vst3', () => [
    '--plugin', (writeFileSync(join(dir, 'Plain.vst3'), headers.pe()), join(dir, 'Plain.vst3')),
  ], /Plain\.vst3 is a plain file, but VST3 plugins are bundle folders \(Plain\.vst3\/Contents\/…\), as JUCE builds them; give the bundle folder$/],
  ['an empty folder', () => ['--plugin', (mkdirSync(join(dir, 'Empty.vst3')), join(dir, 'Empty.vst3'))], /Empty\.vst3 is an empty folder; build the plugin first/],
  ['a folder with no binary for any platform', () => ['--plugin', bundle(join(dir, 'Hollow.vst3'), { 'Contents/Resources/moduleinfo.json': '{}', 'Contents/x86_64-linux/.keep': '' })], /Hollow\.vst3\/Contents\/x86_64-linux\/\.keep is not a binary, but Contents\/x86_64-linux\/ must hold a Linux x86-64 library/],
  ['a bundle with only resources', () => ['--plugin', bundle(join(dir, 'Res.vst3'), { 'Contents/Resources/moduleinfo.json': '{}' })], /Res\.vst3 holds no binary for any platform \(none in Contents\/x86_64-linux\/, Contents\/x86_64-win\/, Contents\/MacOS\/\); build the plugin/],
  ['a Windows binary under x86_64-linux', () => ['--plugin', bundle(join(dir, 'Mixed.vst3'), { 'Contents/x86_64-linux/Mixed.so': headers.pe() })], /Mixed\.vst3\/Contents\/x86_64-linux\/Mixed\.so is a Windows \(PE\) file, but Contents\/x86_64-linux\/ must hold a Linux x86-64 library \(\.so\); rebuild the plugin for that platform or remove the file/],
  ['an arm64 library under x86_64-linux', () => ['--plugin', bundle(join(dir, 'Arm.vst3'), { 'Contents/x86_64-linux/Arm.so': (() => { const b = readFileSync(so); b.writeUInt16LE(0xb7, 18); return b; })() })], /Arm\.so is built for linux-arm64, but Contents\/x86_64-linux\/ must hold a Linux x86-64 library/],
  ['a bundle only for a platform not in --targets', () => ['--targets', 'linux-x64', '--plugin', bundle(join(dir, 'X.vst3'), { 'Contents/x86_64-win/X.vst3': headers.pe() })], /^--plugin: X\.vst3 is built for win-x64 only; add win-x64 to --targets or build it for linux-x64$/],
  ['a universal macOS AU for a Linux-only build', () => ['--targets', 'linux-x64', '--plugin', bundle(join(dir, 'U.component'), { 'Contents/MacOS/U': headers.universal(0x01000007, 0x0100000c) })], /^--plugin: U\.component is built for darwin-arm64 and darwin-x64 only; add darwin-arm64 or darwin-x64 to --targets or build it for linux-x64$/],
  ['two plugins of the same format and name', () => ['--targets', 'linux-x64', '--plugin', linuxVst3('Twin.vst3'), '--plugin', (mkdirSync(join(dir, 'again'), { recursive: true }), bundle(join(dir, 'again', 'Twin.vst3'), { 'Contents/x86_64-linux/t.so': readFileSync(so) }))], /^--plugin: two VST3 plugins named "Twin" for linux-x64 \(.*ok\/Twin\.vst3 and .*again\/Twin\.vst3\); give one of them$/],
  ['a name with a line break', () => ['--plugin', linuxVst3('Acme\nGain.vst3')], /^--plugin: ".*Acme\\nGain\.vst3": the name holds a line break or a control character/],
  ['a name with an escape character', () => ['--plugin', linuxVst3('Acme\u001b[31mGain.vst3')], /the name holds a line break or a control character/],
  ['a hidden name', () => ['--plugin', linuxVst3('.vst3')], /the plugin's name is empty or hidden/],
  ['a link pointing outside the bundle', () => {
    const path = linuxVst3('Leaky.vst3');
    symlinkSync('/etc/passwd', join(path, 'Contents', 'x86_64-linux', 'passwd'));
    return ['--plugin', path];
  }, /Leaky\.vst3\/Contents\/x86_64-linux\/passwd is a link to "\/etc\/passwd", outside the bundle; a bundle must hold its own files/],
  ['a relative link climbing out of the bundle', () => {
    const path = linuxVst3('Climb.vst3');
    symlinkSync('../../../p.so', join(path, 'Contents', 'x86_64-linux', 'up.so'));
    return ['--plugin', path];
  }, /Climb\.vst3\/Contents\/x86_64-linux\/up\.so is a link to "\.\.\/\.\.\/\.\.\/p\.so", outside the bundle/],
  ['a FIFO given as the plugin', () => {
    execFileSync('mkfifo', [join(dir, 'Pipe.clap')]);
    return ['--plugin', join(dir, 'Pipe.clap')];
  }, /Pipe\.clap is not a file or a folder \(a FIFO, a socket or a device\)/],
  ['a FIFO inside a bundle', () => {
    const path = linuxVst3('Fifo.vst3');
    execFileSync('mkfifo', [join(path, 'Contents', 'x86_64-linux', 'fifo.so')]);
    return ['--plugin', path];
  }, /Fifo\.vst3\/Contents\/x86_64-linux\/fifo\.so is not a regular file or folder \(a FIFO, a socket or a device\)/],
  ['a device', () => ['--plugin', '/dev/null'], /\/dev\/null is not a file or a folder/],
  ['a folder that is not a bundle', () => ['--plugin', (mkdirSync(join(dir, 'VST3', 'Acme.vst3'), { recursive: true }), join(dir, 'VST3'))], /VST3 is a folder that is no plugin bundle \(its name does not end in \.vst3, \.clap, \.component or \.app\)/],
  ['a text file as a Standalone', () => ['--plugin', (writeFileSync(join(dir, 'README'), 'hello'), join(dir, 'README'))], /README is not a binary; it must be a Linux Standalone program \(ELF\)/],
  ['a Standalone that is not executable', () => ['--plugin', (copyFileSync('/bin/true', join(dir, 'NoX')), chmodSync(join(dir, 'NoX'), 0o644), join(dir, 'NoX'))], /NoX is not executable; a Linux Standalone must be \(chmod \+x\)/],
  ['a CLAP that is a Mach-O file (a macOS CLAP is a bundle)', () => ['--plugin', (writeFileSync(join(dir, 'M.clap'), headers.macho()), join(dir, 'M.clap'))], /M\.clap is a macOS \(Mach-O\) file; it must be a Linux or Windows CLAP binary \(or, on macOS, a \.clap bundle folder\)/],
  ['a .exe that is an ELF file', () => ['--plugin', (copyFileSync('/bin/true', join(dir, 'Linux.exe')), join(dir, 'Linux.exe'))], /Linux\.exe is a Linux \(ELF\) file; it must be a Windows program \(PE\)/],
  ['a Windows plugin whose name Windows cannot hold', () => ['--targets', 'win-x64', '--plugin', bundle(join(dir, 'Acme "Gain" v2?.vst3'), { 'Contents/x86_64-win/a.vst3': headers.pe() })], /the name holds one of < > : " \/ \\ \| \? \*, which Windows file names cannot; rename the plugin/],
  ['--project with no name', () => ['--project', ID], /^--project "123e4567-e89b-12d3-a456-426614174000" has no name: give PROJECT_ID=NAME/],
  ['--project with an empty name', () => ['--project', `${ID}=  `], /^--project 123e4567-e89b-12d3-a456-426614174000=NAME: " {2}" is not usable as the plugin's name: it is empty; give one line of 1 to 80 characters$/],
  ['--project with a line break in the name', () => ['--project', `${ID}=Acme\nGain`], /"Acme\\nGain" is not usable as the plugin's name: it holds a line break, a control or a text-direction character; give one line of 1 to 80 characters$/],
  ['--project with a name of 81 characters', () => ['--project', `${ID}=${'x'.repeat(81)}`], / is not usable as the plugin's name: it is 81 characters long; give one line of 1 to 80 characters$/],
  ['--project with a bad id', () => ['--project', 'plugin-1=Acme Gain'], /^--project: project id 'plugin-1' is not a UUID; pass the project's id as shown in the portal/],
  ['--project twice with two names', () => ['--project', `${ID}=Acme Gain`, '--project', `${ID.toUpperCase()}=Acme Gain 2`], /^--project 123e4567-e89b-12d3-a456-426614174000 is given twice, as "Acme Gain" and "Acme Gain 2"; give each project one name$/],
];

/** A Linux program, copied under `name` (in a folder of its own) with its executable bit. */
const linuxProgram = (name: string): string => {
  const folder = mkdtempSync(join(dir, 'prog-'));
  copyFileSync('/bin/true', join(folder, name));
  chmodSync(join(folder, name), 0o755);
  return join(folder, name);
};
const file = (name: string, bytes: Buffer, mode = 0o644): string => {
  const folder = mkdtempSync(join(dir, 'file-'));
  writeFileSync(join(folder, name), bytes, { mode });
  return join(folder, name);
};
const product = ['--product', 'Acme Gain'];

// A file inside a bundle, or a library, is no Standalone (issue 34); names the installers keep
// beside the program are no Standalone's nor program's (--name); a plugin needs its product named.
cases.push(
  ['a VST3\'s inner .so given as a Standalone', () => [...product, '--plugin', (linuxVst3('Nebula Delay.vst3'), chmodSync(join(dir, 'ok', 'Nebula Delay.vst3', 'Contents', 'x86_64-linux', 'p.so'), 0o755), join(dir, 'ok', 'Nebula Delay.vst3', 'Contents', 'x86_64-linux', 'p.so'))], /^--plugin: .*\/ok\/Nebula Delay\.vst3\/Contents\/x86_64-linux\/p\.so is inside the bundle .*\/ok\/Nebula Delay\.vst3, so it is part of that plugin, not a plugin or a Standalone of its own; give the bundle itself, or the Standalone the build made$/],
  ['a file inside an .app given as a Standalone', () => [...product, '--plugin', join(bundle(join(dir, 'In.app'), { 'Contents/MacOS/In': headers.macho() }), 'Contents', 'MacOS', 'In')], /In\.app\/Contents\/MacOS\/In is inside the bundle .*In\.app/],
  ['a link to a file inside a bundle', () => [...product, '--plugin', (linuxVst3('Linked.vst3'), symlinkSync(join(dir, 'ok', 'Linked.vst3', 'Contents', 'x86_64-linux', 'p.so'), join(dir, 'linked-standalone')), join(dir, 'linked-standalone'))], /linked-standalone is inside the bundle .*Linked\.vst3/],
  ['a CLAP inside a VST3 bundle', () => [...product, '--plugin', (bundle(join(dir, 'Outer.vst3'), { 'Contents/Inner.clap': readFileSync(so) }), join(dir, 'Outer.vst3', 'Contents', 'Inner.clap'))], /Inner\.clap is inside the bundle .*Outer\.vst3/],
  ['a Linux shared library (no interpreter) as a Standalone', () => [...product, '--plugin', file('libgain.so', readFileSync(so), 0o755)], /^--plugin: .*libgain\.so is a Linux shared library \(it names no program interpreter\), not a program; give the Standalone the build made$/],
  ['a Windows DLL named .exe', () => [...product, '--targets', 'win-x64', '--plugin', file('Gain.exe', headers.pe())], /^--plugin: .*Gain\.exe is a Windows DLL, not a program; give the Standalone the build made$/],
  ['a macOS .app whose binary is a plug-in bundle (MH_BUNDLE)', () => [...product, '--targets', 'darwin-arm64', '--plugin', bundle(join(dir, 'B.app'), { 'Contents/MacOS/B': headers.macho(0x0100000c, 8) })], /B\.app\/Contents\/MacOS\/B is a macOS a plug-in bundle \(MH_BUNDLE\), not a program; a macOS Standalone \(\.app\) holds its program there/],
  ['a macOS .app whose universal binary is a dylib', () => [...product, '--targets', 'darwin-arm64', '--plugin', bundle(join(dir, 'D.app'), { 'Contents/MacOS/D': universalOf([[0x0100000c, 6], [0x01000007, 6]]) })], /D\.app\/Contents\/MacOS\/D is a macOS a shared library \(MH_DYLIB\), not a program/],
  ['a bundle holding a name that is not UTF-8 text', () => [...product, '--plugin', (linuxVst3('Bytes.vst3'), writeFileSync(Buffer.concat([Buffer.from(join(dir, 'ok', 'Bytes.vst3', 'Contents', 'preset ')), Buffer.from([0xff, 0x41])]), 'x'), join(dir, 'ok', 'Bytes.vst3'))], /^--plugin: Bytes\.vst3\/Contents\/preset \uFFFDA has a name that is not UTF-8 text \(bytes 70 72 65 73 65 74 20 ff 41\); rename it with UTF-8 characters and build again$/],
  ['--plugin with no product', () => ['--plugin', linuxProgram('Acme Gain')], /^--plugin needs --product NAME \(or --product-id ID\): the product whose installer this is\. Each product of a vendor has its own installer, which installs, upgrades and removes only its own plugins; e\.g\. --product "Acme Gain"$/],
  ['a product name that gives no id', () => ['--product', '音 ★', '--plugin', linuxProgram('Acme Gain')], /^--product "音 ★" gives no product id \(it has no ASCII letters or digits\); give --product-id ID, e\.g\. --product-id acme-gain$/],
  ['a bad --product-id', () => ['--product-id', 'Acme Gain', '--plugin', linuxProgram('Acme Gain')], /^--product-id 'Acme Gain' is not usable: use lower-case letters and digits joined by single dashes \(acme-gain\)$/],
  ['the earlier installer\'s id as --product-id', () => ['--product-id', 'earlier-installer'], /^--product-id 'earlier-installer' is not usable: earlier-installer is kept/],
  ...(['uninstall.sh', 'install.sh', 'installed-plugins.json', 'uninstall-acme-gain.sh', 'plugins', 'acme-license'].map((name) => [
    `a Linux Standalone named ${JSON.stringify(name)}`,
    () => [...product, '--name', 'acme-license', '--targets', 'linux-x64', '--plugin', linuxProgram(name)],
    new RegExp(`^--plugin: the Standalone ${name.replace(/\./g, '\\.')} goes beside the program, where the Linux installer already has ${name.replace(/\./g, '\\.').replace('acme-gain', '…')}…? \\(.+\\); rename the Standalone \\(or choose another --name\\)$`),
  ]) as Case[]),
  ['a Windows Standalone named like the program, in another case', () => [...product, '--name', 'acme-license', '--targets', 'win-x64', '--plugin', file('ACME-License.EXE', headers.pe(0x8664, { program: true }))], /^--plugin: the Standalone ACME-License\.EXE goes beside the program, where the Windows installer already has acme-license\.exe \(the program itself\)/],
  ['a Windows Standalone named Uninstall.exe', () => [...product, '--targets', 'win-x64', '--plugin', file('Uninstall.exe', headers.pe(0x8664, { program: true }))], /the Windows installer already has uninstall\.exe \(an earlier release's uninstaller\)/],
  ...(['uninstall.sh', 'install.sh', 'plugins', 'installed-plugins.json', 'config.json'].map((name) => [`--name ${name}`, () => ['--name', name, '--targets', 'linux-x64'], new RegExp(`^--name '${name.replace(/\./g, '\\.')}' is taken in the Linux installer by ${name.replace(/\./g, '\\.')}`)]) as Case[]),
  ['--name uninstall (uninstall.exe on Windows)', () => ['--name', 'uninstall'], /^--name 'uninstall' is taken in the Windows installer by uninstall\.exe \(an earlier release's uninstaller\); choose another name$/],
  ['--name tickets (the macOS data beside the program)', () => ['--name', 'Tickets', '--targets', 'darwin-arm64'], /^--name 'Tickets' is taken in the macOS installer by tickets \(the plugins' tickets\)/],
);

describe('pnpm package --plugin / --project: bad input', () => {
  it.each(cases)('%s: one usage error (exit 2), nothing built, the release folder unchanged', async (_, args, message) => {
    const r = await pkg([...args(), '--out', release]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^pnpm package: /);
    expect(r.stderr.replace(/^pnpm package: /, '').trimEnd()).toMatch(message);
    expect(r.stderr.trimEnd().split('\n'), 'said once, on one line').toHaveLength(1);
    releaseUntouched();
  });

  it('a --plugin path whose name is not UTF-8 text (a shell passes its bytes): said so, exit 2, nothing built', () => {
    const bytes = Buffer.concat([Buffer.from(join(dir, 'Acme ')), Buffer.from([0xff]), Buffer.from('.vst3')]);
    mkdirSync(Buffer.concat([bytes, Buffer.from('/Contents/x86_64-linux')]), { recursive: true });
    copyFileSync(so, Buffer.concat([bytes, Buffer.from('/Contents/x86_64-linux/p.so')]));
    const r = spawnSync('sh', ['-c', `exec "$0" "$1" --product 'Acme Gain' --plugin "$(printf '%s\\377.vst3' "$2")" --out "$3"`, process.execPath, MAIN, join(dir, 'Acme '), release], { encoding: 'utf8' });
    expect(r.stderr).toBe(`pnpm package: --plugin: ${join(dir, 'Acme \uFFFD.vst3')} cannot be found: its name holds bytes that are not UTF-8 text (shown as \uFFFD), which cannot be named here; rename it with UTF-8 characters\n`);
    expect(r.status).toBe(2);
    releaseUntouched();
  });

  // pnpm package runs from the checkout with its node_modules (no copy of that is small): in a
  // checkout another user cannot read (a private home, /root at 0700), this case cannot run as them.
  const noOtherUser =
    otherUserUnavailable() ??
    (readableByOtherUser(MAIN) ? undefined : `the checkout is not readable by uid ${OTHER_UID} (it sits in a private home), and pnpm package runs from it with its node_modules; clone it in a folder every user can read to run this case`);
  it.skipIf(noOtherUser !== undefined)('a file of the bundle another user cannot read: said, with what to do', async () => {
    const base = mkdtempSync(join('/tmp', 'plc-unreadable-'));
    try {
      chmodSync(base, 0o755);
      const path = bundle(join(base, 'Locked.vst3'), { 'Contents/x86_64-linux/l.so': readFileSync(so) });
      chmodSync(join(path, 'Contents', 'x86_64-linux', 'l.so'), 0o600);
      const out = join(base, 'release');
      const r = await pkg(['--plugin', path, '--out', out], OTHER_UID);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe('pnpm package: --plugin: Locked.vst3/Contents/x86_64-linux/l.so cannot be read (permission denied); make it readable (chmod a+r) and run again\n');
      expect(existsSync(out)).toBe(false);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
  if (noOtherUser !== undefined) console.warn(`skipping the unreadable-file test (pnpm package as another user): ${noOtherUser}`);
});

describe('inspectPlugin: what a plugin is built for, from its binaries', () => {
  it.each([
    ['a Linux VST3 (a real .so)', () => linuxVst3('Real Gain.vst3'), { format: 'vst3', name: 'Real Gain', platforms: ['linux-x64'] }],
    ['a VST3 for every platform', () => bundle(join(dir, 'All.vst3'), { 'Contents/x86_64-linux/All.so': readFileSync(so), 'Contents/x86_64-win/All.vst3': headers.pe(), 'Contents/MacOS/All': headers.universal(0x01000007, 0x0100000c), 'Contents/Resources/moduleinfo.json': '{}' }), { format: 'vst3', name: 'All', platforms: ['darwin-arm64', 'darwin-x64', 'linux-x64', 'win-x64'] }],
    ['a thin arm64 AU', () => bundle(join(dir, 'Thin.component'), { 'Contents/MacOS/Thin': headers.macho(0x0100000c), 'Contents/Info.plist': '<plist/>' }), { format: 'au', name: 'Thin', platforms: ['darwin-arm64'] }],
    ['a Linux CLAP file', () => (copyFileSync(so, join(dir, 'Acme $HOME * \'q\' "d" \\ ü.clap')), join(dir, 'Acme $HOME * \'q\' "d" \\ ü.clap')), { format: 'clap', name: 'Acme $HOME * \'q\' "d" \\ ü', platforms: ['linux-x64'] }],
    ['a Windows CLAP file', () => (writeFileSync(join(dir, 'W.clap'), headers.pe()), join(dir, 'W.clap')), { format: 'clap', name: 'W', platforms: ['win-x64'] }],
    ['a macOS CLAP bundle', () => bundle(join(dir, 'Mac.clap'), { 'Contents/MacOS/Mac': headers.macho(0x01000007) }), { format: 'clap', name: 'Mac', platforms: ['darwin-x64'] }],
    ['a Linux Standalone', () => (copyFileSync('/bin/true', join(dir, 'Acme Gain')), join(dir, 'Acme Gain')), { format: 'standalone', name: 'Acme Gain', platforms: ['linux-x64'] }],
    ['a Windows Standalone', () => (writeFileSync(join(dir, 'Acme Gain.exe'), headers.pe(0x8664, { program: true })), join(dir, 'Acme Gain.exe')), { format: 'standalone', name: 'Acme Gain', platforms: ['win-x64'] }],
    ['a Linux Standalone linked as a position-independent program (ET_DYN with an interpreter)', () => linuxProgram('PIE Gain'), { format: 'standalone', name: 'PIE Gain', platforms: ['linux-x64'] }],
    ['a macOS Standalone, with a link inside its bundle', () => {
      const path = bundle(join(dir, 'Acme Gain.app'), { 'Contents/MacOS/Acme Gain': headers.universal(0x0100000c, 0x01000007), 'Contents/Frameworks/F.framework/Versions/A/F': 'x' });
      symlinkSync('Versions/A/F', join(path, 'Contents', 'Frameworks', 'F.framework', 'F'));
      return path;
    }, { format: 'standalone', name: 'Acme Gain', platforms: ['darwin-arm64', 'darwin-x64'] }],
  ])('%s', (_, make, expected) => {
    const p = inspectPlugin(make()) as { format: string; name: string; platforms: Set<string> };
    expect({ format: p.format, name: p.name, platforms: [...p.platforms].sort() }).toEqual(expected);
  });

  it('binaryKind reads ELF, PE and Mach-O (thin, universal) headers; anything else is no binary', () => {
    expect(binaryKind(readFileSync(so))).toMatchObject({ kind: 'elf', platforms: ['linux-x64'] });
    expect(binaryKind(headers.pe(0xaa64))).toMatchObject({ kind: 'pe', platforms: ['win-arm64'] });
    expect(binaryKind(headers.universal(0x01000007))).toMatchObject({ kind: 'macho', platforms: ['darwin-x64'] });
    // A Java class file shares the universal magic: its version is no architecture count.
    const javaClass = Buffer.from([0xca, 0xfe, 0xba, 0xbe, 0x00, 0x00, 0x00, 0x3d, 0, 0, 0, 0]);
    expect(binaryKind(javaClass)).toBeUndefined();
    expect(binaryKind(Buffer.from('MZ but nothing more'))).toBeUndefined();
    expect(binaryKind(Buffer.alloc(0))).toBeUndefined();
  });
});
