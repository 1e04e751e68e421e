import { realpathSync } from 'node:fs';
import { executableInfo } from '@plugin-license/licensing';

/**
 * The command that starts this same program again, as argv: a packaged executable is itself
 * (`[/path/acme-license]`; in a Node single executable application `process.argv[1]` is the
 * executable again, as typed), a Node install is Node and its script
 * (`[/usr/bin/node, /…/bin/plugin-license.js]`). Used for whatever runs us later or twice:
 * the per-user service and doctor's second machine-id derivation.
 *
 * @example
 * const [command, ...args] = selfCommand();
 * execFile(command, [...args, '--json', 'machine-id']);
 */
export function selfCommand(): string[] {
  if (executableInfo() !== undefined) return [process.execPath];
  const script = process.argv[1];
  if (script === undefined || script === '') throw new Error('this process has no script path to run again (started with node -e?)');
  return [process.execPath, realpathSync(script)];
}
