import { createHash } from 'node:crypto';
import { usageError } from '../exit.js';

/** C0 controls and DEL: no key file line can carry them as they are, and no menu shows them. */
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A value of type string or localestring (Desktop Entry Specification, "Possible value types"):
 * `\` is written `\\`, a leading space `\s` (a value's leading spaces are otherwise dropped).
 * A control character (a new line) is refused with words, never written half-escaped.
 */
export function desktopString(value: string, what: string): string {
  if (CONTROL.test(value)) throw usageError(`${what} holds a control character (a new line or a tab), which a menu entry cannot show: ${JSON.stringify(value)}`);
  return value.replace(/\\/g, '\\\\').replace(/^ /, '\\s');
}

/**
 * One argument of an `Exec` key, quoted per the Desktop Entry Specification's "The Exec key": the
 * argument in double quotes, `"` `` ` `` `$` `\` inside escaped with a backslash, `%` written `%%`
 * (a field code otherwise), then the whole written as a string value ({@link desktopString}:
 * every backslash doubled, so a literal `$` ends up `\\$` and a literal `\` `\\\\`, as the
 * specification's own example says). The one quoting function for the Exec key's arguments.
 *
 * @example
 * desktopExecArgument('/opt/Acme $Gain'); // '"/opt/Acme \\\\$Gain"' as written in the file: "/opt/Acme \\$Gain"
 */
export function desktopExecArgument(arg: string): string {
  if (CONTROL.test(arg)) throw usageError(`the path ${JSON.stringify(arg)} holds a control character (a new line or a tab), which a menu entry cannot start; install into a folder without one`);
  const quoted = `"${arg.replace(/[\\"`$]/g, (c) => `\\${c}`).replace(/%/g, '%%')}"`;
  return desktopString(quoted, 'the path');
}

/**
 * The `Exec` value that starts the program at `executable` with no arguments. By the
 * specification, the quoted path ({@link desktopExecArgument}) is the whole value. But GLib, which
 * most Linux desktops load menu entries with, looks for the program named there before it expands
 * field codes, so a path with a `%` (written `%%`, as the specification asks) names a file that is
 * not there and the entry does not load at all ("Unable to load application information"). Such
 * a path is therefore given as an argument to `sh`, found on every PATH, whose fixed one-line
 * script runs its `$0` (the path, its `%%` expanded by then): the path stays data, never part of
 * the script. (`env PATH` would read a path with a `=` as a variable to set.)
 *
 * @example
 * desktopExec('/opt/Acme/Boost 100%'); // 'sh -c "exec \\\\"\\\\$0\\\\"" "/opt/Acme/Boost 100%%"' as written in the file
 */
export function desktopExec(executable: string): string {
  const argument = desktopExecArgument(executable);
  return executable.includes('%') ? `sh -c ${desktopExecArgument('exec "$0"')} ${argument}` : argument;
}

/**
 * The file name of a Standalone's menu entry: the vendor's namespace and the product, in the
 * characters a desktop file id may hold ([A-Za-z0-9_-], the rest a '-'), with a short hash of the
 * exact product name so two names that read alike ("Acme Gain", "Acme-Gain") never share a file.
 */
export function desktopFileName(vendor: string, product: string): string {
  const slug = (s: string): string => s.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '').toLowerCase();
  const hash = createHash('sha256').update(product).digest('hex').slice(0, 8);
  return `${slug(vendor) || 'vendor'}-${slug(product) || 'standalone'}-${hash}.desktop`;
}

/** The menu entry of a Standalone at `executable`, named `product`. */
export function desktopEntry(product: string, executable: string): string {
  return [
    '[Desktop Entry]',
    'Type=Application',
    'Version=1.4',
    `Name=${desktopString(product, 'the product name')}`,
    `TryExec=${desktopString(executable, 'the path')}`,
    `Exec=${desktopExec(executable)}`,
    'Terminal=false',
    'Categories=AudioVideo;Audio;',
    '',
  ].join('\n');
}
