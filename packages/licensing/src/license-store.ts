import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { lockSync } from 'proper-lockfile';
import {
  probeWritable,
  encodeCache,
  ensureDir,
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
import { acquireFileLock } from './file-lock.js';
import { readIntents, removeIntent, writeIntent, type Intent, type IntentBody } from './intent-file.js';
import type { MachineIdentity } from './machine-id.js';
import { cacheFilePath, ticketPath, type PathOptions } from './paths.js';
import { removeTicket, ticketOf, writeTicket, type TicketContext, type TicketFields } from './ticket.js';

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
  /**
   * Set when the state was stored but its ticket could not be written (`cache_io`, see
   * {@link isTicketError}): the caller adopts the state and reports this.
   */
  ticketError?: LicenseError;
}

/** Where and how the store writes the project's ticket (docs/license-ticket.md); none when acting for another computer. */
export interface TicketSink {
  file: string;
  key: Buffer;
  /** The writer's clock and rules at the moment of the write. */
  context: () => TicketContext;
}

const ticketErrors = new WeakSet<LicenseError>();

/** True for the `cache_io` of a ticket that could not be written while its state was stored. */
export function isTicketError(e: unknown): boolean {
  return e instanceof LicenseError && ticketErrors.has(e);
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
  readonly #ticket: TicketSink | undefined;

  constructor(file: string, identity: CacheIdentity, options: { lockStaleMs: number; ticket?: TicketSink }) {
    this.file = file;
    this.lockPath = `${file}.lock`;
    this.#identity = identity;
    this.#staleMs = Math.max(2000, options.lockStaleMs);
    this.#ticket = options.ticket;
  }

  /** The ticket's path, when this store writes one. */
  get ticketFile(): string | undefined {
    return this.#ticket?.file;
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
        if (again.kind === 'invalid' && again.text === read.text) {
          movedTo = moveAsideSync(this.file);
          // No state, no ticket (the async paths write a cache_invalid one; a hot path only removes it).
          if (movedTo !== null && this.#ticket) rmSync(this.#ticket.file, { force: true });
        }
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
    return this.locked(async () => {
      const again = await readCache(this.file, this.#identity);
      if (again.kind === 'newer') return newer(again.format);
      if (again.kind !== 'invalid') return again;
      const movedTo = await moveAside(this.file);
      // Best effort: a read reports the state; a ticket it can't write is written at the next update.
      await this.#setAsideTicket().catch(() => undefined);
      return { kind: 'invalid', problem: again.problem, movedTo };
    });
  }

  /**
   * Read-modify-write under the lock. The mutator sees the file as it is now (a bad one is moved
   * aside and seen as null), so writers in other processes never lose each other's updates.
   */
  async update(mutator: Mutator): Promise<StoreUpdate> {
    return this.locked(() => this.updateHeld(mutator));
  }

  /** {@link read} for a caller that already holds the lock ({@link locked}): a bad file is moved aside now. */
  async readHeld(): Promise<StoreRead> {
    const read = await readCache(this.file, this.#identity);
    if (read.kind === 'newer') return newer(read.format);
    if (read.kind !== 'invalid') return read;
    const movedTo = await moveAside(this.file);
    await this.#setAsideTicket().catch(() => undefined);
    return { kind: 'invalid', problem: read.problem, movedTo };
  }

  /** {@link update} for a caller that already holds the lock ({@link locked}). */
  async updateHeld(mutator: Mutator): Promise<StoreUpdate> {
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
    let ticketError: LicenseError | undefined;
    if (next === null) {
      // Deactivated or released: the ticket says "not activated" (what the agent answers for a
      // project with no state), so a plugin knows it without the agent instead of playing through
      // an unknown. It goes first: killed in between, no valid ticket outlives the state.
      ticketError = await this.#putTicket(this.#ticket ? ticketOf(null, this.#ticket.context()) : null);
      if (current !== null) await removeFileDurably(this.file);
      license = null;
    } else if (next !== undefined) {
      license = { ...next, revision: (current?.revision ?? 0) + 1 };
      // A ticket that grants less than before (invalid) goes before the state, one that grants
      // after it: killed in between, a plugin is never licensed by a state no longer stored.
      const ticket = this.#ticket ? ticketOf(license, this.#ticket.context()) : undefined;
      if (ticket?.valid === false) ticketError = await this.#putTicket(ticket);
      await writeFileAtomic(this.file, encodeCache(this.#identity, license));
      await sweepTempFiles(this.file);
      if (ticket?.valid === true) ticketError = await this.#putTicket(ticket);
    } else if (invalid !== undefined && current === null) {
      ticketError = await this.#setAsideTicket().then(
        () => undefined,
        (e: unknown) => this.#ticketError(e),
      );
    }
    return { license, ...(invalid ? { invalid } : {}), ...(ticketError ? { ticketError } : {}) };
  }

  /** Writes (or with null removes) the ticket; a failure is returned as `cache_io`, never thrown. */
  async #putTicket(fields: TicketFields | null): Promise<LicenseError | undefined> {
    const sink = this.#ticket;
    if (!sink) return undefined;
    try {
      if (fields === null) {
        await removeTicket(sink.file);
      } else {
        await writeTicket(sink.file, sink.key, fields);
        await sweepTempFiles(sink.file);
      }
      return undefined;
    } catch (e) {
      return this.#ticketError(e);
    }
  }

  /** The state was set aside as invalid: the ticket says so (a known "not licensed", cache_invalid). */
  async #setAsideTicket(): Promise<void> {
    const sink = this.#ticket;
    if (!sink) return;
    await writeTicket(sink.file, sink.key, ticketOf(null, sink.context(), true));
  }

  #ticketError(e: unknown): LicenseError {
    const file = (this.#ticket as TicketSink).file;
    // A folder the readers would not trust (writeTicket refused it) says itself what to do.
    const refused = e instanceof LicenseError;
    const err = ioError(
      e,
      file,
      `the license state was stored, but its ticket ${file} could not be written`,
      `plugins cannot read the license without the agent until it is${refused ? '' : '; make the folder writable or free some space'}`,
    );
    ticketErrors.add(err);
    return err;
  }

  /**
   * Records what is about to be asked of the service, durably, before it is asked. Fails at once
   * (no retries) with `cache_io` when the disk refuses: then nothing may be asked.
   */
  async recordIntent(op: IntentBody['op'], code: string, at: number): Promise<Intent> {
    const dir = dirname(this.file);
    try {
      return await writeIntent(dir, { format: 1, op, projectId: this.#identity.projectId, machineId: this.#identity.machineId, code, at });
    } catch (e) {
      throw ioError(e, dir, `could not record the ${op === 'activate' ? 'activation' : 'deactivation'} in ${dir} before asking the service`, 'nothing was asked of the service; make the folder writable or free some space, then try again');
    }
  }

  /**
   * Proves, before the service is asked to take a slot, that the state can be stored where it will
   * be: a slot taken for a state no file can hold would be taken in vain. Fails with `cache_io`.
   */
  async probeWritable(): Promise<void> {
    try {
      await probeWritable(this.file, 4096);
    } catch (e) {
      const dir = dirname(this.file);
      throw ioError(e, dir, `could not write in ${dir}, where the license is stored`, 'nothing was asked of the service; make the folder writable or free some space, then try again');
    }
  }

  /** Unfinished intents of this project (left by a process that died or a write the disk refused). */
  async intents(): Promise<Intent[]> {
    const dir = dirname(this.file);
    try {
      return await readIntents(dir, this.#identity.projectId);
    } catch (e) {
      throw ioError(e, dir, `could not read the unfinished operations in ${dir}`, 'check the permissions of the folder');
    }
  }

  /** Forgets a settled intent. Best effort: one left behind is settled again, harmlessly. */
  async clearIntent(intent: Intent): Promise<void> {
    await removeIntent(intent).catch(() => undefined);
  }

  /**
   * Runs `fn` holding the cache's cross-process lock (the offline exchange keeps its pending
   * requests under it too). A file-system failure inside becomes `cache_io`; a LicenseError
   * passes as it is.
   */
  async locked<T>(fn: () => Promise<T>): Promise<T> {
    let release: () => Promise<void>;
    try {
      await ensureDir(dirname(this.file));
      release = await acquireFileLock(this.file, { lockPath: this.lockPath, staleMs: this.#staleMs });
    } catch (e) {
      throw ioError(e, this.file, `could not lock the license cache ${this.file}`, 'check that the folder is writable');
    }
    try {
      return await fn();
    } catch (e) {
      if (e instanceof LicenseError) throw e;
      throw ioError(e, this.file, `could not update the license cache ${this.file}`, 'check free space and permissions');
    } finally {
      await release().catch(() => undefined);
    }
  }

  #guard(fn: () => CacheRead): CacheRead {
    try {
      return fn();
    } catch (e) {
      throw ioError(e, this.file, `could not read the license cache ${this.file}`, 'check permissions');
    }
  }

  async #guardAsync(fn: () => Promise<CacheRead>): Promise<CacheRead> {
    try {
      return await fn();
    } catch (e) {
      throw ioError(e, this.file, `could not read the license cache ${this.file}`, 'check permissions');
    }
  }
}

/** What the ticket's writer needs from the caller at the moment of a write. */
export type TicketClock = () => Omit<TicketContext, 'app' | 'projectId'>;

/**
 * The store of one project's cache file on this machine: what `License` and the offline exchange
 * both open. With `ticket` and an identity of this computer, every update writes the project's
 * ticket in the same step; acting for another computer (a caller's id that is not this one's)
 * writes none.
 */
export function openProjectStore(projectId: string, identity: MachineIdentity, where: PathOptions, lockStaleMs: number, ticket?: TicketClock): LicenseStore {
  const id = projectId.toLowerCase();
  const sink: TicketSink | undefined =
    ticket && identity.local
      ? { file: ticketPath(where, id), key: identity.ticketKey, context: () => ({ ...ticket(), app: identity.namespace, projectId: id }) }
      : undefined;
  return new LicenseStore(cacheFilePath(id, where), { projectId: id, machineId: identity.id, cacheKey: identity.cacheKey }, { lockStaleMs, ...(sink ? { ticket: sink } : {}) });
}

/** A file-system failure as `cache_io`, with the system's code (EACCES, ENOSPC, …) and the path. */
function ioError(e: unknown, path: string, what: string, next: string): LicenseError {
  // A LicenseError's code is the library's (cache_io), not the system's: its words say why.
  const systemCode = e instanceof LicenseError ? e.systemCode : (e as NodeJS.ErrnoException | undefined)?.code;
  const why = typeof systemCode === 'string' ? systemCode : ((e as Error | undefined)?.message ?? String(e));
  return new LicenseError('cache_io', `${what} (${why}); ${next}`, { cause: e, path, ...(typeof systemCode === 'string' ? { systemCode } : {}) });
}

function newer(format: number): StoreRead {
  return { kind: 'invalid', problem: `written by a newer version of this library (format ${format}); left in place`, movedTo: null };
}

