// The vendor's plugins in the installers (`pnpm package --plugin PATH`): what each given path is,
// checked before anything is built, and its staging in the layout the `plugins install --from DIR`
// command reads (DIR/<format>/<item>, only formats present).
import { isUtf8 } from 'node:buffer';
import { closeSync, constants, cpSync, fstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { programFile, reservedNameConflict } from '@plugin-license/licensing';
import { PackageError } from './errors.mjs';
import { TARGETS } from './node-binaries.mjs';

/** The formats, as the staged folders name them, and how a person calls them. */
export const FORMATS = { vst3: 'VST3', clap: 'CLAP', au: 'AU', standalone: 'Standalone' };

const HOW = 'give a built plugin: a .vst3 bundle folder, a .clap, a macOS .component, or a Standalone application (a Linux executable, a Windows .exe or a macOS .app)';
/** What a Windows file name cannot hold (a plugin built for Windows is placed under its own name there). */
const NOT_IN_WINDOWS_NAMES = /[<>:"/\\|?*]/;
/** The first bytes read of a binary: enough for its header (a PE's header is within the first 4 KiB). */
const HEADER_BYTES = 4096;

const bad = (message) => new PackageError(message, { usage: true });
const OS_WORDS = { linux: 'Linux', win32: 'Windows', darwin: 'macOS' };

/**
 * The first bytes of a file the user named, read without blocking: a FIFO, a device or a folder
 * is refused before any read, an unreadable file is said with what to do.
 *
 * @param {string} file
 * @param {string} shown how the file is named in a message
 */
function readHeader(file, shown, offset = 0) {
  let fd;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    if (err.code === 'EACCES' || err.code === 'EPERM') throw bad(`--plugin: ${shown} cannot be read (permission denied); make it readable (chmod a+r) and run again`);
    if (err.code === 'ELOOP') throw bad(`--plugin: ${shown} is a link; a plugin's binary must be a file inside its bundle`);
    throw bad(`--plugin: ${shown} cannot be read (${err.code ?? err.message})`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw bad(`--plugin: ${shown} is not a regular file (a FIFO, a device or a folder); ${HOW}`);
    const buffer = Buffer.alloc(HEADER_BYTES);
    let length = 0;
    for (;;) {
      let n;
      try {
        n = readSync(fd, buffer, length, HEADER_BYTES - length, offset + length);
      } catch (err) {
        throw bad(`--plugin: ${shown} cannot be read (${err.code ?? err.message})`);
      }
      length += n;
      if (n === 0 || length === HEADER_BYTES) break;
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

const MACHO_CPU = { 0x01000007: 'darwin-x64', 0x0100000c: 'darwin-arm64' };

/**
 * What a binary is, from its header: `{ kind: 'elf' | 'pe' | 'macho', platforms: string[], executable }`
 * (platforms named as targets: linux-x64, win-x64, darwin-x64, darwin-arm64, or another
 * architecture's name, which no target has), or undefined when it is no binary.
 *
 * @param {Buffer} b
 */
export function binaryKind(b) {
  if (b.length >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
    const le = b[5] === 1;
    const machine = le ? b.readUInt16LE(18) : b.readUInt16BE(18);
    const type = le ? b.readUInt16LE(16) : b.readUInt16BE(16);
    const arch = b[4] === 2 && machine === 0x3e ? 'x64' : machine === 0xb7 ? 'arm64' : machine === 0x03 ? 'x86' : `machine-${machine}`;
    return { kind: 'elf', platforms: [`linux-${arch}`], type, interpreter: elfInterpreter(b, le) };
  }
  if (b.length >= 64 && b[0] === 0x4d && b[1] === 0x5a) {
    const pe = b.readUInt32LE(0x3c);
    if (pe + 24 <= b.length && b.readUInt32BE(pe) === 0x50450000) {
      const machine = b.readUInt16LE(pe + 4);
      const characteristics = b.readUInt16LE(pe + 22);
      const arch = machine === 0x8664 ? 'x64' : machine === 0x14c ? 'x86' : machine === 0xaa64 ? 'arm64' : `machine-${machine}`;
      return { kind: 'pe', platforms: [`win-${arch}`], dll: (characteristics & 0x2000) !== 0 };
    }
    return undefined;
  }
  if (b.length >= 8 && (b.readUInt32LE(0) === 0xfeedfacf || b.readUInt32LE(0) === 0xfeedface)) {
    const cpu = b.readUInt32LE(4);
    return { kind: 'macho', platforms: [MACHO_CPU[cpu] ?? `darwin-cpu-${cpu.toString(16)}`], ...(b.length >= 16 ? { filetype: b.readUInt32LE(12) } : {}) };
  }
  if (b.length >= 8 && (b.readUInt32BE(0) === 0xcafebabe || b.readUInt32BE(0) === 0xcafebabf)) {
    // A universal binary: its architectures follow (a Java class file has the same magic, and a
    // version number where the count is: more than a handful is not a universal binary).
    const wide = b.readUInt32BE(0) === 0xcafebabf;
    const count = b.readUInt32BE(4);
    const size = wide ? 32 : 20;
    if (count === 0 || count > 16 || 8 + count * size > b.length) return undefined;
    const platforms = [];
    for (let i = 0; i < count; i++) {
      const cpu = b.readUInt32BE(8 + i * size);
      platforms.push(MACHO_CPU[cpu] ?? `darwin-cpu-${cpu.toString(16)}`);
    }
    // Where the first architecture's own header is (its file type is read there).
    const first = wide ? Number(b.readBigUInt64BE(16)) : b.readUInt32BE(16);
    return { kind: 'macho', platforms, firstSlice: first };
  }
  return undefined;
}

/** ELF's program header type of the interpreter (the dynamic loader a program names). */
const PT_INTERP = 3;

/**
 * Whether an ELF file names an interpreter (a PT_INTERP program header), read from its first
 * bytes: a program linked to run does, a shared library does not. Undefined when its program
 * headers are not within those bytes.
 */
function elfInterpreter(b, le) {
  const wide = b[4] === 2;
  if (b.length < (wide ? 64 : 52)) return undefined;
  const u16 = (o) => (le ? b.readUInt16LE(o) : b.readUInt16BE(o));
  const u32 = (o) => (le ? b.readUInt32LE(o) : b.readUInt32BE(o));
  const phoff = wide ? Number(le ? b.readBigUInt64LE(32) : b.readBigUInt64BE(32)) : u32(28);
  const phentsize = u16(wide ? 54 : 42);
  const phnum = u16(wide ? 56 : 44);
  if (phnum === 0) return false;
  if (phentsize < 4 || phoff + phnum * phentsize > b.length) return undefined;
  for (let i = 0; i < phnum; i++) if (u32(phoff + i * phentsize) === PT_INTERP) return true;
  return false;
}

/** Mach-O file types: a program, and what only another program loads. */
const MH_EXECUTE = 2;
const MH_LOADED = { 6: 'a shared library (MH_DYLIB)', 8: 'a plug-in bundle (MH_BUNDLE)' };

/**
 * The one rule of "this binary is a program, not a library": why `kind` (from {@link binaryKind})
 * of the file `path` cannot be a Standalone, or undefined when it can. A Linux ELF shared object
 * without an interpreter (PT_INTERP; a position-independent program has one), a Windows PE with
 * the DLL flag, a Mach-O dylib or bundle are libraries a host loads.
 */
function notAProgram(kind, path, shown) {
  if (kind.kind === 'elf') {
    if (kind.type !== 2 && kind.type !== 3) return 'a Linux object or core file, not a program';
    if (kind.type === 3 && kind.interpreter === undefined) return 'a Linux file whose program headers could not be read, so it may be a shared library, not a program';
    if (kind.type === 3 && kind.interpreter === false) return 'a Linux shared library (it names no program interpreter), not a program';
  }
  if (kind.kind === 'pe' && kind.dll) return 'a Windows DLL, not a program';
  if (kind.kind === 'macho') {
    const filetype = kind.firstSlice !== undefined ? binaryKind(readHeader(path, shown, kind.firstSlice))?.filetype : kind.filetype;
    if (MH_LOADED[filetype] !== undefined) return `a macOS ${MH_LOADED[filetype]}, not a program`;
    if (filetype !== MH_EXECUTE) return 'a macOS binary that is not a program (not MH_EXECUTE)';
  }
  return undefined;
}

/** The formats whose plugins are folders (bundles): a file inside one is part of that plugin. */
const BUNDLE_ENDINGS = /\.(vst3|clap|component|app)$/i;

/**
 * The bundle that holds `path` (an ancestor folder named .vst3, .clap, .component or .app, as
 * given or once links are resolved), or undefined: a file inside a bundle is part of that
 * plugin, never a plugin of its own (a VST3's inner .so is no Standalone).
 */
function enclosingBundle(path) {
  let real;
  try {
    real = realpathSync(path);
  } catch {
    real = path;
  }
  for (const p of [path, real]) {
    for (let dir = dirname(p); dir !== dirname(dir); dir = dirname(dir)) if (BUNDLE_ENDINGS.test(basename(dir))) return dir;
  }
  return undefined;
}

/**
 * The entries of a folder a bundle holds, by name; a name that is not UTF-8 text (a file system
 * holds bytes) is refused in words: Node, the installers and hosts name files as text, and such a
 * name cannot even be opened by the name it is read as.
 */
function readNames(dir, shownDir) {
  const entries = readdirSync(dir, { withFileTypes: true, encoding: 'buffer' });
  for (const entry of entries) {
    if (!isUtf8(entry.name)) {
      throw bad(`--plugin: ${shownDir}/${entry.name.toString('utf8')} has a name that is not UTF-8 text (bytes ${entry.name.toString('hex').replace(/(..)/g, '$1 ').trim()}); rename it with UTF-8 characters and build again`);
    }
  }
  return readdirSync(dir, { withFileTypes: true });
}

const KIND_WORDS = { elf: 'a Linux (ELF) file', pe: 'a Windows (PE) file', macho: 'a macOS (Mach-O) file' };

/**
 * Every entry of a bundle folder, checked: no link pointing outside the bundle, nothing that is
 * neither a file, a folder nor a link inside it; each file `{ path, shown }`.
 */
function walkBundle(root, shownRoot) {
  const files = [];
  const realRoot = realpathSync(root);
  const visit = (dir, shownDir) => {
    let entries;
    try {
      entries = readNames(dir, shownDir);
    } catch (err) {
      if (err instanceof PackageError) throw err;
      throw bad(`--plugin: ${shownDir} cannot be read (${err.code === 'EACCES' ? 'permission denied; make it readable (chmod -R a+rX)' : err.code ?? err.message})`);
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      const shown = `${shownDir}/${entry.name}`;
      if (entry.isSymbolicLink()) {
        const target = readlinkSync(path);
        const inside = resolve(dir, target);
        const within = relative(realRoot, resolve(realpathSync(dir), target));
        if (isAbsolute(target) || within === '' || within === '..' || within.startsWith(`..${sep}`)) {
          throw bad(`--plugin: ${shown} is a link to ${JSON.stringify(target)}, outside the bundle; a bundle must hold its own files: copy the file in, or make the link relative within the bundle`);
        }
        let st;
        try {
          st = statSync(inside);
        } catch {
          throw bad(`--plugin: ${shown} is a link to ${JSON.stringify(target)}, which does not exist; rebuild the plugin or remove the link`);
        }
        if (st.isFile()) files.push({ path, shown, link: true });
      } else if (entry.isDirectory()) visit(path, shown);
      else if (entry.isFile()) files.push({ path, shown });
      else throw bad(`--plugin: ${shown} is not a regular file or folder (a FIFO, a socket or a device); a bundle holds only files, folders and links within it`);
    }
  };
  visit(root, shownRoot);
  return files;
}

/** What each bundle format keeps where, and what binary it must be. */
const BUNDLE_PLACES = {
  vst3: [
    { folder: 'Contents/x86_64-linux', kind: 'elf', platform: 'linux-x64', words: 'a Linux x86-64 library (.so)' },
    { folder: 'Contents/x86_64-win', kind: 'pe', platform: 'win-x64', words: 'a Windows x64 DLL' },
    { folder: 'Contents/MacOS', kind: 'macho', words: 'a macOS (Mach-O) binary' },
  ],
  mac: [{ folder: 'Contents/MacOS', kind: 'macho', words: 'a macOS (Mach-O) binary' }],
};

/** The platforms of a bundle folder: its binaries where its format keeps them, each checked. */
function bundlePlatforms(path, shown, places) {
  const files = walkBundle(path, shown);
  if (files.length === 0) throw bad(`--plugin: ${shown} is an empty folder; build the plugin first (it holds its binaries under Contents/)`);
  const platforms = new Set();
  for (const place of places) {
    const prefix = `${shown}/${place.folder}/`;
    for (const file of files.filter((f) => f.shown.startsWith(prefix) && !f.shown.slice(prefix.length).includes('/') && !f.link)) {
      const kind = binaryKind(readHeader(file.path, file.shown));
      if (kind === undefined || kind.kind !== place.kind || (place.platform !== undefined && !kind.platforms.includes(place.platform))) {
        const is = kind === undefined ? 'not a binary' : kind.kind === place.kind ? `built for ${kind.platforms.join(', ')}` : KIND_WORDS[kind.kind];
        throw bad(`--plugin: ${file.shown} is ${is}, but ${place.folder}/ must hold ${place.words}; rebuild the plugin for that platform or remove the file`);
      }
      for (const p of place.platform ? [place.platform] : kind.platforms) platforms.add(p);
    }
  }
  if (platforms.size === 0) {
    throw bad(`--plugin: ${shown} holds no binary for any platform (none in ${places.map((p) => `${p.folder}/`).join(', ')}); build the plugin and give its bundle as the build made it`);
  }
  return platforms;
}

/** The platforms of a single-file plugin or program: one binary, of one of the kinds `kinds` allows. */
function filePlatforms(path, shown, allowed, words) {
  const kind = binaryKind(readHeader(path, shown));
  if (kind === undefined || !allowed.includes(kind.kind)) throw bad(`--plugin: ${shown} is ${kind === undefined ? 'not a binary' : KIND_WORDS[kind.kind]}; it must be ${words}`);
  return { kind, platforms: new Set(kind.platforms) };
}

/**
 * The one rule of what a `--plugin PATH` is: `{ format, name, platforms, path, file }` (`file`:
 * its name as it is installed, e.g. `Acme Gain.vst3`), or a PackageError that says what is
 * wrong and what to do.
 *
 * @param {string} given the path as the vendor gave it
 * @returns {{ format: 'vst3' | 'clap' | 'au' | 'standalone', name: string, platforms: Set<string>, path: string, file: string }}
 */
export function inspectPlugin(given) {
  const path = resolve(given);
  const bundle = enclosingBundle(path);
  if (bundle !== undefined) throw bad(`--plugin: ${given} is inside the bundle ${bundle}, so it is part of that plugin, not a plugin or a Standalone of its own; give the bundle itself, or the Standalone the build made`);
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    if ((err.code === 'ENOENT' || err.code === 'ENOTDIR') && given.includes('\uFFFD')) throw bad(`--plugin: ${given} cannot be found: its name holds bytes that are not UTF-8 text (shown as \uFFFD), which cannot be named here; rename it with UTF-8 characters`);
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw bad(`--plugin: ${given} does not exist; ${HOW}`);
    throw bad(`--plugin: ${given} cannot be read (${err.code === 'EACCES' ? 'permission denied; make it readable' : err.code ?? err.message})`);
  }
  const file = basename(path);
  const dot = file.lastIndexOf('.');
  const ext = dot > 0 ? file.slice(dot).toLowerCase() : '';
  const name = ext === '' || !['.vst3', '.clap', '.component', '.app', '.exe'].includes(ext) ? file : file.slice(0, dot);
  if (/[\u0000-\u001f\u007f]/.test(file)) throw bad(`--plugin: ${JSON.stringify(given)}: the name holds a line break or a control character, which installers and hosts cannot show; rename the plugin`);
  if (name.startsWith('.') || name.trim() === '') throw bad(`--plugin: ${given}: the plugin's name is empty or hidden (starts with '.'); hosts do not scan such names: rename the plugin`);
  let format;
  let platforms;
  if (!st.isDirectory() && !st.isFile()) throw bad(`--plugin: ${given} is not a file or a folder (a FIFO, a socket or a device); ${HOW}`);
  if (ext === '.vst3') {
    if (!st.isDirectory()) throw bad(`--plugin: ${given} is a plain file, but VST3 plugins are bundle folders (${file}/Contents/…), as JUCE builds them; give the bundle folder`);
    format = 'vst3';
    platforms = bundlePlatforms(path, file, BUNDLE_PLACES.vst3);
  } else if (ext === '.component') {
    if (!st.isDirectory()) throw bad(`--plugin: ${given} is a plain file, but an AU is a bundle folder (${file}/Contents/MacOS/…); give the bundle folder`);
    format = 'au';
    platforms = bundlePlatforms(path, file, BUNDLE_PLACES.mac);
  } else if (ext === '.app') {
    if (!st.isDirectory()) throw bad(`--plugin: ${given} is a plain file, but a macOS application is a bundle folder (${file}/Contents/MacOS/…); give the bundle folder`);
    format = 'standalone';
    platforms = bundlePlatforms(path, file, BUNDLE_PLACES.mac);
    for (const entry of readNames(join(path, 'Contents', 'MacOS'), `${file}/Contents/MacOS`)) {
      if (!entry.isFile()) continue;
      const shown = `${file}/Contents/MacOS/${entry.name}`;
      const problem = notAProgram(binaryKind(readHeader(join(path, 'Contents', 'MacOS', entry.name), shown)), join(path, 'Contents', 'MacOS', entry.name), shown);
      if (problem !== undefined) throw bad(`--plugin: ${shown} is ${problem}; a macOS Standalone (.app) holds its program there: give the .app the build made`);
    }
  } else if (ext === '.clap') {
    format = 'clap';
    platforms = st.isDirectory() ? bundlePlatforms(path, file, BUNDLE_PLACES.mac) : filePlatforms(path, given, ['elf', 'pe'], 'a Linux or Windows CLAP binary (or, on macOS, a .clap bundle folder)').platforms;
  } else if (ext === '.exe') {
    if (st.isDirectory()) throw bad(`--plugin: ${given} is a folder; a Windows Standalone is one .exe file`);
    format = 'standalone';
    const { kind, platforms: found } = filePlatforms(path, given, ['pe'], 'a Windows program (PE)');
    const problem = notAProgram(kind, path, given);
    if (problem !== undefined) throw bad(`--plugin: ${given} is ${problem}; give the Standalone the build made`);
    platforms = found;
  } else if (st.isFile()) {
    const { kind, platforms: found } = filePlatforms(path, given, ['elf'], `a Linux Standalone program (ELF) or a file named .vst3, .clap, .component, .app or .exe; ${HOW}`);
    const problem = notAProgram(kind, path, given);
    if (problem !== undefined) throw bad(`--plugin: ${given} is ${problem}; give the Standalone the build made`);
    if ((st.mode & 0o111) === 0) throw bad(`--plugin: ${given} is not executable; a Linux Standalone must be (chmod +x)`);
    format = 'standalone';
    platforms = found;
  } else {
    throw bad(`--plugin: ${given} is a folder that is no plugin bundle (its name does not end in .vst3, .clap, .component or .app); ${HOW}`);
  }
  if (platforms.has('win-x64') && NOT_IN_WINDOWS_NAMES.test(file)) throw bad(`--plugin: ${given}: the name holds one of < > : " / \\ | ? *, which Windows file names cannot; rename the plugin`);
  return { format, name, platforms, path, file };
}

/**
 * Every `--plugin` inspected, against the targets being built: a plugin for none of them, two of
 * one format and name for the same platform, or a Standalone whose name the installer of a
 * platform reserves beside the program `name` (`reservedNameConflict`), are refused.
 *
 * @param {string[]} given
 * @param {string[]} targets
 * @param {string} [name] the program's file name (`--name`)
 */
export function inspectPlugins(given, targets, name = 'plugin-license') {
  const plugins = [];
  for (const path of given) {
    const plugin = inspectPlugin(path);
    const wanted = [...plugin.platforms].filter((p) => targets.includes(p));
    if (wanted.length === 0) {
      const built = [...plugin.platforms].sort();
      const known = built.filter((p) => ['linux-x64', 'win-x64', 'darwin-x64', 'darwin-arm64'].includes(p));
      const add = known.length > 0 ? `add ${known.join(' or ')} to --targets or ` : '';
      throw bad(`--plugin: ${plugin.file} is built for ${built.join(' and ')} only; ${add}build it for ${targets.join(' or ')}`);
    }
    for (const other of plugins) {
      const both = wanted.filter((p) => other.platforms.has(p));
      if (other.format === plugin.format && other.name === plugin.name && both.length > 0) {
        throw bad(`--plugin: two ${FORMATS[plugin.format]} plugins named ${JSON.stringify(plugin.name)} for ${both.join(', ')} (${other.given} and ${path}); give one of them`);
      }
    }
    if (plugin.format === 'standalone') {
      for (const os of new Set(wanted.map((t) => TARGETS[t].os))) {
        const conflict = reservedNameConflict(os, programFile(os, name), plugin.file);
        if (conflict !== undefined) throw bad(`--plugin: the Standalone ${plugin.file} goes beside the program, where the ${OS_WORDS[os]} installer already has ${conflict}; rename the Standalone (or choose another --name)`);
      }
    }
    plugins.push({ ...plugin, given: path, platforms: new Set(wanted) });
  }
  return plugins;
}

/**
 * Copies the plugins of `target` into `dir` in the layout `plugins install --from` reads
 * (`dir/<format>/<file>`), each as the vendor built it (links within a bundle kept as links).
 * Returns the plugins staged, or none (then `dir` is not made).
 */
export function stagePlugins(plugins, target, dir) {
  const staged = plugins.filter((p) => p.platforms.has(target));
  for (const p of staged) {
    const to = join(dir, p.format, p.file);
    mkdirSync(dirname(to), { recursive: true });
    try {
      cpSync(p.path, to, { recursive: true, verbatimSymlinks: true, errorOnExist: true, force: false });
    } catch (err) {
      throw new PackageError(`could not copy ${p.given} into the ${target} installer (${err.code ?? err.message}); check that it is readable and that the disk has room`);
    }
  }
  return staged;
}
