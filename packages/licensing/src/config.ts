import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkProxyUrl } from '@plugin-license/api';
import { chooseAppGroup } from './app-group.js';
import { LicenseError } from './errors.js';
import { chooseNamespace, executableInfo } from './executable.js';
import { normalizeBaseUrl } from './input.js';
import { parsePublicKeys } from './offline-format.js';
import { resolveNamespace, resolvePaths, type LicensePaths } from './paths.js';

export { APP_GROUP_PATTERN, checkAppGroup } from './app-group.js';

/** Where a configuration value came from, in order of precedence (`executable`: baked in by `pnpm package`). */
export type ConfigSource = 'flag' | 'environment' | 'config file' | 'executable' | 'default';

/** A resolved value and where it came from (`doctor` shows both). */
export interface ConfigValue<T> {
  value: T;
  source: ConfigSource;
}

/** What a tool's command line gave; `undefined` means "not given". */
export interface ConfigFlags {
  app?: string | undefined;
  home?: string | undefined;
  baseUrl?: string | undefined;
  token?: string | undefined;
  socket?: string | undefined;
}

/** The settings every tool shares, after flag > environment > `config.json` > the executable's baked default > default. */
export interface ResolvedConfig {
  namespace: ConfigValue<string>;
  home: ConfigValue<string | undefined>;
  /** Normalized by the project's one rule (https unless loopback, ends in /functions/v1). */
  baseUrl: ConfigValue<string | undefined>;
  token: ConfigValue<string | undefined>;
  /** The agent socket path or pipe name when set; the agent derives the default. */
  socket: ConfigValue<string | undefined>;
  /**
   * macOS: the vendor's app group (`PLUGIN_LICENSE_APP_GROUP`, `app_group`, or baked in with
   * `pnpm package --app-group`): the socket then lives in its container, where sandboxed plugins
   * may connect (`~/Library/Group Containers/GROUP/APP/agent.sock`). Ignored elsewhere.
   */
  appGroup: ConfigValue<string | undefined>;
  /** A proxy URL, `false` for none (`"proxy": ""`), undefined: the standard proxy variables. */
  proxy: ConfigValue<string | false | undefined>;
  /** Ed25519 public keys an offline response must be signed by (`offline_public_keys`); empty: unsigned responses are accepted. */
  offlinePublicKeys: ConfigValue<string[]>;
  /** Longest validity an offline response may carry, in days (`offline_max_days`, default 365). */
  offlineMaxDays: ConfigValue<number>;
  /** The namespace's folders. */
  paths: LicensePaths;
  /** The config file looked at (it may not exist). */
  configFile: string;
  /** Whether it exists. */
  configFileFound: boolean;
  /** Every key of the file, for tool-specific settings (`log_level`, `agent`, …). */
  file: Readonly<Record<string, unknown>>;
  /** With `fileProblems: 'report'`: why the config file was not used (its values are not in this result). */
  fileProblem?: string;
}

/** Keys of `config.json` shared by every tool; tools read their own keys from `file`. */
type SharedKey = 'base_url' | 'token' | 'socket' | 'proxy' | 'app_group';
/** Spellings people try, and the key they mean. */
const MISSPELLED: Record<string, string> = {
  baseUrl: 'base_url',
  baseURL: 'base_url',
  logLevel: 'log_level',
  offlinePublicKeys: 'offline_public_keys',
  offlineMaxDays: 'offline_max_days',
  appGroup: 'app_group',
};
/** How long an offline response may be valid by default: a year. */
export const DEFAULT_OFFLINE_MAX_DAYS = 365;
/** The largest config file read: it holds a few settings. */
const MAX_CONFIG_BYTES = 64 * 1024;

/**
 * Resolves the configuration the way every tool of the project does: flag > environment
 * (`PLUGIN_LICENSE_*`) > `config.json` in the namespace's config folder > what a packaged
 * executable has baked in (`--app`, `--base-url`; the namespace is never read from the file) > default. `License`,
 * the agent and the CLI all call this, so a value means the same thing everywhere. A bad value
 * (a base URL without `/functions/v1`, a config file that is not JSON, a misspelled key) is an
 * `invalid_argument` error naming where it came from.
 *
 * @example
 * const config = resolveConfig({ app: 'acme-audio' });
 * config.baseUrl.value;  // 'https://service.example/functions/v1'
 * config.baseUrl.source; // 'environment'
 */
export function resolveConfig(flags: ConfigFlags = {}, env: Readonly<Record<string, string | undefined>> = process.env, options: ResolveOptions = {}): ResolvedConfig {
  try {
    return resolveFrom(flags, env, readConfigFile);
  } catch (e) {
    if (options.fileProblems !== 'report') throw e;
    // Without the file: a flag or environment value that is wrong still throws (its own error).
    const withoutFile = resolveFrom(flags, env, () => ({ file: {}, found: true }));
    return { ...withoutFile, file: {}, fileProblem: (e as Error).message };
  }
}

/** How {@link resolveConfig} treats a config file it cannot use. */
export interface ResolveOptions {
  /**
   * `throw` (default): a config file that cannot be read, is not JSON, or holds a bad value is an
   * error. `report`: the values are resolved as if the file were empty and `fileProblem` says
   * why; for what works without the file (asking a running agent, the support report).
   */
  fileProblems?: 'throw' | 'report';
}

function resolveFrom(
  flags: ConfigFlags,
  env: Readonly<Record<string, string | undefined>>,
  read: (path: string) => { file: Record<string, unknown>; found: boolean },
): ResolvedConfig {
  const namespace = chooseNamespace(flags.app, env);
  const home = pick(flags.home, env.PLUGIN_LICENSE_HOME, undefined);
  const ns = resolveNamespace(namespace.value, env);
  const paths = resolvePaths({ namespace: ns, env, ...(home === undefined ? {} : { home: home.value }) });
  const configFile = join(paths.config, 'config.json');
  const { file, found } = read(configFile);

  const baked = executableInfo()?.baseUrl;
  const rawBase = pick(flags.baseUrl, env.PLUGIN_LICENSE_BASE_URL, str(file, 'base_url', configFile)) ?? (baked === undefined ? undefined : { value: baked, source: 'executable' as const });
  let baseUrl: ConfigValue<string | undefined> = { value: undefined, source: 'default' };
  if (rawBase !== undefined) {
    try {
      baseUrl = { value: normalizeBaseUrl(rawBase.value), source: rawBase.source };
    } catch (e) {
      if (rawBase.source === 'flag') throw e;
      const from = rawBase.source === 'environment' ? 'PLUGIN_LICENSE_BASE_URL' : rawBase.source === 'executable' ? 'the base URL built into this program' : `"base_url" in ${configFile}`;
      throw new LicenseError('invalid_argument', `${(e as Error).message} (from ${from})`, { cause: e });
    }
  }
  const rawProxy = str(file, 'proxy', configFile);
  let proxy: ConfigValue<string | false | undefined> = { value: undefined, source: 'default' };
  if (rawProxy !== undefined) {
    try {
      proxy = { value: rawProxy.trim() === '' ? false : checkProxyUrl(rawProxy, `"proxy" in ${configFile}`), source: 'config file' };
    } catch (e) {
      throw new LicenseError('invalid_argument', (e as Error).message, { cause: e });
    }
  }
  const appGroup: ConfigValue<string | undefined> = chooseAppGroup(env, file.app_group, configFile);
  const keys = file.offline_public_keys;
  const offlinePublicKeys: ConfigValue<string[]> = keys === undefined ? { value: [], source: 'default' } : { value: keys as string[], source: 'config file' };
  if (keys !== undefined) parsePublicKeys(keys as string[], `"offline_public_keys" in ${configFile}`);
  const days = file.offline_max_days;
  if (days !== undefined && (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 3650)) {
    throw new LicenseError('invalid_argument', `"offline_max_days" in ${configFile} must be a whole number of days from 1 to 3650`);
  }
  return {
    namespace: { value: ns, source: namespace.source },
    home: home ?? { value: undefined, source: 'default' },
    baseUrl,
    token: pick(flags.token, env.PLUGIN_LICENSE_TOKEN, str(file, 'token', configFile)) ?? { value: undefined, source: 'default' },
    socket: pick(flags.socket, env.PLUGIN_LICENSE_SOCKET, str(file, 'socket', configFile)) ?? { value: undefined, source: 'default' },
    appGroup,
    proxy,
    offlinePublicKeys,
    offlineMaxDays: days === undefined ? { value: DEFAULT_OFFLINE_MAX_DAYS, source: 'default' } : { value: days as number, source: 'config file' },
    paths,
    configFile,
    configFileFound: found,
    file,
  };
}

/**
 * The service base URL a library call uses: the caller's own (checked), else the resolver's
 * (`config`, when the caller left it open). None at all is `invalid_argument` naming every place.
 */
export function requireBaseUrl(config: ResolvedConfig | undefined, given: string | undefined): string {
  const baseUrl = config === undefined ? normalizeBaseUrl(given) : config.baseUrl.value;
  if (baseUrl === undefined) {
    throw new LicenseError('invalid_argument', `no service base URL: pass baseUrl, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${config?.configFile ?? 'config.json'}`);
  }
  return baseUrl;
}

function pick(flag: string | undefined, envValue: string | undefined, fileValue: string | undefined): ConfigValue<string> | undefined {
  if (nonEmpty(flag) !== undefined) return { value: flag as string, source: 'flag' };
  if (nonEmpty(envValue) !== undefined) return { value: envValue as string, source: 'environment' };
  if (fileValue !== undefined && fileValue.trim() !== '') return { value: fileValue, source: 'config file' };
  return undefined;
}

function str(file: Readonly<Record<string, unknown>>, key: SharedKey, configFile: string): string | undefined {
  const v = file[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new LicenseError('invalid_argument', `"${key}" in ${configFile} must be a string`);
  return v;
}


function readConfigFile(path: string): { file: Record<string, unknown>; found: boolean } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { file: {}, found: false };
    throw new LicenseError('invalid_argument', `cannot read the config file ${path}: ${(e as Error).message}`, { cause: e, path, ...(code ? { systemCode: code } : {}) });
  }
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) {
    throw new LicenseError('invalid_argument', `the config file ${path} is over ${MAX_CONFIG_BYTES / 1024} KiB; it holds a few settings, so it is not this file`, { path });
  }
  let json: unknown;
  try {
    // Windows editors save UTF-8 with a byte-order mark.
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new LicenseError('invalid_argument', `the config file ${path} is not valid JSON (${(e as Error).message}); fix or remove it`, { cause: e, path });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new LicenseError('invalid_argument', `the config file ${path} must hold one JSON object, like {"base_url": "https://…/functions/v1"}`, { path });
  }
  for (const [wrong, right] of Object.entries(MISSPELLED)) {
    if (wrong in json) throw new LicenseError('invalid_argument', `"${wrong}" in ${path} is not a setting; did you mean "${right}"?`, { path });
  }
  return { file: json as Record<string, unknown>, found: true };
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === '' ? undefined : v;
}
