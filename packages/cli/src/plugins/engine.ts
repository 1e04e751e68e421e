import { lstat, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { acquireFileLock } from '@plugin-license/licensing';
import { CliError, EXIT } from '../exit.js';
import { desktopEntry, desktopFileName } from './desktop-entry.js';
import type { PluginPlaces } from './places.js';
import { loadableFiles } from './loadable.js';
import { emptyRecord, isInsideRel, readRecord, removeRecord, writeRecord, type IntentEntry, type ItemFormat, type ModuleMove, type PluginRecord, type RecordedItem } from './record.js';
import type { StagedItem } from './staged.js';
import { copyTree, makeFolder, removeTree } from './tree-copy.js';
import { digestIfPresent, fileDigest, linkDigest } from './tree-digest.js';

/** Where a run works: the places of this user, the record, and the vendor (for menu entry names). */
export interface PluginsSetting {
  places: PluginPlaces;
  record: string;
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
}

const emptyReport = (): PluginsReport => ({ installed: [], removed: [], kept: [], leftovers: [] });

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
 * Brings the record in line with the disk after a step (finished, failed, or killed at any point
 * by a run before this one): each path the step named holds one of the digests it may
 * legitimately have (recorded as ours with that digest), or nothing while the previous version
 * is still renamed aside (put back), or something else (not ours: left alone, no longer
 * recorded). Then every hidden name of ours is removed, whatever it holds; one a program keeps
 * open stays listed for the next run. Never touches a path the record does not name.
 */
async function settle(record: PluginRecord, places: PluginPlaces, report: PluginsReport): Promise<PluginRecord> {
  const items = new Map(record.items.map((i) => [i.path, i]));
  for (const entry of record.intent ?? []) {
    if (!insidePlaces(places, entry.path)) continue;
    const modules = (entry.modules ?? []).filter((m) => insidePlaces(places, m.from) && basename(m.from).startsWith('.') && isInsideRel(m.rel));
    if (modules.length > 0) {
      // Code moved out of a bundle whose move never happened (still at its path, incomplete) or was
      // undone (aside, to be put back): it goes back in. After a swap or a removal it is left over.
      const at = await digestIfPresent(entry.path);
      if (at.kind === 'digest' && !entry.digests.includes(at.digest)) await putBack(entry.path, modules);
      else if (at.kind === 'missing' && entry.restore !== undefined && insidePlaces(places, entry.restore.from) && (await exists(entry.restore.from))) await putBack(entry.restore.from, modules);
    }
    let found = await digestIfPresent(entry.path);
    if (found.kind === 'missing' && entry.restore !== undefined && insidePlaces(places, entry.restore.from)) {
      const aside = await digestIfPresent(entry.restore.from);
      if (aside.kind === 'digest' && aside.digest === entry.restore.digest) {
        await rename(entry.restore.from, entry.path);
        found = aside;
      }
    }
    const { digests: _d, restore: _r, modules: _m, ...item } = entry;
    if (found.kind === 'digest' && entry.digests.includes(found.digest)) items.set(entry.path, { ...item, digest: found.digest });
    else items.delete(entry.path);
  }
  const scratch: string[] = [];
  for (const path of record.scratch) {
    if (!insidePlaces(places, path) || !basename(path).startsWith('.')) continue;
    try {
      await removeTree(path);
    } catch {
      // A Windows DLL a host has loaded cannot go yet: the next install or uninstall tries again.
      scratch.push(path);
      if (!report.leftovers.includes(path)) report.leftovers.push(path);
    }
  }
  return { version: 1, items: [...items.values()], scratch };
}

/**
 * A lock whose holder's process is gone (a run killed mid-way: the installer closed, a power cut
 * while the OS kept the disk) is removed, so the next run starts at once rather than after the
 * lock goes stale. A holder that is alive, or unknown, is left to the lock's own rules.
 */
async function takeOverFromTheDead(lockPath: string): Promise<void> {
  const pid = Number((await readFile(`${lockPath}-pid`, 'utf8').catch(() => '')).trim());
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !(await exists(lockPath))) return;
  try {
    process.kill(pid, 0);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') return;
  }
  await rm(lockPath, { recursive: true, force: true }).catch(() => undefined);
  await rm(`${lockPath}-pid`, { force: true }).catch(() => undefined);
}

/** Runs `work` holding the record's lock (one install or uninstall at a time), after settling what an earlier run left. */
async function underLock<T>(setting: PluginsSetting, work: (record: PluginRecord, report: PluginsReport) => Promise<T>): Promise<T> {
  await makeFolder(dirname(setting.record)).catch((e: NodeJS.ErrnoException) => {
    throw new CliError(EXIT.failed, 'record_unwritable', `cannot create the folder of the record ${setting.record} (${e.code}): ${advice(e)}`, { path: setting.record });
  });
  const lockPath = `${setting.record}.lock`;
  await takeOverFromTheDead(lockPath);
  let release: () => Promise<void>;
  try {
    release = await acquireFileLock(setting.record, { lockPath, staleMs: 10_000 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new CliError(EXIT.failed, code === 'ELOCKED' ? 'busy' : 'record_unwritable', code === 'ELOCKED' ? `another install or uninstall of these plugins is running (${lockPath}); wait for it to end and run again` : `cannot lock ${setting.record} (${code}): ${advice(e as NodeJS.ErrnoException)}`, { path: setting.record });
  }
  // Who holds the lock, so a run after a crash takes it over at once instead of waiting for it to go stale.
  await writeFile(`${lockPath}-pid`, `${process.pid}\n`).catch(() => undefined);
  const unlock = release;
  release = async () => {
    await rm(`${lockPath}-pid`, { force: true }).catch(() => undefined);
    await unlock();
  };
  try {
    const report = emptyReport();
    const before = readRecord(setting.record);
    const record = before.intent !== undefined || before.scratch.length > 0 ? await settle(before, setting.places, report) : before;
    if (record !== before) await writeRecord(setting.record, record);
    return await work(record, report);
  } finally {
    await release();
  }
}

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
 * `plugins install --from DIR`: every staged item into its place, whole; items an earlier install
 * recorded that this one no longer ships removed (when still exactly as installed); the record
 * written before anything is placed and again after. A same-named item that is not ours in a
 * plug-in folder is kept under `<name>.kept-<time>` (hosts do not scan it) and said; beside the
 * executable (the installer's own folder) it stops the install before anything is placed.
 * Returns the report, and the failure that stopped it part-way, if one did.
 */
export async function installPlugins(staged: StagedItem[], setting: PluginsSetting): Promise<{ report: PluginsReport; failure?: CliError }> {
  return underLock(setting, async (record, report) => {
    const recorded = new Map(record.items.map((i) => [i.path, i]));
    const taken = new Set<string>();
    const planned: Array<Omit<Placement, 'fresh'>> = [];
    for (const item of staged) {
      const target = join(folderOf(setting.places, item.format), item.name);
      if (item.format === 'standalone' && (item.name === basename(setting.record) || item.name.startsWith(`${basename(setting.record)}.`))) {
        throw new CliError(EXIT.usage, 'usage', `the Standalone ${item.name} would take the record's name beside the executable; rename it`);
      }
      planned.push({ format: item.format, name: item.name, product: item.product, target, content: { kind: 'tree', source: item.source }, digest: item.digest });
      if (item.format === 'standalone') {
        const menu = menuPlacement(setting, item, target);
        if (menu) planned.push(menu);
      }
    }
    const placements: Placement[] = [];
    for (const p of planned) {
      const found = await digestIfPresent(p.target);
      const mine = recorded.get(p.target);
      const placement: Placement = { ...p, fresh: await scratchName(p.target, 'new', taken) };
      if (found.kind === 'digest' && mine !== undefined && found.digest === mine.digest) {
        if (found.digest === p.digest) {
          report.installed.push({ format: p.format, name: p.name, product: p.product, path: p.target, replaced: false, unchanged: true });
          continue;
        }
        placement.previous = found.digest;
        placement.aside = await scratchName(p.target, 'old', taken);
        placement.modules = await planModules(p.target, taken);
      } else if (found.kind !== 'missing') {
        const reason = mine !== undefined ? `${p.name} was changed since it was installed` : `${p.name} was already there, not put there by this installer`;
        if (p.format === 'standalone') {
          throw new CliError(EXIT.failed, 'not_ours', `${reason}: ${p.target}; nothing was placed. Move it away (it is not one of these plugins' files) and run the installer again`, { path: p.target });
        }
        placement.keepAs = { path: await keptName(p.target, setting.now()), reason: `${reason}; kept under this name, which music software does not load (remove it when you no longer need it)` };
      }
      placements.push(placement);
    }
    const shipped = new Set(planned.map((p) => p.target));
    const removals: Removal[] = [];
    const items: RecordedItem[] = [];
    for (const item of record.items) {
      if (shipped.has(item.path)) {
        items.push(item);
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
    const working: PluginRecord = {
      version: 1,
      items,
      intent,
      scratch: [...record.scratch, ...placements.flatMap((p) => [p.fresh, ...(p.aside ? [p.aside] : []), ...(p.modules ?? []).map((m) => m.from)]), ...removals.flatMap(removalScratch)],
    };
    await writeRecord(setting.record, working);
    setting.step('intent');
    let failure: CliError | undefined;
    try {
      for (const p of placements) await place(p, setting, report);
      for (const r of removals) await remove(r, setting, report);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      failure = e;
    }
    const settled = await settle(working, setting.places, { ...report, leftovers: [] });
    report.leftovers = settled.scratch;
    await writeRecord(setting.record, settled);
    return failure === undefined ? { report } : { report, failure };
  });
}

/**
 * `plugins uninstall`: removes exactly what the record lists, where it is still exactly what was
 * installed (a same-named item it did not put there, or one changed since, is left and said);
 * then removes the record (kept only while a hidden leftover a program holds open remains).
 */
export async function uninstallPlugins(setting: PluginsSetting): Promise<{ report: PluginsReport; failure?: CliError; recordFound: boolean }> {
  const recordFound = (await digestIfPresent(setting.record)).kind !== 'missing';
  if (!recordFound) return { report: emptyReport(), recordFound };
  return underLock(setting, async (record, report) => {
    const taken = new Set<string>();
    const removals: Removal[] = [];
    for (const item of record.items) {
      const state = await stillOurs(item);
      if (!state.ours) {
        if (!state.gone) report.kept.push({ path: item.path, reason: state.reason });
      } else if (!insidePlaces(setting.places, item.path)) report.kept.push({ path: item.path, reason: "not in this user's plug-in folders, so it was left in place" });
      else removals.push({ item, aside: await scratchName(item.path, 'old', taken), modules: await planModules(item.path, taken) });
    }
    const working: PluginRecord = {
      version: 1,
      items: removals.map((r) => r.item),
      intent: removals.map(removalIntent),
      scratch: [...record.scratch, ...removals.flatMap(removalScratch)],
    };
    await writeRecord(setting.record, working);
    setting.step('intent');
    let failure: CliError | undefined;
    try {
      for (const r of removals) await remove(r, setting, report);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      failure = e;
    }
    const settled = await settle(working, setting.places, { ...report, leftovers: [] });
    report.leftovers = settled.scratch;
    if (settled.items.length === 0 && settled.scratch.length === 0) await removeRecord(setting.record);
    else await writeRecord(setting.record, settled);
    return { report, recordFound, ...(failure ? { failure } : {}) };
  });
}

/** One recorded item as `plugins list` shows it. */
export interface ListedItem extends RecordedItem {
  state: 'in place' | 'changed' | 'missing';
}

/** `plugins list`: the record and whether each item is still as installed. Reads only: no lock, no sweep, nothing written. */
export async function listPlugins(setting: Pick<PluginsSetting, 'record'>): Promise<{ items: ListedItem[]; interrupted: boolean; leftovers: string[]; recordFound: boolean }> {
  const recordFound = (await digestIfPresent(setting.record).catch(() => ({ kind: 'unusual' as const }))).kind !== 'missing';
  const record = recordFound ? readRecord(setting.record) : emptyRecord();
  const items: ListedItem[] = [];
  for (const item of record.items) {
    const found = await digestIfPresent(item.path);
    items.push({ ...item, state: found.kind === 'missing' ? 'missing' : found.kind === 'digest' && found.digest === item.digest ? 'in place' : 'changed' });
  }
  return { items, interrupted: record.intent !== undefined, leftovers: record.scratch, recordFound };
}

