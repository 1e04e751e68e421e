import { rename } from 'node:fs/promises';
import { CliError } from '../exit.js';
import { isInsideRel, isOwnScratch, type AnyRecord } from './record.js';
import { putBack } from './moves.js';
import { insidePlaces, type PluginPlaces } from './places.js';
import type { PluginsReport, PluginsSetting } from './run.js';
import { exists, removeTree } from './tree-copy.js';
import { digestIfPresent } from './tree-digest.js';

// The recovery of a record's journal: what a run named before its steps (the intent) against
// what the disk holds now, whether the run finished, failed, or was killed at any point.

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
export async function settle<R extends AnyRecord>(record: R, places: PluginPlaces, report: PluginsReport): Promise<R> {
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

/**
 * Runs a run's steps once its intent is on disk, then settles the record against the disk
 * whatever happened: a step that failed with words ({@link CliError}) stops the rest and is
 * returned as the failure; any other error is thrown. The report's leftovers are what the
 * settled record still lists.
 */
export async function stepsThenSettle<R extends AnyRecord>(working: R, steps: () => Promise<void>, setting: PluginsSetting, report: PluginsReport): Promise<{ settled: R; failure?: CliError }> {
  let failure: CliError | undefined;
  try {
    await steps();
  } catch (e) {
    if (!(e instanceof CliError)) throw e;
    failure = e;
  }
  const settled = await settle(working, setting.places, { ...report, leftovers: [], ignored: [] });
  report.leftovers = settled.scratch;
  return failure === undefined ? { settled } : { settled, failure };
}
