import type { NamedProject } from '@plugin-license/licensing';
import type { PluginPlaces } from './places.js';
import type { ItemFormat } from './record.js';

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

/** A report with nothing in it yet. */
export const emptyReport = (): PluginsReport => ({ installed: [], removed: [], kept: [], leftovers: [], ignored: [] });

/** The product a run is for: its id, its name (null: an earlier release's plugins), the plugin names it brings. */
export interface ProductOfRun {
  id: string;
  name: string | null;
  projects: NamedProject[];
}
