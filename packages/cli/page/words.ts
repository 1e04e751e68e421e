// What the page says about a license: its source, its dates, its plugin's name (its state: reason-words.ts).
import { parseSignedTicket } from '@plugin-license/api/signed-ticket';
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

/**
 * Until when the vendor's signature carries a valid license (its signed ticket's `valid_until`,
 * read by the format's one parser), or null where it does not apply: no signed ticket, or a
 * license that is not valid. The page verifies nothing: with the vendor's keys configured, the
 * agent's `valid` already says the signature stands here.
 */
export function signedUntil(license: License): Date | null {
  if (!license.valid || license.signed_ticket === undefined) return null;
  const parsed = parseSignedTicket(license.signed_ticket);
  return parsed.ok ? new Date(parsed.ticket.fields.valid_until * 1000) : null;
}

export function productName(products: Product[], projectId: string): string {
  return products.find((p) => p.project_id === projectId)?.name ?? `Plugin ${projectId.slice(0, 8)}`;
}
