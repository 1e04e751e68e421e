import { lstat, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { reservedNameConflict } from '@plugin-license/licensing';
import { usageError } from '../exit.js';
import { PLUGIN_FORMATS, type PluginFormat, type PluginPlatform } from './places.js';
import { readNames, TreeDigestError, treeDigest } from './tree-digest.js';

/** One item of a staged plugin folder, as the vendor built it. */
export interface StagedItem {
  format: PluginFormat;
  /** Its file or folder name (`Acme Gain.vst3`). */
  name: string;
  /** The product it is (`Acme Gain`): the name without the format's ending. */
  product: string;
  source: string;
  digest: string;
}

/** What each format's item is on each platform: its ending and whether it is a folder (a bundle) or a file. */
const SHAPES: Record<PluginPlatform, Partial<Record<PluginFormat, { ending: string; folder: boolean }>>> = {
  linux: { vst3: { ending: '.vst3', folder: true }, clap: { ending: '.clap', folder: false }, standalone: { ending: '', folder: false } },
  win32: { vst3: { ending: '.vst3', folder: true }, clap: { ending: '.clap', folder: false }, standalone: { ending: '.exe', folder: false } },
  darwin: { vst3: { ending: '.vst3', folder: true }, clap: { ending: '.clap', folder: true }, au: { ending: '.component', folder: true }, standalone: { ending: '.app', folder: true } },
};

const FORMAT_NAMES: Record<PluginFormat, string> = { vst3: 'VST3', clap: 'CLAP', au: 'AU', standalone: 'Standalone' };

/** The word for a format in messages ("VST3"). */
export const formatName = (format: PluginFormat | 'menu'): string => (format === 'menu' ? 'menu entry' : FORMAT_NAMES[format]);

/** A path as a message shows it: as it is, or JSON-quoted when it holds a control character (a new line), so the message stays one line. */
export const shown = (path: string): string => (/[\u0000-\u001f\u007f]/.test(path) ? JSON.stringify(path) : path);

const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;

/**
 * The one rule for an item's name: what a plug-in folder, a host's list and a one-line message
 * can carry on `platform`. Spaces, quotes, `$`, `*`, non-ASCII and (outside Windows) backslashes
 * are a vendor's right; a control character (a new line), a leading dot (hidden, and our own
 * temporary names start with one), a missing ending and what Windows cannot store are refused;
 * a Standalone, which goes beside the program (`program`: its file name there, when known), may
 * not take a name the installers reserve there (`reservedNameConflict`). Returns the problem in
 * words, or undefined when the name is fine.
 */
export function itemNameProblem(name: string, format: PluginFormat, platform: PluginPlatform, program = ''): string | undefined {
  const shape = SHAPES[platform][format];
  if (shape === undefined) return `${FORMAT_NAMES[format]} is not a format of ${platform === 'win32' ? 'Windows' : platform === 'darwin' ? 'macOS' : 'Linux'}`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'its name holds a control character (a new line or a tab): rename it';
  if (name.startsWith('.')) return 'its name starts with a dot (a hidden file): rename it';
  if (name.includes('/')) return 'its name holds a /';
  if (!name.toLowerCase().endsWith(shape.ending) || name.length === shape.ending.length) return shape.ending === '' ? 'it has no name' : `its name must end in ${shape.ending}`;
  if (platform === 'win32') {
    if (/[<>:"\\|?*]/.test(name)) return 'its name holds one of < > : " \\ | ? *, which Windows cannot store: rename it';
    if (/[ .]$/.test(name)) return 'its name ends in a space or a dot, which Windows drops: rename it';
    if (WINDOWS_RESERVED.test(name)) return 'its name is reserved on Windows (CON, NUL, COM1…): rename it';
  }
  if (Buffer.byteLength(name) > 255) return 'its name is longer than 255 bytes';
  const reserved = format === 'standalone' ? reservedNameConflict(platform, program, name) : undefined;
  if (reserved !== undefined) return `a Standalone goes beside the program, where this name is taken by ${reserved}: rename it`;
  return undefined;
}

/**
 * Reads a staged plugin folder (`DIR/vst3/<Name>.vst3`, `DIR/clap/…`, `DIR/au/…`, `DIR/standalone/…`:
 * only formats present have a folder, nothing else is there) and the digest of every item.
 * Anything else is bad input (a usage error naming it): another entry, a link where an item
 * should be, a folder where a file is expected, a FIFO or a device anywhere, an empty folder.
 */
export async function readStaged(dir: string, platform: PluginPlatform, program?: string): Promise<StagedItem[]> {
  const st = await stat(dir).catch((e: NodeJS.ErrnoException) => {
    throw usageError(`--from ${shown(dir)}: ${e.code === 'ENOENT' ? 'no such folder' : `cannot be read (${e.code})`}`);
  });
  if (!st.isDirectory()) throw usageError(`--from ${shown(dir)} is not a folder; give the staged plugin folder (vst3/, clap/, au/, standalone/)`);
  // A name that is not UTF-8 text anywhere in it: said as such, never an "unexpected" ENOENT.
  const names = async (folder: string): Promise<string[]> =>
    readNames(folder).catch((e: unknown) => {
      if (e instanceof TreeDigestError) throw usageError(`${shown(e.path)} is ${e.problem}`);
      throw e;
    });
  const items: StagedItem[] = [];
  for (const sub of (await names(dir)).sort()) {
    const subPath = join(dir, sub);
    if (!(PLUGIN_FORMATS as readonly string[]).includes(sub)) throw usageError(`${shown(subPath)} is not a format folder; a staged plugin folder holds only ${PLUGIN_FORMATS.join(', ')}`);
    const format = sub as PluginFormat;
    if (!(await lstat(subPath)).isDirectory()) throw usageError(`${shown(subPath)} must be a folder of ${FORMAT_NAMES[format]} items`);
    for (const name of (await names(subPath)).sort()) {
      const source = join(subPath, name);
      const problem = itemNameProblem(name, format, platform, program);
      if (problem !== undefined) throw usageError(`${shown(source)}: ${problem}`);
      const shape = SHAPES[platform][format]!;
      const kind = await lstat(source);
      if (kind.isSymbolicLink()) throw usageError(`${shown(source)} is a link; stage the ${FORMAT_NAMES[format]} item itself`);
      if (shape.folder && !kind.isDirectory()) throw usageError(`${shown(source)} must be a folder (a ${FORMAT_NAMES[format]} bundle), not a ${kind.isFile() ? 'file' : 'special file'}`);
      if (!shape.folder && !kind.isFile()) throw usageError(`${shown(source)} must be a file, not a ${kind.isDirectory() ? 'folder' : 'special file (a FIFO or a device)'}`);
      let digest: string;
      try {
        digest = await treeDigest(source);
      } catch (e) {
        if (e instanceof TreeDigestError) throw usageError(`${shown(e.path)} is ${e.problem}${e.problem.startsWith('named') ? '' : '; a plugin holds only files, folders and links'}`);
        throw e;
      }
      items.push({ format, name, product: shape.ending === '' ? name : name.slice(0, -shape.ending.length), source, digest });
    }
  }
  if (items.length === 0) throw usageError(`--from ${shown(dir)} holds no plugins; stage them as vst3/<Name>.vst3, clap/<Name>.clap, au/<Name>.component or standalone/<Name>`);
  return items;
}
