import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import { moveAside, removeFileDurably, writeFileAtomic } from '@plugin-license/fs';
import { readCapped, readCappedSync, type CappedRead } from './cache-file.js';

/**
 * Durable intents: before the service is asked to take or release a slot, what is about to be
 * asked (operation, code, machine id) is written here and fsynced. If the process dies, the disk
 * refuses the state write, or the answer never arrives, the intent survives, and the next start
 * settles it with the service (validate: slot held or not) so the local state and the service's
 * slot count agree again. One file per operation, so concurrent processes never clear each
 * other's intents.
 */

export const INTENT_FORMAT = 1;

export const IntentBody = z.strictObject({
  format: z.literal(INTENT_FORMAT),
  op: z.enum(['activate', 'deactivate']),
  projectId: z.string(),
  machineId: z.string(),
  code: z.string().min(1).max(256),
  /** When it was written, epoch ms of the injected clock. */
  at: z.number(),
});
export type IntentBody = z.infer<typeof IntentBody>;

export interface Intent extends IntentBody {
  /** The file that records it. */
  file: string;
}

const NAME = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(activate|deactivate)\.[0-9a-f]+\.json$/;

/** The folder of unfinished intents, beside the cache files. */
export function intentsDir(licensesDir: string): string {
  return join(licensesDir, 'intents');
}

/** Writes an intent durably (temp file, fsync, rename, folder fsync); throws when the disk refuses. */
export async function writeIntent(licensesDir: string, body: IntentBody): Promise<Intent> {
  const file = join(intentsDir(licensesDir), `${body.projectId}.${body.op}.${randomBytes(6).toString('hex')}.json`);
  await writeFileAtomic(file, `${JSON.stringify(body)}\n`);
  return { ...body, file };
}

/** Removes a settled intent durably. */
export async function removeIntent(intent: Pick<Intent, 'file'>): Promise<void> {
  await removeFileDurably(intent.file);
}

/**
 * The unfinished intents of one project, oldest first. A file that is not a valid intent is
 * moved aside (`.invalid-…`) for support and skipped.
 */
export async function readIntents(licensesDir: string, projectId: string): Promise<Intent[]> {
  const dir = intentsDir(licensesDir);
  const intents: Intent[] = [];
  for (const name of await intentNames(dir)) {
    const m = NAME.exec(name);
    if (!m || m[1] !== projectId) continue;
    const file = join(dir, name);
    const read = await readCapped(file);
    if (read.kind === 'missing') continue;
    const body = read.kind === 'text' ? parse(read.text) : undefined;
    if (!body || body.projectId !== projectId || body.op !== m[2]) {
      await moveAside(file).catch(() => undefined);
      continue;
    }
    intents.push({ ...body, file });
  }
  return intents.sort((a, b) => a.at - b.at);
}

/** Project ids with at least one unfinished intent (the agent settles these at start). */
export async function listIntentProjects(licensesDir: string): Promise<string[]> {
  const ids = new Set<string>();
  for (const name of await intentNames(intentsDir(licensesDir))) {
    const m = NAME.exec(name);
    if (m?.[1]) ids.add(m[1]);
  }
  return [...ids].sort();
}

/** How many unfinished intents each project has, read from file names only (inspection writes nothing). */
export async function countIntents(licensesDir: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const name of await intentNames(intentsDir(licensesDir))) {
    const id = NAME.exec(name)?.[1];
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

/**
 * The codes this machine is giving back for one project: its deactivation intents not yet
 * settled (recorded before the service is asked to release, cleared once the outcome is stored).
 * Read only (a garbled file is skipped, not moved), for readers that must not write: `check()`'s
 * first load and `readCachedStatus`. What a pending release means is `whileReleasing`.
 */
export async function pendingReleases(licensesDir: string, projectId: string, machineId: string): Promise<string[]> {
  const dir = intentsDir(licensesDir);
  const codes: string[] = [];
  for (const name of await intentNames(dir)) {
    if (!isReleaseOf(name, projectId)) continue;
    const code = releaseCode(await readCapped(join(dir, name)).catch(() => undefined), projectId, machineId);
    if (code !== undefined) codes.push(code);
  }
  return codes;
}

/** {@link pendingReleases}, synchronously (`check()`'s first load). */
export function pendingReleasesSync(licensesDir: string, projectId: string, machineId: string): string[] {
  const dir = intentsDir(licensesDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const codes: string[] = [];
  for (const name of names) {
    if (!isReleaseOf(name, projectId)) continue;
    let read: CappedRead | undefined;
    try {
      read = readCappedSync(join(dir, name));
    } catch {
      read = undefined;
    }
    const code = releaseCode(read, projectId, machineId);
    if (code !== undefined) codes.push(code);
  }
  return codes;
}

/** The codes of this machine's pending releases among intents already read (a writer's view under the lock). */
export function releasesAmong(intents: readonly Intent[], machineId: string): string[] {
  return intents.filter((i) => i.op === 'deactivate' && i.machineId === machineId).map((i) => i.code);
}

function isReleaseOf(name: string, projectId: string): boolean {
  const m = NAME.exec(name);
  return m !== null && m[1] === projectId && m[2] === 'deactivate';
}

function releaseCode(read: CappedRead | undefined, projectId: string, machineId: string): string | undefined {
  const body = read?.kind === 'text' ? parse(read.text) : undefined;
  return body !== undefined && body.op === 'deactivate' && body.projectId === projectId && body.machineId === machineId ? body.code : undefined;
}

async function intentNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

function parse(text: string): IntentBody | undefined {
  try {
    const parsed = IntentBody.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
