// How the CLI names a plugin wherever it shows a project: by the one naming rule of the library
// (`productName`: the executable's baked names, `pnpm package --project ID=NAME`). Human output
// gains the name beside the id; JSON gains a `name` key only when one is known.
import { productName } from '@plugin-license/licensing/executable';

/** A project as a person reads it: `Acme Gain (2bfd7a59-…)` when the executable names it, else its id. */
export function projectLabel(projectId: string): string {
  const name = productName(projectId);
  return name === undefined ? projectId : `${name} (${projectId})`;
}

/** `{ name }` when the executable names the project, else nothing: JSON output gains the key only when known. */
export function nameField(projectId: string): { name?: string } {
  const name = productName(projectId);
  return name === undefined ? {} : { name };
}

/** A `plugin` field for aligned output when the executable names the project, else none. */
export function pluginField(projectId: string): Array<[string, string]> {
  const name = productName(projectId);
  return name === undefined ? [] : [['plugin', name]];
}
