import { existsSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { lockSync } from 'proper-lockfile';
import { ensureDir, moveAside, moveAsideSync, probeWritable, removeFileDurably, sweepTempFiles, writeFileAtomic } from '@plugin-license/fs';
import { encodeCache, readCache, readCacheSync, type CacheIdentity, type CacheRead, type StoredLicense } from './cache-file.js';
import { LicenseError } from './errors.js';
import { acquireFileLock } from './file-lock.js';
import { pendingReleases, pendingReleasesSync, readIntents, releasesAmong, removeIntent, writeIntent, type Intent, type IntentBody } from './intent-file.js';
import type { MachineIdentity } from './machine-id.js';
import { cacheFilePath, signedTicketPath, ticketPath, type PathOptions } from './paths.js';
import { readSignedTicketFile } from './signed-ticket.js';
import type { SmallFileRead } from './small-file.js';
import { whileReleasing } from './status-rules.js';
import { removeTicket, ticketOf, writeTicket, writeTicketFile, type TicketContext, type TicketFields } from './ticket.js';

/** What a read of the store found; a bad file has been moved aside when `movedTo` is set. */
export type StoreRead =
  | { kind: 'missing' }
  | { kind: 'ok'; license: StoredLicense; releasing: string[] }
  | { kind: 'invalid'; problem: string; movedTo: string | null };

/** `undefined`: leave the file as it is; `null`: delete it; a state: write it (the store sets `revision`). */
export type Mutator = (current: StoredLicense | null) => StoredLicense | null | undefined;

export interface StoreUpdate {
  license: StoredLicense | null;
  /** The codes this machine is giving back (see `whileReleasing`), as the ticket was written with them. */
  releasing: string[];
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
  /** The signed ticket beside it (`DATA/tickets/ID.signed`): stored byte for byte, never made here. */
  signedFile: string;
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
 * A durable step of a write, named for a test that kills the process right after it (the CLI's
 * `PLUGIN_LICENSE_TEST_KILL_AT`): `intent-recorded`, `ticket-written`, `state-written`,
 * `state-removed`, `intent-cleared`, `release-answered` (the service answered a release), the
 * offline release's `release-proof-written`, and the signed ticket's `signed-written` and
 * `signed-removed` (only when there was one to remove).
 */
export type WriteStep = 'intent-recorded' | 'ticket-written' | 'signed-written' | 'signed-removed' | 'state-written' | 'state-removed' | 'intent-cleared' | 'release-answered' | 'release-proof-written';

/** What an update does besides the mutation. */
export interface UpdateOptions {
  /**
   * The intent this update settles: the state and ticket are written as if it were gone, then it
   * is removed (under the lock). With a mutator that changes nothing, the ticket is still written
   * again from the state (a release that did not happen gives the ticket back its grant).
   */
  settles?: Intent;
  /**
   * Every pending release of this code is settled by this update, as `settles` is: the offline
   * release once its proof exists and the state is gone; an offline import, a grant for this
   * machine newer than any release it had left unfinished.
   */
  settlesReleasesOf?: string;
  /**
   * The signed ticket an answer handed over, already verified by the caller: a text is stored
   * byte for byte beside a ticket that grants, after it (never beside one that does not); `null`
   * removes the one stored, before the state (a new activation: only its own signature stands).
   * Left out, the stored one stays as long as the ticket grants. Whatever this says, a ticket
   * written not licensed takes the signed ticket away first (the rule of {@link LicenseStore}).
   */
  signed?: string | null;
}

/**
 * One project's cache file: lock-free reads (writes are atomic renames), read-modify-write under
 * a cross-process lock (proper-lockfile; a stale lock of a dead holder is taken over), and bad
 * files moved aside for support instead of deleted.
 *
 * With a ticket sink, every write keeps the ticket and the signed ticket beside the state, by one
 * rule ({@link LicenseStore.updateHeld}): what grants less goes first, what grants goes last, and
 * **no signed ticket outlives a ticket that grants**: whenever the ticket is written not licensed
 * (a revocation or any other no, a release, a state set aside), the signed ticket is removed first.
 */
export class LicenseStore {
  readonly file: string;
  readonly lockPath: string;
  readonly #identity: CacheIdentity;
  readonly #staleMs: number;
  readonly #ticket: TicketSink | undefined;
  readonly #step: (step: WriteStep) => void;

  constructor(file: string, identity: CacheIdentity, options: { lockStaleMs: number; ticket?: TicketSink; onStep?: (step: WriteStep) => void }) {
    this.file = file;
    this.lockPath = `${file}.lock`;
    this.#identity = identity;
    this.#staleMs = Math.max(2000, options.lockStaleMs);
    this.#ticket = options.ticket;
    this.#step = options.onStep ?? (() => undefined);
  }

  /** A test's view of the durable steps (see {@link WriteStep}); nothing in production. */
  step(step: WriteStep): void {
    this.#step(step);
  }

  /** The ticket's path, when this store writes one. */
  get ticketFile(): string | undefined {
    return this.#ticket?.file;
  }

  /** The signed ticket's path, when this store keeps one. */
  get signedFile(): string | undefined {
    return this.#ticket?.signedFile;
  }

  /**
   * The signed ticket as stored now, read by the readers' one rule (`readSignedTicketFile`: the
   * user's own folders, a regular file of at most 4 KB, never blocking); undefined when this
   * store keeps none (acting for another computer). Sync: a few KB at most.
   */
  readSigned(): SmallFileRead | undefined {
    const file = this.#ticket?.signedFile;
    return file === undefined ? undefined : readSignedTicketFile(file);
  }

  /** Sync read for `check()`: a bad file is moved aside only when the lock is free right now. */
  readSync(): StoreRead {
    const read = this.#guard(() => readCacheSync(this.file, this.#identity));
    if (read.kind === 'newer') return newer(read.format);
    if (read.kind === 'ok') return { ...read, releasing: this.#guard(() => pendingReleasesSync(dirname(this.file), this.#identity.projectId, this.#identity.machineId)) };
    if (read.kind !== 'invalid') return read;
    let movedTo: string | null = null;
    try {
      const release = lockSync(this.file, { realpath: false, lockfilePath: this.lockPath, stale: this.#staleMs, onCompromised: () => undefined });
      try {
        const again = readCacheSync(this.file, this.#identity);
        if (again.kind === 'invalid' && again.text === read.text) {
          movedTo = moveAsideSync(this.file);
          // No state, no ticket (the async paths write a cache_invalid one; a hot path only removes it).
          if (movedTo !== null && this.#ticket) {
            rmSync(this.#ticket.signedFile, { force: true });
            rmSync(this.#ticket.file, { force: true });
          }
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
    if (read.kind === 'ok') return { ...read, releasing: await this.#guardAsync(() => pendingReleases(dirname(this.file), this.#identity.projectId, this.#identity.machineId)) };
    if (read.kind !== 'invalid') return read;
    return this.locked(async () => {
      const again = await readCache(this.file, this.#identity);
      if (again.kind === 'newer') return newer(again.format);
      if (again.kind === 'ok') return { ...again, releasing: await pendingReleases(dirname(this.file), this.#identity.projectId, this.#identity.machineId) };
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
  async update(mutator: Mutator, options: UpdateOptions = {}): Promise<StoreUpdate> {
    return this.locked(() => this.updateHeld(mutator, options));
  }

  /** {@link read} for a caller that already holds the lock ({@link locked}): a bad file is moved aside now. */
  async readHeld(): Promise<StoreRead> {
    const read = await readCache(this.file, this.#identity);
    if (read.kind === 'newer') return newer(read.format);
    if (read.kind === 'ok') return { ...read, releasing: releasesAmong(await this.#intentsHeld(), this.#identity.machineId) };
    if (read.kind !== 'invalid') return read;
    const movedTo = await moveAside(this.file);
    await this.#setAsideTicket().catch(() => undefined);
    return { kind: 'invalid', problem: read.problem, movedTo };
  }

  /** {@link update} for a caller that already holds the lock ({@link locked}). */
  async updateHeld(mutator: Mutator, options: UpdateOptions = {}): Promise<StoreUpdate> {
    const intents = await this.#intentsHeld();
    const machineId = this.#identity.machineId;
    const settled = intents.filter(
      (i) => i.file === options.settles?.file || (i.op === 'deactivate' && i.machineId === machineId && i.code === options.settlesReleasesOf),
    );
    if (options.settles !== undefined && !settled.some((i) => i.file === options.settles?.file)) settled.push(options.settles);
    const releasing = releasesAmong(
      intents.filter((i) => !settled.includes(i)),
      machineId,
    );
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
      // an unknown. It goes first (the signed ticket before it): killed in between, no valid
      // ticket outlives the state.
      ticketError = await this.#grantNothing(this.#ticket ? ticketOf(null, this.#ticket.context()) : null);
      if (current !== null) {
        await removeFileDurably(this.file);
        this.#step('state-removed');
      }
      license = null;
    } else if (next !== undefined) {
      license = { ...next, revision: (current?.revision ?? 0) + 1 };
      // A ticket that grants less than before (invalid) goes before the state, one that grants
      // after it: killed in between, a plugin is never licensed by a state no longer stored.
      const ticket = this.#ticket ? ticketOf(whileReleasing(license, releasing), this.#ticket.context()) : undefined;
      if (ticket?.valid === false) ticketError = await this.#grantNothing(ticket);
      else if (options.signed === null) ticketError = await this.#putSigned(null);
      await writeFileAtomic(this.file, encodeCache(this.#identity, license));
      await sweepTempFiles(this.file);
      this.#step('state-written');
      if (ticket?.valid === true) ticketError = (await this.#putTicket(ticket)) ?? (await this.#putSigned(options.signed)) ?? ticketError;
    } else if (invalid !== undefined && current === null) {
      ticketError = await this.#setAsideTicket().then(
        () => undefined,
        (e: unknown) => this.#ticketError(e),
      );
    } else if (settled.length > 0 && current !== null && this.#ticket) {
      // Nothing changes in the state, but the release it settles no longer holds the ticket back.
      const ticket = ticketOf(whileReleasing(current, releasing), this.#ticket.context());
      ticketError = ticket.valid ? ((await this.#putTicket(ticket)) ?? (await this.#putSigned(options.signed))) : await this.#grantNothing(ticket);
    }
    for (const intent of settled) await this.clearIntent(intent);
    return { license, releasing, ...(invalid ? { invalid } : {}), ...(ticketError ? { ticketError } : {}) };
  }

  /**
   * A ticket that grants nothing (not licensed, or none): the signed ticket goes first, then the
   * ticket, so that killed in between a plugin finds no signature beside a ticket that grants
   * nothing, nor one without a ticket. The first failure is returned (as `#putTicket`'s).
   */
  async #grantNothing(ticket: TicketFields | null): Promise<LicenseError | undefined> {
    const signedError = await this.#putSigned(null);
    const ticketError = await this.#putTicket(ticket);
    return signedError ?? ticketError;
  }

  /**
   * The one "before releasing" step, for every path that gives back this machine's slot of
   * `code` (a deactivation; a slot given back because its state could not be stored; the offline
   * release). Under the lock, the ticket is written as the state reads with that release pending
   * (`whileReleasing`: not licensed, `deactivated`, when the stored state holds `code`;
   * `cache_invalid` when the state cannot be read; nothing to write when no state or another
   * code's is stored, since then the ticket grants nothing of `code`). Only then may the release
   * go out: killed at any later point, no ticket grants a slot the service may have freed.
   *
   * With `record` (the default) the release is first recorded durably as a deactivation intent,
   * which keeps the license unused here and tells the next start to settle it with the service; a
   * caller whose own intent already covers a kill (the activation that gives its slot back) passes
   * `record: false`. When a write fails, nothing stays recorded and `cache_io` says nothing was
   * released.
   */
  async beforeRelease(code: string, at: number, options: { record?: boolean } = {}): Promise<{ intent?: Intent; update: StoreUpdate }> {
    return this.locked(() => this.beforeReleaseHeld(code, at, options));
  }

  /** {@link beforeRelease} for a caller that holds the lock (the offline release, whose proof is written under it). */
  async beforeReleaseHeld(code: string, at: number, options: { record?: boolean } = {}): Promise<{ intent?: Intent; update: StoreUpdate }> {
    const intent = options.record === false ? undefined : await this.recordIntent('deactivate', code, at);
    try {
      return { ...(intent ? { intent } : {}), update: await this.#ticketBeforeRelease(code) };
    } catch (e) {
      if (intent) await this.clearIntent(intent);
      throw e;
    }
  }

  async #ticketBeforeRelease(code: string): Promise<StoreUpdate> {
    const releasing = releasesAmong(await this.#intentsHeld(), this.#identity.machineId);
    let read: CacheRead;
    try {
      read = await readCache(this.file, this.#identity);
    } catch (e) {
      read = { kind: 'invalid', problem: String((e as NodeJS.ErrnoException).code ?? e), text: '' };
    }
    const license = read.kind === 'ok' ? read.license : null;
    const sink = this.#ticket;
    if (!sink || (read.kind === 'ok' && read.license.code !== code)) return { license, releasing };
    // The signed ticket first: no signature of the vendor may stay beside a slot that is given back.
    const signedError = await this.#putSigned(null);
    if (signedError) {
      throw ioError(signedError.cause, sink.signedFile, `could not remove the signed ticket ${sink.signedFile} before giving back the slot`, 'nothing was released; make the folder writable, then try again');
    }
    if (read.kind === 'missing') return { license, releasing };
    const fields = read.kind === 'ok' ? ticketOf(whileReleasing(read.license, [code]), sink.context()) : ticketOf(null, sink.context(), true);
    const ticketError = await this.#putTicket(fields);
    if (ticketError) {
      throw ioError(ticketError.cause, sink.file, `could not make the ticket ${sink.file} say "not licensed" before giving back the slot`, 'nothing was released; make the folder writable or free some space, then try again');
    }
    return { license, releasing };
  }

  async #intentsHeld(): Promise<Intent[]> {
    return readIntents(dirname(this.file), this.#identity.projectId);
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
      this.#step('ticket-written');
      return undefined;
    } catch (e) {
      return this.#ticketError(e);
    }
  }

  /**
   * Stores (a text) or removes (`null`) the signed ticket; `undefined` leaves it. A failure is
   * returned as `cache_io` naming the file, never thrown. The step is named only when something
   * was written or removed.
   */
  async #putSigned(text: string | null | undefined): Promise<LicenseError | undefined> {
    const sink = this.#ticket;
    if (!sink || text === undefined) return undefined;
    try {
      if (text === null) {
        if (!existsSync(sink.signedFile)) return undefined;
        await removeTicket(sink.signedFile);
        this.#step('signed-removed');
      } else {
        await writeTicketFile(sink.signedFile, text);
        await sweepTempFiles(sink.signedFile);
        this.#step('signed-written');
      }
      return undefined;
    } catch (e) {
      return this.#ticketError(e, sink.signedFile);
    }
  }

  /** The state was set aside as invalid: the signed ticket goes, and the ticket says so (a known "not licensed", cache_invalid). */
  async #setAsideTicket(): Promise<void> {
    const sink = this.#ticket;
    if (!sink) return;
    await removeTicket(sink.signedFile);
    await writeTicket(sink.file, sink.key, ticketOf(null, sink.context(), true));
  }

  #ticketError(e: unknown, file: string = (this.#ticket as TicketSink).file): LicenseError {
    // A folder the readers would not trust (writeTicket refused it) says itself what to do.
    const refused = e instanceof LicenseError;
    const err = ioError(
      e,
      file,
      file === this.#ticket?.signedFile ? `the license state was stored, but its signed ticket ${file} could not be written or removed` : `the license state was stored, but its ticket ${file} could not be written`,
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
      const intent = await writeIntent(dir, { format: 1, op, projectId: this.#identity.projectId, machineId: this.#identity.machineId, code, at });
      this.#step('intent-recorded');
      return intent;
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
    await removeIntent(intent).then(
      () => this.#step('intent-cleared'),
      () => undefined,
    );
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

  #guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw ioError(e, this.file, `could not read the license cache ${this.file}`, 'check permissions');
    }
  }

  async #guardAsync<T>(fn: () => Promise<T>): Promise<T> {
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
export function openProjectStore(projectId: string, identity: MachineIdentity, where: PathOptions, lockStaleMs: number, ticket?: TicketClock, onStep?: (step: WriteStep) => void): LicenseStore {
  const id = projectId.toLowerCase();
  const sink: TicketSink | undefined =
    ticket && identity.local
      ? { file: ticketPath(where, id), signedFile: signedTicketPath(where, id), key: identity.ticketKey, context: () => ({ ...ticket(), app: identity.namespace, projectId: id }) }
      : undefined;
  return new LicenseStore(cacheFilePath(id, where), { projectId: id, machineId: identity.id, cacheKey: identity.cacheKey }, { lockStaleMs, ...(sink ? { ticket: sink } : {}), ...(onStep ? { onStep } : {}) });
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

