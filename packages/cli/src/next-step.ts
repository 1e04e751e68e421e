import { basename } from 'node:path';
import { programName } from '@plugin-license/licensing/executable';
import type { Context } from './context.js';

/**
 * A next step as a command a person can run exactly as printed: this program's name (the
 * vendor's, in a packaged executable), the global options that chose this namespace (and, for a
 * step on this machine, this home), then the arguments, each quoted for the shell where needed.
 * Every hint the CLI prints is made here, so none fails as printed.
 *
 * @example
 * ctx.out.note(`Next: ${nextCommand(ctx, 'here', 'offline', 'import', 'response.json')}`);
 */
export function nextCommand(ctx: Context, where: 'here' | 'elsewhere', ...args: string[]): string {
  const globals: string[] = [];
  if (ctx.options.app !== undefined) globals.push('--app', ctx.options.app);
  if (where === 'here' && ctx.options.home !== undefined) globals.push('--home', ctx.options.home);
  return [programName(), ...globals, ...args].map(shellWord).join(' ');
}

/** A file name to carry to another computer: its base name (the folder is this machine's). */
export function carried(file: string): string {
  return basename(file);
}

/** One argument, quoted only when the shell would split or expand it. */
export function shellWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  if (process.platform === 'win32') return `"${word.replace(/"/g, '""')}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
