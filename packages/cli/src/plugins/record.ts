import { readdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, normalize } from 'node:path';
import { writeFileAtomic } from '@plugin-license/fs';
import { EARLIER_PRODUCT_ID, productIdProblem, readBakedProjects, readSmallFile, type NamedProject } from '@plugin-license/licensing';
import { CliError, EXIT } from '../exit.js';
import { placeFolders, PLUGIN_FORMATS, type PluginFormat, type PluginPlaces } from './places.js';

/** The folder of the products' records, beside the executable: one `<product id>.json` each. */
export const RECORDS_FOLDER = 'installed-plugins';
/**
 * The one record of a previous release (beside the executable), when there was one record for
 * every product. Its plugins are taken over by the product that wrote it; see `migrateLegacy`.
 */
export const LEGACY_RECORD_NAME = 'installed-plugins.json';

/** A Standalone's menu entry is recorded and removed like the plugins. */
export type ItemFormat = PluginFormat | 'menu';

/** Something this installer placed, and its tree digest when placed. */
export interface RecordedItem {
  format: ItemFormat;
  /** The file or folder name (`Acme Gain.vst3`, `acme-audio-acme-gain-1a2b3c4d.desktop`). */
  name: string;
  /** The product it belongs to (`Acme Gain`). */
  product: string;
  path: string;
  digest: string;
}

/**
 * A path a step may leave changed, with every digest it may legitimately hold after the step (the
 * previous version's, the new one's): written before anything is placed, so a run killed at any
 * point is settled by the next (see `settle`).
 */
export interface IntentEntry extends Omit<RecordedItem, 'digest'> {
  digests: string[];
  /** The previous version while it is renamed aside: put back if the new one never arrived. */
  restore?: { from: string; digest: string };
  /**
   * The bundle's code (files a host may have loaded) moved out to hidden names before the bundle
   * itself is moved (see `loadableFiles`): `rel` is its '/'-separated path inside the bundle. Put
   * back while the bundle's swap or removal has not happened; otherwise left over and removed.
   */
  modules?: ModuleMove[];
}

/** One file of a bundle's code moved out of it to a hidden name beside the bundle. */
export interface ModuleMove {
  from: string;
  rel: string;
}

/**
 * A path inside a bundle as a record may name it: relative, '/'-separated, no empty, '.' or '..'
 * part, none once '\\' is read as a separator too (Windows), no drive or stream (':'). A file of
 * a bundle whose path is not of this form is not moved out first (`loadableFiles`).
 */
export function isInsideRel(rel: unknown): rel is string {
  return typeof rel === 'string' && !rel.includes(':') && rel.split(/[/\\]/).every((part) => part !== '' && part !== '.' && part !== '..');
}

/** What a previous release recorded: `installed-plugins.json`, one record for every product. */
export interface LegacyRecord {
  version: 1;
  items: RecordedItem[];
  intent?: IntentEntry[];
  scratch: string[];
}

/**
 * `installed-plugins/<product id>.json`: what one product's installer put where, and the plugin
 * names it brings (its executable's baked `--project` names), so the program, shared by every
 * product of the vendor and replaced by each one's installer, names them all.
 */
export interface ProductRecord {
  version: 2;
  product_id: string;
  /** The installer's product (`pnpm package --product`); null for an earlier release's plugins. */
  product: string | null;
  projects: NamedProject[];
  items: RecordedItem[];
  /** The step under way; absent when none is. */
  intent?: IntentEntry[];
  /**
   * Hidden paths of our own making (`.<name>.new-<pid>`, `.<name>.old-<pid>`), named here before
   * they are created: removed whatever they hold by the next install or uninstall (a loaded
   * Windows DLL kept one from going). Only names of that pattern in the user's places are ever
   * removed ({@link isOwnScratch}).
   */
  scratch: string[];
  /** Uninstalled, kept only until its hidden leftovers (a DLL a host held) are gone: no longer installed. */
  removed?: true;
}

/** A record with items, an intent and scratch names: either kind, for the steps both share. */
export type AnyRecord = LegacyRecord | ProductRecord;

export const emptyRecord = (productId: string, product: string | null, projects: NamedProject[] = []): ProductRecord => ({ version: 2, product_id: productId, product, projects, items: [], scratch: [] });

/** Where product `productId`'s record is, in the program's folder `folder`. */
export const recordPath = (folder: string, productId: string): string => join(folder, RECORDS_FOLDER, `${productId}.json`);

/** What a product is called in words: its name, or what an earlier release's plugins are. */
export const productWords = (r: ProductRecord): string => r.product ?? "an earlier installer's plugins";

/** Far more than any vendor's plugins need; a bigger file is not ours. */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

const unreadable = (file: string, problem: string): CliError =>
  new CliError(EXIT.failed, 'record_unreadable', `the record of installed plugins ${file} ${problem}; nothing was changed. Move it aside to start over (plugins it listed are then left where they are)`, { path: file });

/**
 * The one reader of a record's JSON: a regular file (never a link, a FIFO or a device) of bounded
 * size, UTF-8 with or without a byte order mark (an editor may add one), parsed. Undefined when
 * none is there; anything else is an error that changes nothing.
 */
function readJson(file: string): unknown {
  const read = readSmallFile(file, MAX_RECORD_BYTES, { followLinks: false });
  if (read.kind === 'missing') return undefined;
  if (read.kind === 'bad') throw unreadable(file, `is ${read.problem}`);
  try {
    return JSON.parse(read.bytes.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    throw unreadable(file, 'is not JSON');
  }
}

function isItem(v: unknown, withDigest: boolean): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  const text = (k: string): boolean => typeof o[k] === 'string' && o[k] !== '';
  const format = [...PLUGIN_FORMATS, 'menu'].includes(o.format as string);
  const digests = withDigest ? text('digest') : Array.isArray(o.digests) && o.digests.every((d) => typeof d === 'string');
  const restore = o.restore === undefined || (typeof o.restore === 'object' && o.restore !== null && typeof (o.restore as Record<string, unknown>).from === 'string' && typeof (o.restore as Record<string, unknown>).digest === 'string');
  const isMove = (m: unknown): boolean => {
    if (typeof m !== 'object' || m === null) return false;
    const { from, rel } = m as Record<string, unknown>;
    return typeof from === 'string' && isAbsolute(from) && isInsideRel(rel);
  };
  const modules = o.modules === undefined || (Array.isArray(o.modules) && o.modules.every(isMove));
  return format && text('name') && text('product') && text('path') && isAbsolute(o.path as string) && digests && restore && modules;
}

/** The parts both kinds of record share, checked (a temporary name of any text is read: `isOwnScratch` decides what is ever removed). */
function hasSteps(o: Record<string, unknown>): boolean {
  return Array.isArray(o.items) && o.items.every((i) => isItem(i, true)) && Array.isArray(o.scratch) && o.scratch.every((s) => typeof s === 'string') && (o.intent === undefined || (Array.isArray(o.intent) && o.intent.every((i) => isItem(i, false))));
}

/** Reads an earlier release's record (`installed-plugins.json`); undefined when there is none. */
export function readLegacyRecord(file: string): LegacyRecord | undefined {
  const v = readJson(file);
  if (v === undefined) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof v !== 'object' || v === null || o.version !== 1 || !hasSteps(o)) throw unreadable(file, 'is not a record of installed plugins this version reads');
  return v as LegacyRecord;
}

/** Reads product `productId`'s record; undefined when there is none. */
export function readProductRecord(file: string, productId: string): ProductRecord | undefined {
  const v = readJson(file);
  if (v === undefined) return undefined;
  const o = v as Record<string, unknown>;
  const ok = typeof v === 'object' && v !== null && o.version === 2 && o.product_id === productId && (o.product === null || typeof o.product === 'string') && Array.isArray(o.projects) && (o.removed === undefined || o.removed === true) && hasSteps(o);
  if (!ok) throw unreadable(file, 'is not a record of installed plugins this version reads');
  // The projects as executable.json has them ([{project_id, name}]), read by the same rule.
  return { ...(v as ProductRecord), projects: readBakedProjects(o.projects) };
}

/** The product ids whose records are in `folder` (its `installed-plugins/<id>.json`), sorted; none when it has none. */
export function recordedProductIds(folder: string): string[] {
  let names: string[];
  try {
    names = readdirSync(join(folder, RECORDS_FOLDER));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw unreadable(join(folder, RECORDS_FOLDER), `cannot be read (${(e as NodeJS.ErrnoException).code})`);
  }
  return names
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -'.json'.length))
    .filter((id) => id === EARLIER_PRODUCT_ID || productIdProblem(id) === undefined)
    .sort();
}

/** Every product's record in `folder`. */
export function readProductRecords(folder: string): ProductRecord[] {
  return recordedProductIds(folder).flatMap((id) => readProductRecord(recordPath(folder, id), id) ?? []);
}

/** Writes a record whole or not at all (the one atomic writer: a temp file, fsync, rename). */
export async function writeProductRecord(folder: string, record: ProductRecord): Promise<void> {
  const body: ProductRecord = {
    version: 2,
    product_id: record.product_id,
    product: record.product,
    projects: record.projects,
    items: record.items,
    ...(record.intent ? { intent: record.intent } : {}),
    scratch: record.scratch,
    ...(record.removed === true ? { removed: true } : {}),
  };
  // The projects as executable.json has them: [{project_id, name}].
  const text = JSON.stringify({ ...body, projects: body.projects.map((p) => ({ project_id: p.projectId, name: p.name })) }, null, 2);
  await writeFileAtomic(recordPath(folder, record.product_id), `${text}\n`);
}

/** Writes an earlier release's record (while it is settled), or the empty one kept for its uninstaller. */
export async function writeLegacyRecord(file: string, record: LegacyRecord): Promise<void> {
  const body: LegacyRecord = { version: 1, items: record.items, ...(record.intent ? { intent: record.intent } : {}), scratch: record.scratch };
  await writeFileAtomic(file, `${JSON.stringify(body, null, 2)}\n`);
}

export async function removeFile(file: string): Promise<void> {
  await unlink(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}

/**
 * The one rule for the hidden names a record may ask to remove, or put code back from: a name
 * this command makes (`.<name>.new-<pid>`, `.<name>.old-<pid>`, each maybe with `-N`), directly
 * in one of this user's places, written as a plain absolute path (no `.` or `..` part). Anything
 * else a record lists (an edited record naming another vendor's files) is never touched.
 *
 * @example
 * isOwnScratch(places, '/home/u/.vst3/.Acme Gain.vst3.old-4242-2'); // true
 * isOwnScratch(places, '/home/u/.vst3/.OtherVendor Presets'); // false
 */
export function isOwnScratch(places: PluginPlaces, path: string): boolean {
  if (typeof path !== 'string' || !isAbsolute(path) || normalize(path) !== path || !placeFolders(places).includes(dirname(path))) return false;
  return /^\..+\.(?:new|old)-[1-9][0-9]*(?:-[1-9][0-9]*)?$/.test(basename(path));
}
