import * as z from 'zod';

/** Body of `POST /__emulator/faults`. */
export const FaultRequest = z
  .object({
    mode: z.enum(['none', 'offline', 'error', 'latency', 'hold']),
    status: z.number().int().min(400).max(599).optional(),
    count: z.number().int().min(1).max(1_000_000).optional(),
    latency_ms: z.number().int().min(0).max(600_000).optional(),
  })
  .refine((f) => f.mode !== 'latency' || f.latency_ms !== undefined, {
    message: 'latency mode needs latency_ms (milliseconds each service request waits)',
    path: ['latency_ms'],
  });
export type FaultRequest = z.infer<typeof FaultRequest>;

/** The fault in force. `remaining` null means "until changed". */
export interface FaultState {
  mode: 'none' | 'offline' | 'error' | 'latency' | 'hold';
  status: number;
  remaining: number | null;
  latency_ms: number;
}

export const NO_FAULT: FaultState = Object.freeze({ mode: 'none', status: 500, remaining: null, latency_ms: 0 });

/**
 * `error` defaults to one request answered 500; `offline`, `latency` and `hold` last until changed
 * unless `count` is given, then they hit only the next `count` service requests. `hold` keeps each
 * request it hits until `POST /__emulator/held/release` (see `HeldRequests`).
 */
export function faultFrom(request: FaultRequest): FaultState {
  switch (request.mode) {
    case 'none':
      return { ...NO_FAULT };
    case 'error':
      return { mode: 'error', status: request.status ?? 500, remaining: request.count ?? 1, latency_ms: 0 };
    case 'offline':
      return { mode: 'offline', status: 500, remaining: request.count ?? null, latency_ms: 0 };
    case 'latency':
      return { mode: 'latency', status: 500, remaining: request.count ?? null, latency_ms: request.latency_ms ?? 0 };
    case 'hold':
      return { mode: 'hold', status: 500, remaining: request.count ?? null, latency_ms: 0 };
  }
}

/** Takes one use of the fault for a service request; returns the fault to apply, or none. */
export function consumeFault(holder: { fault: FaultState }): FaultState {
  const fault = holder.fault;
  if (fault.mode === 'none') return fault;
  if (fault.remaining !== null) {
    const left = fault.remaining - 1;
    holder.fault = left <= 0 ? { ...NO_FAULT } : { ...fault, remaining: left };
  }
  return fault;
}
