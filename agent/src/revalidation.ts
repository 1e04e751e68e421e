import type { LicenseStatus } from '@plugin-license/licensing';
import type { LicenseRegistry } from './license-registry.js';
import type { Scheduler, TimerHandle } from './scheduler.js';
import type { ServiceBudget } from './service-budget.js';

/** What brought a background check: its plan, or a plugin load after a quiet time. */
export type CheckCause = 'schedule' | 'load';

interface Plan {
  /** When the check timer fires (the license's `nextCheckAt`, or later while the budget is spent). */
  dueAt: number | null;
  timer: TimerHandle | undefined;
  graceAt: number | null;
  graceTimer: TimerHandle | undefined;
  running: boolean;
}

export interface BackgroundRevalidationOptions {
  registry: LicenseRegistry;
  scheduler: Scheduler;
  budget: ServiceBudget;
  random?: () => number;
  /** One background validation of a project; resolves with its status after (undefined when it failed). */
  validate: (projectId: string, why: CheckCause) => Promise<LicenseStatus | undefined>;
}

/** After a background run, the next timer never fires sooner than this (a guard, not a schedule). */
const RUN_GAP_MS = 1_000;

/**
 * Background revalidation of every licensed project, with no schedule of its own: one timer at
 * the `nextCheckAt` the project's `License` computes (the licensing library's interval with
 * jitter, back-off, the service's capped waits, and at once when the clock reads as tampered),
 * re-armed whenever the license's status changes. The agent adds only its one budget: a check
 * that finds it spent waits until a request is allowed. A second timer at each grace deadline
 * re-reads the state, so the expiry is pushed to subscribers when it happens. A plugin load
 * (`loaded`) may bring the planned check forward, when the library's rule says so.
 */
export class BackgroundRevalidation {
  readonly #plans = new Map<string, Plan>();
  readonly #random: () => number;
  #stopped = false;

  readonly #o: BackgroundRevalidationOptions;

  constructor(o: BackgroundRevalidationOptions) {
    this.#o = o;
    this.#random = o.random ?? Math.random;
    o.registry.on('status', (projectId, status) => this.#follow(projectId, status));
    o.registry.on('released', (projectId) => this.#forget(projectId));
  }

  /** Timers armed (tests and `status`). */
  get size(): number {
    return this.#plans.size;
  }

  stop(): void {
    this.#stopped = true;
    for (const id of [...this.#plans.keys()]) this.#forget(id);
  }

  /**
   * A plugin loaded the project (a client's first `check` or `subscribe` of it): when the
   * library's rule says it has been quiet long enough (`License.dueOnLoad`), its planned check
   * runs now, from the same budget (background priority), and is planned again from its result.
   * Never waits and never throws: the caller answers from memory at once. Skipped, with the plan
   * left as it is, while a check of the project runs or the budget is spent.
   */
  loaded(projectId: string): void {
    if (this.#stopped) return;
    const id = projectId.toLowerCase();
    const plan = this.#plans.get(id);
    if (plan === undefined || plan.running || plan.timer === undefined) return;
    if (!this.#o.registry.license(id).dueOnLoad()) return;
    if (!this.#o.budget.take('background')) return;
    this.#clear(plan);
    void this.#run(id, plan, 'load');
  }

  #follow(projectId: string, status: LicenseStatus): void {
    if (this.#stopped) return;
    const plan = this.#plans.get(projectId) ?? this.#create(projectId);
    this.#armGrace(projectId, plan, status);
    if (plan.running) return; // the run re-plans from its result
    const due = status.codeHint === null ? null : (status.nextCheckAt?.getTime() ?? null);
    if (due === null) {
      this.#clear(plan);
      if (plan.graceTimer === undefined) this.#plans.delete(projectId);
      return;
    }
    if (plan.timer !== undefined && plan.dueAt === due) return;
    this.#arm(projectId, plan, due);
  }

  #create(projectId: string): Plan {
    const plan: Plan = { dueAt: null, timer: undefined, graceAt: null, graceTimer: undefined, running: false };
    this.#plans.set(projectId, plan);
    return plan;
  }

  #arm(projectId: string, plan: Plan, at: number): void {
    plan.timer?.cancel();
    plan.dueAt = at;
    plan.timer = this.#o.scheduler.setTimer(at - this.#o.scheduler.now(), () => void this.#fire(projectId, plan));
  }

  #clear(plan: Plan): void {
    plan.timer?.cancel();
    plan.timer = undefined;
    plan.dueAt = null;
  }

  async #fire(projectId: string, plan: Plan): Promise<void> {
    if (this.#stopped || this.#plans.get(projectId) !== plan) return;
    plan.timer = undefined;
    if (!this.#o.budget.take('background')) {
      // Over the agent-wide budget: wait for a request to be allowed, spread so projects don't bunch up.
      this.#arm(projectId, plan, this.#o.budget.availableAt('background') + Math.round(this.#random() * 2_000));
      return;
    }
    await this.#run(projectId, plan, 'schedule');
  }

  /** One check (the budget taken), then the plan again from its result. */
  async #run(projectId: string, plan: Plan, why: CheckCause): Promise<void> {
    plan.running = true;
    let status: LicenseStatus | undefined;
    try {
      status = await this.#o.validate(projectId, why);
    } finally {
      plan.running = false;
    }
    if (this.#stopped || this.#plans.get(projectId) !== plan) return;
    const after = status ?? this.#o.registry.license(projectId).check();
    const due = after.codeHint === null ? null : (after.nextCheckAt?.getTime() ?? null);
    if (due === null) {
      this.#follow(projectId, after);
      return;
    }
    this.#arm(projectId, plan, Math.max(due, this.#o.scheduler.now() + RUN_GAP_MS));
  }

  #armGrace(projectId: string, plan: Plan, status: LicenseStatus): void {
    const at = status.valid && status.graceUntil ? status.graceUntil.getTime() : null;
    if (at === plan.graceAt) return;
    plan.graceTimer?.cancel();
    plan.graceTimer = undefined;
    plan.graceAt = at;
    if (at === null) return;
    // One millisecond past the deadline, so the status computed then is already expired.
    plan.graceTimer = this.#o.scheduler.setTimer(at - this.#o.scheduler.now() + 1, () => {
      plan.graceAt = null;
      plan.graceTimer = undefined;
      if (!this.#stopped) this.#o.registry.state(projectId);
    });
  }

  #forget(projectId: string): void {
    const plan = this.#plans.get(projectId);
    if (!plan) return;
    this.#clear(plan);
    plan.graceTimer?.cancel();
    this.#plans.delete(projectId);
  }
}
