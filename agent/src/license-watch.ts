import { watch, type FSWatcher } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';

const CACHE_FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/i;
/** Writes come in bursts (temp file, rename, lock); one reload per project per burst. */
const SETTLE_MS = 40;
/** Where the file system can't be watched (some network folders), a stat per file this often. */
const POLL_MS = 500;

export interface LicenseWatchOptions {
  dir: string;
  logger: Logger;
  /** Called once per burst of changes to a project's cache file (created, replaced or removed). */
  changed: (projectId: string) => void;
  /** Poll instead of asking the OS (what happens where it can't notify; tests choose it). */
  poll?: boolean;
}

/**
 * Watches the namespace's licenses folder, so a change another process makes (an offline import
 * or release, a command-line activation through the library) reaches the agent's memory and its
 * subscribers within a second, without a restart. The operating system's notifications
 * (inotify, FSEvents, ReadDirectoryChangesW) when it gives them; otherwise a poll of the files'
 * times and sizes every half second.
 */
export class LicenseWatch {
  #watcher: FSWatcher | undefined;
  #poller: NodeJS.Timeout | undefined;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  #seen = new Map<string, string>();
  #primed = false;
  #stopped = false;

  readonly #o: LicenseWatchOptions;

  constructor(o: LicenseWatchOptions) {
    this.#o = o;
  }

  /** Resolves once the watch is in place: when polling, once the first look has learnt what is there. */
  async start(): Promise<void> {
    try {
      // The folder exists from the start, so there is something to watch before the first license.
      await mkdir(this.#o.dir, { recursive: true, mode: 0o700 });
      if (this.#o.poll) throw new Error('polling was asked for');
      this.#watcher = watch(this.#o.dir, { persistent: false }, (_event, name) => {
        const m = typeof name === 'string' ? CACHE_FILE.exec(name) : null;
        if (m?.[1]) this.#soon(m[1].toLowerCase());
      });
      this.#watcher.on('error', (err) => void this.#fallBack(err));
    } catch (err) {
      await this.#fallBack(err);
    }
  }

  stop(): void {
    this.#stopped = true;
    this.#watcher?.close();
    if (this.#poller) clearInterval(this.#poller);
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
  }

  #soon(projectId: string): void {
    if (this.#stopped || this.#timers.has(projectId)) return;
    const t = setTimeout(() => {
      this.#timers.delete(projectId);
      if (!this.#stopped) this.#o.changed(projectId);
    }, SETTLE_MS);
    t.unref();
    this.#timers.set(projectId, t);
  }

  /** Polls from now on; resolves once the first look is done. */
  #fallBack(err: unknown): Promise<void> {
    if (this.#stopped || this.#poller) return Promise.resolve();
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#o.logger.warn({ dir: this.#o.dir, err: (err as Error)?.message ?? String(err) }, 'cannot watch the licenses folder; polling it every 500 ms');
    let polling: Promise<void> | undefined;
    const poll = (): Promise<void> => {
      // A slow folder: one look at a time.
      polling ??= this.#poll().finally(() => (polling = undefined));
      return polling;
    };
    const first = poll();
    this.#poller = setInterval(() => void poll(), POLL_MS);
    this.#poller.unref();
    return first;
  }

  async #poll(): Promise<void> {
    let names: string[] = [];
    try {
      names = await readdir(this.#o.dir);
    } catch {
      // missing for now: every file counts as removed
    }
    const now = new Map<string, string>();
    for (const name of names) {
      const m = CACHE_FILE.exec(name);
      if (!m?.[1]) continue;
      const st = await stat(join(this.#o.dir, name)).catch(() => undefined);
      if (st) now.set(m[1].toLowerCase(), `${st.mtimeMs}:${st.size}:${st.ino}`);
    }
    // The first look only learns what is there: those files are loaded at start anyway.
    if (this.#primed) {
      for (const [id, sig] of now) if (this.#seen.get(id) !== sig) this.#soon(id);
      for (const id of this.#seen.keys()) if (!now.has(id)) this.#soon(id);
    }
    this.#primed = true;
    this.#seen = now;
  }
}
