import { RelayConfigError } from './errors.js';
import { importSigningKeys, type SigningKey } from './keys.js';
import { baseUrlProblem, MAX_TICKET_DAYS, NAMESPACE_PATTERN, PROJECT_ID_PATTERN } from './rules.js';

/** The environment variables the relay reads (docs: the relay's README, "Configuration"). */
export const RELAY_VARIABLES = ['RELAY_SIGNING_KEY', 'RELAY_SERVICE_URL', 'RELAY_SERVICE_TOKEN', 'RELAY_APP', 'RELAY_PROJECTS', 'RELAY_TICKET_DAYS', 'RELAY_VALIDATE_CACHE_S'] as const;

export const DEFAULT_TICKET_DAYS = 30;
export const DEFAULT_VALIDATE_CACHE_S = 300;
/** The longest a validate answer may be reused: a day, the agent's own interval between checks. */
export const MAX_VALIDATE_CACHE_S = 86_400;

/** The relay's settings, checked. */
export interface RelayConfig {
  /** The signing keys: the first signs, all are listed. */
  keys: SigningKey[];
  /** The service's base URL, ending in /functions/v1, without a trailing slash. */
  serviceUrl: string;
  /** The vendor's bearer token (only for listing a project's codes). */
  token: string;
  /** The namespace the signed tickets name (`app`). */
  app: string;
  /** The project ids served, lower-cased. */
  projects: string[];
  ticketDays: number;
  validateCacheS: number;
}

/** An environment: `process.env`, `Deno.env.toObject()`, a Worker's bindings. */
export type RelayEnvironment = Readonly<Record<string, unknown>>;

function text(env: RelayEnvironment, name: (typeof RELAY_VARIABLES)[number]): string | undefined {
  const v = env[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new RelayConfigError(name, `${name} must be text (a secret or a variable of the platform), not ${typeof v}`);
  return v.trim() === '' ? undefined : v.trim();
}

function required(env: RelayEnvironment, name: (typeof RELAY_VARIABLES)[number], what: string): string {
  const v = text(env, name);
  if (v === undefined) throw new RelayConfigError(name, `${name} is missing: set it to ${what}`);
  return v;
}

function wholeNumber(env: RelayEnvironment, name: (typeof RELAY_VARIABLES)[number], fallback: number, min: number, max: number, why: string): number {
  const v = text(env, name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new RelayConfigError(name, `${name} must be a whole number from ${min} to ${max}${why}, got '${v.slice(0, 40)}'`);
  }
  return n;
}

/**
 * The relay's settings from its environment, every variable checked (a missing or malformed one
 * throws {@link RelayConfigError} naming it, never showing a secret), and its keys imported
 * with `crypto.subtle`. The one place the relay's configuration is read, on every runtime.
 *
 * @example
 * const config = await loadRelayConfig(process.env);
 * console.log(config.keys.map((k) => k.kid));
 */
export async function loadRelayConfig(env: RelayEnvironment): Promise<RelayConfig> {
  for (const name of Object.keys(env)) {
    if (name.startsWith('RELAY_') && !(RELAY_VARIABLES as readonly string[]).includes(name)) {
      throw new RelayConfigError(name, `${name} is not a setting of the relay (misspelled?); its settings are ${RELAY_VARIABLES.join(', ')}`);
    }
  }
  const keyText = required(env, 'RELAY_SIGNING_KEY', "the vendor's Ed25519 private key: the PEM file `plugin-license relay keygen --out FILE` writes, or the base64url of its 32-byte seed (several keys separated by commas: the first signs, all are listed)");

  const rawUrl = required(env, 'RELAY_SERVICE_URL', 'the service base URL, e.g. https://service.example/functions/v1');
  const url = baseUrlProblem(rawUrl);
  if ('problem' in url) throw new RelayConfigError('RELAY_SERVICE_URL', `RELAY_SERVICE_URL ${url.problem}`);

  const token = required(env, 'RELAY_SERVICE_TOKEN', "the vendor's bearer token for the service (it lists each project's codes)");
  if (!/^[\x21-\x7e]+$/.test(token)) throw new RelayConfigError('RELAY_SERVICE_TOKEN', 'RELAY_SERVICE_TOKEN holds spaces or characters a header cannot carry; set it to the token exactly as the service gave it');

  const app = required(env, 'RELAY_APP', "the namespace of the vendor's apps (the same as pnpm package --app), e.g. acme-audio");
  if (!NAMESPACE_PATTERN.test(app)) throw new RelayConfigError('RELAY_APP', `RELAY_APP '${app.slice(0, 80)}' is not a namespace; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, as in pnpm package --app`);

  const projectList = required(env, 'RELAY_PROJECTS', 'the project ids this relay serves, separated by commas');
  const projects: string[] = [];
  for (const [i, entry] of projectList.split(',').map((p) => p.trim()).entries()) {
    if (entry === '') continue;
    if (!PROJECT_ID_PATTERN.test(entry)) throw new RelayConfigError('RELAY_PROJECTS', `RELAY_PROJECTS entry ${i + 1} ('${entry.slice(0, 60)}') is not a project id; give the project ids (UUIDs) as the service shows them, separated by commas`);
    const id = entry.toLowerCase();
    if (!projects.includes(id)) projects.push(id);
  }
  if (projects.length === 0) throw new RelayConfigError('RELAY_PROJECTS', 'RELAY_PROJECTS names no project; give the project ids (UUIDs) this relay serves, separated by commas');

  const ticketDays = wholeNumber(env, 'RELAY_TICKET_DAYS', DEFAULT_TICKET_DAYS, 1, MAX_TICKET_DAYS, ` (at most the library's ${MAX_TICKET_DAYS}-day offline grace)`);
  const validateCacheS = wholeNumber(env, 'RELAY_VALIDATE_CACHE_S', DEFAULT_VALIDATE_CACHE_S, 0, MAX_VALIDATE_CACHE_S, ' seconds (0: every validate asks the service)');

  const keys = await importSigningKeys(keyText.split(','), 'RELAY_SIGNING_KEY');
  return { keys, serviceUrl: url.url, token, app, projects, ticketDays, validateCacheS };
}
