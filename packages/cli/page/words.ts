// What the page says about a license: its source, its dates, its plugin's name (its state: reason-words.ts).
import type { License, Product } from './api.js';

export const SOURCE_WORDS: Record<License['source'], string> = {
  online: 'checked online',
  cache: 'stored on this computer',
  offline: 'offline activation file',
};

// Made on first use: a formatter's locale data takes the browser a while to load, and the
// session is asked for before anything is shown.
let dates: Intl.DateTimeFormat | undefined;
let relatives: Intl.RelativeTimeFormat | undefined;
export const dateFormat = { format: (d: Date): string => (dates ??= new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })).format(d) };
const relative = { format: (n: number, unit: Intl.RelativeTimeFormatUnit): string => (relatives ??= new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })).format(n, unit) };

/** "3 minutes ago", "in 29 days": the largest unit that fits. */
export function fromNow(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [unit, size] of units) if (abs >= size) return relative.format(Math.round(ms / size), unit);
  return relative.format(0, 'minute');
}

export function productName(products: Product[], projectId: string): string {
  return products.find((p) => p.project_id === projectId)?.name ?? `Plugin ${projectId.slice(0, 8)}`;
}
