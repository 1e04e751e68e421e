import type { ServiceClient } from '@plugin-license/api';
/**
 * The part of `@plugin-license/licensing`'s `License` the agent uses. Kept structural so the
 * agent can also host a caller-supplied implementation (see `AgentOptions.licenseFactory`).
 */
export interface LicenseStatusLike {
  projectId: string;
  valid: boolean;
  reason: string | null;
  source: 'online' | 'cache';
  codeHint: string | null;
  activations: number | null;
  maxActivations: number | null;
  validatedAt: Date | null;
  graceUntil: Date | null;
  /** The library's own plan (back-off, the service's retry time); the agent never plans earlier. */
  nextCheckAt?: Date | null;
}

export interface LicenseCallOptions {
  signal?: AbortSignal;
  force?: boolean;
}

export interface LicenseHandle {
  check(): LicenseStatusLike;
  activate(code: string, options?: LicenseCallOptions): Promise<LicenseStatusLike>;
  validate(options?: LicenseCallOptions): Promise<LicenseStatusLike>;
  deactivate(options?: LicenseCallOptions): Promise<LicenseStatusLike>;
  on(event: 'change', listener: (status: LicenseStatusLike) => void): unknown;
  off?(event: 'change', listener: (status: LicenseStatusLike) => void): unknown;
  close(): Promise<void>;
}

export interface LicenseFactoryOptions {
  projectId: string;
  baseUrl: string;
  namespace: string;
  home: string | undefined;
  token: string | undefined;
  /** Epoch milliseconds. */
  now: () => number;
  /** The agent's one service client, shared by every project (not closed by a license). */
  client?: ServiceClient;
}

export type LicenseFactory = (options: LicenseFactoryOptions) => LicenseHandle;
