import { rename, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from '../exit.js';
import { advice } from './advice.js';
import { loadableFiles } from './loadable.js';
import { isInsideRel, type IntentEntry, type ItemFormat, type ModuleMove, type RecordedItem } from './record.js';
import type { PluginsReport, PluginsSetting } from './run.js';
import { scratchName } from './scratch.js';
import { copyTree, exists, makeFolder, removeTree } from './tree-copy.js';
import { digestIfPresent } from './tree-digest.js';

// The moves of one run on the disk: an item placed whole (a copy beside it, checked, swapped), a
// bundle moved code first, an item removed; each puts back what it moved when it fails. What a
// removal may leave is said by removalIntent and removalScratch, for the intent written first.

/** What an item placed is made from: a staged item, or a menu entry we write. */
export type Content = { kind: 'tree'; source: string } | { kind: 'file'; text: string } | { kind: 'link'; target: string };

export interface Placement {
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

export interface Removal {
  item: RecordedItem;
  aside: string;
  modules: ModuleMove[];
}

/** Hidden names for the code of the bundle at `path` ({@link loadableFiles}), to move it out before the bundle. */
export async function planModules(path: string, taken: Set<string>): Promise<ModuleMove[]> {
  const moves: ModuleMove[] = [];
  for (const rel of await loadableFiles(path)) if (isInsideRel(rel)) moves.push({ from: await scratchName(path, 'old', taken), rel });
  return moves;
}

export const inside = (bundle: string, rel: string): string => join(bundle, ...rel.split('/'));

/** Puts moved-out code back into the bundle at `bundle` where its place is free; best effort (what stays is left over). */
export async function putBack(bundle: string, modules: readonly ModuleMove[]): Promise<void> {
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

/** Places the content of `p` at its hidden fresh name. */
async function materialize(p: Placement): Promise<void> {
  if (p.content.kind === 'tree') await copyTree(p.content.source, p.fresh);
  else if (p.content.kind === 'file') await writeFile(p.fresh, p.content.text, { flag: 'wx', mode: 0o644 });
  else await symlink(p.content.target, p.fresh);
}

/** Puts one item in place whole: a copy beside it under a hidden name, checked, then swapped; the old one removed (or left hidden when in use). */
export async function place(p: Placement, setting: PluginsSetting, report: PluginsReport): Promise<void> {
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
export async function remove(r: Removal, setting: PluginsSetting, report: PluginsReport): Promise<void> {
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
export const removalIntent = (r: Removal): IntentEntry => ({ format: r.item.format, name: r.item.name, product: r.item.product, path: r.item.path, digests: [r.item.digest], ...(r.modules.length ? { modules: r.modules } : {}) });
/** The hidden names a removal may create. */
export const removalScratch = (r: Removal): string[] => [r.aside, ...r.modules.map((m) => m.from)];

/** Whether a recorded item is still exactly as installed; otherwise why it is left alone. */
export async function stillOurs(item: RecordedItem): Promise<{ ours: true } | { ours: false; gone: boolean; reason: string }> {
  const found = await digestIfPresent(item.path);
  if (found.kind === 'missing') return { ours: false, gone: true, reason: 'already gone' };
  if (found.kind === 'digest' && found.digest === item.digest) return { ours: true };
  return { ours: false, gone: false, reason: 'changed since it was installed (your own edit, or another program put its own there), so it was left in place' };
}
