import type * as Undici from 'undici';

let loading: Promise<typeof Undici> | undefined;

/**
 * undici, loaded on the first request rather than at import: it is over a hundred modules and
 * about 20 MB resident, which a process that has not asked anything yet does not need (the agent
 * at start, where it would otherwise be most of the start-up time).
 */
export function loadUndici(): Promise<typeof Undici> {
  return (loading ??= import('undici'));
}
