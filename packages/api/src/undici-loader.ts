import type * as Undici from 'undici';

let loading: Promise<typeof Undici> | undefined;

/**
 * undici, loaded on the first request that needs it (through a proxy or an injected dispatcher)
 * rather than at import: it is over a hundred modules and about 10 MB resident, which a process
 * that has not asked for it does not need (the agent above all).
 */
export function loadUndici(): Promise<typeof Undici> {
  return (loading ??= import('undici'));
}
