import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readCache } from './cache-file.js';
import { countIntents, pendingReleases } from './intent-file.js';
import type { LicenseStatus } from './license-status.js';
import { peekIdentity, type RawMachineIdProvider } from './machine-id.js';
import { licensesDir, signedTicketPath, type PathOptions } from './paths.js';
import { signedStatus, summarizeSignedTicket, type SignedTicketSummary } from './signed-status.js';
import { parseTicketKeys, readSignedTicketFile } from './signed-ticket.js';
import { resolvePolicy, type LicensePolicy } from './policy.js';
import { bucketOf, statusOf, validUntilOf, whileReleasing } from './status-rules.js';
import { trustedOffline } from './offline.js';
import { parsePublicKeys } from './offline-format.js';
import type { ServiceClient, ValidationReason } from '@plugin-license/api';
import { isDefinitiveReason, toLicenseError } from './service-errors.js';

/** What `readCachedStatus()` found for one project. */
export interface CachedLicense {
  projectId: string;
  /** The cache file (it may not exist). */
  file: string;
  /** The status a `check()` would give from this file now (`source: 'cache'`). */
  status: LicenseStatus;
  /** Why the file can't be trusted (edited, copied from another machine, too large, …); null when it can or is missing. */
  problem: string | null;
  /** Earlier files of this project set aside as invalid (`…json.invalid-…`), for support. */
  setAside: string[];
  /** Activations or deactivations recorded but not yet settled with the service. */
  pendingIntents: number;
  /** The offline activation the state rests on, if it does: until when, which key verified it (null: unsigned or not checked), for which computer. */
  offline: { validUntil: Date; keyId: string | null; machineName: string } | null;
  /**
   * The signed ticket stored beside the ticket (docs/signed-ticket.md): who signed it, until when,
   * whether it verifies with the configured ticket keys here and why not; null when there is none.
   * A file that cannot be read by the readers' rule is reported with `problem` and no facts.
   */
  signed: SignedTicketSummary | null;
}

export interface ReadCachedStatusOptions extends PathOptions {
  policy?: Partial<LicensePolicy>;
  /** Clock in epoch ms. Default `Date.now`. */
  now?: () => number;
  /** Replaces the OS machine-id lookup (tests). */
  rawMachineIdProvider?: RawMachineIdProvider;
  /** The machine id the caller's application passes to `License`, if it passes its own. */
  machineId?: string;
  /** Keys an offline activation must be signed by (as `License` is given them); one none of them verifies is reported as a problem. */
  offlinePublicKeys?: string[];
  /** The vendor's ticket keys (as `License` is given them): with keys, the status follows the reader's rule over the signed ticket. */
  ticketKeys?: readonly string[] | string;
}

/** The code and machine id behind a reported license, kept out of the report itself (no full code in any output). */
const secrets = new WeakMap<CachedLicense, { code: string; machineId: string }>();

/** What the service says now about a stored license (valid, or why not, and its slots), or why it could not be asked. */
export type ServiceView =
  | { answered: true; valid: boolean; reason: ValidationReason | null; activations: number | null; maxActivations: number | null }
  | { answered: false; error: string };

/**
 * Asks the service about a license {@link readCachedStatus} reported: validate with its stored
 * code and this machine's id, and the code's slots. Inspection only: nothing here changes (the
 * stored state follows at the library's or the agent's next check). Null when nothing usable is
 * stored for it.
 *
 * @example
 * for (const l of await readCachedStatus()) console.log(l.projectId, await askServiceAbout(l, client));
 */
export async function askServiceAbout(license: CachedLicense, client: ServiceClient, options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ServiceView | null> {
  const held = secrets.get(license);
  if (held === undefined) return null;
  const call = { ...(options.signal ? { signal: options.signal } : {}), ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) };
  let valid: boolean;
  let reason: ValidationReason | null;
  try {
    const r = await client.activation.validate({ code: held.code, machine_id: held.machineId, plugin_id: license.projectId }, call);
    valid = r.valid;
    reason = r.valid ? null : (r.reason ?? 'not_activated');
  } catch (e) {
    const definitive = isDefinitiveReason(e);
    if (definitive === null) return { answered: false, error: (await toLicenseError(e, held.code, 'validate', client, options.signal)).message };
    valid = false;
    reason = definitive;
  }
  const slots = await client.activation.status(held.code, call).then(
    (s) => ({ activations: s.activations, maxActivations: s.max_activations }),
    () => ({ activations: null, maxActivations: null }),
  );
  return { answered: true, valid, reason, ...slots };
}

const CACHE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json(\.invalid-.+)?$/;

/**
 * Every license of a namespace as stored on disk, for support tools and `status`: read only, so
 * a tampered or foreign file is reported where it is, never moved, no lock is taken and no
 * machine id is generated. Projects are listed when they have a cache file, a file set aside, or
 * an unfinished operation.
 *
 * @example
 * for (const l of await readCachedStatus({ namespace: 'acme-audio' })) console.log(l.projectId, l.status.valid, l.problem ?? '');
 */
export async function readCachedStatus(options: ReadCachedStatusOptions = {}): Promise<CachedLicense[]> {
  const dir = licensesDir(options);
  const policy = resolvePolicy(options.policy);
  const keys = parsePublicKeys(options.offlinePublicKeys);
  const ticketKeys = parseTicketKeys(options.ticketKeys ?? [], 'the ticketKeys option');
  const now = (options.now ?? Date.now)();
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const current = new Set<string>();
  const setAside = new Map<string, string[]>();
  for (const name of names) {
    const m = CACHE.exec(name);
    if (!m?.[1]) continue;
    if (m[2]) setAside.set(m[1], [...(setAside.get(m[1]) ?? []), join(dir, name)]);
    else current.add(m[1]);
  }
  const intents = await countIntents(dir);
  const ids = [...new Set([...current, ...setAside.keys(), ...intents.keys()])].sort();
  const identityOptions = {
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.machineId === undefined ? {} : { machineId: options.machineId }),
    ...(options.rawMachineIdProvider === undefined ? {} : { rawMachineIdProvider: options.rawMachineIdProvider }),
  };
  const identity = ids.length > 0 ? await peekIdentity(identityOptions) : null;
  const out: CachedLicense[] = [];
  for (const projectId of ids) {
    const file = join(dir, `${projectId}.json`);
    let stored = null;
    let problem: string | null = null;
    if (current.has(projectId)) {
      if (identity === null) {
        problem = 'this machine has no machine id yet, so no cache file can be authentic';
      } else {
        const read = await readCache(file, { projectId, machineId: identity.id, cacheKey: identity.cacheKey }).catch((e: unknown) => ({
          kind: 'invalid' as const,
          problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        }));
        if (read.kind === 'ok' && !trustedOffline(read.license, projectId, identity.id, keys)) problem = 'an offline activation that none of the configured public keys signed';
        else if (read.kind === 'ok') stored = read.license;
        // A license being given back reads as not used, as check() and the ticket say.
        if (stored !== null && intents.has(projectId)) stored = whileReleasing(stored, await pendingReleases(dir, projectId, identity.id).catch(() => []));
        else if (read.kind === 'invalid') problem = read.problem;
        else if (read.kind === 'newer') problem = `written by a newer version of this library (format ${read.format})`;
      }
    }
    const bucket = bucketOf(stored, now, stored?.maxSeenAt ?? 0, policy.clockToleranceMs, validUntilOf(stored, policy));
    const signedRead = identity === null ? undefined : readSignedTicketFile(signedTicketPath(options, projectId));
    const app = identity?.namespace ?? '';
    const machineId = identity?.id ?? '';
    const status = signedStatus(statusOf(projectId, stored, bucket, now, policy, 'cache', problem !== null), identity === null ? undefined : { read: signedRead, keys: ticketKeys, app, machineId }, now);
    const signed =
      signedRead?.kind === 'bad'
        ? { kid: null, validUntil: null, source: null, verifies: false, problem: `the signed ticket ${signedRead.problem}` }
        : summarizeSignedTicket(status.signedTicket, { keys: ticketKeys, app, projectId, machineId, now: Math.floor(now / 1000) });
    const entry: CachedLicense = {
      projectId,
      file,
      status,
      problem,
      setAside: (setAside.get(projectId) ?? []).sort(),
      pendingIntents: intents.get(projectId) ?? 0,
      offline: stored?.offline ? { validUntil: new Date(stored.offline.validUntil), keyId: stored.offline.keyId, machineName: stored.offline.machineName } : null,
      signed,
    };
    if (stored !== null && identity !== null) secrets.set(entry, { code: stored.code, machineId: identity.id });
    out.push(entry);
  }
  return out;
}
