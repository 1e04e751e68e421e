import { EARLIER_PRODUCT_ID } from '@plugin-license/licensing';
import { readAll } from '../products.js';
import type { AnyRecord, RecordedItem } from '../record.js';
import type { PluginsSetting } from '../run.js';
import { digestIfPresent } from '../tree-digest.js';

/** One recorded item as `plugins list` shows it. */
export interface ListedItem extends RecordedItem {
  product_id: string;
  state: 'in place' | 'changed' | 'missing';
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
