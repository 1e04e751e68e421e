import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { ServiceClient } from '@plugin-license/api';
import { isLicenseError, type License, type LicenseStatus } from '@plugin-license/licensing';
import { AgentError } from './errors.js';
import type { LicenseRegistry } from './license-registry.js';
import type { LicenseStateWire } from './license-state.js';
import type { CheckCause } from './revalidation.js';
import type { Scheduler } from './scheduler.js';
import type { ServiceBudget } from './service-budget.js';

export interface LicenseServiceOptions {
  registry: LicenseRegistry;
  budget: ServiceBudget;
  scheduler: Scheduler;
  logger: Logger;
  /** The one service client every License shares (it sees the rate-limit headers). */
  client: () => ServiceClient | undefined;
  /** For messages: the budget in effect. */
  budgetPerMinute: () => number;
}

/**
 * Everything the agent asks of the service: activation, deactivation and refresh for clients,
 * background validations, and settling what an earlier run left unfinished. Every request is
 * drawn from the one agent-wide budget, and every answer's rate-limit headers pause it.
 */
export class LicenseService {
  readonly #refreshing = new Map<string, Promise<LicenseStateWire>>();
  readonly #stopping = new AbortController();

  readonly #o: LicenseServiceOptions;

  constructor(o: LicenseServiceOptions) {
    this.#o = o;
    // Every service call listens on this one signal; many at once is normal here, not a leak.
    setMaxListeners(0, this.#stopping.signal);
  }

  /** Aborts every call in flight (shutdown, after the grace for in-flight requests). */
  abort(): void {
    this.#stopping.abort();
  }

  activate(projectId: string, code: string): Promise<LicenseStateWire> {
    return this.#userCall(projectId, 'activation', (l) => l.activate(code, { signal: this.#stopping.signal }));
  }

  deactivate(projectId: string): Promise<LicenseStateWire> | LicenseStateWire {
    if (this.#o.registry.license(projectId).check().codeHint === null) return this.#o.registry.state(projectId);
    return this.#userCall(projectId, 'deactivation', (l) => l.deactivate({ signal: this.#stopping.signal }));
  }

  /**
   * Asks the service now (past the library's 5-minute floor, which paces background checks
   * only); many plugin instances refreshing one project share one request. Offline, or when the
   * service or the budget says wait, it answers from the cache.
   */
  refresh(projectId: string): Promise<LicenseStateWire> | LicenseStateWire {
    if (this.#o.registry.license(projectId).check().codeHint === null) return this.#o.registry.state(projectId);
    const running = this.#refreshing.get(projectId);
    if (running) return running;
    const refresh = this.#userCall(projectId, 'refresh', (l) => l.validate({ signal: this.#stopping.signal, force: true }))
      .catch((err: unknown) => {
        if (isLicenseError(err) && err.code === 'unavailable') return this.#o.registry.state(projectId);
        if (err instanceof AgentError && (err.code === 'over_limit' || err.serviceCode === 'rate_limited')) return this.#o.registry.state(projectId);
        throw err;
      })
      .finally(() => this.#refreshing.delete(projectId));
    this.#refreshing.set(projectId, refresh);
    return refresh;
  }

  /** One background validation (the budget was taken by the caller), planned or brought by a plugin load. Failures are logged, never thrown. */
  async background(projectId: string, why: CheckCause = 'schedule'): Promise<LicenseStatus | undefined> {
    const release = this.#o.registry.hold(projectId);
    try {
      const status = await this.#o.registry.license(projectId).validate({ signal: this.#stopping.signal });
      this.#o.logger.info({ projectId, why, valid: status.valid, reason: status.reason, source: status.source, codeHint: status.codeHint }, 'background validation');
      return status;
    } catch (err) {
      this.#o.logger.warn({ projectId, why, err: describeError(err) }, 'background validation failed');
      return undefined;
    } finally {
      this.#noteRateLimit();
      release();
    }
  }

  /**
   * Settles the activations and deactivations an earlier run recorded but never finished (it
   * was killed, or the disk refused the state), before plugins ask. Offline, they wait for the
   * license's next call.
   */
  async settle(projectIds: string[], withinMs = 5_000): Promise<void> {
    // Bounded: a service that never answers must not keep plugins from the agent.
    const signal = AbortSignal.any([this.#stopping.signal, AbortSignal.timeout(withinMs)]);
    for (const projectId of projectIds) {
      const release = this.#o.registry.hold(projectId);
      try {
        const status = await this.#o.registry.license(projectId).settle({ signal });
        this.#o.logger.info({ projectId, valid: status.valid, reason: status.reason, codeHint: status.codeHint }, 'settled an unfinished operation');
      } catch (err) {
        this.#o.logger.warn({ projectId, err: describeError(err) }, 'could not settle an unfinished operation; it is tried again at the next call');
      } finally {
        this.#noteRateLimit();
        release();
      }
    }
  }

  async #userCall(projectId: string, what: string, call: (license: License) => Promise<LicenseStatus>): Promise<LicenseStateWire> {
    this.#takeBudget(projectId);
    const release = this.#o.registry.hold(projectId);
    try {
      const status = await call(this.#o.registry.license(projectId));
      this.#o.logger.info({ projectId, valid: status.valid, reason: status.reason, source: status.source, codeHint: status.codeHint }, what);
      return this.#o.registry.stateOf(projectId, status);
    } catch (err) {
      this.#o.logger.warn({ projectId, err: describeError(err) }, `${what} failed`);
      throw err;
    } finally {
      this.#noteRateLimit();
      release();
    }
  }

  #takeBudget(projectId: string): void {
    const { budget, scheduler } = this.#o;
    if (budget.take('user')) return;
    const at = new Date(budget.availableAt('user'));
    if (budget.pausedUntilTime > scheduler.now()) {
      throw new AgentError('service_refused', `the license service asked to wait until ${at.toISOString()} (rate limited); retry then`, {
        serviceCode: 'rate_limited',
        status: 429,
        retryAt: at,
      });
    }
    this.#o.logger.warn({ projectId }, 'user request refused: agent-wide service budget used up');
    throw new AgentError('over_limit', `the agent's budget of ${this.#o.budgetPerMinute()} service requests a minute is used up; retry after ${at.toISOString()}`, {
      limit: 'service_budget',
      retryAt: at,
    });
  }

  /** The service said nothing is left in this window: every request waits for its reset (relative, capped by the api). */
  #noteRateLimit(): void {
    const rl = this.#o.client()?.rateLimit;
    if (rl && rl.remaining <= 0) this.#o.budget.pauseUntil(this.#o.scheduler.now() + rl.resetInMs);
  }
}

/** What a log line keeps of an error: never the message's secrets (the logger scrubs), never a stack. */
export function describeError(err: unknown): Record<string, unknown> {
  const e = (err ?? {}) as { name?: string; code?: string; status?: number; message?: string; serviceCode?: string; systemCode?: string };
  return { name: e.name, errCode: e.code, serviceCode: e.serviceCode, systemCode: e.systemCode, status: e.status, message: e.message };
}
