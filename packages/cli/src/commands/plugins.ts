import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { writeFileAtomic } from '@plugin-license/fs';
import { EARLIER_PRODUCT_ID, productIdProblem, productNameProblem } from '@plugin-license/licensing';
import { chooseNamespace, executableInfo } from '@plugin-license/licensing/executable';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError, type ExitCode } from '../exit.js';
import { givenProjects, packagedFolder } from '../plugin-names.js';
import { installedProducts } from '../plugins/products.js';
import type { PluginsReport, PluginsSetting, ProductOfRun } from '../plugins/run.js';
import { installPlugins } from '../plugins/verbs/install.js';
import { listPlugins } from '../plugins/verbs/list.js';
import { uninstallPlugins, type RemainingProduct } from '../plugins/verbs/uninstall.js';
import { pluginPlaces, type PluginPlatform } from '../plugins/places.js';
import { productWords, RECORDS_FOLDER } from '../plugins/record.js';
import { rescanLine } from '../plugins/rescan.js';
import { formatName, readStaged } from '../plugins/staged.js';
import { killAtStep } from '../test-hook.js';

/** The program's folder: the packaged executable's, or --folder. */
function folderOf(o: { folder?: string }): string {
  const packaged = packagedFolder();
  if (o.folder === undefined && packaged === undefined) {
    throw usageError(`this is not a packaged executable, so it has no folder of its own for the records of installed plugins (${RECORDS_FOLDER}/): give --folder DIR (a Standalone goes there too)`);
  }
  return o.folder !== undefined ? resolve(o.folder) : packaged!;
}

/** Where this run works: the program's folder (beside the executable, or --folder) and this user's places. */
function settingFor(ctx: Context, o: { folder?: string }): PluginsSetting {
  const folder = folderOf(o);
  const places = pluginPlaces({ platform: process.platform, env: ctx.env, exeFolder: folder });
  const packaged = packagedFolder();
  return {
    places,
    folder,
    vendor: chooseNamespace(ctx.options.app, ctx.env).value,
    // The program's own file name beside the Standalones: a packaged executable's.
    ...(packaged !== undefined && packaged === folder ? { program: basename(process.execPath) } : {}),
    step: killAtStep(ctx.env) ?? (() => undefined),
    now: () => new Date(),
  };
}

/**
 * The product a run is for: `--product-id` (checked by the one rule of ids), else the product
 * this executable was built for (`pnpm package --product-id`, baked in: the installers run the
 * executable they ship). Its name: `--product`, else the baked one when the ids match, else the
 * id. Its plugin names: `--project ID=NAME` (repeatable), else this executable's baked ones
 * (its product's). Without a product, only for uninstall: an earlier release's uninstaller, whose
 * plugins are the earlier installer's.
 */
function productOf(ctx: Context, o: { productId?: string; product?: string; project?: string[] }, required: boolean): ProductOfRun {
  const baked = executableInfo()?.product;
  const id = o.productId ?? (required ? baked?.id : undefined);
  if (id === undefined) {
    if (required) throw usageError('give --product-id ID: the product these plugins belong to (each product installer of a vendor owns only its own)');
    return { id: EARLIER_PRODUCT_ID, name: null, projects: [] };
  }
  const problem = productIdProblem(id);
  if (problem !== undefined) throw usageError(`--product-id ${JSON.stringify(id)}: ${problem}`);
  const nameProblem = o.product === undefined ? undefined : productNameProblem(o.product);
  if (nameProblem !== undefined) throw usageError(`--product ${JSON.stringify(o.product)}: ${nameProblem}; give one line of text`);
  const projects = o.project !== undefined && o.project.length > 0 ? givenProjects(ctx, o.project, { nameRequired: true }).map((p) => ({ projectId: p.projectId, name: p.name! })) : (executableInfo()?.projects ?? []);
  return { id, name: o.product?.trim() ?? (baked?.id === id ? baked.name : id), projects };
}

/** The products still installed, in words: "Acme Reverb and Acme Synth". */
const productList = (remaining: RemainingProduct[]): string => {
  const names = remaining.map((r) => r.product ?? "an earlier installer's plugins");
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
};

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
function reportDocument(report: PluginsReport, folder: string, rescan?: string): Record<string, unknown> {
  return {
    installed: report.installed.map((i) => ({ format: i.format, name: i.name, path: i.path, replaced: i.replaced, ...(i.unchanged ? { unchanged: true } : {}) })),
    removed: report.removed,
    kept: report.kept,
    leftovers: report.leftovers,
    ignored: report.ignored,
    folder,
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
  for (const i of report.ignored) lines.push(`ignored ${i}: the record listed it among its temporary files, but it is not one, so it was left alone`);
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

/** `plugins install --product-id ID [--product NAME] [--from DIR] [--project ID=NAME …] [--folder DIR] [--log FILE]`. */
export async function installCommand(ctx: Context, o: { from?: string; productId?: string; product?: string; project?: string[]; folder?: string; log?: string }): Promise<ExitCode> {
  return loggingFailures(ctx, o.log, 'plugins install', async () => {
    const product = productOf(ctx, o, true);
    const setting = settingFor(ctx, o);
    checkHomeOwner(ctx, setting.places.platform);
    const staged = o.from === undefined ? [] : await readStaged(resolve(o.from), setting.places.platform, setting.program);
    const { report, failure } = await installPlugins(staged, product, setting);
    const rescan = rescanLine(setting.places.platform, staged.filter((s) => s.format !== 'standalone' && report.installed.some((i) => i.name === s.name)).map((s) => s.product));
    const lines = [...reportLines(report, ' (no longer part of these plugins)'), ...(staged.length === 0 ? [`${product.name} is recorded as installed, with no plugins of its own`] : []), ...(failure === undefined && rescan !== undefined ? [rescan] : [])];
    return finish(ctx, o.log, 'plugins install', setting.now(), lines, { ...reportDocument(report, setting.folder, rescan), product_id: product.id }, failure);
  });
}

/** `plugins uninstall [--product-id ID] [--folder DIR] [--log FILE]`. */
export async function uninstallCommand(ctx: Context, o: { productId?: string; folder?: string; log?: string }): Promise<ExitCode> {
  return loggingFailures(ctx, o.log, 'plugins uninstall', async () => {
    const product = productOf(ctx, o, false);
    const setting = settingFor(ctx, o);
    const { report, failure, recordFound, remaining } = await uninstallPlugins(product, setting);
    const lines = recordFound ? reportLines(report, '') : [`no plugins are recorded for ${product.name ?? "an earlier installer"} in ${setting.folder}: nothing to remove`];
    if (remaining.length > 0) lines.push(`still installed: ${productList(remaining)}, which use${remaining.length === 1 ? 's' : ''} the same program`);
    const document = { ...reportDocument(report, setting.folder), product_id: product.id, record_found: recordFound, remaining };
    // An earlier release's uninstaller removes the program next: while other products use it, it must stop here.
    const stays = product.id === EARLIER_PRODUCT_ID && remaining.length > 0 && failure === undefined
      ? new CliError(EXIT.failed, 'program_in_use', `the earlier installer's plugins are removed, but the program stays: ${productList(remaining)} still use${remaining.length === 1 ? 's' : ''} it. Uninstall ${remaining.length === 1 ? 'that product' : 'those products'} to remove it`)
      : undefined;
    return finish(ctx, o.log, 'plugins uninstall', setting.now(), lines, document, failure ?? stays);
  });
}

/** `plugins products [--folder DIR]`: the vendor's products installed here, one name a line (reads only). Empty when none is: an uninstaller then removes the program. */
export async function productsCommand(ctx: Context, o: { folder?: string }): Promise<ExitCode> {
  const folder = folderOf(o);
  const products = installedProducts(folder);
  if (ctx.out.json) {
    ctx.out.document({ folder, products: products.map((r) => ({ product_id: r.product_id, product: r.product, projects: r.projects.map((p) => ({ project_id: p.projectId, name: p.name })), plugins: r.items.filter((i) => i.format !== 'menu').length })) });
    return EXIT.ok;
  }
  for (const r of products) ctx.out.line(productWords(r));
  return EXIT.ok;
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

/** `plugins list [--folder DIR]`: every product's plugins; reads only. */
export async function listCommand(ctx: Context, o: { folder?: string }): Promise<ExitCode> {
  const folder = folderOf(o);
  const { items, interrupted, leftovers, recordFound } = await listPlugins({ folder });
  if (ctx.out.json) {
    ctx.out.document({ folder, record_found: recordFound, items: items.map(({ digest: _d, ...i }) => i), interrupted, leftovers });
    return EXIT.ok;
  }
  if (items.length === 0) ctx.out.line(`no plugins are recorded in ${folder}`);
  else ctx.out.table(['product', 'format', 'name', 'state', 'path'], items.map((i) => [i.product_id, formatName(i.format), i.name, i.state, i.path]));
  if (interrupted) ctx.out.line('an install or uninstall was interrupted; the next install or uninstall finishes it');
  for (const l of leftovers) ctx.out.line(`hidden leftover ${l}: the next install or uninstall removes it`);
  return EXIT.ok;
}
