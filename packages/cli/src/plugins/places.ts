import { basename, dirname, posix, win32 } from 'node:path';
import { usageError } from '../exit.js';

/** The formats a staged plugin folder may hold, one sub-folder each (the shared interface of issue 29). */
export const PLUGIN_FORMATS = ['vst3', 'clap', 'au', 'standalone'] as const;
export type PluginFormat = (typeof PLUGIN_FORMATS)[number];

/** The platforms plugins are placed on. */
export type PluginPlatform = 'linux' | 'win32' | 'darwin';

/** Where each format goes for one user; a format missing here is not for this platform. */
export interface PluginPlaces {
  platform: PluginPlatform;
  /** The folder of each format this platform has. */
  folders: Partial<Record<PluginFormat, string>>;
  /** Where a Standalone gets its menu entry: a .desktop file (Linux), a link (macOS); none on Windows (NSIS makes the shortcut). */
  menu?: { kind: 'desktop' | 'link'; folder: string };
}

/** What the placement rule depends on, injected so a test can ask for win32 and darwin on Linux. */
export interface PlaceInput {
  platform: string;
  env: Readonly<Record<string, string | undefined>>;
  /** The folder of the running executable (the Standalone goes beside it). */
  exeFolder: string;
}

/** A Windows path with a drive (`C:\`) or a share (`\\server\share\`): not relative, not root-relative (`\Users`), not drive-relative (`C:Users`). */
const WINDOWS_ROOTED = /^(?:[A-Za-z]:[\\/]|[\\/]{2}[^\\/]+[\\/][^\\/]+)/;

/** Reads a variable as Windows has it: names are case-insensitive there (`LocalAppData` is `LOCALAPPDATA`). */
function windowsVariable(env: PlaceInput['env'], name: string): string | undefined {
  const key = Object.keys(env).find((k) => k.toUpperCase() === name);
  return key === undefined ? undefined : env[key];
}

/**
 * The one placement rule (docs/shipping.md, "The vendor's plugins"): per-user folders,
 * no administrator rights, as each format's specification names them.
 *
 * | format | Linux | Windows | macOS |
 * |---|---|---|---|
 * | VST3 | `~/.vst3` | `%LOCALAPPDATA%\Programs\Common\VST3` | `~/Library/Audio/Plug-Ins/VST3` |
 * | CLAP | `~/.clap` | `%LOCALAPPDATA%\Programs\Common\CLAP` | `~/Library/Audio/Plug-Ins/CLAP` |
 * | AU | – | – | `~/Library/Audio/Plug-Ins/Components` |
 * | Standalone | beside the executable, `.desktop` in `$XDG_DATA_HOME/applications` (`~/.local/share/applications`) | beside the executable | beside the executable, a link in `~/Applications` |
 *
 * Windows paths are computed with `path.win32`, POSIX ones with `path.posix`, whatever runs the
 * code. A missing or relative HOME (LOCALAPPDATA on Windows) is a usage error saying which.
 *
 * @example
 * pluginPlaces({ platform: 'win32', env: { LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local' }, exeFolder: 'C:\\Users\\u\\AppData\\Local\\Programs\\Acme' }).folders.vst3;
 * // 'C:\\Users\\u\\AppData\\Local\\Programs\\Common\\VST3'
 */
export function pluginPlaces(input: PlaceInput): PluginPlaces {
  const { platform, env, exeFolder } = input;
  if (platform === 'win32') {
    const local = windowsVariable(env, 'LOCALAPPDATA');
    if (local === undefined || local === '') throw usageError('LOCALAPPDATA is not set, so the per-user plug-in folders (%LOCALAPPDATA%\\Programs\\Common\\VST3) are unknown; run this as the user who will use the plugins, from their own session');
    if (!WINDOWS_ROOTED.test(local)) throw usageError(`LOCALAPPDATA is '${local}', not a full path with a drive (C:\\Users\\you\\AppData\\Local); fix the variable or run this from the user's own session`);
    if (!WINDOWS_ROOTED.test(exeFolder)) throw usageError(`the executable's folder '${exeFolder}' is not a full path with a drive`);
    const common = win32.join(local, 'Programs', 'Common');
    return { platform, folders: { vst3: win32.join(common, 'VST3'), clap: win32.join(common, 'CLAP'), standalone: win32.normalize(exeFolder) } };
  }
  if (platform !== 'linux' && platform !== 'darwin') throw usageError(`plugins are placed on Linux, macOS and Windows; this computer runs ${platform}`);
  const home = env.HOME;
  if (home === undefined || home === '') throw usageError('HOME is not set, so the per-user plug-in folders (~/.vst3) are unknown; run this as the user who will use the plugins');
  if (!posix.isAbsolute(home)) throw usageError(`HOME is '${home}', not a full path; fix the variable before installing plugins`);
  if (!posix.isAbsolute(exeFolder)) throw usageError(`the executable's folder '${exeFolder}' is not a full path`);
  const standalone = posix.normalize(exeFolder);
  if (platform === 'darwin') {
    const plugIns = posix.join(home, 'Library', 'Audio', 'Plug-Ins');
    return {
      platform,
      folders: { vst3: posix.join(plugIns, 'VST3'), clap: posix.join(plugIns, 'CLAP'), au: posix.join(plugIns, 'Components'), standalone },
      menu: { kind: 'link', folder: posix.join(home, 'Applications') },
    };
  }
  // The Desktop Entry specification's folder: $XDG_DATA_HOME/applications; a relative XDG_DATA_HOME is ignored, as the XDG Base Directory spec says.
  const dataHome = env.XDG_DATA_HOME !== undefined && posix.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : posix.join(home, '.local', 'share');
  return {
    platform,
    folders: { vst3: posix.join(home, '.vst3'), clap: posix.join(home, '.clap'), standalone },
    menu: { kind: 'desktop', folder: posix.join(dataHome, 'applications') },
  };
}

/** The path module of a platform: Windows paths are Windows paths wherever the code runs. */
export function pathsOf(platform: PluginPlatform): typeof posix {
  return platform === 'win32' ? win32 : posix;
}

/** Every folder of this user's places: each format's, and the menu's. */
export function placeFolders(places: PluginPlaces): string[] {
  return [...Object.values(places.folders), ...(places.menu ? [places.menu.folder] : [])];
}

/** The folder an item of `format` goes into. */
export function folderOf(places: PluginPlaces, format: PluginFormat | 'menu'): string {
  const folder = format === 'menu' ? places.menu?.folder : places.folders[format];
  if (folder === undefined) throw new Error(`no folder for ${format}`);
  return folder;
}

/** A path is one we may touch only when it sits directly in one of this user's places. */
export function insidePlaces(places: PluginPlaces, path: string): boolean {
  return placeFolders(places).includes(dirname(path)) && basename(path) !== '' && basename(path) !== '..' && basename(path) !== '.';
}
