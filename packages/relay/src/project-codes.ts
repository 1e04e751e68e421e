import type { ServiceAnswer } from './service.js';

/** How often a project's list of codes may be asked for again when a code is not in it. */
export const CODES_REFRESH_MS = 10_000;

interface ProjectState {
  codes: Set<string> | undefined;
  /** When the list was last asked for (ms on the relay's clock), successful or not. */
  askedAt: number | undefined;
  /** The last asking's failure, when it failed: answered to a miss until the next asking. */
  failure: ServiceAnswer | undefined;
  asking: Promise<void> | undefined;
}

/** Whether a code is one of a project's: yes, no, or the service's failure to say. */
export type Membership = { member: true } | { member: false } | { member: 'unknown'; answer: ServiceAnswer };

/**
 * The codes of each project the relay serves, listed with the vendor's token and kept: a code
 * not in the list makes the relay ask again, at most once every {@link CODES_REFRESH_MS} per
 * project, and every request waiting meanwhile shares that one asking. Codes are compared in
 * lower case, as the service compares them. A service that cannot list (down, 429) is said as
 * its answer to the requests that needed the list, never as "not this project's".
 */
export class ProjectCodes {
  readonly #states = new Map<string, ProjectState>();

  constructor(
    readonly list: (projectId: string) => Promise<{ codes: string[] } | { failure: ServiceAnswer }>,
    readonly now: () => number,
  ) {}

  async check(projectId: string, code: string): Promise<Membership> {
    const key = code.toLowerCase();
    let state = this.#states.get(projectId);
    if (state === undefined) {
      state = { codes: undefined, askedAt: undefined, failure: undefined, asking: undefined };
      this.#states.set(projectId, state);
    }
    if (state.codes?.has(key)) return { member: true };
    if (state.asking === undefined && (state.askedAt === undefined || this.now() - state.askedAt >= CODES_REFRESH_MS)) {
      state.askedAt = this.now();
      state.asking = this.#ask(projectId, state);
    }
    if (state.asking !== undefined) await state.asking;
    if (state.codes?.has(key)) return { member: true };
    if (state.failure !== undefined) return { member: 'unknown', answer: state.failure };
    return { member: false };
  }

  async #ask(projectId: string, state: ProjectState): Promise<void> {
    try {
      const got = await this.list(projectId);
      if ('codes' in got) {
        state.codes = new Set(got.codes.map((c) => c.toLowerCase()));
        state.failure = undefined;
      } else {
        state.failure = got.failure;
      }
    } finally {
      state.asking = undefined;
    }
  }

  /** How many project lists are being asked for. */
  get asking(): number {
    let n = 0;
    for (const s of this.#states.values()) if (s.asking !== undefined) n += 1;
    return n;
  }
}
