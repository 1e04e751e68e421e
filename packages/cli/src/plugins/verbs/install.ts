import { join } from 'node:path';
import { CliError, EXIT } from '../../exit.js';
import { desktopEntry, desktopFileName } from '../desktop-entry.js';
import { place, planModules, remove, removalIntent, removalScratch, stillOurs, type Placement, type Removal } from '../moves.js';
import { stepsThenSettle } from '../journal.js';
import { folderOf, insidePlaces } from '../places.js';
import { productWords, writeProductRecord, type IntentEntry, type ProductRecord, type RecordedItem } from '../record.js';
import type { PluginsReport, PluginsSetting, ProductOfRun } from '../run.js';
import { keptName, scratchName } from '../scratch.js';
import { alsoListing, shareDigests, underLock } from '../session.js';
import type { StagedItem } from '../staged.js';
import { digestIfPresent, fileDigest, linkDigest } from '../tree-digest.js';

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
    const { settled, failure } = await stepsThenSettle(
      working,
      async () => {
        for (const p of placements) await place(p, setting, report);
        for (const r of removals) await remove(r, setting, report);
      },
      setting,
      report,
    );
    await writeProductRecord(setting.folder, settled);
    await shareDigests(setting.folder, settled, others);
    return failure === undefined ? { report } : { report, failure };
  });
}
