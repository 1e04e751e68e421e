import { join } from 'node:path';
import { EARLIER_PRODUCT_ID, type NamedProject } from '@plugin-license/licensing';
import { emptyRecord, LEGACY_RECORD_NAME, removeFile, writeLegacyRecord, writeProductRecord, type LegacyRecord, type ProductRecord } from './record.js';
import type { ProductOfRun } from './run.js';

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
export async function migrateLegacy(folder: string, legacy: LegacyRecord, records: ProductRecord[], installing: { id: string; shipped: ReadonlySet<string> } | undefined, run: ProductOfRun): Promise<void> {
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
