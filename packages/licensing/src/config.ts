import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkProxyUrl } from '@plugin-license/api';
import { chooseAppGroup } from './app-group.js';
import { LicenseError } from './errors.js';
import { chooseNamespace, executableInfo } from './executable.js';
import { normalizeBaseUrl } from './input.js';
import { parsePublicKeys } from './offline-format.js';
import { resolveNamespace, resolvePaths, type LicensePaths } from './paths.js';
import { parseTicketKeys, type TicketKey } from './signed-ticket.js';

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
  /** The license relay's base URL (a `License` option; the CLI has no flag for it). */
  relayUrl?: string | undefined;
  /** The vendor's public keys signed tickets must verify with: a list, or one text separated by commas. */
  ticketKeys?: readonly string[] | string | undefined;
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
  /**
   * The vendor's license relay (`PLUGIN_LICENSE_RELAY_URL`, `relay_url`, or baked in with `pnpm
   * package --relay`): the base URL of the activation endpoints (activate, validate, deactivate),
   * whose answers then carry signed tickets. Same rule as the base URL. Everything else still goes
   * to the service. Never without `ticketKeys` ({@link relayKeysProblem}).
   */
  relayUrl: ConfigValue<string | undefined>;
  /**
   * The vendor's public keys a signed ticket must verify with before it is stored and judged
   * (`PLUGIN_LICENSE_TICKET_KEYS`, separated by commas; `ticket_keys` in config.json, a list or
   * such a text; or baked in with `pnpm package --ticket-key`). Empty: no signed ticket is stored
   * or required, and the old rules of the ticket apply.
   */
  ticketKeys: ConfigValue<TicketKey[]>;
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
type SharedKey = 'base_url' | 'token' | 'socket' | 'proxy' | 'app_group' | 'relay_url';
/** Spellings people try, and the key they mean. */
const MISSPELLED: Record<string, string> = {
  baseUrl: 'base_url',
  baseURL: 'base_url',
  logLevel: 'log_level',
  offlinePublicKeys: 'offline_public_keys',
  offlineMaxDays: 'offline_max_days',
  appGroup: 'app_group',
  relayUrl: 'relay_url',
  relay: 'relay_url',
  ticketKeys: 'ticket_keys',
};
/** How long an offline response may be valid by default: a year. */
export const DEFAULT_OFFLINE_MAX_DAYS = 365;
/** The largest config file read: it holds a few settings. */
const MAX_CONFIG_BYTES = 64 * 1024;

/**
 * Resolves the configuration the way every tool of the project does: flag > environment
 * (`PLUGIN_LICENSE_*`) > `config.json` in the namespace's config folder > what a packaged
 * executable has baked in (`--app`, `--base-url`, `--relay`, `--ticket-key`; the namespace is never read from the file) > default. `License`,
 * the agent and the CLI all call this, so a value means the same thing everywhere. A bad value
 * (a base URL without `/functions/v1`, a config file that is not JSON, a misspelled key, a ticket
 * key that is not one, a relay without ticket keys) is an `invalid_argument` error naming where
 * it came from.
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

  const baked = executableInfo();
  const baseUrl = urlSetting(pick(flags.baseUrl, env.PLUGIN_LICENSE_BASE_URL, str(file, 'base_url', configFile)), baked?.baseUrl, {
    env: 'PLUGIN_LICENSE_BASE_URL',
    file: `"base_url" in ${configFile}`,
    baked: 'the base URL built into this program',
  });
  const relayUrl = urlSetting(pick(flags.relayUrl, env.PLUGIN_LICENSE_RELAY_URL, str(file, 'relay_url', configFile)), baked?.relayUrl, {
    env: 'PLUGIN_LICENSE_RELAY_URL',
    file: `"relay_url" in ${configFile}`,
    baked: 'the relay URL built into this program',
    flag: 'the relayUrl option',
    what: 'the relay URL',
  });
  const ticketKeys = ticketKeySetting(flags.ticketKeys, env.PLUGIN_LICENSE_TICKET_KEYS, file.ticket_keys, baked?.ticketKeys, configFile);
  if (relayUrl.value !== undefined) {
    const problem = relayKeysProblem({ relay: true, keys: ticketKeys.value.length > 0 });
    if (problem !== undefined) throw new LicenseError('invalid_argument', `${problem} (the relay URL is from ${sourceWords(relayUrl.source, 'PLUGIN_LICENSE_RELAY_URL', `"relay_url" in ${configFile}`, 'this program, built with --relay')}); set PLUGIN_LICENSE_TICKET_KEYS or put "ticket_keys" in ${configFile}`);
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
    relayUrl,
    ticketKeys,
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

/** Words for where a value came from, in a message. */
function sourceWords(source: ConfigSource, envName: string, fileWords: string, bakedWords: string): string {
  return source === 'environment' ? envName : source === 'executable' ? bakedWords : source === 'config file' ? fileWords : source === 'flag' ? 'the caller' : 'the default';
}

/**
 * A URL setting (the base URL, the relay URL) by the project's one URL rule: https unless
 * loopback, ending in `/functions/v1`. A bad value is `invalid_argument` naming where it came
 * from (a flag's own words stand as they are).
 */
function urlSetting(raw: ConfigValue<string> | undefined, baked: string | undefined, where: { env: string; file: string; baked: string; flag?: string; what?: string }): ConfigValue<string | undefined> {
  const chosen = raw ?? (baked === undefined ? undefined : { value: baked, source: 'executable' as const });
  if (chosen === undefined) return { value: undefined, source: 'default' };
  try {
    return { value: normalizeBaseUrl(chosen.value), source: chosen.source };
  } catch (e) {
    if (chosen.source === 'flag' && where.flag === undefined) throw e;
    const from = chosen.source === 'flag' ? where.flag : sourceWords(chosen.source, where.env, where.file, where.baked);
    // The one URL rule's words say "baseUrl"; another setting says its own name.
    const message = where.what === undefined ? (e as Error).message : (e as Error).message.replace(/^baseUrl\b/, where.what);
    throw new LicenseError('invalid_argument', `${message} (from ${from})`, { cause: e });
  }
}

/**
 * The vendor's ticket keys: the caller's, else `PLUGIN_LICENSE_TICKET_KEYS` (separated by
 * commas), else `ticket_keys` in config.json (a list, or one such text), else the executable's
 * baked `--ticket-key`s, else none. Each key is checked ({@link parseTicketKeys}); a bad one is
 * `invalid_argument` naming the entry and where it came from.
 */
function ticketKeySetting(
  given: readonly string[] | string | undefined,
  envValue: string | undefined,
  fileValue: unknown,
  baked: readonly string[] | undefined,
  configFile: string,
): ConfigValue<TicketKey[]> {
  const given_ = given !== undefined && (typeof given !== 'string' || given.trim() !== '') ? given : undefined;
  if (given_ !== undefined) return { value: parseTicketKeys(given_, 'the ticketKeys option'), source: 'flag' };
  if (nonEmpty(envValue) !== undefined) return { value: parseTicketKeys(envValue as string, 'PLUGIN_LICENSE_TICKET_KEYS'), source: 'environment' };
  if (fileValue !== undefined) {
    const where = `"ticket_keys" in ${configFile}`;
    if (typeof fileValue !== 'string' && !Array.isArray(fileValue)) throw new LicenseError('invalid_argument', `${where} must be a list of Ed25519 public keys (or one text of them separated by commas), as plugin-license offline keygen prints them`);
    return { value: parseTicketKeys(fileValue as string[] | string, where), source: 'config file' };
  }
  if (baked !== undefined && baked.length > 0) return { value: parseTicketKeys(baked, 'the ticket keys built into this program'), source: 'executable' };
  return { value: [], source: 'default' };
}

/**
 * THE rule of the two halves of signed tickets, for the configuration and for `pnpm package`: a
 * relay needs the vendor's public keys (what it signs is verified with them before anything is
 * stored), and keys need something that signs, a relay or signed offline responses (`offline
 * activate --sign-key`; `pnpm package --offline-signed` says that is the vendor's way). Words
 * naming the missing half, or undefined when both are there.
 *
 * @example
 * relayKeysProblem({ relay: true, keys: false }); // 'a license relay is configured without the vendor's public keys (ticket_keys) …'
 */
export function relayKeysProblem(o: { relay: boolean; keys: boolean; offlineSigned?: boolean }): string | undefined {
  if (o.relay && !o.keys) {
    return "a license relay is configured without the vendor's public keys (ticket_keys): what it signs could not be verified, so no signed ticket would ever be stored and plugins built with the keys would not play";
  }
  if (o.keys && !o.relay && o.offlineSigned === false) {
    return "the vendor's public keys (ticket_keys) are given without a license relay: nothing online would sign a ticket, so plugins built with the keys would play only on signed offline responses";
  }
  return undefined;
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
