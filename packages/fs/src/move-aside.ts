import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { syncDir } from './durable.js';
import { renameRetrying, renameRetryingSync } from './rename-retry.js';

/** `<name>.invalid-<time>-<random>`: never the name of another file moved aside, even in the same millisecond. */
function asideName(file: string): string {
  return `${file}.invalid-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
}

/**
 * Moves a bad file aside (`<name>.invalid-<time>-<random>`) for support to inspect, never
 * deleting it; returns the new path, or null when the file is already gone.
 *
 * @example
 * const kept = await moveAside(cacheFile); // '/…/licenses/1f0e….json.invalid-2025-01-31T10-00-00-000Z-a1b2c3'
 */
export async function moveAside(file: string): Promise<string | null> {
  const target = asideName(file);
  try {
    await renameRetrying(file, target);
    await syncDir(dirname(file));
    return target;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * The synchronous form of {@link moveAside} (a first `check()`, the machine id).
 *
 * @example
 * moveAsideSync(secretFile);
 */
export function moveAsideSync(file: string): string | null {
  const target = asideName(file);
  try {
    renameRetryingSync(file, target);
    return target;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}
