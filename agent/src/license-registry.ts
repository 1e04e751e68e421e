import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { License, type LicenseOptions, type LicenseStatus } from '@plugin-license/licensing';
import { stateChanged, toWireState, wireJson, type LicenseStateWire } from './license-state.js';

interface Entry {
  license: License;
  listener: (status: LicenseStatus) => void;
  /** The wire state last built, and the status it was built from (the License hands back the same object until it changes). */
  published: LicenseStateWire | undefined;
  builtFrom: LicenseStatus | undefined;
}

/** What every project's `License` is created with, besides its project id. */
export type LicenseDefaults = Omit<LicenseOptions, 'projectId'>;

export interface RegistryOptions {
  licenseOptions: LicenseDefaults;
  logger: Logger;
  /**
   * Most projects held in memory; past it, the oldest ones with nothing stored (no code) and no
   * service call in flight are let go (default 1024). Projects with a code are always kept.
   */
  maxProjects?: number;
}

const DEFAULT_MAX_PROJECTS = 1024;

/**
 * Every project the agent holds, each with its `License` (created from its cache on first use,
 * without network). Emits `status` for every new status of a project (the background schedule
 * follows these) and `changed` with the wire state when what subscribers act on changed.
 */
export class LicenseRegistry extends EventEmitter<{ status: [projectId: string, status: LicenseStatus]; changed: [LicenseStateWire]; released: [projectId: string]; quiet: [] }> {
  readonly #entries = new Map<string, Entry>();
  /** Projects something is working on (a service call, a reload of the cache file), and how many: never let go. */
  readonly #busy = new Map<string, number>();
  /** Service calls in flight (requests, intents being settled, revalidations): what keeps the agent from its idle exit. */
  #serviceCalls = 0;
  #options: RegistryOptions;

  constructor(options: RegistryOptions) {
    super();
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * True while a service call (a request, an intent being settled, a revalidation) holds a
   * project. A reload of a cache file (the watcher's, often the echo of the agent's own write) is
   * not one: it pins its project but neither keeps the agent from its idle exit nor restarts it.
   */
  get inUse(): boolean {
    return this.#serviceCalls > 0;
  }

  projectIds(): string[] {
    return [...this.#entries.keys()].sort();
  }

  /** The license of a project, created on first use from its cache (no network). */
  license(projectId: string): License {
    return this.#entry(projectId).license;
  }

  /** Current state from memory; pushes it first when it changed (e.g. grace just expired). */
  state(projectId: string): LicenseStateWire {
    const entry = this.#entry(projectId);
    return this.#publish(projectId, entry, entry.license.check());
  }

  /** The wire state of a status a call just returned (published if new). */
  stateOf(projectId: string, status: LicenseStatus): LicenseStateWire {
    return this.#publish(projectId, this.#entry(projectId), status);
  }

  /**
   * The licenses held: projects with a stored code, or a cache file that failed its check (which
   * support needs to see). Projects a plugin only asked about, with nothing stored, are not
   * licenses and are left out, so `list` stays small whatever ids clients `check`.
   */
  list(): LicenseStateWire[] {
    return this.projectIds()
      .map((id) => this.state(id))
      .filter((s) => s.code_hint !== null || s.reason === 'cache_invalid');
  }

  /**
   * Marks a project as in use by a service call until the returned function is called, so it is
   * not let go while its License is awaited. `quiet` is emitted when the last service call ends.
   */
  hold(projectId: string): () => void {
    const unpin = this.#pin(projectId);
    this.#serviceCalls += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      unpin();
      this.#serviceCalls -= 1;
      if (this.#serviceCalls === 0) this.emit('quiet');
    };
  }

  /** Keeps a project from being let go until the returned function is called. */
  #pin(projectId: string): () => void {
    const key = projectId.toLowerCase();
    this.#busy.set(key, (this.#busy.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#busy.get(key) ?? 1) - 1;
      if (n <= 0) this.#busy.delete(key);
      else this.#busy.set(key, n);
    };
  }

  /**
   * Another process changed a project's cache file (an offline import or release, a command-line
   * activation): its License reads it again, and subscribers hear `changed` if the state did.
   * A project not held yet is loaded.
   */
  async reload(projectId: string): Promise<void> {
    const key = projectId.toLowerCase();
    const entry = this.#entries.get(key);
    if (!entry) {
      // A project first seen now (imported while nobody asked about it): subscribers to all hear it.
      const wire = this.state(key);
      if (wire.code_hint !== null) this.emit('changed', wire);
      return;
    }
    // A local read, not a service call: pinned so it is not let go, but not activity for the idle exit.
    const unpin = this.#pin(key);
    try {
      await entry.license.reload();
    } finally {
      unpin();
    }
  }

  /** New service settings (SIGHUP): every license is re-created from its cache. */
  async reconfigure(licenseOptions: LicenseDefaults): Promise<void> {
    this.#options = { ...this.#options, licenseOptions };
    const old = [...this.#entries.entries()];
    this.#entries.clear();
    for (const [id, previous] of old) {
      previous.license.off('change', previous.listener);
      const entry = this.#create(id);
      entry.published = previous.published;
      this.#publish(id, entry, entry.license.check());
    }
    await Promise.allSettled(old.map(([, e]) => e.license.close()));
  }

  async close(): Promise<void> {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    for (const e of all) e.license.off('change', e.listener);
    await Promise.allSettled(all.map((e) => e.license.close()));
  }

  #entry(projectId: string): Entry {
    const key = projectId.toLowerCase();
    const existing = this.#entries.get(key);
    if (existing) return existing;
    const entry = this.#create(key);
    this.#publish(key, entry, entry.license.check());
    this.#trim(key);
    return entry;
  }

  /**
   * Keeps memory bounded when clients ask about many distinct projects (any UUID is accepted):
   * the oldest projects with nothing stored are dropped; asked again, they are re-read from disk.
   */
  #trim(keep: string): void {
    const max = this.#options.maxProjects ?? DEFAULT_MAX_PROJECTS;
    if (this.#entries.size <= max) return;
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= max) break;
      if (id === keep || this.#busy.has(id) || !entry.published || entry.published.code_hint !== null) continue;
      this.#entries.delete(id);
      entry.license.off('change', entry.listener);
      this.emit('released', id);
      void entry.license.close().catch(() => undefined);
    }
  }

  #create(projectId: string): Entry {
    const license = new License({ ...this.#options.licenseOptions, projectId });
    const entry: Entry = {
      license,
      published: undefined,
      builtFrom: undefined,
      listener: (status) => {
        if (this.#entries.get(projectId) === entry) this.#publish(projectId, entry, status);
      },
    };
    license.on('change', entry.listener);
    this.#entries.set(projectId, entry);
    return entry;
  }

  #publish(projectId: string, entry: Entry, status: LicenseStatus): LicenseStateWire {
    // The hot path of `check`: the License hands back the same status object until it changes.
    if (status === entry.builtFrom && entry.published) return entry.published;
    const wire = toWireState(status);
    wireJson(wire);
    entry.builtFrom = status;
    const previous = entry.published;
    entry.published = wire;
    if (stateChanged(previous, wire)) {
      this.#options.logger.info(
        { projectId, valid: wire.valid, reason: wire.reason, source: wire.source, codeHint: wire.code_hint },
        previous === undefined ? 'license loaded' : 'license state changed',
      );
      if (previous !== undefined) this.emit('changed', wire);
    }
    this.emit('status', projectId, status);
    return wire;
  }
}
