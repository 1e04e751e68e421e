import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import type { LicenseFactory, LicenseFactoryOptions, LicenseHandle, LicenseStatusLike } from './license-handle.js';
import { stateChanged, toWireState, wireJson, type LicenseStateWire } from './license-state.js';
import type { Outcome, Revalidator } from './revalidator.js';

interface Entry {
  license: LicenseHandle;
  listener: (status: LicenseStatusLike) => void;
  published: LicenseStateWire | undefined;
  /** The status and plan the published wire state was built from. */
  builtFrom: LicenseStatusLike | undefined;
  builtNext: number | null;
}

export interface RegistryOptions {
  factory: LicenseFactory;
  factoryOptions: Omit<LicenseFactoryOptions, 'projectId'>;
  logger: Logger;
  /**
   * Most projects held in memory; past it, the oldest ones with nothing stored (no code) and no
   * service call in flight are let go (default 1024). Projects with a code are always kept.
   */
  maxProjects?: number;
}

const DEFAULT_MAX_PROJECTS = 1024;

/**
 * Every project the agent holds, each with its `License`. Knows the last state pushed to
 * subscribers and emits `changed` (wire state) when what subscribers act on changes.
 */
export class LicenseRegistry extends EventEmitter<{ changed: [LicenseStateWire] }> {
  private readonly entries = new Map<string, Entry>();
  /** Projects with a service call in flight, and how many: never let go. */
  private readonly busy = new Map<string, number>();
  private options: RegistryOptions;
  revalidator: Revalidator | undefined;

  constructor(options: RegistryOptions) {
    super();
    this.options = options;
  }

  get size(): number {
    return this.entries.size;
  }

  projectIds(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** The license of a project, created on first use from its cache (no network). */
  license(projectId: string): LicenseHandle {
    return this.entry(projectId).license;
  }

  /** Current state from memory; pushes it first when it changed (e.g. grace just expired). */
  state(projectId: string): LicenseStateWire {
    const entry = this.entry(projectId);
    return this.publish(projectId, entry, entry.license.check());
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

  /** Re-reads a project's state (timer or outcome) and pushes it when it changed. */
  refreshState(projectId: string, status?: LicenseStatusLike): LicenseStateWire {
    const entry = this.entry(projectId);
    return this.publish(projectId, entry, status ?? entry.license.check());
  }

  /**
   * Marks a project as in use by a service call until the returned function is called, so it is
   * not let go while its License is awaited.
   */
  hold(projectId: string): () => void {
    const key = projectId.toLowerCase();
    this.busy.set(key, (this.busy.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.busy.get(key) ?? 1) - 1;
      if (n <= 0) this.busy.delete(key);
      else this.busy.set(key, n);
    };
  }

  /** Records a service outcome in the schedule and publishes the resulting state. */
  settle(projectId: string, outcome: Outcome, status: LicenseStatusLike | undefined): LicenseStateWire {
    const entry = this.entry(projectId);
    const current = status ?? entry.license.check();
    this.revalidator?.record(projectId, outcome, current);
    return this.publish(projectId, entry, current);
  }

  /** New service settings (SIGHUP): every license is re-created from its cache. */
  async reconfigure(factoryOptions: Omit<LicenseFactoryOptions, 'projectId'>): Promise<void> {
    this.options = { ...this.options, factoryOptions };
    const ids = this.projectIds();
    const old = [...this.entries.entries()];
    this.entries.clear();
    for (const [, entry] of old) {
      entry.license.off?.('change', entry.listener);
    }
    for (const id of ids) {
      const previous = old.find(([k]) => k === id)?.[1].published;
      const entry = this.create(id);
      entry.published = previous;
      this.publish(id, entry, entry.license.check());
    }
    await Promise.allSettled(old.map(([, e]) => e.license.close()));
  }

  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.allSettled(all.map((e) => e.license.close()));
  }

  private entry(projectId: string): Entry {
    const key = projectId.toLowerCase();
    const existing = this.entries.get(key);
    if (existing) return existing;
    const entry = this.create(key);
    this.publish(key, entry, entry.license.check());
    this.trim(key);
    return entry;
  }

  /**
   * Keeps memory bounded when clients ask about many distinct projects (any UUID is accepted):
   * the oldest projects with nothing stored are dropped; asked again, they are re-read from disk.
   */
  private trim(keep: string): void {
    const max = this.options.maxProjects ?? DEFAULT_MAX_PROJECTS;
    if (this.entries.size <= max) return;
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= max) break;
      if (id === keep || this.busy.has(id) || !entry.published || entry.published.code_hint !== null) continue;
      this.entries.delete(id);
      entry.license.off?.('change', entry.listener);
      this.revalidator?.forget(id);
      void entry.license.close().catch(() => undefined);
    }
  }

  private create(projectId: string): Entry {
    const license = this.options.factory({ ...this.options.factoryOptions, projectId });
    const entry: Entry = {
      license,
      published: undefined,
      builtFrom: undefined,
      builtNext: null,
      listener: (status) => {
        if (this.entries.get(projectId) === entry) this.publish(projectId, entry, status);
      },
    };
    license.on('change', entry.listener);
    this.entries.set(projectId, entry);
    return entry;
  }

  private publish(projectId: string, entry: Entry, status: LicenseStatusLike): LicenseStateWire {
    this.revalidator?.track(projectId, status);
    const next = this.revalidator?.nextCheckAtMs(projectId) ?? null;
    // The hot path of `check`: the License hands back the same status object until it changes.
    if (status === entry.builtFrom && next === entry.builtNext && entry.published) return entry.published;
    const wire = toWireState(status, next === null ? null : new Date(next));
    wireJson(wire);
    entry.builtFrom = status;
    entry.builtNext = next;
    if (stateChanged(entry.published, wire)) {
      const first = entry.published === undefined;
      entry.published = wire;
      this.options.logger.info(
        { projectId, valid: wire.valid, reason: wire.reason, source: wire.source, codeHint: wire.code_hint },
        first ? 'license loaded' : 'license state changed',
      );
      if (!first) this.emit('changed', wire);
    } else {
      entry.published = wire;
    }
    return wire;
  }
}
