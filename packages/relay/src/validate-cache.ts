import type { ServiceAnswer } from './service.js';

/** The most validate answers one relay instance keeps; the oldest goes first. */
export const MAX_CACHED_ANSWERS = 100_000;

interface Entry {
  answer: ServiceAnswer;
  expiresAt: number;
}

/**
 * The service's validate answers (200 only) for a project, code and machine, reused for
 * `ttlMs`. An activation or deactivation of that code and machine through this relay drops the
 * entry and bumps its generation, so an answer that was in flight during it is not stored: the
 * relay never signs for a machine from an answer older than a change it carried itself.
 */
export class ValidateCache {
  readonly #entries = new Map<string, Entry>();
  readonly #generations = new Map<string, number>();

  constructor(
    readonly ttlMs: number,
    readonly now: () => number,
  ) {}

  static key(projectId: string, code: string, machineId: string): string {
    return `${projectId}\0${code.toLowerCase()}\0${machineId}`;
  }

  get(key: string): ServiceAnswer | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() < entry.expiresAt) return entry.answer;
    this.#entries.delete(key);
    return undefined;
  }

  /** The generation to hand back to {@link set}: taken before asking the service. */
  generation(key: string): number {
    return this.#generations.get(key) ?? 0;
  }

  set(key: string, answer: ServiceAnswer, generation: number): void {
    if (this.ttlMs <= 0 || answer.status !== 200 || this.generation(key) !== generation) return;
    this.#entries.delete(key);
    this.#entries.set(key, { answer, expiresAt: this.now() + this.ttlMs });
    if (this.#entries.size > MAX_CACHED_ANSWERS) this.#entries.delete(this.#entries.keys().next().value!);
  }

  /** A change to the code and machine was asked for: forget what the service said before it. */
  invalidate(key: string): void {
    this.#entries.delete(key);
    const next = this.generation(key) + 1;
    this.#generations.delete(key);
    this.#generations.set(key, next);
    if (this.#generations.size > MAX_CACHED_ANSWERS) this.#generations.delete(this.#generations.keys().next().value!);
  }
}
