import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { codeHint, type ServiceClient, type ServiceClientOptions } from '@plugin-license/api';
import { checkSignedAnswer, signedStatus } from './signed-status.js';
import { encodeSignedTicket, parseTicketKeys } from './signed-ticket.js';
import * as z from 'zod';
import { moveAside, removeFileDurably, writeFileAtomic } from '@plugin-license/fs';
import { readCapped, type StoredLicense } from './cache-file.js';
import { DEFAULT_OFFLINE_MAX_DAYS, requireBaseUrl, resolveConfig } from './config.js';
import { LicenseError } from './errors.js';
import { normalizeCode } from './input.js';
import type { LicenseStatus } from './license-status.js';
import { openProjectStore, type LicenseStore, type WriteStep } from './license-store.js';
import { normalizeCallerMachineId, resolveIdentity, type MachineIdentity, type RawMachineIdProvider } from './machine-id.js';
import {
  OfflineResponse as OfflineResponseSchema,
  parseOfflineDocument,
  parsePrivateKey,
  parsePublicKeys,
  signResponse,
  verifyResponse,
  OFFLINE_VERSION,
  type OfflinePublicKey,
  type OfflineRelease,
  type OfflineRequest,
  type OfflineResponse,
} from './offline-format.js';
import { assertProjectId, offlineDir, resolveNamespace } from './paths.js';
import { resolvePolicy, type LicensePolicy } from './policy.js';
import { createLicenseClient } from './service-client.js';
import { codeGoneError, toLicenseError } from './service-errors.js';
import { bucketOf, statusOf, validUntilOf } from './status-rules.js';

/**
 * The offline exchange (docs/offline-activation.md): a machine that never goes online writes a
 * request; any online computer answers it for that machine's id; the offline machine imports the
 * answer as its license state, valid with `source: "offline"` until `valid_until`. Renewal and
 * release go the same way. The files are those of offline-format.ts.
 */

const DAY = 86_400_000;
/** How long a response is valid when the online step is not told: 90 days. */
export const DEFAULT_OFFLINE_VALID_DAYS = 90;
/** Pending requests kept per project (a customer who asked several times may import any of the latest). */
const MAX_PENDING = 16;

type Dispatcher = NonNullable<ServiceClientOptions['dispatcher']>;

/** Where the offline machine's state is: the same namespace, home and machine id as its `License`. */
export interface OfflineMachineOptions {
  /** One per vendor. Default `PLUGIN_LICENSE_APP`, else `plugin-license`. */
  namespace?: string;
  /** One root folder instead of the per-OS folders. Default `PLUGIN_LICENSE_HOME`. */
  home?: string;
  /** The application's own machine id, if it passes one to `License`. */
  machineId?: string;
  /** Clock in epoch ms; injected by tests. Default `Date.now`. */
  now?: () => number;
  /** Replaces the OS machine-id lookup (tests). */
  rawMachineIdProvider?: RawMachineIdProvider;
  /** Overrides of the licensing policy (the lock's stale time, the revalidation period). */
  policy?: Partial<LicensePolicy>;
  /** A test hook, as `License`'s `onStep`: called after each durable step of a write. Leave it unset. */
  onStep?: (step: WriteStep) => void;
}

/** Options of {@link createOfflineRequest}. */
export interface OfflineRequestOptions extends OfflineMachineOptions {
  /** The project (plugin) id, a UUID. */
  projectId: string;
  /** The code to activate, if the customer has it on the offline machine (else the online step gives it). */
  code?: string;
  /** Extend the license this machine holds instead of activating: the online step validates (no slot taken). */
  renew?: boolean;
}

/** Options of {@link importOfflineResponse}. */
export interface OfflineImportOptions extends OfflineMachineOptions {
  /** The project the response must be for; default: the response's own. */
  projectId?: string;
  /** Keys the response must be signed by. Default `offline_public_keys` in `config.json`; none: unsigned responses are accepted. */
  offlinePublicKeys?: string[];
  /** Longest validity accepted, in days from now. Default `offline_max_days` in `config.json`, else 365. */
  offlineMaxDays?: number;
  /**
   * The vendor's public keys a response's signed ticket must verify with (as `License`'s
   * `ticketKeys`). Default `PLUGIN_LICENSE_TICKET_KEYS`, `ticket_keys` in `config.json` or the
   * executable's baked keys. With keys, a response must carry a signed ticket that verifies.
   */
  ticketKeys?: readonly string[] | string;
}

/** How the online step reaches the service (as `License` does). */
export interface OfflineServiceOptions {
  /** Service base URL. Default `PLUGIN_LICENSE_BASE_URL`, else `base_url` in `config.json`. */
  baseUrl?: string;
  /** A client to use (not closed); otherwise one is created and closed. */
  client?: ServiceClient;
  /** undici dispatcher for the created client (tests). */
  dispatcher?: Dispatcher;
  /** A proxy URL, or `false` for none. Default: the standard proxy variables. */
  proxy?: string | false;
  /** For the created client's configuration lookup. */
  namespace?: string;
  home?: string;
  /** Clock in epoch ms. Default `Date.now`. */
  now?: () => number;
}

/** Options of {@link answerOfflineRequest}. */
export interface OfflineAnswerOptions extends OfflineServiceOptions {
  /** The code to activate; default the one in the request. */
  code?: string;
  /** How many days the response keeps the offline machine licensed (1-3650). Default 90. */
  validDays?: number;
  /**
   * The longest validity the importing machines accept (their `offline_max_days`; this
   * namespace's own by default, 365 unless configured): a longer `validDays` is refused before
   * the service is asked, since the import would refuse the response and the slot would be taken
   * in vain.
   */
  offlineMaxDays?: number;
  /**
   * An Ed25519 private key (PKCS#8 PEM, as `plugin-license offline keygen` writes it) to sign the
   * response with. The response then also carries a signed ticket for the request's machine
   * (docs/signed-ticket.md: `source` "offline", `valid_until` the response's, `app` this
   * namespace), signed with the same key, so plugins built with its public key play on it.
   */
  signingKeyPem?: string;
  /** Where the key came from, for messages (a file path). */
  signingKeyName?: string;
}

/** What {@link confirmOfflineRelease} did. */
export interface OfflineReleaseResult {
  projectId: string;
  machineId: string;
  machineName: string;
  codeHint: string;
  /** True when this call released the slot. */
  released: boolean;
  /** True when the slot had been released before (the proof was confirmed already). */
  alreadyReleased: boolean;
  activations: number | null;
  maxActivations: number | null;
}

/**
 * Step 1, on the offline machine: a request for an online computer to answer. Its nonce is
 * remembered as pending, so only an answer to it can be imported. With `renew`, the code is the
 * one this machine holds (unless given).
 *
 * @example
 * const request = await createOfflineRequest({ projectId, code: '3F2A9C1E-0B7D-4E55-9A10-77C2D4E8B601' });
 * writeFileSync('request.json', offlineJson(request)); // carry it to a computer that is online
 */
export async function createOfflineRequest(options: OfflineRequestOptions): Promise<OfflineRequest> {
  const m = await machine(options, options.projectId);
  let code = options.code === undefined ? null : normalizeCode(options.code);
  const renew = options.renew === true;
  return m.store.locked(async () => {
    if (renew && code === null) {
      const read = await m.store.readHeld();
      if (read.kind !== 'ok') {
        throw new LicenseError('not_activated', `nothing to renew: this machine holds no license of project ${m.projectId}; make a request without renew (and with the code) to activate it`);
      }
      code = read.license.code;
    }
    const t = m.now();
    const request: OfflineRequest = {
      type: 'offline_request',
      version: OFFLINE_VERSION,
      project_id: m.projectId,
      machine_id: m.identity.id,
      machine_name: machineName(),
      code,
      renew,
      nonce: randomBytes(16).toString('base64url'),
      created_at: new Date(t).toISOString(),
    };
    const pending = await readPending(m.pendingFile);
    pending.push({ nonce: request.nonce, machineId: m.identity.id, createdAt: t });
    await writePending(m.pendingFile, pending.slice(-MAX_PENDING));
    return request;
  });
}

/**
 * Step 2, on any computer that is online: asks the service for the request's machine id
 * (activate; validate for a renewal, so no slot is taken) and returns the response to carry
 * back, signed when a key is given. Throws as `License.activate()` does (`code_revoked`,
 * `code_not_found`, `max_activations_reached`, `unavailable`, …), and then nothing is returned.
 * Takes no token. Answering the same request again is harmless: the service activates a
 * machine id once.
 *
 * @example
 * const response = await answerOfflineRequest(readFileSync('request.json', 'utf8'), { validDays: 90 });
 * writeFileSync('response.json', offlineJson(response));
 */
export async function answerOfflineRequest(request: OfflineRequest | string, options: OfflineAnswerOptions = {}): Promise<OfflineResponse> {
  const req = parseOfflineDocument(request, 'offline_request');
  const code = options.code !== undefined ? normalizeCode(options.code) : req.code;
  if (code === null) throw new LicenseError('invalid_argument', 'the request carries no code; give the code to activate');
  const days = options.validDays ?? DEFAULT_OFFLINE_VALID_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > 3650) throw new LicenseError('invalid_argument', `validDays must be a whole number of days from 1 to 3650, got ${String(days)}`);
  // The importing machine's cap is the same setting (the vendor configures both): check it before the slot is taken.
  const maxDays = options.offlineMaxDays ?? resolveConfig({ app: options.namespace, home: options.home }).offlineMaxDays.value;
  if (days > maxDays) {
    throw new LicenseError('invalid_argument', `a response valid for ${days} days would be refused by the offline machine, which accepts at most ${maxDays} (offline_max_days); ask for at most ${maxDays} days, or raise offline_max_days on both computers`);
  }
  // The key is read before the service is asked: a bad key must not leave a slot taken without a response.
  const signer = options.signingKeyPem === undefined ? undefined : parsePrivateKey(options.signingKeyPem, options.signingKeyName ?? 'the signing key');
  return withClient(options, async (client) => {
    const body = { code, machine_id: req.machine_id, plugin_id: req.project_id };
    let activations: number | null = null;
    let maxActivations: number | null = null;
    if (req.renew) {
      let r;
      try {
        r = await client.activation.validate(body);
      } catch (e) {
        throw await toLicenseError(e, code, 'validate', client);
      }
      if (!r.valid) {
        const reason = r.reason ?? 'not_activated';
        if (reason === 'code_revoked' || reason === 'code_not_found') throw codeGoneError(reason, code);
        throw new LicenseError('not_activated', `code ${codeHint(code)} is not active on machine ${req.machine_id} (${reason}), so there is nothing to renew; answer a request made without renew to activate it`);
      }
      try {
        const s = await client.activation.status(code, { timeoutMs: 5000 });
        activations = s.activations;
        maxActivations = s.max_activations;
      } catch {
        // Counts are for information; the renewal stands without them.
      }
    } else {
      let r;
      try {
        r = await client.activation.activate(body);
      } catch (e) {
        throw await toLicenseError(e, code, 'activate', client);
      }
      if (!r.success) throw new LicenseError('unavailable', `the service did not activate code ${codeHint(code)} and gave no reason; try again later`);
      activations = r.activations;
      maxActivations = r.max_activations;
    }
    const t = (options.now ?? Date.now)();
    const validUntil = t + days * DAY;
    const response: OfflineResponse = {
      type: 'offline_response',
      version: OFFLINE_VERSION,
      project_id: req.project_id,
      machine_id: req.machine_id,
      machine_name: req.machine_name,
      nonce: req.nonce,
      code,
      renew: req.renew,
      valid: true,
      activations,
      max_activations: maxActivations,
      validated_at: new Date(t).toISOString(),
      valid_until: new Date(validUntil).toISOString(),
    };
    if (signer === undefined) return response;
    // The vendor's signature on the ticket a plugin plays on, for the machine the request is from.
    const signedTicket = encodeSignedTicket(
      {
        app: resolveNamespace(options.namespace),
        project_id: req.project_id.toLowerCase(),
        machine_id: req.machine_id,
        code_hint: codeHint(code),
        source: 'offline',
        issued_at: Math.floor(t / 1000),
        valid_until: Math.floor(validUntil / 1000),
      },
      { privateKey: signer.key, kid: signer.keyId },
    );
    return signResponse({ ...response, signed_ticket: signedTicket }, signer);
  });
}

/**
 * Step 3, on the offline machine: checks a response against the import rules and stores it as
 * this machine's license state, atomically under the cache lock. Refused (`offline_refused`,
 * nothing stored, the pending request kept) when it is for another project or machine, answers
 * no pending request (or was imported already), is expired or valid longer than allowed, carries
 * a negative answer, or is unsigned or wrongly signed while keys are configured. A file that
 * can't be read is `invalid_offline_file`. The license is then valid with `source: "offline"`
 * until `valid_until`; a running agent sees it within a second.
 *
 * @example
 * const status = await importOfflineResponse(readFileSync('response.json', 'utf8'), { projectId });
 * console.log(status.valid, status.source, status.graceUntil); // true 'offline' 2027-02-21T…
 */
export async function importOfflineResponse(response: OfflineResponse | string, options: OfflineImportOptions = {}): Promise<LicenseStatus> {
  const res = parseOfflineDocument(response, 'offline_response');
  if (options.projectId !== undefined) {
    assertProjectId(options.projectId);
    if (options.projectId.toLowerCase() !== res.project_id.toLowerCase()) {
      throw refused(`the response is for project ${res.project_id}, not ${options.projectId.toLowerCase()}; import the response made for this project`);
    }
  }
  const m = await machine(options, res.project_id);
  if (res.machine_id !== m.identity.id) {
    throw refused(`the response was made for machine ${res.machine_id}${res.machine_name ? ` (${res.machine_name})` : ''}, not this one (${m.identity.id}); import it on that machine, or make a request here`);
  }
  if (res.valid !== true) throw refused('the response carries a negative answer of the service; nothing to import');
  const config =
    options.offlinePublicKeys === undefined || options.offlineMaxDays === undefined || options.ticketKeys === undefined ? resolveConfig({ app: options.namespace, home: options.home }) : undefined;
  const keys = parsePublicKeys(options.offlinePublicKeys ?? config?.offlinePublicKeys.value);
  const keyId = verifyResponse(res, keys);
  const ticketKeys = options.ticketKeys !== undefined ? parseTicketKeys(options.ticketKeys, 'the ticketKeys option') : (config?.ticketKeys.value ?? []);
  const maxDays = options.offlineMaxDays ?? config?.offlineMaxDays.value ?? DEFAULT_OFFLINE_MAX_DAYS;
  const t = m.now();
  const validUntil = Date.parse(res.valid_until);
  const validatedAt = Date.parse(res.validated_at);
  if (validUntil <= t) throw refused(`the response expired on ${res.valid_until}; make a new request`);
  if (validUntil > t + maxDays * DAY) {
    throw refused(`the response is valid until ${res.valid_until}, longer than the ${maxDays} days this application allows; ask for a response valid for at most ${maxDays} days`);
  }
  if (validatedAt > validUntil) throw refused('the response was validated after it expires; it was not made by plugin-license');
  // With the vendor's ticket keys, what plugins play on is the signed ticket: a response without
  // one is refused while its request is still pending (a signed answer to it can still be
  // imported), and one that does not verify is refused as online (signed_ticket_refused).
  if (ticketKeys.length > 0 && res.signed_ticket === undefined) {
    throw refused("the response carries no ticket signed by the vendor, which this application's plugins need (ticket keys are configured); ask for the response again, made with offline activate --sign-key and the vendor's key");
  }
  const signed = checkSignedAnswer(res.signed_ticket, { keys: ticketKeys, app: m.identity.namespace, projectId: m.projectId, machineId: m.identity.id, now: Math.floor(t / 1000), from: 'the offline response' });
  if (signed.kind === 'refused') throw signed.error;
  return m.store.locked(async () => {
    const pending = await readPending(m.pendingFile);
    const left = pending.filter((p) => !(p.nonce === res.nonce && p.machineId === m.identity.id));
    if (left.length === pending.length) {
      throw refused('the response answers no pending request of this machine: it was imported already, or answers a request made elsewhere; make a new request');
    }
    // The newest word about this machine's slot of the code: a release it left unfinished is settled.
    const { license, ticketError } = await m.store.updateHeld((cur) => offlineState(res, cur, t, keyId, m.policy), {
      settlesReleasesOf: res.code,
      signed: signed.kind === 'verified' ? signed.text : null,
    });
    await writePending(m.pendingFile, left);
    await removeFileDurably(m.releaseFile);
    // Imported and stored; a ticket that could not be written is reported as a state that could not be.
    if (ticketError) throw ticketError;
    return statusNow(m, license, t, ticketKeys);
  });
}

/**
 * Release, on the offline machine, under the cache's lock: the store's one "before releasing"
 * step first (the release recorded as an intent, the ticket made "not licensed"), since the proof
 * frees the slot once confirmed online and no ticket may grant it once a proof exists; then the
 * proof, durably; then the state is removed and the intent settled. It returns the release proof
 * to confirm online. Asked again after that, it returns the same proof, so a lost file can be
 * made again. Killed before the state is removed, the license reads as not used here (the intent):
 * the release run again finishes it, and a computer that goes online settles it with the service.
 *
 * @example
 * const proof = await releaseOffline({ projectId });
 * writeFileSync('release.json', offlineJson(proof)); // then: confirmOfflineRelease on a computer that is online
 */
export async function releaseOffline(options: OfflineMachineOptions & { projectId: string }): Promise<OfflineRelease> {
  const m = await machine(options, options.projectId);
  return m.store.locked(async () => {
    const read = await m.store.readHeld();
    if (read.kind !== 'ok') {
      const earlier = await readRelease(m.releaseFile);
      if (earlier !== null) {
        // Released already (killed before its intent was settled, perhaps): the intent is done.
        await m.store.updateHeld(() => undefined, { settlesReleasesOf: earlier.code });
        return earlier;
      }
      throw new LicenseError('not_activated', `project ${m.projectId} is not activated on this machine; nothing to release`);
    }
    const proof: OfflineRelease = {
      type: 'offline_release',
      version: OFFLINE_VERSION,
      project_id: m.projectId,
      machine_id: m.identity.id,
      machine_name: machineName(),
      code: read.license.code,
      nonce: randomBytes(16).toString('base64url'),
      released_at: new Date(m.now()).toISOString(),
    };
    // The release recorded and the ticket saying "not licensed" first (the store's one "before
    // releasing" step), then the proof: if the state removal then fails, the proof exists, the
    // intent keeps the license unused, and the next release returns the proof.
    const { intent } = await m.store.beforeReleaseHeld(proof.code, m.now());
    try {
      await writeFileAtomic(m.releaseFile, `${JSON.stringify(proof)}\n`);
    } catch (e) {
      // No proof, so nothing was released: the license is used again (ticket and status follow the state).
      await m.store.updateHeld(() => undefined, intent ? { settles: intent } : {}).catch(() => undefined);
      throw e;
    }
    m.store.step('release-proof-written');
    const { ticketError } = await m.store.updateHeld(() => null, { settlesReleasesOf: proof.code });
    if (ticketError) throw ticketError;
    return proof;
  });
}

/**
 * Release, on any computer that is online: frees the slot a release proof names (deactivate for
 * its machine id). Confirming the same proof again says `alreadyReleased`. A machine id that
 * never held the code's slot is `not_activated`.
 *
 * @example
 * const r = await confirmOfflineRelease(readFileSync('release.json', 'utf8'));
 * console.log(r.released || r.alreadyReleased, `${r.activations}/${r.maxActivations}`);
 */
export async function confirmOfflineRelease(release: OfflineRelease | string, options: OfflineServiceOptions = {}): Promise<OfflineReleaseResult> {
  const proof = parseOfflineDocument(release, 'offline_release');
  return withClient(options, async (client) => {
    const body = { code: proof.code, machine_id: proof.machine_id, plugin_id: proof.project_id };
    let r;
    try {
      r = await client.activation.deactivate(body);
    } catch (e) {
      throw await toLicenseError(e, proof.code, 'deactivate', client);
    }
    const result = {
      projectId: proof.project_id,
      machineId: proof.machine_id,
      machineName: proof.machine_name,
      codeHint: codeHint(proof.code),
      activations: r.activations ?? null,
      maxActivations: r.max_activations ?? null,
    };
    if (r.success) return { ...result, released: true, alreadyReleased: false };
    let reason: string | null = null;
    try {
      const v = await client.activation.validate(body);
      reason = v.valid ? null : (v.reason ?? 'not_activated');
    } catch (e) {
      throw await toLicenseError(e, proof.code, 'validate', client);
    }
    if (reason === 'deactivated') return { ...result, released: false, alreadyReleased: true };
    throw new LicenseError('not_activated', `machine ${proof.machine_id} holds no slot of code ${codeHint(proof.code)} (${reason ?? 'the service released nothing'}); nothing was released`);
  });
}

/**
 * Whether a stored offline activation stands under the configured keys: without keys, always;
 * with keys, only when the response it was imported from verifies and matches it.
 */
export function trustedOffline(license: StoredLicense, projectId: string, machineId: string, keys: readonly OfflinePublicKey[]): boolean {
  if (license.offline === undefined || keys.length === 0) return true;
  try {
    const res = OfflineResponseSchema.parse(JSON.parse(license.offline.response));
    verifyResponse(res, keys);
    return (
      res.project_id.toLowerCase() === projectId &&
      res.machine_id === machineId &&
      res.code === license.code &&
      res.nonce === license.offline.nonce &&
      Date.parse(res.valid_until) === license.offline.validUntil
    );
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------

interface Machine {
  projectId: string;
  identity: MachineIdentity;
  store: LicenseStore;
  policy: LicensePolicy;
  now: () => number;
  pendingFile: string;
  releaseFile: string;
}

async function machine(options: OfflineMachineOptions, projectId: string): Promise<Machine> {
  if (!options || typeof options !== 'object') throw new LicenseError('invalid_argument', 'offline functions need an options object');
  assertProjectId(projectId);
  const id = projectId.toLowerCase();
  const where = { ...(options.namespace === undefined ? {} : { namespace: options.namespace }), ...(options.home === undefined ? {} : { home: options.home }) };
  const identity = await resolveIdentity({
    ...where,
    ...(options.machineId === undefined ? {} : { machineId: normalizeCallerMachineId(options.machineId) }),
    ...(options.rawMachineIdProvider === undefined ? {} : { rawMachineIdProvider: options.rawMachineIdProvider }),
  });
  const policy = resolvePolicy(options.policy);
  const now = options.now ?? Date.now;
  // The ticket is written with the state (an import is verified against the keys before it is stored).
  const store = openProjectStore(id, identity, where, policy.lockStaleMs, () => ({ now: now(), policy }), options.onStep);
  const dir = offlineDir(where);
  return { projectId: id, identity, store, policy, now, pendingFile: join(dir, `${id}.pending.json`), releaseFile: join(dir, `${id}.release.json`) };
}

function offlineState(res: OfflineResponse, cur: StoredLicense | null, t: number, keyId: string | null, policy: LicensePolicy): StoredLicense {
  // The online computer's clock may be ahead of this one: never record an answer from the future.
  const validatedAt = Math.min(Date.parse(res.validated_at), t);
  return {
    code: res.code,
    status: 'active',
    reason: null,
    activations: res.activations,
    maxActivations: res.max_activations,
    activatedAt: cur?.code === res.code ? cur.activatedAt : t,
    validatedAt,
    answeredAt: validatedAt,
    attemptedAt: cur?.attemptedAt ?? null,
    failures: 0,
    retryAt: null,
    nextCheckAt: t + policy.revalidateIntervalMs,
    maxSeenAt: Math.max(cur?.maxSeenAt ?? 0, t),
    revision: 0,
    offline: { validUntil: Date.parse(res.valid_until), nonce: res.nonce, machineName: res.machine_name, keyId, response: JSON.stringify(res) },
  };
}

function statusNow(m: Machine, license: StoredLicense | null, t: number, keys: ReturnType<typeof parseTicketKeys>): LicenseStatus {
  const bucket = bucketOf(license, t, license?.maxSeenAt ?? t, m.policy.clockToleranceMs, validUntilOf(license, m.policy));
  return signedStatus(statusOf(m.projectId, license, bucket, t, m.policy, 'cache', false), { read: m.store.readSigned(), keys, app: m.identity.namespace, machineId: m.identity.id }, t);
}

function machineName(): string {
  try {
    return hostname().slice(0, 256);
  } catch {
    return '';
  }
}

function refused(message: string): LicenseError {
  return new LicenseError('offline_refused', message);
}

async function withClient<T>(options: OfflineServiceOptions, fn: (client: ServiceClient) => Promise<T>): Promise<T> {
  if (options.client !== undefined) return fn(options.client);
  const config = options.baseUrl === undefined ? resolveConfig({ app: options.namespace, home: options.home }) : undefined;
  const baseUrl = requireBaseUrl(config, options.baseUrl);
  const proxy = options.proxy ?? config?.proxy.value;
  const client = createLicenseClient({
    baseUrl,
    ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    ...(proxy === undefined ? {} : { proxy }),
  });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

// Pending requests: the nonces this machine asked with, so only answers to them are imported.

const Pending = z.strictObject({
  format: z.literal(1),
  requests: z.array(z.strictObject({ nonce: z.string(), machineId: z.string(), createdAt: z.number() })).max(1000),
});
type PendingRequest = z.infer<typeof Pending>['requests'][number];

async function readPending(file: string): Promise<PendingRequest[]> {
  const read = await readCapped(file);
  if (read.kind === 'missing') return [];
  if (read.kind === 'text') {
    try {
      return Pending.parse(JSON.parse(read.text)).requests;
    } catch {
      // fall through: set aside for support, start afresh
    }
  }
  await moveAside(file);
  return [];
}

async function writePending(file: string, requests: PendingRequest[]): Promise<void> {
  if (requests.length === 0) await removeFileDurably(file);
  else await writeFileAtomic(file, `${JSON.stringify({ format: 1, requests })}\n`);
}

async function readRelease(file: string): Promise<OfflineRelease | null> {
  const read = await readCapped(file);
  if (read.kind !== 'text') return null;
  try {
    return parseOfflineDocument(read.text, 'offline_release');
  } catch {
    return null;
  }
}
