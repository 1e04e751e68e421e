import { lstat, rename, rmdir, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { acquireFileLock, EARLIER_PRODUCT_ID, type NamedProject } from '@plugin-license/licensing';
import { CliError, EXIT } from '../exit.js';
import { desktopEntry, desktopFileName } from './desktop-entry.js';
import type { PluginPlaces } from './places.js';
import { loadableFiles } from './loadable.js';
import {
  emptyRecord,
  isInsideRel,
  isOwnScratch,
  LEGACY_RECORD_NAME,
  productWords,
  readLegacyRecord,
  readProductRecords,
  RECORDS_FOLDER,
  recordPath,
  removeFile,
  writeLegacyRecord,
  writeProductRecord,
  type AnyRecord,
  type IntentEntry,
  type ItemFormat,
  type LegacyRecord,
  type ModuleMove,
  type ProductRecord,
  type RecordedItem,
} from './record.js';
import type { StagedItem } from './staged.js';
import { copyTree, makeFolder, removeTree } from './tree-copy.js';
import { digestIfPresent, fileDigest, linkDigest } from './tree-digest.js';

/** Where a run works: the places of this user, the program's folder (the records), and the vendor (for menu entry names). */
export interface PluginsSetting {
  places: PluginPlaces;
  /** The program's folder: the products' records are in its `installed-plugins/`. */
  folder: string;
  /** The program's file name in that folder, when it is the running packaged executable. */
  program?: string;
  /** The vendor's namespace (`acme-audio`). */
  vendor: string;
  /** Called at each step's end with its label; a test kills the process there (PLUGIN_LICENSE_TEST_KILL_AT). */
  step: (label: string) => void;
  /** Now, for the name a same-named item is kept under. */
  now: () => Date;
}

export interface PlacedReport {
  format: ItemFormat;
  name: string;
  /** The product it belongs to (`Acme Gain`). */
  product: string;
  path: string;
  /** An earlier version of ours was replaced. */
  replaced: boolean;
  /** It was already exactly this version: nothing was copied. */
  unchanged?: boolean;
}

/** What a run did; every list is complete even when the run failed part-way. */
export interface PluginsReport {
  installed: PlacedReport[];
  removed: Array<{ format: ItemFormat; name: string; path: string }>;
  kept: Array<{ path: string; reason: string }>;
  /** Hidden names of ours that could not be removed now (a program has them open): the next install or uninstall removes them. */
  leftovers: string[];
  /** Paths a record listed as temporary names of ours that are not ({@link isOwnScratch}): left alone, dropped from the record. */
  ignored: string[];
}

const emptyReport = (): PluginsReport => ({ installed: [], removed: [], kept: [], leftovers: [], ignored: [] });

/** What an item placed is made from: a staged item, or a menu entry we write. */
type Content = { kind: 'tree'; source: string } | { kind: 'file'; text: string } | { kind: 'link'; target: string };

interface Placement {
  format: ItemFormat;
  name: string;
  product: string;
  target: string;
  content: Content;
  digest: string;
  /** Ours, exactly as recorded: replaced. */
  previous?: string;
  /** There, and not ours (or changed since): kept under this name. */
  keepAs?: { path: string; reason: string };
  fresh: string;
  aside?: string;
  /** The previous version's code, moved out before it is moved aside (only with `previous`; none with `keepAs`). */
  modules?: ModuleMove[];
}

interface Removal {
  item: RecordedItem;
  aside: string;
  modules: ModuleMove[];
}

/** The folder an item of `format` goes into. */
function folderOf(places: PluginPlaces, format: ItemFormat): string {
  const folder = format === 'menu' ? places.menu?.folder : places.folders[format];
  if (folder === undefined) throw new Error(`no folder for ${format}`);
  return folder;
}

/** A path is one we may touch only when it sits directly in one of this user's places. */
function insidePlaces(places: PluginPlaces, path: string): boolean {
  const folders = [...Object.values(places.folders), ...(places.menu ? [places.menu.folder] : [])];
  return folders.includes(dirname(path)) && basename(path) !== '' && basename(path) !== '..' && basename(path) !== '.';
}

const exists = async (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return false;
      throw e;
    },
  );

/** A hidden sibling of `path` that hosts do not scan (`.<name>.<role>-<pid>`), not yet taken. */
async function scratchName(path: string, role: 'new' | 'old', taken: Set<string>): Promise<string> {
  for (let n = 1; n < 100; n++) {
    const candidate = join(dirname(path), `.${basename(path)}.${role}-${process.pid}${n === 1 ? '' : `-${n}`}`);
    if (!taken.has(candidate) && !(await exists(candidate))) {
      taken.add(candidate);
      return candidate;
    }
  }
  throw new CliError(EXIT.failed, 'no_scratch_name', `${dirname(path)} is full of hidden files named after ${basename(path)}; remove them and run again`);
}

/** The name a same-named item that is not ours is kept under: not scanned by hosts (it no longer ends in .vst3). */
async function keptName(path: string, now: Date): Promise<string> {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  for (let n = 1; n < 100; n++) {
    const candidate = `${path}.kept-${stamp}${n === 1 ? '' : `-${n}`}`;
    if (!(await exists(candidate))) return candidate;
  }
  throw new CliError(EXIT.failed, 'no_kept_name', `cannot find a free name to keep ${path} under; move it away and run again`);
}

/** Hidden names for the code of the bundle at `path` ({@link loadableFiles}), to move it out before the bundle. */
async function planModules(path: string, taken: Set<string>): Promise<ModuleMove[]> {
  const moves: ModuleMove[] = [];
  for (const rel of await loadableFiles(path)) if (isInsideRel(rel)) moves.push({ from: await scratchName(path, 'old', taken), rel });
  return moves;
}

const inside = (bundle: string, rel: string): string => join(bundle, ...rel.split('/'));

/** Puts moved-out code back into the bundle at `bundle` where its place is free; best effort (what stays is left over). */
async function putBack(bundle: string, modules: readonly ModuleMove[]): Promise<void> {
  for (const m of modules) {
    if (!(await exists(m.from)) || (await exists(inside(bundle, m.rel)))) continue;
    await rename(m.from, inside(bundle, m.rel)).catch(() => undefined);
  }
}

/**
 * The one rule for moving a bundle of ours (aside, to replace it, or away, to remove it) while a
 * host may have its code loaded: the code goes out first, each file renamed to its hidden name
 * (Windows allows that for a loaded DLL; it refuses to move the folder holding one), then the
 * emptied bundle goes. On any failure what was moved is put back and the error thrown, so the
 * bundle is whole where it was.
 */
async function moveBundle(from: string, to: string, modules: readonly ModuleMove[], setting: PluginsSetting): Promise<void> {
  try {
    for (const m of modules) await rename(inside(from, m.rel), m.from);
    if (modules.length > 0) setting.step('modules');
    await rename(from, to);
  } catch (e) {
    await putBack(from, modules);
    throw e;
  }
}

/** Removes a moved bundle and its moved-out code; what a program keeps open is listed as left over. */
async function removeMoved(aside: string, modules: readonly ModuleMove[], report: PluginsReport): Promise<void> {
  for (const path of [aside, ...modules.map((m) => m.from)]) await removeTree(path).catch(() => report.leftovers.push(path));
}

/** Why a step on the file system failed, in words a musician can act on. */
function advice(e: NodeJS.ErrnoException): string {
  switch (e.code) {
    case 'EACCES':
    case 'EPERM':
      return process.platform === 'win32' ? 'you may not write there, or a program has it open; close your music software and check the folder' : "you may not write there; check the folder's owner and permissions";
    case 'EBUSY':
      return 'a program has it open; close your music software and run the installer again';
    case 'EROFS':
      return 'the disk is read-only';
    case 'ENOSPC':
      return 'the disk is full; free some space and run the installer again';
    case 'ENOTDIR':
    case 'EEXIST':
      return 'something else is where its folder should be; move it away and run the installer again';
    default:
      return e.message.replace(/\s+/g, ' ');
  }
}

/**
 * Brings a record in line with the disk after a step (finished, failed, or killed at any point
 * by a run before this one): each path the step named holds one of the digests it may
 * legitimately have (recorded as ours with that digest), or nothing while the previous version
 * is still renamed aside (put back), or something else (not ours: left alone, no longer
 * recorded). Then every hidden name of ours is removed, whatever it holds; one a program keeps
 * open stays listed for the next run. Never touches a path the record does not name, nor a name
 * it lists that is not one of our temporary names in this user's places ({@link isOwnScratch}:
 * said once in `report.ignored`, and dropped).
 */
async function settle<R extends AnyRecord>(record: R, places: PluginPlaces, report: PluginsReport): Promise<R> {
  const items = new Map(record.items.map((i) => [i.path, i]));
  for (const entry of record.intent ?? []) {
    if (!insidePlaces(places, entry.path)) continue;
    const modules = (entry.modules ?? []).filter((m) => isOwnScratch(places, m.from) && isInsideRel(m.rel));
    const restore = entry.restore !== undefined && isOwnScratch(places, entry.restore.from) ? entry.restore : undefined;
    if (modules.length > 0) {
      // Code moved out of a bundle whose move never happened (still at its path, incomplete) or was
      // undone (aside, to be put back): it goes back in. After a swap or a removal it is left over.
      const at = await digestIfPresent(entry.path);
      if (at.kind === 'digest' && !entry.digests.includes(at.digest)) await putBack(entry.path, modules);
      else if (at.kind === 'missing' && restore !== undefined && (await exists(restore.from))) await putBack(restore.from, modules);
    }
    let found = await digestIfPresent(entry.path);
    if (found.kind === 'missing' && restore !== undefined) {
      const aside = await digestIfPresent(restore.from);
      if (aside.kind === 'digest' && aside.digest === restore.digest) {
        await rename(restore.from, entry.path);
        found = aside;
      }
    }
    const { digests: _d, restore: _r, modules: _m, ...item } = entry;
    if (found.kind === 'digest' && entry.digests.includes(found.digest)) items.set(entry.path, { ...item, digest: found.digest });
    else items.delete(entry.path);
  }
  const scratch: string[] = [];
  for (const path of record.scratch) {
    if (!isOwnScratch(places, path)) {
      if (!report.ignored.includes(path)) report.ignored.push(path);
      continue;
    }
    try {
      await removeTree(path);
    } catch {
      // A Windows DLL a host has loaded cannot go yet: the next install or uninstall tries again.
      scratch.push(path);
      if (!report.leftovers.includes(path)) report.leftovers.push(path);
    }
  }
  const { intent: _i, ...rest } = record;
  return { ...rest, items: [...items.values()], scratch } as R;
}

/** The product a run is for: its id, its name (null: an earlier release's plugins), the plugin names it brings. */
export interface ProductOfRun {
  id: string;
  name: string | null;
  projects: NamedProject[];
}

/** Every record of the program's folder, under its lock: the run's product's own, and the others'. */
interface Records {
  mine: ProductRecord;
  others: ProductRecord[];
  /** The run's product was recorded as installed before this run. */
  recorded: boolean;
}

/**
 * The one rule for an earlier release's record (`installed-plugins.json`, one for every product):
 * its plugins belong to the product that wrote it. An install of a product that ships one of the
 * paths it lists is that product's upgrade: those items become its own. Whatever else it lists
 * (another product's, or a run without a product: the earlier release's uninstaller) is kept
 * apart as the earlier installer's product ({@link EARLIER_PRODUCT_ID}), removed only by its
 * uninstaller or when the last product goes. While that product is there, the file stays, empty,
 * so the earlier release's uninstaller still asks the program (`plugins uninstall`) before it
 * removes anything, and learns that other products still use the program; otherwise it goes.
 */
async function migrateLegacy(folder: string, legacy: LegacyRecord, records: ProductRecord[], installing: { id: string; shipped: ReadonlySet<string> } | undefined, run: ProductOfRun): Promise<void> {
  // Already taken over: the empty file kept for the earlier uninstaller, until the last product goes.
  if (legacy.items.length === 0 && legacy.scratch.length === 0) return;
  const recordOf = (id: string, name: string | null, projects: NamedProject[]): ProductRecord => {
    let r = records.find((x) => x.product_id === id);
    if (r === undefined) {
      r = emptyRecord(id, name, projects);
      records.push(r);
    }
    return r;
  };
  const taken = legacy.items.filter((i) => installing?.shipped.has(i.path) === true);
  const kept = legacy.items.filter((i) => !taken.includes(i));
  // Hidden leftovers go with the plugins they were of: to this product when it took any.
  const mine = installing !== undefined && taken.length > 0 ? recordOf(installing.id, run.name, run.projects) : recordOf(EARLIER_PRODUCT_ID, null, []);
  mine.scratch = [...mine.scratch, ...legacy.scratch];
  if (taken.length > 0) mine.items = [...mine.items.filter((i) => !taken.some((t) => t.path === i.path)), ...taken];
  const earlier = recordOf(EARLIER_PRODUCT_ID, null, []);
  earlier.items = [...earlier.items.filter((i) => !kept.some((k) => k.path === i.path)), ...kept];
  if (earlier.items.length > 0) delete earlier.removed;
  else earlier.removed = true;
  for (const r of new Set([mine, earlier])) if (r.items.length > 0 || r.scratch.length > 0) await writeProductRecord(folder, r);
  if (earlier.items.length === 0) records.splice(records.indexOf(earlier), 1);
  const file = join(folder, LEGACY_RECORD_NAME);
  if (earlier.items.length > 0) await writeLegacyRecord(file, { version: 1, items: [], scratch: [] });
  else await removeFile(file);
}

/**
 * Runs `work` holding the lock of the program's folder's records (one install or uninstall at a
 * time, whatever the product), after settling what an earlier run left in every record and
 * taking over an earlier release's record (`migrateLegacy`).
 */
async function underLock<T>(setting: PluginsSetting, run: ProductOfRun, installing: ReadonlySet<string> | undefined, work: (records: Records, report: PluginsReport) => Promise<T>): Promise<T> {
  const folder = join(setting.folder, RECORDS_FOLDER);
  await makeFolder(folder).catch((e: NodeJS.ErrnoException) => {
    throw new CliError(EXIT.failed, 'record_unwritable', `cannot create the folder of the records ${folder} (${e.code}): ${advice(e)}`, { path: folder });
  });
  const lockPath = join(folder, '.lock');
  let release: () => Promise<void>;
  try {
    // The holder named: a run after a crash takes the lock over at once instead of waiting for it to go stale.
    release = await acquireFileLock(folder, { lockPath, staleMs: 10_000, namedHolder: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(EXIT.failed, code === 'ELOCKED' ? 'busy' : 'record_unwritable', code === 'ELOCKED' ? `another install or uninstall of these plugins is running (${lockPath}); wait for it to end and run again` : `cannot lock ${folder} (${code}): ${advice(e as NodeJS.ErrnoException)}`, { path: folder });
  }
  try {
    const report = emptyReport();
    const legacyFile = join(setting.folder, LEGACY_RECORD_NAME);
    let legacy = readLegacyRecord(legacyFile);
    const records = readProductRecords(setting.folder);
    if (legacy !== undefined && (legacy.intent !== undefined || legacy.scratch.length > 0)) {
      legacy = await settle(legacy, setting.places, report);
      await writeLegacyRecord(legacyFile, legacy);
    }
    for (const [n, r] of records.entries()) {
      if (r.intent === undefined && r.scratch.length === 0) continue;
      records[n] = await settle(r, setting.places, report);
      await writeProductRecord(setting.folder, records[n]!);
    }
    if (legacy !== undefined) await migrateLegacy(setting.folder, legacy, records, installing && { id: run.id, shipped: installing }, run);
    const found = records.find((r) => r.product_id === run.id);
    const mine = found ?? emptyRecord(run.id, run.name, run.projects);
    // A product's record whose uninstall left hidden leftovers only: settled above; it goes once they have.
    for (const r of records) if (r.removed === true && r !== mine && r.scratch.length === 0) await removeFile(recordPath(setting.folder, r.product_id));
    const others = records.filter((r) => r !== mine && !(r.removed === true && r.scratch.length === 0));
    return await work({ mine, others, recorded: found !== undefined && found.removed !== true }, report);
  } finally {
    await release();
  }
}

/**
 * After a run: a path several products installed (a bundle two products of the vendor ship) holds
 * one version, the last placed, so every record that lists it says that version's digest: the
 * product uninstalled last still finds it as installed.
 */
async function shareDigests(folder: string, mine: ProductRecord, others: ProductRecord[]): Promise<void> {
  const digests = new Map(mine.items.map((i) => [i.path, i.digest]));
  for (const r of others) {
    if (!r.items.some((i) => digests.has(i.path) && digests.get(i.path) !== i.digest)) continue;
    r.items = r.items.map((i) => (digests.has(i.path) ? { ...i, digest: digests.get(i.path)! } : i));
    await writeProductRecord(folder, r);
  }
}

/** The products of the vendor, other than the run's, that list `path`. */
const alsoListing = (others: readonly ProductRecord[], path: string): ProductRecord[] => others.filter((r) => r.removed !== true && r.items.some((i) => i.path === path));

/** Places the content of `p` at its hidden fresh name. */
async function materialize(p: Placement): Promise<void> {
  if (p.content.kind === 'tree') await copyTree(p.content.source, p.fresh);
  else if (p.content.kind === 'file') await writeFile(p.fresh, p.content.text, { flag: 'wx', mode: 0o644 });
  else await symlink(p.content.target, p.fresh);
}

/** Puts one item in place whole: a copy beside it under a hidden name, checked, then swapped; the old one removed (or left hidden when in use). */
async function place(p: Placement, setting: PluginsSetting, report: PluginsReport): Promise<void> {
  const folder = dirname(p.target);
  // Where what was at the target went: ours to a hidden name, another's to its kept name.
  let moved: string | undefined;
  try {
    await makeFolder(folder);
    await materialize(p);
    setting.step('copied');
    const check = await digestIfPresent(p.fresh);
    if (check.kind !== 'digest' || check.digest !== p.digest) throw Object.assign(new Error('the copy differs from the staged item (a disk error, or the staged item changed meanwhile)'), { code: 'EIO' });
    const away = p.keepAs?.path ?? p.aside;
    if (away !== undefined && (await exists(p.target))) {
      await moveBundle(p.target, away, p.modules ?? [], setting);
      moved = away;
      setting.step('aside');
    }
    try {
      await rename(p.fresh, p.target);
    } catch (e) {
      if (moved !== undefined) {
        await rename(moved, p.target).catch(() => undefined);
        await putBack(p.target, p.modules ?? []);
      }
      throw e;
    }
    setting.step('placed');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const then = p.previous !== undefined ? 'the previous version is still in place' : p.keepAs !== undefined ? 'what was there is still in place' : 'nothing was placed there';
    throw new CliError(EXIT.failed, 'place_failed', `could not place ${p.name} in ${folder} (${err.code ?? 'error'}): ${advice(err)}; ${then}`, { path: p.target, ...(err.code ? { system_code: err.code } : {}) });
  }
  report.installed.push({ format: p.format, name: p.name, product: p.product, path: p.target, replaced: p.previous !== undefined });
  if (p.keepAs !== undefined && moved !== undefined) report.kept.push({ path: p.keepAs.path, reason: p.keepAs.reason });
  if (p.aside !== undefined && moved !== undefined) await removeMoved(p.aside, p.modules ?? [], report);
}

/** Removes one recorded item: renamed to a hidden name first (a kill mid-way leaves no half bundle under its own name), then deleted. */
async function remove(r: Removal, setting: PluginsSetting, report: PluginsReport): Promise<void> {
  try {
    await moveBundle(r.item.path, r.aside, r.modules, setting);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return;
    throw new CliError(EXIT.failed, 'remove_failed', `could not remove ${r.item.path} (${err.code ?? 'error'}): ${advice(err)}; it is still in place`, { path: r.item.path, system_code: err.code });
  }
  setting.step('removing');
  report.removed.push({ format: r.item.format, name: r.item.name, path: r.item.path });
  await removeMoved(r.aside, r.modules, report);
  setting.step('removed');
}

/** What a removal may leave: the item gone, or still there whole (its code put back). */
const removalIntent = (r: Removal): IntentEntry => ({ format: r.item.format, name: r.item.name, product: r.item.product, path: r.item.path, digests: [r.item.digest], ...(r.modules.length ? { modules: r.modules } : {}) });
/** The hidden names a removal may create. */
const removalScratch = (r: Removal): string[] => [r.aside, ...r.modules.map((m) => m.from)];

/** Whether a recorded item is still exactly as installed; otherwise why it is left alone. */
async function stillOurs(item: RecordedItem): Promise<{ ours: true } | { ours: false; gone: boolean; reason: string }> {
  const found = await digestIfPresent(item.path);
  if (found.kind === 'missing') return { ours: false, gone: true, reason: 'already gone' };
  if (found.kind === 'digest' && found.digest === item.digest) return { ours: true };
  return { ours: false, gone: false, reason: 'changed since it was installed (your own edit, or another program put its own there), so it was left in place' };
}

/** The menu entry of a Standalone that went to `target`, where this platform has one. */
function menuPlacement(setting: PluginsSetting, item: StagedItem, target: string): Omit<Placement, 'fresh'> | undefined {
  const menu = setting.places.menu;
  if (menu === undefined) return undefined;
  if (menu.kind === 'desktop') {
    const text = desktopEntry(item.product, target);
    const name = desktopFileName(setting.vendor, item.product);
    return { format: 'menu', name, product: item.product, target: join(menu.folder, name), content: { kind: 'file', text }, digest: fileDigest(text) };
  }
  return { format: 'menu', name: item.name, product: item.product, target: join(menu.folder, item.name), content: { kind: 'link', target }, digest: linkDigest(target) };
}

/**
 * `plugins install --product-id ID [--from DIR]`: every staged item into its place, whole; items
 * this product's earlier install recorded that this one no longer ships removed (when still
 * exactly as installed, and when no other product of the vendor installed them too); the
 * product's record written before anything is placed and again after. Other products' plugins
 * are never touched: a path another product installed is the vendor's own, replaced like ours
 * and then listed by both. A same-named item that is not the vendor's in a plug-in folder is kept
 * under `<name>.kept-<time>` (hosts do not scan it) and said; beside the executable (the
 * installer's own folder) it stops the install before anything is placed. Without staged items
 * the product is recorded as installed, with no plugins. Returns the report, and the failure that
 * stopped it part-way, if one did.
 */
export async function installPlugins(staged: StagedItem[], product: ProductOfRun, setting: PluginsSetting): Promise<{ report: PluginsReport; failure?: CliError }> {
  const planned: Array<Omit<Placement, 'fresh'>> = [];
  for (const item of staged) {
    const target = join(folderOf(setting.places, item.format), item.name);
    planned.push({ format: item.format, name: item.name, product: item.product, target, content: { kind: 'tree', source: item.source }, digest: item.digest });
    if (item.format === 'standalone') {
      const menu = menuPlacement(setting, item, target);
      if (menu) planned.push(menu);
    }
  }
  const shipped = new Set(planned.map((p) => p.target));
  return underLock(setting, product, shipped, async ({ mine: record, others }, report) => {
    const recorded = new Map(record.items.map((i) => [i.path, i]));
    const taken = new Set<string>();
    const placements: Placement[] = [];
    const items: RecordedItem[] = [];
    for (const p of planned) {
      const found = await digestIfPresent(p.target);
      const mine = recorded.get(p.target);
      const theirs = alsoListing(others, p.target);
      const placement: Placement = { ...p, fresh: await scratchName(p.target, 'new', taken) };
      const vendors = found.kind === 'digest' && ((mine !== undefined && found.digest === mine.digest) || theirs.some((r) => r.items.some((i) => i.path === p.target && i.digest === found.digest)));
      if (found.kind === 'digest' && vendors) {
        if (found.digest === p.digest) {
          report.installed.push({ format: p.format, name: p.name, product: p.product, path: p.target, replaced: false, unchanged: true });
          items.push({ format: p.format, name: p.name, product: p.product, path: p.target, digest: p.digest });
          continue;
        }
        placement.previous = found.digest;
        placement.aside = await scratchName(p.target, 'old', taken);
        placement.modules = await planModules(p.target, taken);
        if (mine !== undefined) items.push(mine);
      } else if (found.kind !== 'missing') {
        const reason = mine !== undefined || theirs.length > 0 ? `${p.name} was changed since it was installed` : `${p.name} was already there, not put there by this installer`;
        if (p.format === 'standalone') {
          throw new CliError(EXIT.failed, 'not_ours', `${reason}: ${p.target}; nothing was placed. Move it away (it is not one of these plugins' files) and run the installer again`, { path: p.target });
        }
        placement.keepAs = { path: await keptName(p.target, setting.now()), reason: `${reason}; kept under this name, which music software does not load (remove it when you no longer need it)` };
      }
      placements.push(placement);
    }
    const removals: Removal[] = [];
    for (const item of record.items) {
      if (shipped.has(item.path)) continue;
      const sharing = alsoListing(others, item.path);
      if (sharing.length > 0) {
        report.kept.push({ path: item.path, reason: `no longer part of these plugins, but also of ${sharing.map(productWords).join(' and ')}, so it stays` });
        continue;
      }
      const state = await stillOurs(item);
      if (state.ours && insidePlaces(setting.places, item.path)) removals.push({ item, aside: await scratchName(item.path, 'old', taken), modules: await planModules(item.path, taken) });
      else if (!state.ours && !state.gone) report.kept.push({ path: item.path, reason: `no longer part of these plugins, but ${state.reason}` });
      else if (state.ours) report.kept.push({ path: item.path, reason: "no longer part of these plugins, but not in this user's plug-in folders, so it was left in place" });
      if (state.ours) items.push(item);
    }
    // What each step may leave, named before any of it happens.
    const intent: IntentEntry[] = [
      ...placements.map((p) => ({
        format: p.format,
        name: p.name,
        product: p.product,
        path: p.target,
        digests: p.previous !== undefined ? [p.previous, p.digest] : [p.digest],
        ...(p.aside !== undefined && p.previous !== undefined ? { restore: { from: p.aside, digest: p.previous } } : {}),
        ...(p.modules?.length ? { modules: p.modules } : {}),
      })),
      ...removals.map(removalIntent),
    ];
    // Every target is in the intent: a changed item of ours there drops out of the record when settled.
    const working: ProductRecord = {
      version: 2,
      product_id: product.id,
      product: product.name,
      projects: product.projects,
      items,
      intent,
      scratch: [...record.scratch, ...placements.flatMap((p) => [p.fresh, ...(p.aside ? [p.aside] : []), ...(p.modules ?? []).map((m) => m.from)]), ...removals.flatMap(removalScratch)],
    };
    await writeProductRecord(setting.folder, working);
    setting.step('intent');
    let failure: CliError | undefined;
    try {
      for (const p of placements) await place(p, setting, report);
      for (const r of removals) await remove(r, setting, report);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      failure = e;
    }
    const settled = await settle(working, setting.places, { ...report, leftovers: [], ignored: [] });
    report.leftovers = settled.scratch;
    await writeProductRecord(setting.folder, settled);
    await shareDigests(setting.folder, settled, others);
    return failure === undefined ? { report } : { report, failure };
  });
}

/** The products still installed after an uninstall: the program stays while there is one. */
export interface RemainingProduct {
  product_id: string;
  product: string | null;
}

/**
 * `plugins uninstall --product-id ID`: removes exactly what the product's record lists, where it
 * is still exactly what was installed and no other product of the vendor installed it too (a
 * same-named item it did not put there, one changed since, or one another product still has, is
 * left and said); then the record (kept, marked removed, only while a hidden leftover a program
 * holds open remains). Says which products remain: the program is theirs too. Without a product
 * (what an earlier release's uninstaller runs) it is the earlier installer's plugins.
 */
export async function uninstallPlugins(product: ProductOfRun, setting: PluginsSetting): Promise<{ report: PluginsReport; failure?: CliError; recordFound: boolean; remaining: RemainingProduct[] }> {
  // Nothing recorded at all: nothing to lock or write.
  if (!(await exists(join(setting.folder, RECORDS_FOLDER))) && !(await exists(join(setting.folder, LEGACY_RECORD_NAME)))) return { report: emptyReport(), recordFound: false, remaining: [] };
  const done = await underLock(setting, product, undefined, async ({ mine: record, others, recorded: recordFound }, report) => {
    const taken = new Set<string>();
    const removals: Removal[] = [];
    for (const item of record.items) {
      const sharing = alsoListing(others, item.path);
      if (sharing.length > 0) {
        report.kept.push({ path: item.path, reason: `also part of ${sharing.map(productWords).join(' and ')}, so it stays` });
        continue;
      }
      const state = await stillOurs(item);
      if (!state.ours) {
        if (!state.gone) report.kept.push({ path: item.path, reason: state.reason });
      } else if (!insidePlaces(setting.places, item.path)) report.kept.push({ path: item.path, reason: "not in this user's plug-in folders, so it was left in place" });
      else removals.push({ item, aside: await scratchName(item.path, 'old', taken), modules: await planModules(item.path, taken) });
    }
    const working: ProductRecord = { ...record, items: removals.map((r) => r.item), intent: removals.map(removalIntent), scratch: [...record.scratch, ...removals.flatMap(removalScratch)] };
    if (working.items.length > 0 || working.scratch.length > 0) await writeProductRecord(setting.folder, working);
    setting.step('intent');
    let failure: CliError | undefined;
    try {
      for (const r of removals) await remove(r, setting, report);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      failure = e;
    }
    const settled = await settle(working, setting.places, { ...report, leftovers: [], ignored: [] });
    report.leftovers = settled.scratch;
    if (settled.items.length > 0) await writeProductRecord(setting.folder, settled);
    else if (settled.scratch.length > 0) await writeProductRecord(setting.folder, { ...settled, removed: true });
    else await removeFile(recordPath(setting.folder, product.id));
    const remaining = others.filter((r) => r.removed !== true).map((r) => ({ product_id: r.product_id, product: r.product }));
    // The last product gone: nothing of the earlier release is left to ask for either.
    if (remaining.length === 0 && settled.items.length === 0) await removeFile(join(setting.folder, LEGACY_RECORD_NAME));
    return { report, recordFound, remaining, ...(failure ? { failure } : {}) };
  });
  // No record left (the lock is gone too): the folder of the records goes; a run that started meanwhile keeps it.
  await rmdir(join(setting.folder, RECORDS_FOLDER)).catch(() => undefined);
  return done;
}

/** One recorded item as `plugins list` shows it. */
export interface ListedItem extends RecordedItem {
  product_id: string;
  state: 'in place' | 'changed' | 'missing';
}

/** The records of the program's folder as they are, read only: the products' (marked removed ones left out) and an earlier release's. */
function readAll(folder: string): { records: ProductRecord[]; legacy: LegacyRecord | undefined } {
  return { records: readProductRecords(folder).filter((r) => r.removed !== true || r.scratch.length > 0), legacy: readLegacyRecord(join(folder, LEGACY_RECORD_NAME)) };
}

/** `plugins list`: every product's record and whether each item is still as installed. Reads only: no lock, no sweep, nothing written. */
export async function listPlugins(setting: Pick<PluginsSetting, 'folder'>): Promise<{ items: ListedItem[]; interrupted: boolean; leftovers: string[]; recordFound: boolean }> {
  const { records, legacy } = readAll(setting.folder);
  const sources: Array<[string, AnyRecord]> = [...(legacy ? [[EARLIER_PRODUCT_ID, legacy] as [string, AnyRecord]] : []), ...records.map((r) => [r.product_id, r] as [string, AnyRecord])];
  const items: ListedItem[] = [];
  for (const [productId, record] of sources) {
    for (const item of record.items) {
      const found = await digestIfPresent(item.path);
      items.push({ ...item, product_id: productId, state: found.kind === 'missing' ? 'missing' : found.kind === 'digest' && found.digest === item.digest ? 'in place' : 'changed' });
    }
  }
  return { items, interrupted: sources.some(([, r]) => r.intent !== undefined), leftovers: sources.flatMap(([, r]) => r.scratch), recordFound: sources.length > 0 };
}

/**
 * `plugins products`: the vendor's products installed here (each with a record), read only. An
 * earlier release's record still holding plugins counts as one (they need the program).
 */
export function installedProducts(folder: string): ProductRecord[] {
  const { records, legacy } = readAll(folder);
  const installed = records.filter((r) => r.removed !== true);
  if (legacy !== undefined && legacy.items.length > 0 && !installed.some((r) => r.product_id === EARLIER_PRODUCT_ID)) installed.push({ ...emptyRecord(EARLIER_PRODUCT_ID, null), items: legacy.items });
  return installed;
}

/**
 * The one rule of which licenses a product's uninstaller gives back (`deactivate --all
 * --product-id`): while other products of the vendor are installed (`products`, from
 * `installedProducts`), only the projects this product's record names and no other product's;
 * once it is the last, every license. Returns why `projectId`'s license is kept, or undefined when
 * it is released.
 *
 * @example
 * licenseKeptFor(installedProducts(folder), 'acme-gain', '2bfd7a59-…'); // 'Acme Reverb, another product of this vendor installed here, uses it'
 */
export function licenseKeptFor(products: readonly ProductRecord[], productId: string, projectId: string): string | undefined {
  const others = products.filter((r) => r.product_id !== productId);
  if (others.length === 0) return undefined;
  const id = projectId.toLowerCase();
  const users = others.filter((r) => r.projects.some((p) => p.projectId === id));
  if (users.length > 0) return `${users.map(productWords).join(' and ')}, another product of this vendor installed here, uses it`;
  const mine = products.find((r) => r.product_id === productId);
  if (mine === undefined || !mine.projects.some((p) => p.projectId === id)) return `not one of this product's plugins, and other products of this vendor are still installed here (${others.map(productWords).join(', ')})`;
  return undefined;
}
