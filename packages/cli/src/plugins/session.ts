import { join } from 'node:path';
import { acquireFileLock } from '@plugin-license/licensing';
import { CliError, EXIT } from '../exit.js';
import { advice } from './advice.js';
import { settle } from './journal.js';
import { migrateLegacy } from './legacy.js';
import { emptyRecord, LEGACY_RECORD_NAME, readLegacyRecord, readProductRecords, RECORDS_FOLDER, recordPath, removeFile, writeLegacyRecord, writeProductRecord, type ProductRecord } from './record.js';
import { emptyReport, type PluginsReport, type PluginsSetting, type ProductOfRun } from './run.js';
import { makeFolder } from './tree-copy.js';

// A run's session with the records of the program's folder: one run at a time under their lock,
// what earlier runs left settled first, the products' records shared out at the end.

/** Every record of the program's folder, under its lock: the run's product's own, and the others'. */
export interface Records {
  mine: ProductRecord;
  others: ProductRecord[];
  /** The run's product was recorded as installed before this run. */
  recorded: boolean;
}

/**
 * Runs `work` holding the lock of the program's folder's records (one install or uninstall at a
 * time, whatever the product), after settling what an earlier run left in every record and
 * taking over an earlier release's record (`migrateLegacy`).
 */
export async function underLock<T>(setting: PluginsSetting, run: ProductOfRun, installing: ReadonlySet<string> | undefined, work: (records: Records, report: PluginsReport) => Promise<T>): Promise<T> {
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
export async function shareDigests(folder: string, mine: ProductRecord, others: ProductRecord[]): Promise<void> {
  const digests = new Map(mine.items.map((i) => [i.path, i.digest]));
  for (const r of others) {
    if (!r.items.some((i) => digests.has(i.path) && digests.get(i.path) !== i.digest)) continue;
    r.items = r.items.map((i) => (digests.has(i.path) ? { ...i, digest: digests.get(i.path)! } : i));
    await writeProductRecord(folder, r);
  }
}

/** The products of the vendor, other than the run's, that list `path`. */
export const alsoListing = (others: readonly ProductRecord[], path: string): ProductRecord[] => others.filter((r) => r.removed !== true && r.items.some((i) => i.path === path));
