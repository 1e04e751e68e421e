// How the CLI names a plugin wherever it shows a project: by the one naming rule of the library
// (`productNames`), over the names of what is installed: those each installed product of the
// vendor brought (its record beside the program, `installed-plugins/<id>.json`; the program is
// shared by the vendor's products and replaced by each one's installer, so its own baked names
// are only the last installed product's, which may have been uninstalled since). Where no product
// is recorded (a program run where no installer put it), this executable's baked ones (`pnpm
// package --project ID=NAME`). Human output gains the name beside the id; JSON gains a `name` key
// only when one is known.
import { dirname } from 'node:path';
import { executableInfo, productNames, projectNameError, type GivenProject, type NamedProject } from '@plugin-license/licensing/executable';
import type { Context } from './context.js';
import { usageError } from './exit.js';
import { installedProducts } from './plugins/products.js';

/** The folder of the running executable when it is a packaged one (`pnpm package`); undefined under plain Node. */
export function packagedFolder(): string | undefined {
  const sea = process.getBuiltinModule?.('node:sea') as { isSea(): boolean } | undefined;
  return sea?.isSea() === true ? dirname(process.execPath) : undefined;
}

let installed: { names: NamedProject[] } | null | undefined;

/**
 * The plugin names the vendor's installed products brought (their records beside this packaged
 * executable), read once per process; undefined when no product is recorded there, under plain
 * Node, or when the records cannot be read (names are a courtesy: a damaged record never stops a
 * command).
 */
export function installedNames(folder: string | undefined = packagedFolder()): NamedProject[] | undefined {
  if (folder === undefined) return undefined;
  const cache = folder === packagedFolder();
  if (cache && installed !== undefined) return installed?.names;
  let found: { names: NamedProject[] } | null;
  try {
    const products = installedProducts(folder);
    found = products.length > 0 ? { names: products.flatMap((r) => r.projects) } : null;
  } catch {
    found = null;
  }
  if (cache) installed = found;
  return found?.names;
}

/**
 * Every plugin known here, by the one rule: the installed products' names (else this
 * executable's baked ones), the caller's (`manager --project ID[=NAME]`) over them.
 *
 * @example
 * knownProducts([]); // [{ projectId: '2bfd…', name: 'Acme Gain' }, { projectId: '9c1e…', name: 'Acme Reverb' }]
 */
export function knownProducts(given: readonly GivenProject[] = []): GivenProject[] {
  return productNames(given, installedNames() ?? executableInfo()?.projects ?? []);
}

/** The name of one plugin by {@link knownProducts}, or undefined when nothing names it. */
export function productName(projectId: string): string | undefined {
  const id = projectId.toLowerCase();
  return knownProducts().find((p) => p.projectId === id)?.name ?? undefined;
}

/**
 * `--project ID[=NAME]` values (repeatable), each id checked as every project id is, each name by
 * the one rule of names (`projectNameError`): a bad one is a usage error saying why. An id alone
 * is `name: null` (only `manager --project` allows it).
 */
export function givenProjects(ctx: Context, values: readonly string[], o: { nameRequired?: boolean } = {}): GivenProject[] {
  const given: GivenProject[] = [];
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq < 0 && o.nameRequired === true) throw usageError(`--project ${JSON.stringify(value)} has no name: give PROJECT_ID=NAME`);
    const id = ctx.projectId(eq < 0 ? value : value.slice(0, eq));
    const name = eq < 0 ? null : value.slice(eq + 1);
    const problem = name === null ? undefined : projectNameError(id, name);
    if (problem !== undefined) throw usageError(problem);
    given.push({ projectId: id, name: name === null ? null : name.trim() });
  }
  return given;
}

/** A project as a person reads it: `Acme Gain (2bfd7a59-…)` when a product names it, else its id. */
export function projectLabel(projectId: string): string {
  const name = productName(projectId);
  return name === undefined ? projectId : `${name} (${projectId})`;
}

/** `{ name }` when a product names the project, else nothing: JSON output gains the key only when known. */
export function nameField(projectId: string): { name?: string } {
  const name = productName(projectId);
  return name === undefined ? {} : { name };
}

/** A `plugin` field for aligned output when a product names the project, else none. */
export function pluginField(projectId: string): Array<[string, string]> {
  const name = productName(projectId);
  return name === undefined ? [] : [['plugin', name]];
}
