import { normalizeCode } from './code-format.js';
import { writeDataFile } from './data-file.js';
import type { BuildRecord, CodeRecord, EmulatorData, ProjectRecord } from './state.js';

/** The emulator's state in memory, written through to the `--data` file after each mutation. */
export class EmulatorStore {
  #chain: Promise<void> = Promise.resolve();

  readonly #file: string | undefined;

  constructor(
    public data: EmulatorData,
    file: string | undefined,
  ) {
    this.#file = file;
  }

  /** Persists the current state; resolves once it is on disk, so an answer is only sent for durable changes. */
  async commit(): Promise<void> {
    const file = this.#file;
    if (file === undefined) return;
    const snapshot = structuredClone(this.data);
    const write = this.#chain.then(() => writeDataFile(file, snapshot));
    this.#chain = write.catch(() => undefined);
    await write;
  }

  async flush(): Promise<void> {
    await this.#chain;
  }

  project(id: string): ProjectRecord | undefined {
    const wanted = id.toLowerCase();
    return this.data.projects.find((p) => p.id === wanted);
  }

  code(code: string): CodeRecord | undefined {
    const wanted = normalizeCode(code);
    return this.data.codes.find((c) => c.code === wanted);
  }

  build(id: string): BuildRecord | undefined {
    const wanted = id.toLowerCase();
    return this.data.builds.find((b) => b.id === wanted);
  }

  ownedProjectIds(ownerId: string): Set<string> {
    return new Set(this.data.projects.filter((p) => p.owner_id === ownerId).map((p) => p.id));
  }
}
