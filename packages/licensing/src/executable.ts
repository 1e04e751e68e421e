// What a packaged executable (`pnpm package`) carries about itself, and the namespace rule that
// depends on it. No dependencies but Node's own, so the CLI's parser can read it (`--version`)
// without loading the rest of the library.
import { productIdProblem } from './program-folder.js';

/** The namespace when nothing chose one. */
export const DEFAULT_NAMESPACE = 'plugin-license';

/** The name of the SEA asset `pnpm package` writes (`packaging/build.mjs`). */
export const EXECUTABLE_INFO_ASSET = 'executable.json';

/**
 * What `pnpm package` baked into a standalone executable: its own name and the vendor's defaults
 * (`--app`, `--base-url`, `--relay`, `--ticket-key`), which rank below `config.json` and above the built-in defaults. (Its
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
  /** Baked license relay base URL (`--relay`): the activation endpoints' base URL. */
  relayUrl?: string;
  /** Baked vendor public keys signed tickets must verify with (`--ticket-key`, repeatable), as given. */
  ticketKeys?: string[];
  /** Baked product names (`--project ID=NAME`): how the CLI and the license manager name each plugin. */
  projects?: NamedProject[];
  /**
   * The installer's product this executable was built for (`--product`, `--product-id`): what its
   * `plugins install` records the plugins under. The executable is shared by the vendor's
   * products (the last installed one's), so a product's uninstaller names its own id.
   */
  product?: { id: string; name: string };
}

/** A plugin (a project of the service) and the name a musician knows it by. */
export interface NamedProject {
  /** The project id, lower-cased. */
  projectId: string;
  name: string;
}

/** A project id as the service gives it: a UUID. */
export const PROJECT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The longest product name, in characters. */
export const MAX_PRODUCT_NAME_LENGTH = 80;

// Controls (C0, DEL, C1: a terminal would run an escape sequence), line and paragraph separators,
// the bidirectional marks and overrides (they reorder what is shown after them), lone surrogates.
const NOT_IN_A_NAME = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Cs}/u;

/**
 * Why `name` cannot be a product name, or undefined when it can (after trimming): one line of 1
 * to 80 characters with no control or text-direction characters. Quotes, `$`, `*`, backslashes
 * and any script are fine: a name is data, shown as text. The one check for every place a name
 * comes from (`pnpm package --project`, `manager --project`, the baked list).
 *
 * @example
 * productNameProblem('Acme Gain'); // undefined
 * productNameProblem('Acme\nGain'); // 'it holds a line break, a control or a text-direction character'
 */
export function productNameProblem(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed === '') return 'it is empty';
  const length = [...trimmed].length;
  if (length > MAX_PRODUCT_NAME_LENGTH) return `it is ${length} characters long`;
  if (NOT_IN_A_NAME.test(trimmed)) return 'it holds a line break, a control or a text-direction character';
  return undefined;
}

/**
 * The one message for a `--project ID=NAME` whose name cannot be used (`manager --project`, `pnpm
 * package --project`), or undefined when it can.
 *
 * @example
 * projectNameError('123e4567-e89b-12d3-a456-426614174000', 'Acme\nGain');
 * // '--project 123e4567-…=NAME: "Acme\\nGain" is not usable as the plugin\'s name: it holds a line break, …; give one line of 1 to 80 characters'
 */
export function projectNameError(projectId: string, name: string): string | undefined {
  const problem = productNameProblem(name);
  return problem === undefined ? undefined : `--project ${projectId}=NAME: ${JSON.stringify(name)} is not usable as the plugin's name: ${problem}; give one line of 1 to ${MAX_PRODUCT_NAME_LENGTH} characters`;
}

/**
 * The baked `projects` of `executable.json` (`[{project_id, name}]`), read defensively: an entry
 * whose id is not a UUID or whose name `productNameProblem` refuses is dropped; a later entry for
 * the same id wins, as a repeated flag does.
 *
 * @example
 * readBakedProjects([{ project_id: '2BFD7A59-0000-4000-8000-000000000000', name: ' Acme Gain ' }]);
 * // [{ projectId: '2bfd7a59-0000-4000-8000-000000000000', name: 'Acme Gain' }]
 */
export function readBakedProjects(raw: unknown): NamedProject[] {
  if (!Array.isArray(raw)) return [];
  const seen = new Map<string, NamedProject>();
  for (const entry of raw as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { project_id: id, name } = entry as Record<string, unknown>;
    if (typeof id !== 'string' || !PROJECT_ID_PATTERN.test(id) || typeof name !== 'string' || productNameProblem(name) !== undefined) continue;
    seen.set(id.toLowerCase(), { projectId: id.toLowerCase(), name: name.trim() });
  }
  return [...seen.values()];
}

/** A plugin a caller names, or only lists (`name: null`, as `manager --project ID` does). */
export interface GivenProject {
  projectId: string;
  name: string | null;
}

/**
 * THE naming rule of plugins: the products known here, as the baked list (`pnpm package
 * --project`) joined with the caller's (`manager --project ID[=NAME]`, which a plugin's "Manage
 * licenses…" passes); per project, the caller's name wins over the baked one, which wins over
 * none (null). Baked ones first, in their order, then the caller's others. Ids are lower-cased.
 *
 * @example
 * const offered = productNames([{ projectId: '2bfd7a59-0000-4000-8000-000000000000', name: null }]);
 * // the baked ones, and 2bfd7a59-… named as baked (or null when not)
 */
export function productNames(given: readonly GivenProject[] = [], baked: readonly NamedProject[] = executableInfo()?.projects ?? []): GivenProject[] {
  const all = new Map<string, GivenProject>();
  for (const p of baked) all.set(p.projectId.toLowerCase(), { projectId: p.projectId.toLowerCase(), name: p.name });
  for (const p of given) {
    const id = p.projectId.toLowerCase();
    all.set(id, { projectId: id, name: p.name ?? all.get(id)?.name ?? null });
  }
  return [...all.values()];
}

/**
 * The name of one plugin by the rule of `productNames`, or undefined when nothing names it (then
 * the project id alone is shown).
 *
 * @example
 * console.log(`plugin ${productName(state.projectId) ?? state.projectId}`);
 */
export function productName(projectId: string, given: readonly GivenProject[] = [], baked?: readonly NamedProject[]): string | undefined {
  const id = projectId.toLowerCase();
  return productNames(given, baked).find((p) => p.projectId === id)?.name ?? undefined;
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
  const relayUrl = text('relay_url');
  // Checked where they are used (resolveConfig): a bad one is refused there with words.
  const ticketKeys = Array.isArray(raw.ticket_keys) ? (raw.ticket_keys as unknown[]).filter((k): k is string => typeof k === 'string' && k !== '') : [];
  const projects = readBakedProjects(raw.projects);
  const productId = text('product_id');
  const productName = text('product');
  const product = productId !== undefined && productIdProblem(productId) === undefined ? { id: productId, name: productName !== undefined && productNameProblem(productName) === undefined ? productName.trim() : productId } : undefined;
  return {
    name: text('name') ?? 'plugin-license',
    ...(app ? { app } : {}),
    ...(baseUrl ? { baseUrl } : {}),
    ...(appGroup ? { appGroup } : {}),
    ...(relayUrl ? { relayUrl } : {}),
    ...(ticketKeys.length > 0 ? { ticketKeys } : {}),
    ...(projects.length > 0 ? { projects } : {}),
    ...(product ? { product } : {}),
  };
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
