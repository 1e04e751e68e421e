import { askServiceAbout, readCachedStatus, type CachedLicense, type ResolvedConfig, type ServiceView } from '@plugin-license/licensing';
import type { Context } from '../../../context.js';
import { classify } from '../../../errors.js';
import { nextCommand } from '../../../next-step.js';
import { when } from '../../../output.js';
import { nameField, projectLabel } from '../../../plugin-names.js';
import type { Add, Facts, Level } from '../report.js';

export async function readLicenses(config: ResolvedConfig, add: Add): Promise<CachedLicense[] | undefined> {
  try {
    return await readCachedStatus({
      namespace: config.namespace.value,
      ...(config.home.value === undefined ? {} : { home: config.home.value }),
      offlinePublicKeys: config.offlinePublicKeys.value,
      ticketKeys: config.ticketKeys.value.map((k) => k.text),
    });
  } catch (err) {
    add({ section: 'licenses', name: 'cache', level: 'failed', detail: classify(err).message });
    return undefined;
  }
}

export async function licenses(
  ctx: Context,
  config: ResolvedConfig,
  cached: CachedLicense[] | undefined,
  projectId: string | undefined,
  serviceUp: boolean,
  facts: Facts,
  add: Add,
): Promise<void> {
  const section = 'licenses';
  if (cached === undefined) return; // readLicenses said why
  const shown = projectId === undefined ? cached : cached.filter((l) => l.projectId === projectId);
  if (projectId !== undefined && shown.length === 0) {
    add({ section, name: projectId, shown: projectLabel(projectId), level: 'failed', detail: 'not activated on this machine', fix: `activate it: ${nextCommand(ctx, 'here', 'activate', 'YOUR-CODE', '--project', projectId)}` });
  }
  if (projectId === undefined && cached.length === 0) add({ section, name: 'licenses', level: 'info', detail: 'none stored in this namespace' });
  // The stored state may be behind the service (a revocation it has not heard of yet): when the
  // service answers, its word is the verdict; nothing here is changed by asking.
  const client = serviceUp ? ctx.client(false, { retry: false, config }) : undefined;
  const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());
  facts.licenses = [];
  for (const l of shown) {
    const s = l.status;
    const view: ServiceView | null = client ? await askServiceAbout(l, client) : null;
    const parts = [
      `stored: ${s.valid ? 'valid' : `not valid: ${s.reason}`}`,
      `code ${s.codeHint ?? '-'}`,
      `source ${s.source}`,
      `slots ${s.activations === null ? '-' : `${s.activations} of ${s.maxActivations}`}`,
      `last online check ${when(s.checkedAt)}`,
      `${l.offline ? 'valid' : 'valid offline'} until ${when(s.graceUntil)}`,
    ];
    if (view?.answered) {
      const slots = view.activations === null ? '' : ` (${view.activations} of ${view.maxActivations} slots in use)`;
      parts.unshift(`the service says ${view.valid ? 'valid' : `not valid: ${view.reason}`}${slots}`);
    } else if (view && !view.answered) parts.push(`the service could not be asked: ${view.error}`);
    else if (s.reason !== 'not_activated' && !serviceUp) parts.push('the service was not asked (see the service checks)');
    if (l.offline) {
      parts.push(`activated offline for ${l.offline.machineName || 'an unnamed machine'}, ${l.offline.keyId ? `signed by key ${l.offline.keyId}` : 'unsigned'}`);
    }
    const signedWords = signedPart(l, config);
    if (signedWords !== undefined) parts.push(signedWords);
    if (l.problem) parts.push(l.problem);
    if (l.setAside.length) parts.push(`files set aside: ${l.setAside.join(', ')}`);
    if (l.pendingIntents) parts.push(`${l.pendingIntents} unfinished operation(s), settled at the next online call`);
    // With the vendor's keys, the service's valid is not enough: a plugin plays only on a signed ticket that stands here.
    const unsignedHere = config.ticketKeys.value.length > 0 && !s.valid && (s.reason === 'unsigned' || l.signed?.verifies === false);
    const valid = unsignedHere ? false : view?.answered ? view.valid : s.valid;
    const reason = unsignedHere ? s.reason : view?.answered ? view.reason : s.reason;
    const behind = view?.answered === true && view.valid !== s.valid;
    if (behind) parts.push("the stored state follows the service's word at the next check");
    const level: Level = !valid ? 'failed' : l.setAside.length || l.pendingIntents || behind ? 'warning' : 'ok';
    add({ section, name: l.projectId, shown: projectLabel(l.projectId), level, detail: parts.join('; '), fix: fixFor(ctx, reason, l.projectId) ?? (behind ? nextCommand(ctx, 'here', 'validate', '--project', l.projectId) : undefined) });
    facts.licenses.push({
      project_id: l.projectId,
      ...nameField(l.projectId),
      code_hint: s.codeHint,
      valid,
      reason,
      stored: { valid: s.valid, reason: s.reason, source: s.source, activations: s.activations, max_activations: s.maxActivations, checked_at: iso(s.checkedAt), validated_at: iso(s.validatedAt), grace_until: iso(s.graceUntil), next_check_at: iso(s.nextCheckAt) },
      service: view === null ? null : view.answered ? { valid: view.valid, reason: view.reason, activations: view.activations, max_activations: view.maxActivations } : { error: view.error },
      signed: l.signed === null ? null : { kid: l.signed.kid, valid_until: iso(l.signed.validUntil), source: l.signed.source, verifies: l.signed.verifies, problem: l.signed.problem },
      offline: l.offline ? { valid_until: l.offline.validUntil.toISOString(), key_id: l.offline.keyId, machine_name: l.offline.machineName } : null,
      problem: l.problem,
      set_aside: l.setAside,
      pending_operations: l.pendingIntents,
    });
  }
}

/**
 * What a license's signed ticket says, for its line: who signed it and until when, and whether it
 * stands here; with keys configured and none stored, that plugins built with the keys do not play.
 */
function signedPart(l: CachedLicense, config: ResolvedConfig): string | undefined {
  const s = l.signed;
  if (s === null) {
    return config.ticketKeys.value.length > 0 && l.status.codeHint !== null ? "no signed ticket: plugins built with the vendor's keys do not play" : undefined;
  }
  const who = s.kid === null ? 'signed ticket (signer unreadable)' : `signed by key ${s.kid}${s.source === null ? '' : ` (${s.source})`}`;
  const until = s.validUntil === null ? '' : ` until ${when(s.validUntil)}`;
  return s.verifies ? `${who}${until}` : `${who}${until}, not accepted here: ${s.problem}`;
}

function fixFor(ctx: Context, reason: string | null, projectId: string): string | undefined {
  switch (reason) {
    case null:
      return undefined;
    case 'grace_expired':
      return `connect this machine to the internet once, then: ${nextCommand(ctx, 'here', 'validate', '--project', projectId)} (a machine that is never online: ${nextCommand(ctx, 'here', 'offline', 'renew', '--project', projectId, '--out', 'renew-request.json')})`;
    case 'clock_tampered':
      return `set the clock right (automatic date and time), then validate online: ${nextCommand(ctx, 'here', 'validate', '--project', projectId)}`;
    case 'cache_invalid':
      return 'the stored state was edited or copied from another machine: activate again';
    case 'unsigned':
      return `no ticket signed by the vendor is stored: validate online through the vendor's relay (relay_url): ${nextCommand(ctx, 'here', 'validate', '--project', projectId)}`;
    case 'code_revoked':
      return 'the vendor revoked this code: contact the vendor for a new one';
    case 'deactivated':
    case 'not_activated':
      return `activate again: ${nextCommand(ctx, 'here', 'activate', 'YOUR-CODE', '--project', projectId)}`;
    default:
      return 'activate again, or contact the vendor';
  }
}
