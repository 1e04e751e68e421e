import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { CliError } from '../../exit.js';
import { planModules, remove, removalIntent, removalScratch, stillOurs, type Removal } from '../moves.js';
import { stepsThenSettle } from '../journal.js';
import { insidePlaces } from '../places.js';
import { LEGACY_RECORD_NAME, productWords, RECORDS_FOLDER, recordPath, removeFile, writeProductRecord, type ProductRecord } from '../record.js';
import { emptyReport, type PluginsReport, type PluginsSetting, type ProductOfRun } from '../run.js';
import { scratchName } from '../scratch.js';
import { alsoListing, underLock } from '../session.js';
import { exists } from '../tree-copy.js';

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
    const { settled, failure } = await stepsThenSettle(
      working,
      async () => {
        for (const r of removals) await remove(r, setting, report);
      },
      setting,
      report,
    );
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
