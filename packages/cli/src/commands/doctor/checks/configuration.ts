import { resolveConfig, type CachedLicense, type ResolvedConfig } from '@plugin-license/licensing';
import type { Context } from '../../../context.js';
import { classify } from '../../../errors.js';
import { maskUrl } from '../format.js';
import type { Add, Facts } from '../report.js';

/**
 * The configuration, however broken: a config file that can't be used is a failed check and the
 * rest is resolved without it; a bad flag or environment value is a failed check and the rest is
 * resolved without the base URL and token. Undefined only when not even the folders are known.
 */
export function doctorConfig(ctx: Context, add: Add): ResolvedConfig | undefined {
  const section = 'configuration';
  const flags = { app: ctx.options.app, home: ctx.options.home, baseUrl: ctx.options.baseUrl, token: ctx.options.token };
  let config: ResolvedConfig;
  try {
    config = resolveConfig(flags, ctx.env, { fileProblems: 'report' });
  } catch (err) {
    const first = classify(err).message;
    const { PLUGIN_LICENSE_BASE_URL: _b, PLUGIN_LICENSE_TOKEN: _t, PLUGIN_LICENSE_RELAY_URL: _r, PLUGIN_LICENSE_TICKET_KEYS: _k, ...env } = ctx.env;
    try {
      config = resolveConfig({ app: flags.app, home: flags.home }, env, { fileProblems: 'report' });
    } catch (again) {
      // The folders fail too: said once (an unusable HOME fails both the same way).
      const second = classify(again).message;
      if (second !== first) add({ section, name: 'value', level: 'failed', detail: first, fix: 'correct the value named above' });
      add({ section, name: 'folders', level: 'failed', detail: second, fix: 'correct the namespace or home named above' });
      return undefined;
    }
    add({ section, name: 'value', level: 'failed', detail: first, fix: 'correct the value named above' });
  }
  if (config.fileProblem !== undefined) {
    add({ section, name: 'config file', level: 'failed', detail: `${config.fileProblem}; the rest of this report goes on without it`, fix: `fix or remove ${config.configFile}` });
  }
  return config;
}

export function configuration(config: ResolvedConfig, cached: CachedLicense[] | undefined, facts: Facts, add: Add): void {
  const section = 'configuration';
  const from = (v: { source: string }): string => `(${v.source})`;
  const pair = (v: { value: unknown; source: string }) => ({ value: v.value === undefined ? null : v.value, source: v.source });
  facts.configuration = {
    namespace: pair(config.namespace),
    home: pair(config.home),
    config_file: config.configFile,
    config_file_found: config.configFileFound,
    config_problem: config.fileProblem ?? null,
    base_url: pair(config.baseUrl),
    token: { value: config.token.value === undefined ? null : 'set (masked)', source: config.token.source },
    socket: pair(config.socket),
    proxy: { value: config.proxy.value === undefined ? null : config.proxy.value === false ? false : maskUrl(config.proxy.value), source: config.proxy.source },
    relay_url: pair(config.relayUrl),
    ticket_keys: { value: config.ticketKeys.value.map((k) => k.text), source: config.ticketKeys.source },
  };
  add({ section, name: 'namespace', level: 'info', detail: `${config.namespace.value} ${from(config.namespace)}` });
  add({ section, name: 'home', level: 'info', detail: config.home.value === undefined ? 'per-OS folders (default)' : `${config.home.value} ${from(config.home)}` });
  add({ section, name: 'config file', level: 'info', detail: `${config.configFile}${config.configFileFound ? '' : ' (none)'}` });
  if (config.baseUrl.value !== undefined) add({ section, name: 'base URL', level: 'ok', detail: `${config.baseUrl.value} ${from(config.baseUrl)}` });
  else {
    // Not set is a fault only where something needs it: an air-gapped studio's offline
    // activations never ask the service.
    const stored = (cached ?? []).filter((l) => l.status.reason !== 'not_activated');
    const offlineOnly = stored.length > 0 && stored.every((l) => l.status.source === 'offline');
    add(
      offlineOnly
        ? { section, name: 'base URL', level: 'info', detail: 'not set; not needed here: every license on this machine is an offline activation' }
        : { section, name: 'base URL', level: 'warning', detail: 'not set: online activation and checks cannot run (offline activation still can)', fix: `pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${config.configFile}` },
    );
  }
  add({ section, name: 'token', level: 'info', detail: config.token.value === undefined ? 'not set' : `set ${from(config.token)}` });
  add({ section, name: 'socket', level: 'info', detail: config.socket.value === undefined ? 'default' : `${config.socket.value} ${from(config.socket)}` });
  add({ section, name: 'proxy', level: 'info', detail: config.proxy.value === undefined ? 'the proxy variables (default)' : config.proxy.value === false ? 'none (config file)' : `${maskUrl(config.proxy.value)} (config file)` });
}
