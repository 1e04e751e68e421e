import { unlink } from 'node:fs/promises';
import { isAbsolute } from 'node:path';
import { readSmallFile, writeFileAtomic } from '@plugin-license/licensing';
import { CliError, EXIT } from '../exit.js';
import { PLUGIN_FORMATS, type PluginFormat } from './places.js';

/** The record's file name beside the executable. */
export const RECORD_NAME = 'installed-plugins.json';

/** Far more than any vendor's plugins need; a bigger file is not ours. */
const MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** A Standalone's menu entry is recorded and removed like the plugins. */
export type ItemFormat = PluginFormat | 'menu';

/** Something this installer placed, and its tree digest when placed. */
export interface RecordedItem {
  format: ItemFormat;
  /** The file or folder name (`Acme Gain.vst3`, `acme-audio-acme-gain-1a2b3c4d.desktop`). */
  name: string;
  /** The product it belongs to (`Acme Gain`). */
  product: string;
  path: string;
  digest: string;
}

/**
 * A path a step may leave changed, with every digest it may legitimately hold after the step (the
 * previous version's, the new one's): written before anything is placed, so a run killed at any
 * point is settled by the next (see `settle`).
 */
export interface IntentEntry extends Omit<RecordedItem, 'digest'> {
  digests: string[];
  /** The previous version while it is renamed aside: put back if the new one never arrived. */
  restore?: { from: string; digest: string };
  /**
   * The bundle's code (files a host may have loaded) moved out to hidden names before the bundle
   * itself is moved (see `loadableFiles`): `rel` is its '/'-separated path inside the bundle. Put
   * back while the bundle's swap or removal has not happened; otherwise left over and removed.
   */
  modules?: ModuleMove[];
}

/** One file of a bundle's code moved out of it to a hidden name beside the bundle. */
export interface ModuleMove {
  from: string;
  rel: string;
}

/**
 * A path inside a bundle as a record may name it: relative, '/'-separated, no empty, '.' or '..'
 * part, none once '\\' is read as a separator too (Windows), no drive or stream (':'). A file of
 * a bundle whose path is not of this form is not moved out first (`loadableFiles`).
 */
export function isInsideRel(rel: unknown): rel is string {
  return typeof rel === 'string' && !rel.includes(':') && rel.split(/[/\\]/).every((part) => part !== '' && part !== '.' && part !== '..');
}

/** `installed-plugins.json`: what this installer put where. */
export interface PluginRecord {
  version: 1;
  items: RecordedItem[];
  /** The step under way; absent when none is. */
  intent?: IntentEntry[];
  /**
   * Hidden paths of our own making (`.<name>.new-<pid>`, `.<name>.old-<pid>`), named here before
   * they are created: removed whatever they hold by the next install or uninstall (a loaded
   * Windows DLL kept one from going).
   */
  scratch: string[];
}

export const emptyRecord = (): PluginRecord => ({ version: 1, items: [], scratch: [] });

const unreadable = (file: string, problem: string): CliError =>
  new CliError(EXIT.failed, 'record_unreadable', `the record of installed plugins ${file} ${problem}; nothing was changed. Move it aside to start over (plugins it listed are then left where they are)`, { path: file });

function isItem(v: unknown, withDigest: boolean): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Record<string, unknown>;
  const text = (k: string): boolean => typeof o[k] === 'string' && o[k] !== '';
  const format = [...PLUGIN_FORMATS, 'menu'].includes(o.format as string);
  const digests = withDigest ? text('digest') : Array.isArray(o.digests) && o.digests.every((d) => typeof d === 'string');
  const restore = o.restore === undefined || (typeof o.restore === 'object' && o.restore !== null && typeof (o.restore as Record<string, unknown>).from === 'string' && typeof (o.restore as Record<string, unknown>).digest === 'string');
  const isMove = (m: unknown): boolean => {
    if (typeof m !== 'object' || m === null) return false;
    const { from, rel } = m as Record<string, unknown>;
    return typeof from === 'string' && isAbsolute(from) && isInsideRel(rel);
  };
  const modules = o.modules === undefined || (Array.isArray(o.modules) && o.modules.every(isMove));
  return format && text('name') && text('product') && text('path') && isAbsolute(o.path as string) && digests && restore && modules;
}

/**
 * Reads the record: a regular file (never a link, a FIFO or a device) of bounded size whose
 * contents are a record. None there is an empty record; anything else is an error that changes nothing.
 */
export function readRecord(file: string): PluginRecord {
  const read = readSmallFile(file, MAX_RECORD_BYTES, { followLinks: false });
  if (read.kind === 'missing') return emptyRecord();
  if (read.kind === 'bad') throw unreadable(file, `is ${read.problem}`);
  let v: unknown;
  try {
    v = JSON.parse(read.bytes.toString('utf8'));
  } catch {
    throw unreadable(file, 'is not JSON');
  }
  const o = v as Record<string, unknown>;
  const ok =
    typeof v === 'object' && v !== null && o.version === 1 && Array.isArray(o.items) && o.items.every((i) => isItem(i, true)) &&
    Array.isArray(o.scratch) && o.scratch.every((s) => typeof s === 'string' && isAbsolute(s)) &&
    (o.intent === undefined || (Array.isArray(o.intent) && o.intent.every((i) => isItem(i, false))));
  if (!ok) throw unreadable(file, 'is not a record of installed plugins this version reads');
  return v as PluginRecord;
}

/** Writes the record whole or not at all (the library's atomic writer: a temp file, fsync, rename). */
export async function writeRecord(file: string, record: PluginRecord): Promise<void> {
  const body: PluginRecord = { version: 1, items: record.items, ...(record.intent ? { intent: record.intent } : {}), scratch: record.scratch };
  await writeFileAtomic(file, `${JSON.stringify(body, null, 2)}\n`);
}

export async function removeRecord(file: string): Promise<void> {
  await unlink(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
}
