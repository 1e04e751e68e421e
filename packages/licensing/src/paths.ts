import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import envPaths from 'env-paths';
import { LicenseError } from './errors.js';
import { chooseNamespace } from './executable.js';

export { DEFAULT_NAMESPACE } from './executable.js';

const NAMESPACE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CACHE_FILE_PATTERN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;

export interface PathOptions {
  /** One per vendor (default `PLUGIN_LICENSE_APP`, else the executable's baked `--app`, else `plugin-license`). */
  namespace?: string;
  /** One root folder for everything (default `PLUGIN_LICENSE_HOME`, else the per-OS folders). */
  home?: string;
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
 * `config/`, `data/`, `cache/`, `log/`; otherwise the per-OS folders of env-paths
 * (`~/.local/share/plugin-license`, `~/Library/Application Support/plugin-license`, `%LOCALAPPDATA%\plugin-license\Data`, ...).
 *
 * @example
 * resolvePaths({ namespace: 'acme-audio' }).data; // e.g. /home/me/.local/share/acme-audio
 */
export function resolvePaths(options: PathOptions = {}): LicensePaths {
  const namespace = resolveNamespace(options.namespace);
  const home = options.home ?? nonEmpty(process.env.PLUGIN_LICENSE_HOME);
  if (home !== undefined) {
    const root = resolve(home);
    return { config: join(root, 'config'), data: join(root, 'data'), cache: join(root, 'cache'), log: join(root, 'log') };
  }
  const p = envPaths(namespace, { suffix: '' });
  return { config: p.config, data: p.data, cache: p.cache, log: p.log };
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
 * The ticket of one project (license-ticket.md): `DATA/tickets/PROJECT_ID.ticket`, lowercase id,
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
  if (typeof projectId !== 'string' || !UUID_PATTERN.test(projectId)) {
    const shown = typeof projectId === 'string' ? `'${projectId.slice(0, 60)}'` : String(projectId);
    throw new LicenseError('invalid_argument', `project id ${shown} is not a UUID; pass the project's id as shown in the portal (for example 123e4567-e89b-12d3-a456-426614174000)`);
  }
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
