import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import { join, posix, resolve, win32 } from 'node:path';
import envPaths from 'env-paths';
import { chooseAppGroup } from './app-group.js';
import { LicenseError } from './errors.js';
import { chooseNamespace, PROJECT_ID_PATTERN } from './executable.js';

export { DEFAULT_NAMESPACE } from './executable.js';

const NAMESPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const CACHE_FILE_PATTERN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;

export interface PathOptions {
  /** One per vendor (default `PLUGIN_LICENSE_APP`, else the executable's baked `--app`, else `plugin-license`). */
  namespace?: string;
  /** One root folder for everything (default `PLUGIN_LICENSE_HOME`, else the per-OS folders). */
  home?: string;
  /**
   * The environment read for `PLUGIN_LICENSE_HOME` and `PLUGIN_LICENSE_APP_GROUP` (default
   * `process.env`).
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** The OS whose folders are meant (default this one): tests of another OS's rule. */
  platform?: NodeJS.Platform;
  /** The user's home folder (default {@link userHome} of `env`); used for the Linux and macOS folders. */
  homedir?: string;
}

/**
 * The user's home folder, by the one rule every part shares (plc's `home_folder` says the same):
 * `HOME` when it is set, else the password database's entry (what `os.homedir()` falls back to).
 * It must be an absolute path: an empty `HOME` (which `os.homedir()` returns as is) or a relative
 * one would put the user's files relative to whatever the working folder is (an agent started by
 * a plugin works in `/`, and wrote `/.local/share/APP`), so it is refused with `invalid_argument`,
 * before anything is written. On Windows the profile folder (`USERPROFILE`), drive-rooted.
 *
 * @example
 * userHome({ HOME: '/home/me' }); // '/home/me'
 * userHome({ HOME: '' });         // throws: HOME is set but empty, …
 */
export function userHome(env: Readonly<Record<string, string | undefined>> = process.env, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    const profile = os.homedir();
    if (!win32.isAbsolute(profile) || !/^([A-Za-z]:|\\\\)/.test(profile)) throw noHome(`the user's profile folder is '${profile}', not a full path with a drive`);
    return profile;
  }
  const set = env.HOME;
  let home: string;
  if (set === undefined) {
    try {
      home = os.userInfo().homedir;
    } catch {
      throw noHome('HOME is not set and this user has no entry in the password database');
    }
    if (!posix.isAbsolute(home)) throw noHome(`HOME is not set and the password database gives '${home}', not an absolute path`);
    return home;
  }
  if (set === '') throw noHome('HOME is set but empty');
  if (!posix.isAbsolute(set)) throw noHome(`HOME is '${set.slice(0, 200)}', not an absolute path`);
  return set;
}

/**
 * An XDG base directory variable (`XDG_DATA_HOME`, `XDG_CONFIG_HOME`, `XDG_CACHE_HOME`,
 * `XDG_STATE_HOME`, `XDG_RUNTIME_DIR`) when it is an absolute path; undefined when unset, empty
 * or relative, which the XDG Base Directory specification says to ignore ("If an implementation
 * encounters a relative path in any of these variables it should consider the path invalid and
 * ignore it"): the default under the home folder is used instead, as plc does.
 *
 * @example
 * xdgDir({ XDG_DATA_HOME: 'data' }, 'XDG_DATA_HOME'); // undefined: ~/.local/share is used
 */
export function xdgDir(env: Readonly<Record<string, string | undefined>>, variable: 'XDG_DATA_HOME' | 'XDG_CONFIG_HOME' | 'XDG_CACHE_HOME' | 'XDG_STATE_HOME' | 'XDG_RUNTIME_DIR'): string | undefined {
  const value = env[variable];
  return value !== undefined && posix.isAbsolute(value) ? value : undefined;
}

function noHome(why: string): LicenseError {
  return new LicenseError(
    'invalid_argument',
    `${why}, so this user's folders (the license files under ~/.local/share, ~/Library) are unknown and nothing was written; set HOME to the home folder as an absolute path (such as /home/you), or PLUGIN_LICENSE_HOME to a folder for the license files`,
  );
}

export interface LicensePaths {
  config: string;
  data: string;
  cache: string;
  log: string;
}

/** The namespace in effect by the one rule (`chooseNamespace`), validated. */
export function resolveNamespace(namespace?: string, env: Readonly<Record<string, string | undefined>> = process.env): string {
  const ns = chooseNamespace(namespace, env).value;
  if (!NAMESPACE_PATTERN.test(ns)) {
    throw new LicenseError(
      'invalid_argument',
      `namespace '${ns.slice(0, 80)}' is not usable as a folder name; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  }
  return ns;
}

/**
 * Where this namespace keeps its files: under `home` (or `PLUGIN_LICENSE_HOME`) as
 * `config/`, `data/`, `cache/`, `log/`; otherwise the per-OS folders as env-paths names them
 * (`~/.local/share/plugin-license`, `~/Library/Application Support/plugin-license`, `%LOCALAPPDATA%\plugin-license\Data`, ...),
 * with the home folder by {@link userHome} (an empty or relative `HOME` is refused) and only
 * absolute XDG variables ({@link xdgDir}).
 * On macOS with an app group (see `chooseAppGroup`: `PLUGIN_LICENSE_APP_GROUP`, `"app_group"` of
 * `config.json`, or baked into the executable), the whole data folder (caches, tickets, offline
 * records, intents) is `~/Library/Group Containers/GROUP/APP`, where a sandboxed plugin of the
 * vendor's team can read its ticket; what an earlier install kept in `~/Library/Application
 * Support/APP` is moved there the first time (see {@link moveDataIntoGroup}). Config, cache and
 * log folders stay where they are.
 *
 * @example
 * resolvePaths({ namespace: 'acme-audio' }).data; // e.g. /home/me/.local/share/acme-audio
 */
export function resolvePaths(options: PathOptions = {}): LicensePaths {
  const namespace = resolveNamespace(options.namespace);
  const env = options.env ?? process.env;
  const portable = options.home ?? nonEmpty(env.PLUGIN_LICENSE_HOME);
  if (portable !== undefined) {
    const root = resolve(portable);
    return { config: join(root, 'config'), data: join(root, 'data'), cache: join(root, 'cache'), log: join(root, 'log') };
  }
  const platform = options.platform ?? process.platform;
  if (platform === 'win32') {
    const p = envPaths(namespace, { suffix: '' });
    return { config: p.config, data: p.data, cache: p.cache, log: p.log };
  }
  // Linux and macOS as env-paths names them, spelled here so that the home and XDG rules above
  // hold (env-paths takes os.homedir() as it is, an empty or relative one too, and any XDG value)
  // and so the rule is testable on any OS. The home is asked for only when a folder needs it.
  // A HOME set but empty or relative is refused whatever else is set; the password database is
  // asked only when a folder needs the home (plc reads an absolute XDG_DATA_HOME without it).
  const given = options.homedir ?? (env.HOME === undefined ? undefined : userHome(env, platform));
  const home = (): string => given ?? userHome(env, platform);
  if (platform !== 'darwin') {
    const base = (variable: Parameters<typeof xdgDir>[1], ...fallback: string[]): string => posix.join(xdgDir(env, variable) ?? posix.join(home(), ...fallback), namespace);
    return {
      config: base('XDG_CONFIG_HOME', '.config'),
      data: base('XDG_DATA_HOME', '.local', 'share'),
      cache: base('XDG_CACHE_HOME', '.cache'),
      log: base('XDG_STATE_HOME', '.local', 'state'),
    };
  }
  const library = posix.join(home(), 'Library');
  const paths = {
    config: posix.join(library, 'Preferences', namespace),
    data: posix.join(library, 'Application Support', namespace),
    cache: posix.join(library, 'Caches', namespace),
    log: posix.join(library, 'Logs', namespace),
  };
  const configFile = posix.join(paths.config, 'config.json');
  const group = chooseAppGroup(env, appGroupInFile(configFile), configFile).value;
  if (group === undefined) return paths;
  const data = posix.join(library, 'Group Containers', group, namespace);
  moveDataIntoGroup(paths.data, data);
  return { ...paths, data };
}

/** The config file's `"app_group"`; a file that can't be read or parsed counts as none here (`resolveConfig` reports it). */
function appGroupInFile(configFile: string): unknown {
  try {
    const json = JSON.parse(readFileSync(configFile, 'utf8').replace(/^\uFEFF/, '')) as unknown;
    return typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>).app_group : undefined;
  } catch {
    return undefined;
  }
}

const moved = new Set<string>();

/**
 * Moves what an earlier install kept in the data folder without an app group (`from`) into the
 * group container's (`to`), once per process: each entry (`licenses/`, `tickets/`, `offline/`,
 * `machine-secret`, intents) is renamed as a whole, atomically, and only when `to` has no entry of
 * that name yet; an entry already there is kept and the old one left in place (nothing is
 * overwritten or deleted). Sockets and locks are not data and stay. A process that cannot move
 * (a sandboxed one, a read-only folder) leaves everything as it is: the next one that can, does.
 *
 * @example
 * moveDataIntoGroup('/Users/me/Library/Application Support/acme', '/Users/me/Library/Group Containers/ABCDE12345.acme/acme');
 */
export function moveDataIntoGroup(from: string, to: string): void {
  const key = `${from}\0${to}`;
  if (moved.has(key)) return;
  let names: string[];
  try {
    names = readdirSync(from);
  } catch {
    moved.add(key); // nothing there (a fresh install), or not ours to read
    return;
  }
  try {
    mkdirSync(to, { recursive: true, mode: 0o700 });
    for (const name of names) {
      const source = join(from, name);
      if (name.endsWith('.lock') || lstatSync(source).isSocket() || exists(join(to, name))) continue;
      try {
        renameSync(source, join(to, name));
      } catch {
        // moved by another process meanwhile, or not movable: left where it is
      }
    }
    moved.add(key);
  } catch {
    // the container cannot be made here (a sandbox): another process will move it
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The folder holding one cache file per project. */
export function licensesDir(options: PathOptions = {}): string {
  return join(resolvePaths(options).data, 'licenses');
}

/** The folder of the offline exchange's local records (pending requests, release proofs). */
export function offlineDir(options: PathOptions = {}): string {
  return join(resolvePaths(options).data, 'offline');
}

/** The cache file of one project. */
export function cacheFilePath(projectId: string, options: PathOptions = {}): string {
  assertProjectId(projectId);
  return join(licensesDir(options), `${projectId.toLowerCase()}.json`);
}

/**
 * The ticket of one project (docs/license-ticket.md): `DATA/tickets/PROJECT_ID.ticket`, lowercase id,
 * in the data folder by the one rule, so a plugin finds it without the agent.
 *
 * @example
 * ticketPath({ namespace: 'acme-audio' }, projectId); // e.g. ~/.local/share/acme-audio/tickets/123e….ticket
 */
export function ticketPath(options: PathOptions, projectId: string): string {
  assertProjectId(projectId);
  return join(resolvePaths(options).data, 'tickets', `${projectId.toLowerCase()}.ticket`);
}

/**
 * The signed ticket of one project (docs/signed-ticket.md): `DATA/tickets/PROJECT_ID.signed`, lowercase
 * id, beside its ticket.
 *
 * @example
 * signedTicketPath({ namespace: 'acme-audio' }, projectId); // e.g. ~/.local/share/acme-audio/tickets/123e….signed
 */
export function signedTicketPath(options: PathOptions, projectId: string): string {
  assertProjectId(projectId);
  return join(resolvePaths(options).data, 'tickets', `${projectId.toLowerCase()}.signed`);
}

/**
 * Project ids that have a cache file in this namespace (files moved aside as invalid are not
 * listed). The agent reloads these at start.
 *
 * @example
 * for (const projectId of await listCachedProjects({ namespace: 'acme-audio' })) new License({ projectId, baseUrl });
 */
export async function listCachedProjects(options: PathOptions = {}): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(licensesDir(options));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const ids: string[] = [];
  for (const name of names) {
    const m = CACHE_FILE_PATTERN.exec(name);
    if (m?.[1]) ids.push(m[1].toLowerCase());
  }
  return ids.sort();
}

/** Throws `invalid_argument` unless `projectId` is a UUID. */
export function assertProjectId(projectId: unknown): asserts projectId is string {
  if (typeof projectId !== 'string' || !PROJECT_ID_PATTERN.test(projectId)) {
    const shown = typeof projectId === 'string' ? `'${projectId.slice(0, 60)}'` : String(projectId);
    throw new LicenseError('invalid_argument', `project id ${shown} is not a UUID; pass the project's id as shown in the portal (for example 123e4567-e89b-12d3-a456-426614174000)`);
  }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
