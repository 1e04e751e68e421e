import type { Scheduler, TimerHandle } from './scheduler.js';
import type { ServiceBudget } from './service-budget.js';
import type { LicenseStatusLike } from './license-handle.js';

/** The numbers of the revalidation schedule, in milliseconds (from the licensing policy). */
export interface RevalidationPolicy {
  revalidateIntervalMs: number;
  revalidateJitterMs: number;
  minRevalidateIntervalMs: number;
  backoffMinMs: number;
  backoffMaxMs: number;
}

/** How one attempt to reach the service ended. */
export type Outcome =
  | { kind: 'answered'; nextAt?: number }
  | { kind: 'failed'; retryAt?: number }
  | { kind: 'rate_limited'; retryAt?: number };

interface Plan {
  timer: TimerHandle | undefined;
  nextAt: number | null;
  failures: number;
  lastAttemptAt: number | null;
  graceTimer: TimerHandle | undefined;
  graceAt: number | null;
  running: boolean;
  /** Waiting for the agent-wide budget: the plan is the budget's, not the status's. */
  deferred: boolean;
}

export interface RevalidatorOptions {
  scheduler: Scheduler;
  budget: ServiceBudget;
  policy: RevalidationPolicy;
  random?: () => number;
  /** Runs one background validation of the project and says how it went. */
  validate: (projectId: string) => Promise<Outcome>;
  /** Called when the grace deadline of a project passes, so its state is re-read and pushed. */
  onGraceDeadline: (projectId: string) => void;
  /** Called when the plan of a project changes (its next_check_at). */
  onPlan?: (projectId: string) => void;
}

/**
 * Background revalidation of every project the agent holds: every 24 h with jitter after the
 * last answer, never within 5 min of the last attempt for a code, exponential back-off (1 min
 * to 1 h) after failures, the service's `retryAt` honoured, and all of it drawn from one
 * `ServiceBudget`. Also arms one timer per project at its grace deadline.
 */
export class Revalidator {
  private readonly plans = new Map<string, Plan>();
  private readonly o: RevalidatorOptions;
  private readonly random: () => number;
  private stopped = false;

  constructor(options: RevalidatorOptions) {
    this.o = options;
    this.random = options.random ?? Math.random;
  }

  /** Planned time of the next background check in epoch ms, or null. */
  nextCheckAtMs(projectId: string): number | null {
    return this.plans.get(projectId)?.nextAt ?? null;
  }

  /** Planned time of the next background check, or null when none is planned. */
  nextCheckAt(projectId: string): Date | null {
    const at = this.plans.get(projectId)?.nextAt;
    return at == null ? null : new Date(at);
  }

  /**
   * Brings the plan in line with a status: projects without a code are not checked; others are
   * checked the interval after their last online answer (or soon, when that is unknown).
   */
  track(projectId: string, status: LicenseStatusLike): void {
    if (this.stopped) return;
    const plan = this.plan(projectId);
    this.armGrace(projectId, plan, status);
    if (!status.codeHint) {
      this.clear(plan);
      return;
    }
    // Called on every check: keep this cheap, and never re-roll a planned jitter.
    if (plan.running || ((plan.failures > 0 || plan.deferred) && plan.timer)) return;
    const planned = status.nextCheckAt?.getTime();
    if (plan.timer && (planned === undefined || plan.nextAt === this.floor(plan, planned))) return;
    this.schedule(projectId, plan, this.regularAfter(status));
  }

  /** Records the outcome of a user-initiated call, so the schedule counts it too. */
  record(projectId: string, outcome: Outcome, status: LicenseStatusLike | undefined): void {
    const plan = this.plan(projectId);
    plan.lastAttemptAt = this.o.scheduler.now();
    this.afterOutcome(projectId, plan, outcome, status);
  }

  forget(projectId: string): void {
    const plan = this.plans.get(projectId);
    if (!plan) return;
    this.clear(plan);
    plan.graceTimer?.cancel();
    this.plans.delete(projectId);
  }

  stop(): void {
    this.stopped = true;
    for (const id of [...this.plans.keys()]) this.forget(id);
  }

  private plan(projectId: string): Plan {
    let plan = this.plans.get(projectId);
    if (!plan) {
      plan = { timer: undefined, nextAt: null, failures: 0, lastAttemptAt: null, graceTimer: undefined, graceAt: null, running: false, deferred: false };
      this.plans.set(projectId, plan);
    }
    return plan;
  }

  /** The library's stored plan when it has one (it survives restarts), else the interval after the last success. */
  private regularAfter(status: LicenseStatusLike): number {
    const planned = status.nextCheckAt?.getTime();
    if (planned !== undefined) return planned;
    const p = this.o.policy;
    const answeredAt = status.validatedAt?.getTime();
    if (answeredAt === undefined) return this.o.scheduler.now() + Math.round(this.random() * 30_000);
    return Math.round(answeredAt + p.revalidateIntervalMs + (this.random() * 2 - 1) * p.revalidateJitterMs);
  }

  /** Never within the minimum interval of the last attempt, never in the past. */
  private floor(plan: Plan, at: number): number {
    let when = at;
    if (plan.lastAttemptAt !== null && plan.failures === 0) when = Math.max(when, plan.lastAttemptAt + this.o.policy.minRevalidateIntervalMs);
    return Math.max(when, this.o.scheduler.now());
  }

  private schedule(projectId: string, plan: Plan, at: number): void {
    const when = this.floor(plan, at);
    this.clear(plan);
    plan.nextAt = when;
    plan.timer = this.o.scheduler.setTimer(when - this.o.scheduler.now(), () => void this.fire(projectId));
    this.o.onPlan?.(projectId);
  }

  private clear(plan: Plan): void {
    plan.timer?.cancel();
    plan.timer = undefined;
    plan.nextAt = null;
    plan.deferred = false;
  }

  private async fire(projectId: string): Promise<void> {
    const plan = this.plans.get(projectId);
    if (!plan || this.stopped) return;
    plan.timer = undefined;
    plan.deferred = false;
    if (!this.o.budget.take('background')) {
      plan.deferred = true;
      // Over the agent-wide budget: wait for a token, with jitter so projects don't bunch up.
      const at = this.o.budget.availableAt('background') + Math.round(this.random() * 2_000);
      plan.nextAt = at;
      plan.timer = this.o.scheduler.setTimer(at - this.o.scheduler.now(), () => void this.fire(projectId));
      this.o.onPlan?.(projectId);
      return;
    }
    plan.running = true;
    plan.lastAttemptAt = this.o.scheduler.now();
    let outcome: Outcome;
    try {
      outcome = await this.o.validate(projectId);
    } catch {
      outcome = { kind: 'failed' };
    }
    plan.running = false;
    if (this.stopped || !this.plans.has(projectId)) return;
    this.afterOutcome(projectId, plan, outcome, undefined);
  }

  private afterOutcome(projectId: string, plan: Plan, outcome: Outcome, status: LicenseStatusLike | undefined): void {
    if (this.stopped) return;
    const now = this.o.scheduler.now();
    if (outcome.kind === 'answered') {
      plan.failures = 0;
      const p = this.o.policy;
      if (status && !status.codeHint) {
        this.clear(plan);
        return;
      }
      const regular = outcome.nextAt ?? Math.round(now + p.revalidateIntervalMs + (this.random() * 2 - 1) * p.revalidateJitterMs);
      this.schedule(projectId, plan, regular);
      return;
    }
    plan.failures += 1;
    const p = this.o.policy;
    const step = Math.min(p.backoffMaxMs, p.backoffMinMs * 2 ** Math.min(plan.failures - 1, 30));
    let at = now + Math.round(step / 2 + (step / 2) * this.random());
    if (outcome.retryAt !== undefined) {
      at = Math.max(at, outcome.retryAt);
      if (outcome.kind === 'rate_limited') this.o.budget.pauseUntil(outcome.retryAt);
    }
    this.schedule(projectId, plan, at);
  }

  private armGrace(projectId: string, plan: Plan, status: LicenseStatusLike): void {
    const at = status.valid && status.graceUntil ? status.graceUntil.getTime() : null;
    if (at === plan.graceAt) return;
    plan.graceTimer?.cancel();
    plan.graceTimer = undefined;
    plan.graceAt = at;
    if (at === null) return;
    // One millisecond past the deadline, so the status computed then is already expired.
    plan.graceTimer = this.o.scheduler.setTimer(at - this.o.scheduler.now() + 1, () => {
      plan.graceAt = null;
      plan.graceTimer = undefined;
      this.o.onGraceDeadline(projectId);
    });
  }
}
