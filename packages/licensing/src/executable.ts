// What a packaged executable (`pnpm package`) carries about itself, and the namespace rule that
// depends on it. No dependencies but Node's own, so the CLI's parser can read it (`--version`)
// without loading the rest of the library.

/** The namespace when nothing chose one. */
export const DEFAULT_NAMESPACE = 'plugin-license';

/** The name of the SEA asset `pnpm package` writes (`packaging/build.mjs`). */
export const EXECUTABLE_INFO_ASSET = 'executable.json';

/**
 * What `pnpm package` baked into a standalone executable: its own name and the vendor's defaults
 * (`--app`, `--base-url`), which rank below `config.json` and above the built-in defaults. (Its
 * target is the platform it runs on: `hostTarget()`.)
 */
export interface ExecutableInfo {
  /** The file name the vendor chose (`--name`), e.g. `acme-license`. */
  name: string;
  /** Baked namespace (`--app`). */
  app?: string;
  /** Baked service base URL (`--base-url`). */
  baseUrl?: string;
  /** Baked macOS app group (`--app-group`): the agent's socket lives in its container. */
  appGroup?: string;
  /** The vendor's products (`pnpm package --project ID=NAME`): project ids (lower case) and the names shown for them. */
  projects?: Array<{ projectId: string; name: string }>;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PRODUCT_NAME_PATTERN = /^[^\u0000-\u001f\u007f]{1,80}$/;

/** What a product name must be, in words, for messages: the rule `normalizeProductName` applies. */
export const PRODUCT_NAME_RULE = '1 to 80 printable characters';

/**
 * The one project id rule: a UUID (`assertProjectId` says it in words).
 *
 * @example
 * isProjectId('123e4567-e89b-12d3-a456-426614174000'); // true
 */
export function isProjectId(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/**
 * The one product name rule (the license manager's `--project ID=NAME`, `pnpm package --project`,
 * the names baked into an executable): the name trimmed, if it is 1 to 80 printable characters
 * (no line break or other control character); otherwise undefined.
 *
 * @example
 * normalizeProductName('  Acme Gain '); // 'Acme Gain'
 * normalizeProductName('Acme\nGain'); // undefined
 */
export function normalizeProductName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.trim();
  return PRODUCT_NAME_PATTERN.test(name) ? name : undefined;
}

let cached: ExecutableInfo | null | undefined;

/**
 * The info baked into this standalone executable, or undefined when this process is a plain
 * Node (an npm install, a test). Read once per process.
 *
 * @example
 * const baked = executableInfo();
 * console.log(baked?.app ?? 'not a packaged executable');
 */
export function executableInfo(): ExecutableInfo | undefined {
  if (cached === undefined) cached = readInfo() ?? null;
  return cached ?? undefined;
}

function readInfo(): ExecutableInfo | undefined {
  const sea = process.getBuiltinModule?.('node:sea') as { isSea(): boolean; getAsset(key: string, encoding: string): string } | undefined;
  if (sea === undefined || !sea.isSea()) return undefined;
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(sea.getAsset(EXECUTABLE_INFO_ASSET, 'utf8')) as Record<string, unknown>;
  } catch {
    // A SEA built by someone else's tool: no baked defaults.
    return undefined;
  }
  const text = (key: string): string | undefined => (typeof raw[key] === 'string' && (raw[key] as string) !== '' ? (raw[key] as string) : undefined);
  const app = text('app');
  const baseUrl = text('base_url');
  const appGroup = text('app_group');
  const projects = bakedProjects(raw.projects);
  return { name: text('name') ?? 'plugin-license', ...(app ? { app } : {}), ...(baseUrl ? { baseUrl } : {}), ...(appGroup ? { appGroup } : {}), ...(projects.length > 0 ? { projects } : {}) };
}

/** The baked `projects: [{project_id, name}]`, read defensively: an entry with a bad id or name, or an id seen before, is dropped. */
export function bakedProjects(value: unknown): Array<{ projectId: string; name: string }> {
  if (!Array.isArray(value)) return [];
  const seen = new Map<string, string>();
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { project_id: id, name } = entry as Record<string, unknown>;
    const named = normalizeProductName(name);
    if (!isProjectId(id) || named === undefined || seen.has(id.toLowerCase())) continue;
    seen.set(id.toLowerCase(), named);
  }
  return [...seen].map(([projectId, name]) => ({ projectId, name }));
}

/** This process's platform as a target name (`linux-x64`, `win-x64`, `darwin-arm64`, …). */
export function hostTarget(): string {
  return `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
}

/** A namespace and what chose it: the caller (a flag or option), the environment, the executable, or the default. */
export interface ChosenNamespace {
  value: string;
  source: 'flag' | 'environment' | 'executable' | 'default';
}

/**
 * The one namespace rule: the caller's value, else `PLUGIN_LICENSE_APP`, else the executable's
 * baked `--app`, else `plugin-license`. Not validated here (paths.ts does that).
 *
 * @example
 * chooseNamespace(undefined, process.env); // { value: 'acme-audio', source: 'executable' }
 */
export function chooseNamespace(given: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): ChosenNamespace {
  if (given !== undefined && given.trim() !== '') return { value: given, source: 'flag' };
  const fromEnv = env.PLUGIN_LICENSE_APP;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return { value: fromEnv, source: 'environment' };
  const baked = executableInfo()?.app;
  if (baked !== undefined) return { value: baked, source: 'executable' };
  return { value: DEFAULT_NAMESPACE, source: 'default' };
}

/**
 * The one line `--version` prints in every program: the version, then the Node version, the
 * target and the namespace in effect (the `--app` given, else by `chooseNamespace`).
 *
 * @example
 * versionLine('0.1.0', undefined); // '0.1.0 (node 22.23.2, linux-x64, namespace acme-audio)'
 */
export function versionLine(version: string, app: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return `${version} (node ${process.versions.node}, ${hostTarget()}, namespace ${chooseNamespace(app, env).value})`;
}

/** The value of `--app NAME` or `--app=NAME` in an argument list, for `--version` (read before parsing). */
export function appArgument(argv: readonly string[]): string | undefined {
  const i = argv.findIndex((a) => a === '--app' || a.startsWith('--app='));
  if (i < 0) return undefined;
  return argv[i]!.startsWith('--app=') ? argv[i]!.slice(6) : argv[i + 1];
}

/**
 * How a person runs one of the agent's commands of this program, for hints: `acme-license agent
 * run` in a packaged executable, `plugin-license-agent run` for npm installs; with `--app
 * NAMESPACE` when the namespace meant is not the one that command chooses by itself (the
 * executable's baked `--app`, else the default), so the hint starts the agent that was looked for.
 *
 * @example
 * console.log(`no agent answers; start it with: ${agentCommandHint('run', 'acme-audio')}`);
 */
export function agentCommandHint(command: 'run' | 'install' | 'status', namespace?: string): string {
  const info = executableInfo();
  const base = info === undefined ? `plugin-license-agent ${command}` : `${programName()} agent ${command}`;
  return namespace === undefined || namespace === (info?.app ?? DEFAULT_NAMESPACE) ? base : `${base} --app ${namespace}`;
}

/**
 * The CLI's name as the person typed it: the vendor's file name in a packaged executable
 * (`acme-license`), else `plugin-license`.
 *
 * @example
 * console.error(`${programName()}: no such code`);
 */
export function programName(): string {
  return executableInfo()?.name ?? 'plugin-license';
}
