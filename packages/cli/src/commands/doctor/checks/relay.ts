import { closeDispatcher, createDispatcher, isTimeoutError } from '@plugin-license/api';
import type { ResolvedConfig } from '@plugin-license/licensing';
import { request } from 'undici';
import type { Context } from '../../../context.js';
import type { Add, Facts } from '../report.js';

/**
 * The signed tickets' side (docs/signed-ticket.md): which keys the plugin side expects
 * (`ticket_keys`), the vendor's relay (`relay_url`), and whether the relay answers and signs with
 * a key this program trusts, asked at its public `GET /.well-known/plugin-license-keys` (the
 * first key listed signs). Nothing is written and no license is asked about here; what each
 * stored signed ticket says (its signer, until when) is in the licenses section.
 */
export async function relay(ctx: Context, config: ResolvedConfig, facts: Facts, add: Add): Promise<void> {
  const section = 'relay';
  const keys = config.ticketKeys.value;
  const trusted = keys.map((k) => k.kid);
  const relayUrl = config.relayUrl.value;
  const seen: NonNullable<Facts['relay']> = {
    ticket_keys: trusted,
    ticket_keys_source: config.ticketKeys.source,
    relay_url: relayUrl ?? null,
    reachable: null,
    signer: null,
    listed: null,
  };
  facts.relay = seen;
  add(
    keys.length === 0
      ? { section, name: 'ticket keys', level: 'info', detail: "none: no signed ticket is stored or required; plugins built without the vendor's keys follow the ticket alone" }
      : { section, name: 'ticket keys', level: 'ok', detail: `${trusted.join(', ')} (${config.ticketKeys.source}): plugins built with these play only on a ticket one of them signed` },
  );
  if (relayUrl === undefined) {
    add({
      section,
      name: 'relay',
      level: 'info',
      detail: keys.length === 0 ? 'none: activation goes to the service' : 'none: activation goes to the service, so signed tickets come only from signed offline responses',
    });
    return;
  }
  add({ section, name: 'relay', level: 'info', detail: `${relayUrl} (${config.relayUrl.source}): activation, validation and release go there` });
  const url = `${new URL(relayUrl).origin}/.well-known/plugin-license-keys`;
  const dispatcher = await createDispatcher({ timeoutMs: ctx.requestTimeoutMs, ...(config.proxy.value === undefined ? {} : { proxy: config.proxy.value }), env: ctx.env });
  try {
    const { status, text } = await ctx.deadline.bound(
      (async () => {
        const answer = await request(url, { dispatcher, headersTimeout: ctx.requestTimeoutMs, bodyTimeout: ctx.requestTimeoutMs });
        return { status: answer.statusCode, text: await answer.body.text() };
      })(),
      'GET /.well-known/plugin-license-keys, the relay check',
    );
    seen.reachable = true;
    const listed = status === 200 ? keysOf(text) : undefined;
    if (listed === undefined) {
      add({
        section,
        name: 'signer',
        level: 'warning',
        detail: `the relay answered HTTP ${status} without its key list at ${url} (a relay on Supabase serves only its function's paths); its signer shows in the signed tickets below`,
      });
      return;
    }
    seen.listed = listed;
    seen.signer = listed[0] ?? null;
    const signer = listed[0];
    if (signer === undefined) {
      add({ section, name: 'signer', level: 'failed', detail: 'the relay lists no key', fix: "the vendor's relay is misconfigured (RELAY_SIGNING_KEY); contact the vendor" });
    } else if (!trusted.includes(signer)) {
      add({
        section,
        name: 'signer',
        level: 'failed',
        detail: `the relay signs with key ${signer}, which this program does not trust (trusted: ${trusted.join(', ') || 'none'}): what it signs is not stored, and plugins built with the vendor's keys will not play`,
        fix: "the relay and this program must share a key: the vendor checks the relay's signing key (RELAY_SIGNING_KEY) against the keys built in here (ticket_keys)",
      });
    } else {
      add({ section, name: 'signer', level: 'ok', detail: `the relay signs with key ${signer}, one this program trusts${listed.length > 1 ? ` (it also lists ${listed.slice(1).join(', ')})` : ''}` });
    }
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    seen.reachable = false;
    const e = err as Error & { code?: string; cause?: { code?: string } };
    add({
      section,
      name: 'signer',
      level: 'failed',
      detail: `the relay at ${new URL(relayUrl).host} does not answer (${isTimeoutError(err) ? err.message : e.code ?? e.cause?.code ?? e.message})`,
      fix: "check the relay URL and the network; plugins play on their signed tickets until each one's valid until",
    });
  } finally {
    await closeDispatcher(dispatcher, ctx.deadline.remainingMs());
  }
}

/** The key ids of a relay's `{keys: [{kid, public_key}]}`, in its order; undefined for anything else. */
function keysOf(text: string): string[] | undefined {
  try {
    const body = JSON.parse(text) as { keys?: unknown } | null;
    if (typeof body !== 'object' || body === null || !Array.isArray(body.keys)) return undefined;
    const kids = body.keys.map((k: unknown) => (typeof k === 'object' && k !== null && typeof (k as { kid?: unknown }).kid === 'string' ? (k as { kid: string }).kid : null));
    return kids.every((k): k is string => k !== null && /^[0-9a-f]{16}$/.test(k)) ? kids : undefined;
  } catch {
    return undefined;
  }
}
