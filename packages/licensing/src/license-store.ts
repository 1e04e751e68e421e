import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { lock, lockSync } from 'proper-lockfile';
import {
  encodeCache,
  moveAside,
  moveAsideSync,
  readCache,
  readCacheSync,
  removeFileDurably,
  sweepTempFiles,
  writeFileAtomic,
  type CacheIdentity,
  type CacheRead,
  type StoredLicense,
} from './cache-file.js';
import { LicenseError } from './errors.js';

/** What a read of the store found; a bad file has been moved aside when `movedTo` is set. */
export type StoreRead =
  | { kind: 'missing' }
  | { kind: 'ok'; license: StoredLicense }
  | { kind: 'invalid'; problem: string; movedTo: string | null };

/** `undefined`: leave the file as it is; `null`: delete it; a state: write it (the store sets `revision`). */
export type Mutator = (current: StoredLicense | null) => StoredLicense | null | undefined;

export interface StoreUpdate {
  license: StoredLicense | null;
  /** Set when the file was bad before this update (and has been moved aside). */
  invalid?: { problem: string; movedTo: string | null };
}

/**
 * One project's cache file: lock-free reads (writes are atomic renames), read-modify-write under
 * a cross-process lock (proper-lockfile; a stale lock of a dead holder is taken over), and bad
 * files moved aside for support instead of deleted.
 */
export class LicenseStore {
  readonly file: string;
  readonly lockPath: string;
  readonly #identity: CacheIdentity;
  readonly #staleMs: number;

  constructor(file: string, identity: CacheIdentity, options: { lockStaleMs: number }) {
    this.file = file;
    this.lockPath = `${file}.lock`;
    this.#identity = identity;
    this.#staleMs = Math.max(2000, options.lockStaleMs);
  }

  /** Sync read for `check()`: a bad file is moved aside only when the lock is free right now. */
  readSync(): StoreRead {
    const read = this.#guard(() => readCacheSync(this.file, this.#identity));
    if (read.kind === 'newer') return newer(read.format);
    if (read.kind !== 'invalid') return read;
    let movedTo: string | null = null;
    try {
      const release = lockSync(this.file, { realpath: false, lockfilePath: this.lockPath, stale: this.#staleMs, onCompromised: () => undefined });
      try {
        const again = readCacheSync(this.file, this.#identity);
        if (again.kind === 'invalid' && again.text === read.text) movedTo = moveAsideSync(this.file);
      } finally {
        release();
      }
    } catch {
      // A writer holds the lock: report cache_invalid now; the next async read moves the file.
    }
    return { kind: 'invalid', problem: read.problem, movedTo };
  }

  async read(): Promise<StoreRead> {
    const read = await this.#guardAsync(() => readCache(this.file, this.#identity));
    if (read.kind === 'newer') return newer(read.format);
    if (read.kind !== 'invalid') return read;
    return this.#locked(async () => {
      const again = await readCache(this.file, this.#identity);
      if (again.kind === 'newer') return newer(again.format);
      if (again.kind !== 'invalid') return again;
      return { kind: 'invalid', problem: again.problem, movedTo: await moveAside(this.file) };
    });
  }

  /**
   * Read-modify-write under the lock. The mutator sees the file as it is now (a bad one is moved
   * aside and seen as null), so writers in other processes never lose each other's updates.
   */
  async update(mutator: Mutator): Promise<StoreUpdate> {
    return this.#locked(async () => {
      const read = await readCache(this.file, this.#identity);
      let current: StoredLicense | null = null;
      let invalid: StoreUpdate['invalid'];
      if (read.kind === 'ok') current = read.license;
      else if (read.kind === 'invalid') invalid = { problem: read.problem, movedTo: await moveAside(this.file) };
      else if (read.kind === 'newer') {
        throw new LicenseError('cache_io', `the license cache ${this.file} was written by a newer version of this library (format ${read.format}); update the application`);
      }
      const next = mutator(current);
      let license: StoredLicense | null = current;
      if (next === null) {
        if (current !== null) await removeFileDurably(this.file);
        license = null;
      } else if (next !== undefined) {
        license = { ...next, revision: (current?.revision ?? 0) + 1 };
        await writeFileAtomic(this.file, encodeCache(this.#identity, license));
        await sweepTempFiles(this.file);
      }
      return invalid ? { license, invalid } : { license };
    });
  }

  async #locked<T>(fn: () => Promise<T>): Promise<T> {
    let release: () => Promise<void>;
    try {
      await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
      release = await lock(this.file, {
        realpath: false,
        lockfilePath: this.lockPath,
        stale: this.#staleMs,
        // Enough attempts to outwait the stale time of a holder that died.
        retries: { retries: Math.ceil((this.#staleMs * 2) / 100) + 20, factor: 1.3, minTimeout: 5, maxTimeout: 100, randomize: true },
        onCompromised: () => undefined,
      });
    } catch (e) {
      throw new LicenseError('cache_io', `could not lock the license cache ${this.file} (${(e as Error).message}); check that the folder is writable`, { cause: e });
    }
    try {
      return await fn();
    } catch (e) {
      if (e instanceof LicenseError) throw e;
      throw new LicenseError('cache_io', `could not update the license cache ${this.file} (${(e as Error).message}); check free space and permissions`, { cause: e });
    } finally {
      await release().catch(() => undefined);
    }
  }

  #guard(fn: () => CacheRead): CacheRead {
    try {
      return fn();
    } catch (e) {
      throw new LicenseError('cache_io', `could not read the license cache ${this.file} (${(e as Error).message}); check permissions`, { cause: e });
    }
  }

  async #guardAsync(fn: () => Promise<CacheRead>): Promise<CacheRead> {
    try {
      return await fn();
    } catch (e) {
      throw new LicenseError('cache_io', `could not read the license cache ${this.file} (${(e as Error).message}); check permissions`, { cause: e });
    }
  }
}

function newer(format: number): StoreRead {
  return { kind: 'invalid', problem: `written by a newer version of this library (format ${format}); left in place`, movedTo: null };
}

