import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthResult } from './auth.js';
import type { EmulatorClock } from './clock.js';
import type { FaultState } from './faults.js';
import type { HeldRequests } from './held.js';
import type { Outbox } from './outbox.js';
import type { Bucket, FixedWindowRateLimiter } from './rate-limiter.js';
import type { EmulatorStore } from './store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The body exactly as received (signatures are computed over it); null when there was none. */
    rawBody: Buffer | null;
    auth: AuthResult | null;
  }
  interface FastifyContextConfig {
    bucket?: Bucket;
    lenientContentType?: boolean;
    methodNotAllowed?: boolean;
  }
}

/** What route handlers share. */
export interface EmulatorContext {
  store: EmulatorStore;
  clock: EmulatorClock;
  limiter: FixedWindowRateLimiter;
  faults: { fault: FaultState };
  /** Service requests the `hold` fault keeps until a test releases them. */
  held: HeldRequests;
  signingKey: Uint8Array;
  /** http://host:port, known once the server listens. */
  origin(): string;
  downloadRedirect: boolean;
  /** Outgoing notifications: deliveries in flight and their retries. */
  outbox: Outbox;
}

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** One route; `bucket` null marks an emulator control (no rate limit, no faults). */
export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  bucket: Bucket | null;
  /** Parse the body as JSON whatever its Content-Type says (the plugin SDK sends JSON as a form). */
  lenientContentType?: boolean;
  handler: Handler;
}
