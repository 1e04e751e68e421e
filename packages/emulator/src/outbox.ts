import { randomUUID } from 'node:crypto';
import { signWebhook, type WebhookEvent } from '@plugin-license/api';
import { EVENT_OF_STATUS, type BuildTransition } from './build-lifecycle.js';
import type { EmulatorClock } from './clock.js';
import { downloadLink } from './download-url.js';
import type { BuildRecord, DeliveryRecord } from './state.js';
import type { EmulatorStore } from './store.js';

/** What deliveries are made of: the state, the clock, and what download URLs are signed with. */
export interface OutboxDeps {
  store: EmulatorStore;
  clock: EmulatorClock;
  signingKey: Uint8Array;
  /** http://host:port, known once the server listens. */
  origin(): string;
}

/*
 * Outgoing notifications (interface section 6). Every status change of a build whose project
 * selected that event becomes one delivery record; each attempt is one signed POST. A failed
 * attempt (non-2xx, refused, time-out) is retried after the next delay below, on the emulator
 * clock; after the last one the delivery is given up. Attempts and retries are all in
 * `GET /__emulator/deliveries`.
 */

/** Waits before attempts 2, 3, …, 9 (emulator clock): 10 s, 30 s, 1 min, 5 min, 15 min, 1 h, 3 h, 6 h. */
export const RETRY_DELAYS_MS = [10_000, 30_000, 60_000, 300_000, 900_000, 3_600_000, 10_800_000, 21_600_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Real time an attempt may take before it counts as failed (`deliveryTimeoutMs` changes it). */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 10_000;

/** The status each event reports: the inverse of the lifecycle's one table. */
const STATUS_OF_EVENT = Object.fromEntries(Object.entries(EVENT_OF_STATUS).map(([status, event]) => [event, status])) as Record<WebhookEvent, BuildRecord['status']>;

function durationSeconds(build: BuildRecord, atMs: number): number {
  const from = Date.parse(build.started_at ?? build.queued_at);
  return Math.max(0, Math.floor((atMs - from) / 1000));
}

/** The JSON body of one attempt: the detailed form (failed variant for build.failed) or the flat form. */
export function payloadOf(ctx: OutboxDeps, delivery: DeliveryRecord, build: BuildRecord, nowMs: number): Record<string, unknown> {
  const status = STATUS_OF_EVENT[delivery.event];
  if (delivery.form === 'flat') {
    return { event: 'build.status', build_id: build.id, status, project_id: build.project_id, version: build.version_number, timestamp: delivery.occurred_at };
  }
  if (delivery.event === 'build.failed') {
    const failure = build.schedule?.failure;
    return {
      event: delivery.event,
      timestamp: delivery.occurred_at,
      build: {
        id: build.id,
        status,
        error_message: failure?.message ?? 'the build failed',
        error_logs: failure?.logs ?? '',
        failed_at_step: failure?.step ?? build.metadata.current_step,
      },
    };
  }
  const artifacts =
    delivery.event === 'build.success'
      ? build.artifacts.map((a) => ({
          platform: a.platform,
          format: a.format,
          file_name: a.file_name,
          file_size: a.file_size,
          download_url: downloadLink(ctx.origin(), ctx.signingKey, a, nowMs).url,
        }))
      : [];
  return {
    event: delivery.event,
    timestamp: delivery.occurred_at,
    build: {
      id: build.id,
      project_id: build.project_id,
      version: build.version_number,
      build_number: build.build_number,
      status,
      platforms: build.platforms,
      formats: build.formats,
      duration_seconds: durationSeconds(build, Date.parse(delivery.occurred_at)),
      artifacts,
    },
  };
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms`;
  if (e.name === 'AbortError') return 'the emulator shut down during the attempt';
  const code = e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  return e.cause?.message ?? e.message ?? String(error);
}

/** The deliveries in flight, and the rule of when each is attempted. */
export class Outbox {
  readonly #inFlight = new Map<string, Promise<void>>();

  readonly #ctx: OutboxDeps;
  readonly #timeoutMs: number;
  readonly #shutdown: AbortSignal;

  constructor(
    ctx: OutboxDeps,
    timeoutMs: number,
    shutdown: AbortSignal,
  ) {
    this.#ctx = ctx;
    this.#timeoutMs = timeoutMs;
    this.#shutdown = shutdown;
  }

  /** Records a delivery for each transition its project selected; they are attempted by {@link dispatchDue}. */
  record(transitions: readonly BuildTransition[]): void {
    for (const t of transitions) {
      const config = this.#ctx.store.project(t.build.project_id)?.notifications;
      if (!config || !config.events.includes(t.event)) continue;
      const at = new Date(t.at).toISOString();
      this.#ctx.store.data.deliveries.push({
        id: randomUUID(),
        project_id: t.build.project_id,
        build_id: t.build.id,
        event: t.event,
        occurred_at: at,
        url: config.url,
        form: config.form,
        attempts: [],
        delivered: false,
        gave_up: false,
        next_attempt_at: at,
      });
    }
  }

  /** Starts an attempt of every delivery due at `nowMs` that is not already in flight. */
  dispatchDue(nowMs: number): void {
    for (const delivery of this.#ctx.store.data.deliveries) {
      if (delivery.next_attempt_at === null || this.#inFlight.has(delivery.id) || Date.parse(delivery.next_attempt_at) > nowMs) continue;
      const attempt = this.#attempt(delivery).finally(() => this.#inFlight.delete(delivery.id));
      this.#inFlight.set(delivery.id, attempt);
    }
  }

  /** Resolves once every attempt in flight has ended and been recorded. */
  async settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight.values());
  }

  async #attempt(delivery: DeliveryRecord): Promise<void> {
    const build = this.#ctx.store.build(delivery.build_id);
    const startedAt = this.#ctx.clock.now();
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    if (!build) {
      error = 'the build no longer exists';
    } else {
      const body = JSON.stringify(payloadOf(this.#ctx, delivery, build, startedAt));
      const secret = this.#ctx.store.project(delivery.project_id)?.webhook_secret ?? '';
      try {
        const response = await fetch(delivery.url, {
          method: 'POST',
          body,
          redirect: 'manual',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'plugin-license-emulator',
            'x-service-delivery': delivery.id,
            ...signWebhook(body, secret, { now: () => startedAt }),
          },
          signal: AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), this.#shutdown]),
        });
        status = response.status;
        await response.body?.cancel().catch(() => undefined);
        if (status < 200 || status > 299) error = `the receiver answered ${status}`;
      } catch (e) {
        error = describeFailure(e, this.#timeoutMs);
      }
    }
    delivery.attempts.push({ at: new Date(startedAt).toISOString(), status, error, duration_ms: Math.round(performance.now() - started) });
    if (error === null) {
      delivery.delivered = true;
      delivery.next_attempt_at = null;
    } else {
      const delay = RETRY_DELAYS_MS[delivery.attempts.length - 1];
      delivery.gave_up = delay === undefined || build === undefined;
      delivery.next_attempt_at = delivery.gave_up || delay === undefined ? null : new Date(startedAt + delay).toISOString();
    }
    await this.#ctx.store.commit().catch(() => undefined);
  }
}
