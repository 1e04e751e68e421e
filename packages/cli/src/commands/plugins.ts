import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { writeFileAtomic } from '@plugin-license/licensing';
import { chooseNamespace } from '@plugin-license/licensing/executable';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError, type ExitCode } from '../exit.js';
import { installPlugins, listPlugins, uninstallPlugins, type PluginsReport, type PluginsSetting } from '../plugins/engine.js';
import { pluginPlaces, type PluginPlatform } from '../plugins/places.js';
import { RECORD_NAME } from '../plugins/record.js';
import { rescanLine } from '../plugins/rescan.js';
import { formatName, readStaged } from '../plugins/staged.js';
import { killAtStep } from '../test-hook.js';

/** The folder of the running executable when it is a packaged one (`pnpm package`); undefined under plain Node. */
function packagedFolder(): string | undefined {
  const sea = process.getBuiltinModule?.('node:sea') as { isSea(): boolean } | undefined;
  return sea?.isSea() === true ? dirname(process.execPath) : undefined;
}

/** Where this run works: the record (beside the executable, or --record) and this user's places. */
function settingFor(ctx: Context, o: { record?: string }): PluginsSetting {
  const packaged = packagedFolder();
  if (o.record === undefined && packaged === undefined) {
    throw usageError(`this is not a packaged executable, so it has no folder of its own for ${RECORD_NAME}: give --record FILE (a Standalone goes beside FILE)`);
  }
  const record = o.record !== undefined ? resolve(o.record) : join(packaged!, RECORD_NAME);
  const places = pluginPlaces({ platform: process.platform, env: ctx.env, exeFolder: packaged ?? dirname(record) });
  return { places, record, vendor: chooseNamespace(ctx.options.app, ctx.env).value, step: killAtStep(ctx.env) ?? (() => undefined), now: () => new Date() };
}

/** Plugins go into the home of the user running this: a home owned by another user (sudo kept HOME) is refused before anything is written. */
function checkHomeOwner(ctx: Context, platform: PluginPlatform): void {
  if (platform === 'win32' || typeof process.getuid !== 'function') return;
  const home = ctx.env.HOME!;
  let owner: number;
  try {
    owner = statSync(home).uid;
  } catch (e) {
    throw usageError(`HOME (${home}) cannot be read (${(e as NodeJS.ErrnoException).code}); run this as the user who will use the plugins`);
  }
  const me = process.getuid();
  if (owner !== me) throw usageError(`HOME (${home}) belongs to user ${owner}, and this runs as user ${me}: plugins would be placed in another user's folders. Run it as that user (not with sudo)`);
}

/** The report as --json gives it (also in a failure's details). */
function reportDocument(report: PluginsReport, record: string, rescan?: string): Record<string, unknown> {
  return {
    installed: report.installed.map((i) => ({ format: i.format, name: i.name, path: i.path, replaced: i.replaced, ...(i.unchanged ? { unchanged: true } : {}) })),
    removed: report.removed,
    kept: report.kept,
    leftovers: report.leftovers,
    record,
    ...(rescan !== undefined ? { rescan } : {}),
  };
}

/** One line per thing done, for a person (and an installer's log). */
function reportLines(report: PluginsReport, removedWhy: string): string[] {
  const lines: string[] = [];
  for (const i of report.installed) {
    const how = i.unchanged ? ' (already this version)' : i.replaced ? ' (replaced the previous version)' : '';
    lines.push(`${formatName(i.format)} ${i.format === 'menu' ? i.product : i.name}: ${i.path}${how}`);
  }
  for (const r of report.removed) lines.push(`removed ${r.path}${removedWhy}`);
  for (const k of report.kept) lines.push(`kept ${k.path}: ${k.reason}`);
  for (const l of report.leftovers) lines.push(`left ${l} (hidden): a program still has it open; the next install or uninstall removes it`);
  return lines;
}

/**
 * `--log FILE`: the lines a person reads, also written whole to FILE (replacing it), for an
 * installer run silently (`setup.exe /S` shows nothing): a first line saying what and when, then
 * the lines, then the failure's, if one stopped the run. A log that cannot be written is said on
 * stderr and changes nothing else.
 */
async function writeLog(ctx: Context, file: string | undefined, what: string, at: Date, lines: readonly string[], failure?: CliError): Promise<void> {
  if (file === undefined) return;
  const text = [`${what}, ${at.toISOString()}`, ...lines, ...(failure ? [`failed: ${failure.message}`] : [])].join('\n');
  await writeFileAtomic(resolve(file), `${text}\n`).catch((e: NodeJS.ErrnoException) => ctx.out.note(`could not write the log ${resolve(file)} (${e.code ?? e.message}); the plugins are as said above`));
}

/** A failure part-way: what was done is printed, then the failure, with the report in its details. */
function failed(failure: CliError, document: Record<string, unknown>): never {
  throw new CliError(failure.exit, failure.code, failure.message, { ...(failure.details ?? {}), ...document });
}

/** Failures whose log is written already (by `finish`). */
const logged = new WeakSet<Error>();

/** A run's failure before it placed or removed anything (bad input, a record it cannot read): in the log too, then as it was. */
async function loggingFailures<T>(ctx: Context, log: string | undefined, what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof CliError && !logged.has(e)) await writeLog(ctx, log, what, new Date(), [], e);
    throw e;
  }
}

/** `plugins install --from DIR [--record FILE] [--log FILE]`. */
export async function installCommand(ctx: Context, o: { from: string; record?: string; log?: string }): Promise<ExitCode> {
  return loggingFailures(ctx, o.log, 'plugins install', async () => {
    const setting = settingFor(ctx, o);
    checkHomeOwner(ctx, setting.places.platform);
    const staged = await readStaged(resolve(o.from), setting.places.platform);
    const { report, failure } = await installPlugins(staged, setting);
    const rescan = rescanLine(setting.places.platform, staged.filter((s) => s.format !== 'standalone' && report.installed.some((i) => i.name === s.name)).map((s) => s.product));
    const lines = [...reportLines(report, ' (no longer part of these plugins)'), ...(failure === undefined && rescan !== undefined ? [rescan] : [])];
    return finish(ctx, o.log, 'plugins install', setting.now(), lines, reportDocument(report, setting.record, rescan), failure);
  });
}

/** `plugins uninstall [--record FILE] [--log FILE]`. */
export async function uninstallCommand(ctx: Context, o: { record?: string; log?: string }): Promise<ExitCode> {
  return loggingFailures(ctx, o.log, 'plugins uninstall', async () => {
    const setting = settingFor(ctx, o);
    const { report, failure, recordFound } = await uninstallPlugins(setting);
    const lines = recordFound ? reportLines(report, '') : [`no plugins are recorded in ${setting.record}: nothing to remove`];
    return finish(ctx, o.log, 'plugins uninstall', setting.now(), lines, { ...reportDocument(report, setting.record), record_found: recordFound }, failure);
  });
}

/** The end of an install or uninstall: the log, then the lines (or the document), or what was done and the failure. */
async function finish(ctx: Context, log: string | undefined, what: string, at: Date, lines: string[], document: Record<string, unknown>, failure?: CliError): Promise<ExitCode> {
  await writeLog(ctx, log, what, at, lines, failure);
  if (failure !== undefined) {
    for (const line of lines) ctx.out.line(line);
    try {
      failed(failure, document);
    } catch (e) {
      logged.add(e as Error);
      throw e;
    }
  }
  if (ctx.out.json) ctx.out.document(document);
  else for (const line of lines) ctx.out.line(line);
  return EXIT.ok;
}

/** `plugins list [--record FILE]`: reads only. */
export async function listCommand(ctx: Context, o: { record?: string }): Promise<ExitCode> {
  const setting = settingFor(ctx, o);
  const { items, interrupted, leftovers, recordFound } = await listPlugins(setting);
  if (ctx.out.json) {
    ctx.out.document({ record: setting.record, record_found: recordFound, items: items.map(({ digest: _d, ...i }) => i), interrupted, leftovers });
    return EXIT.ok;
  }
  if (items.length === 0) ctx.out.line(`no plugins are recorded in ${setting.record}`);
  else ctx.out.table(['format', 'name', 'state', 'path'], items.map((i) => [formatName(i.format), i.name, i.state, i.path]));
  if (interrupted) ctx.out.line('an install or uninstall was interrupted; the next install or uninstall finishes it');
  for (const l of leftovers) ctx.out.line(`hidden leftover ${l}: the next install or uninstall removes it`);
  return EXIT.ok;
}
