import { LOG_LEVELS } from '@plugin-license/agent';
import { checkProxyUrl } from '@plugin-license/api';
import { writeFileAtomic } from '@plugin-license/fs';
import { checkAppGroup, normalizeBaseUrl, parseTicketKeys, relayKeysProblem, resolveConfig } from '@plugin-license/licensing';
import type { Context } from '../context.js';
import { EXIT, usageError, type ExitCode } from '../exit.js';

/** The keys `config set` writes, each checked as every tool will read it. */
const SETTABLE: Record<string, (value: string) => unknown> = {
  base_url: (v) => normalizeBaseUrl(v),
  proxy: (v) => (v.trim() === '' ? '' : checkProxyUrl(v, 'proxy')),
  socket: (v) => {
    if (v.trim() === '') throw usageError('socket must not be empty; use config unset socket for the default');
    return v;
  },
  token: (v) => v,
  relay_url: (v) => normalizeBaseUrl(v),
  // Written as a list of the keys' canonical text, as every tool reads it back.
  ticket_keys: (v) => {
    const keys = parseTicketKeys(v, 'ticket_keys').map((k) => k.text);
    if (keys.length === 0) throw usageError('ticket_keys is empty; give one or more public keys separated by commas, or use config unset ticket_keys');
    return keys;
  },
  app_group: (v) => {
    checkAppGroup(v, 'app_group');
    return v;
  },
  log_level: (v) => {
    if (!(LOG_LEVELS as readonly string[]).includes(v)) throw usageError(`log_level '${v}' is unknown; use one of ${LOG_LEVELS.join(', ')}`);
    return v;
  },
  offline_max_days: (v) => {
    const n = Number(v);
    if (!/^\d+$/.test(v) || n < 1 || n > 3650) throw usageError(`offline_max_days must be a whole number of days from 1 to 3650, got '${v}'`);
    return n;
  },
};

export const FOLDERS = ['config', 'data', 'cache', 'log'] as const;

/** `config path [--folder NAME]`: where this namespace's config.json (or a folder) is; inspects only. */
export async function pathCommand(ctx: Context, o: { folder?: string }): Promise<ExitCode> {
  const { configFile, configFileFound, paths, namespace } = ctx.config;
  if (ctx.out.json) {
    ctx.out.document({ namespace: namespace.value, config_file: configFile, exists: configFileFound, folders: paths });
    return EXIT.ok;
  }
  ctx.out.line(o.folder === undefined ? configFile : paths[o.folder as (typeof FOLDERS)[number]]);
  return EXIT.ok;
}

/** `config set KEY VALUE` / `config unset KEY`: one key of config.json, written whole or not at all. */
export async function setCommand(ctx: Context, key: string, value: string | undefined): Promise<ExitCode> {
  const check = SETTABLE[key];
  if (check === undefined) throw usageError(`'${key}' is not a setting config set writes; use one of ${Object.keys(SETTABLE).join(', ')} (other keys: edit ${ctx.config.configFile})`);
  // The file as every tool reads it: a broken one is reported by the resolver, with what to do.
  const { configFile, file } = ctx.config;
  const next: Record<string, unknown> = { ...file };
  if (value === undefined) delete next[key];
  else next[key] = check(value);
  if (key === 'relay_url' || key === 'ticket_keys') relayHalves(ctx, next);
  try {
    // The one atomic writer: a temp file written and fsynced, renamed over (mode 0600: it may hold the token).
    await writeFileAtomic(configFile, JSON.stringify(next, null, 2) + '\n');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw usageError(`cannot write ${configFile} (${code ?? (err as Error).message}); check the folder's permissions`, { path: configFile });
  }
  // Read back by the resolver, as the next start of any tool will.
  resolveConfig({ app: ctx.config.namespace.value, home: ctx.config.home.value }, {});
  const shown = key === 'token' ? '(set, not shown)' : value === undefined ? null : next[key];
  if (ctx.out.json) ctx.out.document({ config_file: configFile, key, value: shown, removed: value === undefined });
  else ctx.out.line(value === undefined ? `removed ${key} from ${configFile}` : `set ${key} = ${typeof shown === 'string' ? shown : JSON.stringify(shown)} in ${configFile}`);
  return EXIT.ok;
}

/**
 * The relay and the ticket keys go together (`relayKeysProblem`, the resolver's own rule): a
 * change that would leave the file's relay without keys from any source is refused before it is
 * written, naming the missing half, since every tool would then refuse the file.
 */
function relayHalves(ctx: Context, next: Record<string, unknown>): void {
  const { relayUrl, ticketKeys } = ctx.config;
  const relay = next.relay_url !== undefined || (relayUrl.source !== 'config file' && relayUrl.value !== undefined);
  const keys = next.ticket_keys !== undefined || (ticketKeys.source !== 'config file' && ticketKeys.value.length > 0);
  const problem = relayKeysProblem({ relay, keys });
  if (problem !== undefined) throw usageError(`${problem}: set ticket_keys first (config set ticket_keys KEY,KEY…), or unset relay_url`);
}
