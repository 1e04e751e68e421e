import { join } from 'node:path';
import { EARLIER_PRODUCT_ID } from '@plugin-license/licensing';
import { emptyRecord, LEGACY_RECORD_NAME, productWords, readLegacyRecord, readProductRecords, type LegacyRecord, type ProductRecord } from './record.js';

// The vendor's products installed here, read only (no lock, nothing written): for `plugins
// products`, `plugins list`, the names the program gives plugins, and which licenses a
// product's uninstaller gives back.

/** The records of the program's folder as they are, read only: the products' (marked removed ones left out) and an earlier release's. */
export function readAll(folder: string): { records: ProductRecord[]; legacy: LegacyRecord | undefined } {
  return { records: readProductRecords(folder).filter((r) => r.removed !== true || r.scratch.length > 0), legacy: readLegacyRecord(join(folder, LEGACY_RECORD_NAME)) };
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
