import { EventEmitter } from 'node:events';
import { codeHint, isServiceError, type ServiceClient, type ServiceClientOptions, type ValidationReason } from '@plugin-license/api';

import type { StoredLicense } from './cache-file.js';
import { isDefinitiveReason, isTransportFailure, toLicenseError } from './service-errors.js';
import { isLicenseError, LicenseError } from './errors.js';
import type { Intent } from './intent-file.js';
import { normalizeBaseUrl, normalizeCode } from './input.js';
import { relayKeysProblem, requireBaseUrl, resolveConfig } from './config.js';
import type { CodeStatus, LicenseStatus } from './license-status.js';
import { isTicketError, openProjectStore, type LicenseStore, type Mutator, type WriteStep } from './license-store.js';
import { createLicenseClient } from './service-client.js';
import { trustedOffline } from './offline.js';
import { parsePublicKeys, type OfflinePublicKey } from './offline-format.js';
import { normalizeCallerMachineId, resolveIdentity, resolveIdentitySync, type MachineIdentity, type RawMachineIdProvider } from './machine-id.js';
import { assertProjectId, resolveNamespace } from './paths.js';
import { resolvePolicy, type LicensePolicy } from './policy.js';
import { earliestRequestAt, loadCheckDue, retryAfterFailure, revalidationDelay, type Random } from './schedule.js';
import { bucketOf, statusOf, STATIC, validUntilOf, whileReleasing, type Bucket } from './status-rules.js';
import { checkSignedAnswer, signedPhase, signedStatus, signedWindow, type SignedAnswer } from './signed-status.js';
import { parseTicketKeys, type TicketKey } from './signed-ticket.js';
import type { SmallFileRead } from './small-file.js';

type Dispatcher = NonNullable<ServiceClientOptions['dispatcher']>;

/** What a service answer says about this process, applied with the state it produced. */
interface Heard {
  online: boolean;
  /** An online success: the clock is trusted from this time on. */
  trustAt?: number;
}

/** Options of `new License(...)`. */
export interface LicenseOptions {
  /** The project (plugin) id, a UUID. @example '123e4567-e89b-12d3-a456-426614174000' */
  projectId: string;
  /**
   * Service base URL ending in `/functions/v1`; https unless loopback. Default
   * `PLUGIN_LICENSE_BASE_URL`, else `base_url` in the namespace's `config.json`.
   * @example 'https://service.example/functions/v1'
   */
  baseUrl?: string;
  /** One per vendor, so two vendors' ids and caches never collide. Default `PLUGIN_LICENSE_APP`, else `plugin-license`. @example 'acme-audio' */
  namespace?: string;
  /** One root folder for the cache instead of the per-OS folders. Default `PLUGIN_LICENSE_HOME`. @example '/opt/acme/license' */
  home?: string;
  /** Your own machine id, sent as is instead of the derived one. @example 'studio-pc-7' */
  machineId?: string;
  /** Clock in epoch ms; injected by tests. Default `Date.now`. @example () => Date.now() */
  now?: () => number;
  /** Overrides of {@link DEFAULT_POLICY}. @example { graceMs: 7 * 86_400_000 } */
  policy?: Partial<LicensePolicy>;
  /** A client to share (not closed by `close()`); otherwise one is created. */
  client?: ServiceClient;
  /**
   * The vendor's license relay (docs/signed-ticket.md): the base URL of the activation endpoints
   * (activate, validate, deactivate; the body gains `project_id`), whose answers carry signed
   * tickets; status and everything else still go to the service. Same URL rule as `baseUrl`.
   * Default `PLUGIN_LICENSE_RELAY_URL`, else `relay_url` in `config.json`, else the executable's
   * baked `--relay`; none: the service's own endpoints. Needs `ticketKeys`.
   * @example 'https://relay.acme.example/functions/v1'
   */
  relayUrl?: string;
  /** A client of the relay to share (not closed by `close()`), as `client` is for the service; otherwise one is created for `relayUrl`. */
  relayClient?: ServiceClient;
  /**
   * The vendor's Ed25519 public keys (as `plugin-license offline keygen` prints them; a list or one
   * text separated by commas) that a signed ticket must verify with before it is stored. With
   * keys, the status follows the reader's rule: valid only on a signed ticket that verifies
   * (`unsigned` otherwise), as a plugin built with the same keys decides. Default
   * `PLUGIN_LICENSE_TICKET_KEYS`, else `ticket_keys` in `config.json`, else the executable's baked
   * `--ticket-key`s; none: no signed ticket is stored or required.
   * @example ['q1Xh…43 base64url characters…']
   */
  ticketKeys?: readonly string[] | string;
  /** Bearer token for the created client; sent only on endpoints that take one (the client sends none on activate/deactivate/validate/status). */
  token?: string;
  /** undici dispatcher for the created client (tests); replaces `proxy` and `ca`. */
  dispatcher?: Dispatcher;
  /** A proxy URL for the created client, or `false` for none. Default: `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY`. @example 'http://proxy.studio.lan:3128' */
  proxy?: string | false;
  /** PEM certificate(s) the created client trusts besides the system's (a private CA); `NODE_EXTRA_CA_CERTS` works too. */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Replaces the OS machine-id lookup (tests: a machine without one returns null). */
  rawMachineIdProvider?: RawMachineIdProvider;
  /** Uniform [0,1) source for jitter; injected by tests. Default `Math.random`. */
  random?: Random;
  /**
   * Ed25519 public keys (as `plugin-license offline keygen` prints them) that offline responses
   * must be signed by: a stored offline activation that none of them verifies is not valid
   * (`cache_invalid`). Several keys allow rotation. Default `offline_public_keys` in
   * `config.json`; none: unsigned offline activations are accepted.
   * @example ['q1Xh…43 base64url characters…']
   */
  offlinePublicKeys?: string[];
  /**
   * A test hook: called after each durable step of a write (see {@link WriteStep}), so a test can
   * kill the process at a chosen point (the CLI's `PLUGIN_LICENSE_TEST_KILL_AT`). Leave it unset.
   */
  onStep?: (step: WriteStep) => void;
}

/** This machine's identity and the project's store, opened together, once. */
interface Opened {
  identity: MachineIdentity;
  store: LicenseStore;
}

/** Options of every async call. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of `validate()`. */
export interface ValidateOptions extends CallOptions {
  /** Ask the service even within the minimum interval or the back-off (support tools). */
  force?: boolean;
  /**
   * Also read the code's slot counts (one more request, to the public status endpoint), so the
   * stored `activations` follow machines that took or gave back a slot since. Validation alone
   * says nothing about slots; background checks leave this off to spend one request each.
   */
  slots?: boolean;
}



/**
 * The license of one project on this machine: activation, online validation with an offline
 * grace period, a tamper-evident cache, clock checks, and a synchronous `check()` for hot paths.
 * Emits `change` with the new {@link LicenseStatus} whenever it changes.
 *
 * @example
 * const license = new License({ projectId, baseUrl: 'https://service.example/functions/v1', namespace: 'acme-audio' });
 * const status = await license.validate();
 * if (!status.valid) console.log(`not licensed: ${status.reason}`);
 * license.check().valid; // later, on a hot path: memory only
 */
export class License extends EventEmitter<{ change: [status: LicenseStatus] }> {
  readonly projectId: string;
  readonly policy: Readonly<LicensePolicy>;
  readonly #namespace: string;
  readonly #home: string | undefined;
  readonly #callerMachineId: string | undefined;
  readonly #rawProvider: RawMachineIdProvider | undefined;
  readonly #now: () => number;
  readonly #random: Random;
  readonly #client: ServiceClient;
  readonly #ownsClient: boolean;
  readonly #offlineKeys: OfflinePublicKey[];
  readonly #onStep: ((step: WriteStep) => void) | undefined;
  /** The relay's client, when activation goes through the vendor's license relay. */
  readonly #relay: ServiceClient | undefined;
  readonly #ownsRelay: boolean;
  readonly #ticketKeys: readonly TicketKey[];
  /** The signed ticket as stored, read with the state (undefined: none kept for this identity). */
  #signed: SmallFileRead | undefined;
  /** When the stored signed ticket's verdict turns (`signedWindow`), so `check()` parses nothing. */
  #signedWindow: { from: number; until: number } | undefined;
  /** Where the clock stood in that window when the status was last built (`signedPhase`). */
  #phase = -1;

  #opened: Opened | undefined;
  #loaded = false;
  #state: StoredLicense | null = null;
  /** Codes whose slot this machine is giving back (pending deactivation intents): see `whileReleasing`. */
  #releasing: readonly string[] = [];
  /** `#state` as it reads here (`whileReleasing`), derived with `#validUntil`. */
  #view: StoredLicense | null = null;
  #cacheInvalid = false;
  #heardOnline = false;
  #maxSeen = 0;
  #validUntil = -Infinity;
  #tolerance: number;
  #bucket: Bucket | -1 = -1;
  #status: LicenseStatus;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Unfinished intents may exist on disk (read at load, set by every operation that records one). */
  #intentsPending = false;
  #intentsLooked = false;
  /** When this object last sent a validation (a refused one stamps nothing on disk, so it is kept here). */
  #askedAt: number | null = null;

  constructor(options: LicenseOptions) {
    super();
    if (!options || typeof options !== 'object') {
      throw new LicenseError('invalid_argument', 'new License() needs an options object with at least projectId');
    }
    assertProjectId(options.projectId);
    this.projectId = options.projectId.toLowerCase();
    // The one resolver of every tool (option > environment > config.json > default), asked only
    // for what the caller left open: an embedder that passes the base URL and its own client (the
    // agent, for every project it is asked about) has nothing to read from config.json.
    const ownConnection = options.client === undefined && options.proxy === undefined && options.dispatcher === undefined;
    const config =
      options.baseUrl === undefined || ownConnection
        ? resolveConfig({ app: options.namespace, home: options.home, baseUrl: options.baseUrl, relayUrl: options.relayUrl, ticketKeys: options.ticketKeys })
        : undefined;
    const baseUrl = requireBaseUrl(config, options.baseUrl);
    // The relay and the keys as the resolver gives them, or as the caller passed them (by the same rules).
    this.#ticketKeys = config === undefined ? parseTicketKeys(options.ticketKeys ?? [], 'the ticketKeys option') : config.ticketKeys.value;
    const relayUrl = config === undefined ? (options.relayUrl === undefined ? undefined : normalizeBaseUrl(options.relayUrl)) : config.relayUrl.value;
    if (relayUrl !== undefined || options.relayClient !== undefined) {
      const problem = relayKeysProblem({ relay: true, keys: this.#ticketKeys.length > 0 });
      if (problem !== undefined) throw new LicenseError('invalid_argument', `${problem}; pass ticketKeys with the relay`);
    }
    this.#namespace = config === undefined ? resolveNamespace(options.namespace) : config.namespace.value;
    this.#home = config === undefined ? options.home : config.home.value;
    const proxy = options.proxy ?? config?.proxy.value;
    this.#offlineKeys = parsePublicKeys(options.offlinePublicKeys ?? config?.offlinePublicKeys.value);
    this.#callerMachineId = options.machineId === undefined ? undefined : normalizeCallerMachineId(options.machineId);
    this.#rawProvider = options.rawMachineIdProvider;
    this.policy = Object.freeze(resolvePolicy(options.policy));
    this.#tolerance = this.policy.clockToleranceMs;
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new LicenseError('invalid_argument', 'now must be a function returning epoch milliseconds, e.g. () => Date.now()');
    }
    this.#now = options.now === undefined ? Date.now : checkedClock(options.now);
    this.#random = options.random ?? Math.random;
    this.#onStep = options.onStep;
    if (options.client) {
      this.#client = options.client;
      this.#ownsClient = false;
    } else {
      this.#client = createLicenseClient({
        baseUrl,
        ...(options.token === undefined ? {} : { token: options.token }),
        ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
        ...(proxy === undefined ? {} : { proxy }),
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        policy: this.policy,
      });
      this.#ownsClient = true;
    }
    if (options.relayClient !== undefined) {
      this.#relay = options.relayClient;
      this.#ownsRelay = false;
    } else if (relayUrl !== undefined) {
      this.#relay = createLicenseClient({
        baseUrl: relayUrl,
        ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
        ...(proxy === undefined ? {} : { proxy }),
        ...(options.ca === undefined ? {} : { ca: options.ca }),
        policy: this.policy,
      });
      this.#ownsRelay = true;
    } else {
      this.#relay = undefined;
      this.#ownsRelay = false;
    }
    this.#status = this.#build(STATIC, 0);
  }

  /**
   * The license status from memory: no network, and file I/O only on the first call (it loads
   * the cache). Grace and clock rules are applied with the current `now()`. Cheap enough for a
   * hot path.
   *
   * @example
   * if (!license.check().valid) showLicenseDialog();
   */
  check(): LicenseStatus {
    if (!this.#loaded) this.#loadSync();
    const t = this.#now();
    if (t > this.#maxSeen) this.#maxSeen = t;
    const bucket = this.#bucketAt(t);
    if (bucket !== this.#bucket || signedPhase(this.#signedWindow, t) !== this.#phase) this.#publish(bucket, t);
    return this.#status;
  }

  /**
   * Whether a plugin load should prompt one early online check now (`loadCheckDue`): active,
   * activated online, and nobody asked the service about it for `policy.loadCheckQuietMs`, with a
   * request allowed by the minimum interval and the back-off. Memory only, like `check()`; the
   * caller then runs `validate()` in the background (the agent does, for a client's first
   * `check` or `subscribe` of the project).
   *
   * @example
   * if (license.dueOnLoad()) void license.validate().catch(() => undefined);
   */
  dueOnLoad(): boolean {
    if (!this.#loaded) this.#loadSync();
    const s = this.#seen();
    if (s === null) return false;
    return loadCheckDue(this.policy, { ...s, active: s.status === 'active', offline: s.offline !== undefined, askedAt: this.#askedAt }, this.#now());
  }

  /**
   * Activates `code` on this machine (online) and stores the license. Throws a
   * {@link LicenseError}: `invalid_code`, `code_not_found`, `code_revoked`,
   * `max_activations_reached` (with `activations`, `maxActivations`), `rate_limited` (with
   * `retryAt`), `unavailable` (offline; `cause` says why), `unauthorized`. A code that is
   * empty, has control characters or is over 256 characters fails with `invalid_code` before
   * any request.
   *
   * @example
   * const status = await license.activate('  3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601 ');
   * console.log(`activated ${status.codeHint}: ${status.activations}/${status.maxActivations}`);
   */
  async activate(code: string, options: CallOptions = {}): Promise<LicenseStatus> {
    assertCallOptions(options);
    const c = normalizeCode(code);
    return this.#serviceCall(options, async ({ identity, store }) => {
      // What the file holds now (another process may have written it; a folder in its way fails
      // here), then the durable intent: if either fails, nothing is asked of the service.
      this.#adoptRead(await store.read());
      await store.probeWritable();
      const intent = await this.#recordIntent('activate', c);
      let result;
      try {
        result = await this.#activation.activate(this.#body(c, identity.id), { ...signalOf(options) });
      } catch (e) {
        // Refused: nothing was taken. Not answered (or aborted): the slot may be taken; the intent settles it.
        if (!isTransportFailure(e) && !options.signal?.aborted) await store.clearIntent(intent);
        throwIfAborted(options.signal);
        const error = await toLicenseError(e, c, 'activate', this.#client, options.signal);
        if ((error.code === 'code_revoked' || error.code === 'code_not_found') && this.#state?.code === c) {
          // A definitive answer about the stored code: it stops being valid offline too.
          const t = this.#tick();
          const reason: ValidationReason = error.code;
          await this.#apply(store.update((cur) => (cur && cur.code === c ? this.#answered(cur, t, { status: 'invalid', reason }) : undefined)), { online: true });
        } else {
          this.#publishNow();
        }
        throw error;
      }
      if (!result.success) {
        await store.clearIntent(intent);
        throw new LicenseError('unavailable', `the service did not activate code ${codeHint(c)} and gave no reason; try again later`);
      }
      const t = this.#tick();
      const active = (cur: StoredLicense | null): StoredLicense => this.#activeState(c, t, result.activations, result.max_activations, cur);
      // A new license: only its own signed ticket stands beside it (one that does not verify is not stored).
      const signed = this.#signedOf(result.signed_ticket, identity, t);
      let status: LicenseStatus;
      try {
        status = await this.#apply(store.update(active, { signed: signed.kind === 'verified' ? signed.text : null }), { online: true, trustAt: t });
      } catch (e) {
        if (isTicketError(e)) {
          // The state was stored (and adopted); only its ticket could not be written: that is reported.
          await store.clearIntent(intent);
          throw e;
        }
        if (!isLicenseError(e) || e.code !== 'cache_io') throw e;
        // The disk refused after all (filled up since the probe): a slot no file records is given
        // back (a release like any other: the ticket says so first); when it can't be given back
        // now, memory holds it and the intent settles it.
        const givenBack = await this.#giveBack(c, identity, options);
        if (givenBack === 'held') return this.#commit(active, `the service activated code ${codeHint(c)}`, { online: true, trustAt: t });
        if (givenBack === 'unknown') {
          // The slot may be free or held: nothing uses it here, and the activation's intent settles it.
          this.#publishNow();
          throw new LicenseError('cache_io', `the service activated code ${codeHint(c)}, but the state could not be stored, and giving the slot back went unanswered: ${e.message}; it is settled at the next start once that is fixed`, {
            cause: e,
            ...(e.path === undefined ? {} : { path: e.path }),
            ...(e.systemCode === undefined ? {} : { systemCode: e.systemCode }),
          });
        }
        await store.clearIntent(intent);
        throw new LicenseError('cache_io', `the service activated code ${codeHint(c)}, but the state could not be stored, so the slot was given back: ${e.message}`, {
          cause: e,
          ...(e.path === undefined ? {} : { path: e.path }),
          ...(e.systemCode === undefined ? {} : { systemCode: e.systemCode }),
        });
      }
      await store.clearIntent(intent);
      // The slot is recorded as usual (so it can be given back); the refusal is reported.
      if (signed.kind === 'refused') throw signed.error;
      return status;
    });
  }

  /**
   * Validates the stored license, online first. A definitive answer of the service updates the
   * cache at once (a revoked code is not valid offline either). When the service can't be
   * reached (DNS, refused, reset, time-out, 5xx, 429) the cached state decides, under the grace
   * period and the clock check, and the next attempt backs off. Within `minRevalidateIntervalMs`
   * of the last answer, or during a back-off, it answers from memory without a request (pass
   * `force: true` to ask anyway). Nothing stored: `not_activated`, no request.
   *
   * @example
   * const status = await license.validate({ signal: AbortSignal.timeout(5000) });
   * if (status.valid && status.source === 'cache') console.log(`offline; valid until ${status.graceUntil?.toISOString()}`);
   */
  async validate(options: ValidateOptions = {}): Promise<LicenseStatus> {
    assertCallOptions(options);
    return this.#serviceCall(options, async ({ identity, store }) => {
      const state = this.#state;
      const t = this.#tick();
      if (state === null) return this.#publish(this.#bucketAt(t), t);
      const bucket = this.#bucketAt(t);
      if (!options.force && t < earliestRequestAt(this.policy, state, t)) {
        if (this.#maxSeen > state.maxSeenAt + this.policy.clockCheckpointMs) {
          const seen = this.#maxSeen;
          return this.#apply(store.update((cur) => (cur && cur.code === state.code && seen > cur.maxSeenAt ? { ...cur, maxSeenAt: seen } : undefined)));
        }
        return this.#publish(bucket, t);
      }
      const code = state.code;
      let answer: { valid: boolean; reason: ValidationReason | null };
      this.#askedAt = t;
      let signedTicket: unknown;
      try {
        const r = await this.#activation.validate(this.#body(code, identity.id), { ...signalOf(options) });
        answer = { valid: r.valid, reason: r.valid ? null : (r.reason ?? 'not_activated') };
        signedTicket = r.valid ? r.signed_ticket : undefined;
      } catch (e) {
        throwIfAborted(options.signal);
        if (isTransportFailure(e)) {
          const after = this.#tick();
          const serviceWait = retryAfterMsOf(e);
          return this.#apply(
            store.update((cur) => {
              if (!cur || cur.code !== code) return undefined;
              const failures = cur.failures + 1;
              const retryAt = retryAfterFailure(this.policy, after, failures, serviceWait, this.#random);
              return { ...cur, attemptedAt: after, failures, retryAt, nextCheckAt: retryAt, maxSeenAt: Math.max(cur.maxSeenAt, this.#maxSeen) };
            }),
            { online: false },
          );
        }
        const reason = isDefinitiveReason(e);
        if (reason === null) throw await toLicenseError(e, code, 'validate', this.#client, options.signal);
        answer = { valid: false, reason };
      }
      // Validate says nothing about slots: what was true at activation goes stale when another
      // machine takes or gives back a slot. Asked for, they are read now (best effort).
      const counts = options.slots ? await this.#slotCounts(code, options.signal) : { activations: null, max: null };
      const slots = counts.activations === null ? {} : { activations: counts.activations, maxActivations: counts.max };
      const after = this.#tick();
      // A newer signed ticket replaces the stored one; none (or one refused) leaves it, bounded by its own valid_until.
      const signed = this.#signedOf(signedTicket, identity, after);
      const status = await this.#apply(
        store.update(
          (cur) => {
            if (!cur || cur.code !== code) return undefined; // deactivated or replaced meanwhile: keep that
            return answer.valid
              ? this.#answered(cur, after, { status: 'active', reason: null, validatedAt: after, maxSeenAt: after, ...slots })
              : this.#answered(cur, after, { status: 'invalid', reason: answer.reason, ...slots });
          },
          signed.kind === 'verified' ? { signed: signed.text } : {},
        ),
        answer.valid ? { online: true, trustAt: after } : { online: true },
      );
      if (signed.kind === 'refused') throw signed.error;
      return status;
    });
  }

  /**
   * Releases this machine's slot (online), then forgets the stored license. From before the
   * service is asked until its answer is stored, the license is not used here (the ticket and
   * the status say `deactivated`). When the service can't be reached it throws `unavailable` and
   * keeps the state, so a slot is never lost locally while the service still counts it; since the
   * request may have released it, the license stays unused until a later call hears the service
   * (used again if the slot is still held). A refusal of the service uses it again at once.
   * Nothing stored: `not_activated`.
   *
   * @example
   * await license.deactivate(); // before moving the plugin to another computer
   */
  async deactivate(options: CallOptions = {}): Promise<LicenseStatus> {
    assertCallOptions(options);
    return this.#serviceCall(options, async ({ identity }) => {
      const state = this.#state;
      if (state === null) {
        throw new LicenseError(
          'not_activated',
          this.#cacheInvalid
            ? `the license cache of project ${this.projectId} was invalid and has been set aside, so the code is unknown; deactivate by activating again, or ask support to free the slot`
            : `project ${this.projectId} is not activated on this machine; nothing to deactivate`,
        );
      }
      const code = state.code;
      // The release is recorded and the ticket says "not licensed" first: if either write
      // fails, nothing is asked of the service.
      const intent = (await this.#beforeRelease(code)) as Intent;
      try {
        await this.#activation.deactivate(this.#body(code, identity.id), { ...signalOf(options) });
      } catch (e) {
        // Aborted: the request may have gone, so the intent stays and settles it.
        throwIfAborted(options.signal);
        const error = await toLicenseError(e, code, 'deactivate', this.#client, options.signal);
        // The service holds no slot for a code it doesn't know or has revoked: forgetting loses nothing.
        if (error.code !== 'code_not_found' && error.code !== 'code_revoked') {
          // Refused: nothing was released, and the license is used again.
          if (releaseRefused(e)) {
            await this.#endRelease(intent);
            throw error;
          }
          // Not answered: the slot may be free, so the license stays unused here until the service is heard.
          throw unknownRelease(error);
        }
      }
      this.#onStep?.('release-answered');
      this.#tick();
      return this.#commit((cur) => (cur && cur.code === code ? null : undefined), `the service released this machine's slot of code ${codeHint(code)}`, { online: true }, intent);
    });
  }

  /**
   * Settles what an earlier process left unfinished: an activation or deactivation recorded
   * before the service was asked, whose outcome never reached the cache (the process was
   * killed, or the disk refused the write). The service is asked whether this machine holds
   * the code's slot, and the cache follows its answer. `activate`, `validate` and `deactivate`
   * do this on their own first; the agent calls it at start. When the service can't be reached
   * it leaves the intent for a later call.
   *
   * @example
   * const status = await license.settle(); // at start-up, before plugins ask
   */
  async settle(options: CallOptions = {}): Promise<LicenseStatus> {
    assertCallOptions(options);
    return this.#serial(async () => {
      await this.#load();
      await this.#settlePending(options.signal);
      return this.#publishNow();
    }, options.signal);
  }

  /**
   * Reads the stored state again, after another process changed it (an offline import or
   * release, a command-line activation), and emits `change` when the status changed. The agent
   * calls it when a cache file of its namespace changes.
   *
   * @example
   * await importOfflineResponse(text, { projectId }); // in another process
   * const status = await license.reload();           // source: 'offline'
   */
  async reload(options: CallOptions = {}): Promise<LicenseStatus> {
    assertCallOptions(options);
    return this.#serial(async () => {
      const { store } = await this.#load();
      this.#adoptRead(await store.read());
      return this.#publishNow();
    }, options.signal);
  }

  /**
   * Slots of a code from the service's public status endpoint (default: the stored code), for
   * support tools. Errors as for `activate()`.
   *
   * @example
   * const { activations, maxActivations, isRevoked } = await license.status();
   */
  async status(code?: string, options: CallOptions = {}): Promise<CodeStatus> {
    assertCallOptions(options);
    let c: string;
    if (code === undefined) {
      await this.#load();
      if (this.#state === null) throw new LicenseError('not_activated', `project ${this.projectId} has no stored code on this machine; pass the code to look up`);
      c = this.#state.code;
    } else {
      c = normalizeCode(code);
    }
    try {
      const s = await this.#client.activation.status(c, { ...signalOf(options) });
      return { activations: s.activations, maxActivations: s.max_activations, available: s.available, isRevoked: s.is_revoked };
    } catch (e) {
      throwIfAborted(options.signal);
      throw await toLicenseError(e, c, 'status', this.#client, options.signal);
    }
  }

  /**
   * Waits for running calls and closes the client this object created. The object can still
   * `check()` afterwards.
   *
   * @example
   * process.on('beforeExit', () => license.close());
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#queue.catch(() => undefined);
    if (this.#ownsClient) await this.#client.close();
    if (this.#ownsRelay) await this.#relay?.close();
  }

  // -------------------------------------------------------------------------------------------

  #serial<T>(fn: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    if (this.#closed) return Promise.reject(new LicenseError('invalid_argument', 'this License was closed; create a new one'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const previous = this.#queue;
    // A caller waiting its turn can give up; the next call still waits for the running one.
    const run = settledOrAborted(previous, signal).then(fn);
    this.#queue = previous.then(() => run).catch(() => undefined);
    return run;
  }

  /**
   * The one start of a call that may ask the service (activate, validate, deactivate): its turn
   * in this object's queue, the identity and store opened, a caller that gave up meanwhile told
   * so, and what an earlier process left unfinished settled with the service first.
   */
  #serviceCall<T>(options: CallOptions, fn: (opened: Opened) => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      const opened = await this.#load();
      throwIfAborted(options.signal);
      await this.#settlePending(options.signal);
      return fn(opened);
    }, options.signal);
  }

  /** The identity and store; every caller runs after `#load` or `#loadSync` opened them. */
  get #open(): Opened {
    if (this.#opened === undefined) throw new Error('internal: the license store was used before it was opened');
    return this.#opened;
  }

  #identityOptions() {
    return {
      namespace: this.#namespace,
      ...(this.#home === undefined ? {} : { home: this.#home }),
      ...(this.#callerMachineId === undefined ? {} : { machineId: this.#callerMachineId }),
      ...(this.#rawProvider === undefined ? {} : { rawMachineIdProvider: this.#rawProvider }),
    };
  }

  #makeStore(identity: MachineIdentity): LicenseStore {
    return openProjectStore(
      this.projectId,
      identity,
      { namespace: this.#namespace, ...(this.#home === undefined ? {} : { home: this.#home }) },
      this.policy.lockStaleMs,
      () => ({
        now: this.#now(),
        policy: this.policy,
        trusted: (l) => trustedOffline(l, this.projectId, identity.id, this.#offlineKeys),
      }),
      this.#onStep,
    );
  }

  async #load(): Promise<Opened> {
    if (this.#opened === undefined) {
      const identity = await resolveIdentity(this.#identityOptions());
      // A check() meanwhile may have opened them synchronously: the first one stays.
      this.#opened ??= { identity, store: this.#makeStore(identity) };
    }
    const opened = this.#opened;
    if (!this.#loaded) {
      const read = await opened.store.read();
      if (!this.#loaded) this.#adoptRead(read);
    }
    if (!this.#intentsLooked) {
      // A previous process may have left intents: the first settle looks.
      this.#intentsLooked = true;
      this.#intentsPending = true;
    }
    return opened;
  }

  async #recordIntent(op: Intent['op'], code: string): Promise<Intent> {
    const intent = await this.#open.store.recordIntent(op, code, this.#now());
    this.#intentsPending = true;
    return intent;
  }

  /**
   * The one way this object gives back a slot: the store's "before releasing" step (the release
   * recorded unless `record` is false, the ticket made "not licensed"), and this object's status
   * following, before the caller asks the service.
   */
  async #beforeRelease(code: string, record = true): Promise<Intent | undefined> {
    const { intent, update } = await this.#open.store.beforeRelease(code, this.#now(), { record });
    if (intent) this.#intentsPending = true;
    this.#releasing = update.releasing;
    this.#rederive();
    this.#publishNow();
    return intent;
  }

  /**
   * A release that did not happen (the service refused it): the intent is settled and the ticket
   * and status follow the state again. When that write fails the intent stays, and the next
   * start settles it with the service.
   */
  async #endRelease(intent: Intent): Promise<void> {
    await this.#apply(this.#open.store.update(() => undefined, { settles: intent })).catch(() => undefined);
  }

  /**
   * Gives back a slot just taken whose state could not be stored. The activation's own intent
   * covers a kill at any point (settled, it completes or drops the activation as the service
   * says), so no release intent is recorded; the ticket still goes first. `released`: the service
   * released it; `held`: it was not asked (the ticket could not be written) or refused;
   * `unknown`: it did not answer.
   */
  async #giveBack(code: string, identity: MachineIdentity, options: CallOptions): Promise<'released' | 'held' | 'unknown'> {
    try {
      await this.#beforeRelease(code, false);
    } catch {
      return 'held';
    }
    try {
      const r = await this.#activation.deactivate(this.#body(code, identity.id), { ...signalOf(options) });
      if (!r.success) return 'held';
      this.#onStep?.('release-answered');
      return 'released';
    } catch (e) {
      return !options.signal?.aborted && releaseRefused(e) ? 'held' : 'unknown';
    }
  }

  async #settlePending(signal: AbortSignal | undefined): Promise<void> {
    if (!this.#intentsPending) return;
    const { store } = this.#open;
    let left = 0;
    for (const intent of await store.intents()) {
      if (left > 0 || !(await this.#settleIntent(store, intent, signal))) left += 1;
    }
    this.#intentsPending = left > 0;
  }

  /** One intent against the service's answer; false when the service could not say. */
  async #settleIntent(store: LicenseStore, intent: Intent, signal: AbortSignal | undefined): Promise<boolean> {
    if (intent.machineId !== this.#open.identity.id) {
      // Recorded under another machine id (a copied folder): not this machine's slot to settle.
      await store.clearIntent(intent);
      return true;
    }
    let answer: { valid: boolean; reason: ValidationReason | null };
    let signedTicket: unknown;
    try {
      const r = await this.#activation.validate(this.#body(intent.code, intent.machineId), signal ? { signal } : {});
      answer = { valid: r.valid, reason: r.valid ? null : (r.reason ?? 'not_activated') };
      signedTicket = r.valid ? r.signed_ticket : undefined;
    } catch (e) {
      throwIfAborted(signal);
      const reason = isDefinitiveReason(e);
      if (reason === null) return false;
      answer = { valid: false, reason };
    }
    const t = this.#tick();
    // Settling reports nothing: a signed ticket that does not verify is only not stored (the next validate says why).
    const signed = this.#signedOf(signedTicket, this.#open.identity, t);
    let counts: { activations: number | null; max: number | null } = { activations: null, max: null };
    if (answer.valid && intent.op === 'activate' && this.#state?.code !== intent.code) counts = await this.#slotCounts(intent.code, signal);
    await this.#apply(
      store.update(
        (cur) => {
          const same = cur !== null && cur.code === intent.code;
          if (answer.valid) {
            if (same) return this.#answered(cur, t, { status: 'active', reason: null, validatedAt: t, maxSeenAt: t });
            // The slot is held: an activation that never reached the cache is completed.
            return intent.op === 'activate' ? this.#activeState(intent.code, t, counts.activations, counts.max, cur) : undefined;
          }
          if (!same) return undefined;
          // Not held: a deactivation that never reached the cache is completed; a stored code is told so.
          return intent.op === 'deactivate' ? null : this.#answered(cur, t, { status: 'invalid', reason: answer.reason });
        },
        // Written as settled, then the intent goes: a release the service never did gives the ticket back its grant.
        { settles: intent, ...(signed.kind === 'verified' ? { signed: signed.text } : {}) },
      ),
      answer.valid ? { online: true, trustAt: t } : { online: true },
    );
    return true;
  }

  async #slotCounts(code: string, signal: AbortSignal | undefined): Promise<{ activations: number | null; max: number | null }> {
    try {
      const s = await this.#client.activation.status(code, { ...(signal ? { signal } : {}), timeoutMs: 3000 });
      return { activations: s.activations, max: s.max_activations };
    } catch {
      return { activations: null, max: null };
    }
  }

  #activeState(code: string, t: number, activations: number | null, maxActivations: number | null, cur: StoredLicense | null): StoredLicense {
    return {
      code,
      status: 'active',
      reason: null,
      activations,
      maxActivations,
      activatedAt: cur?.code === code ? cur.activatedAt : t,
      validatedAt: t,
      answeredAt: t,
      attemptedAt: t,
      failures: 0,
      retryAt: this.#rateLimitReset(t),
      nextCheckAt: t + revalidationDelay(this.policy, this.#random),
      maxSeenAt: t,
      revision: 0,
    };
  }

  /**
   * Writes what the service just did. When the disk refuses, memory still follows the service
   * (a released slot is not valid, an activated one is), the intent stays on disk to be settled
   * at the next start, and the caller gets `cache_io` saying both.
   */
  async #commit(mutator: Mutator, done: string, heard?: Heard, settles?: Intent): Promise<LicenseStatus> {
    try {
      return await this.#apply(this.#open.store.update(mutator, settles ? { settles } : {}), heard);
    } catch (e) {
      if (!isLicenseError(e) || e.code !== 'cache_io' || isTicketError(e)) throw e;
      this.#hear(heard);
      const next = mutator(this.#state);
      if (next !== undefined) {
        this.#setState(next);
        this.#publishNow();
      }
      throw new LicenseError('cache_io', `${done}, but the state could not be stored: ${e.message}; it is completed at the next start once that is fixed`, {
        cause: e,
        ...(e.path === undefined ? {} : { path: e.path }),
        ...(e.systemCode === undefined ? {} : { systemCode: e.systemCode }),
      });
    }
  }

  #loadSync(): void {
    try {
      if (this.#opened === undefined) {
        const identity = resolveIdentitySync(this.#identityOptions());
        this.#opened = { identity, store: this.#makeStore(identity) };
      }
      this.#adoptRead(this.#opened.store.readSync());
    } catch {
      // Unreadable (permissions, I/O): the stored state can't be trusted; don't throw on a hot path.
      this.#loaded = true;
      this.#cacheInvalid = true;
      this.#state = null;
      this.#adoptSigned(undefined);
      this.#releasing = [];
      this.#rederive();
    }
  }

  #adoptRead(read: Awaited<ReturnType<LicenseStore['read']>>): void {
    this.#loaded = true;
    this.#adoptSigned(this.#readSigned());
    if (read.kind === 'ok') {
      this.#cacheInvalid = false;
      this.#releasing = read.releasing;
      this.#setState(read.license);
    } else {
      this.#releasing = [];
      this.#cacheInvalid = read.kind === 'invalid';
      this.#setState(null);
    }
  }

  /**
   * Adopts the state a write produced. `heard` is what the service's answer says about this
   * process (it was heard online or not; an online success vouches for the clock at `trustAt`):
   * it takes effect here, in the same step as the state, never while the write is in flight, so
   * a `check()` in between sees the old state with the old facts (a clock just trusted beside a
   * state not yet updated would make an old state look fresh).
   */
  async #apply(pending: ReturnType<LicenseStore['update']>, heard?: Heard): Promise<LicenseStatus> {
    const { license, releasing, invalid, ticketError } = await pending;
    this.#adoptSigned(this.#readSigned());
    this.#hear(heard);
    this.#cacheInvalid = license === null && invalid !== undefined;
    this.#releasing = releasing;
    this.#setState(license);
    const status = this.#publishNow();
    // The state is stored and adopted; a ticket that could not be written is reported as a state that could not be.
    if (ticketError) throw ticketError;
    return status;
  }

  #hear(heard: Heard | undefined): void {
    if (heard === undefined) return;
    this.#heardOnline = heard.online;
    if (heard.trustAt !== undefined) this.#trustClock(heard.trustAt);
  }

  #setState(license: StoredLicense | null): void {
    if (license?.offline !== undefined && !trustedOffline(license, this.projectId, this.#open.identity.id, this.#offlineKeys)) {
      // An offline activation none of the configured keys signed: not valid here, left in place.
      license = null;
      this.#cacheInvalid = true;
    }
    this.#state = license;
    if (license && license.maxSeenAt > this.#maxSeen) this.#maxSeen = license.maxSeenAt;
    this.#rederive();
  }

  /** The stored state as it reads here: a license whose slot is being given back is not used (`whileReleasing`). */
  #seen(): StoredLicense | null {
    return this.#view;
  }

  #rederive(): void {
    const s = whileReleasing(this.#state, this.#releasing);
    this.#view = s;
    this.#validUntil = validUntilOf(s, this.policy);
    this.#bucket = -1;
  }

  /** Reads the clock once for an operation and remembers the highest time seen. */
  #tick(): number {
    const t = this.#now();
    if (t > this.#maxSeen) this.#maxSeen = t;
    return t;
  }

  /** An online success vouches for the current clock: the highest time seen restarts from it. */
  #trustClock(t: number): void {
    this.#maxSeen = t;
  }

  #bucketAt(t: number): Bucket {
    return bucketOf(this.#seen(), t, this.#maxSeen, this.#tolerance, this.#validUntil);
  }

  #publishNow(): LicenseStatus {
    const t = this.#now();
    return this.#publish(this.#bucketAt(t), t);
  }

  #publish(bucket: Bucket, t: number): LicenseStatus {
    const previous = this.#status;
    const next = this.#build(bucket, t);
    this.#bucket = bucket;
    this.#phase = signedPhase(this.#signedWindow, t);
    if (!sameStatus(previous, next)) {
      this.#status = next;
      this.emit('change', next);
    }
    return this.#status;
  }

  #build(bucket: Bucket, t: number): LicenseStatus {
    const status = statusOf(this.projectId, this.#seen(), bucket, t, this.policy, this.#heardOnline ? 'online' : 'cache', this.#cacheInvalid);
    if (this.#opened === undefined) return status;
    return signedStatus(status, { read: this.#signed, keys: this.#ticketKeys, app: this.#namespace, machineId: this.#opened.identity.id }, t);
  }

  #adoptSigned(read: SmallFileRead | undefined): void {
    this.#signed = read;
    this.#signedWindow = signedWindow(read, this.#ticketKeys);
  }

  /** The signed ticket as stored now (never throws: a read that fails is a bad file, judged `cache_invalid`). */
  #readSigned(): SmallFileRead | undefined {
    try {
      return this.#opened?.store.readSigned();
    } catch (e) {
      return { kind: 'bad', problem: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
  }

  /** The client of the activation endpoints: the vendor's relay when one is configured, else the service. */
  get #activation(): ServiceClient['activation'] {
    return (this.#relay ?? this.#client).activation;
  }

  /** The body of activate, validate and deactivate; a relay also needs `project_id`. */
  #body(code: string, machineId: string): { code: string; machine_id: string; plugin_id: string; project_id?: string } {
    return { code, machine_id: machineId, plugin_id: this.projectId, ...(this.#relay === undefined ? {} : { project_id: this.projectId }) };
  }

  /** An answer's signed ticket, checked before anything is stored (`checkSignedAnswer`). */
  #signedOf(value: unknown, identity: MachineIdentity, t: number): SignedAnswer {
    return checkSignedAnswer(value, { keys: this.#ticketKeys, app: this.#namespace, projectId: this.projectId, machineId: identity.id, now: Math.floor(t / 1000), from: this.#relay === undefined ? 'the service' : 'the license relay' });
  }

  /** A state after an answer of the service: it replaces an offline activation (ordinary validation takes over). */
  #answered(cur: StoredLicense, t: number, patch: Partial<StoredLicense>): StoredLicense {
    const { offline: _offline, ...online } = cur;
    return {
      ...online,
      maxSeenAt: Math.max(cur.maxSeenAt, this.#maxSeen),
      ...patch,
      answeredAt: t,
      attemptedAt: t,
      failures: 0,
      retryAt: this.#rateLimitReset(t),
      nextCheckAt: t + revalidationDelay(this.policy, this.#random),
    };
  }

  /** When the last answer said no requests are left in the window, the reset on our clock (relative and capped by the api). */
  #rateLimitReset(t: number): number | null {
    const rl = this.#client.rateLimit;
    if (!rl || rl.remaining > 0 || rl.resetInMs <= 0) return null;
    return t + rl.resetInMs;
  }
}


function sameStatus(a: LicenseStatus, b: LicenseStatus): boolean {
  return (
    a.valid === b.valid &&
    a.reason === b.reason &&
    a.source === b.source &&
    a.codeHint === b.codeHint &&
    a.activations === b.activations &&
    a.maxActivations === b.maxActivations &&
    a.validatedAt?.getTime() === b.validatedAt?.getTime() &&
    a.graceUntil?.getTime() === b.graceUntil?.getTime() &&
    a.nextCheckAt?.getTime() === b.nextCheckAt?.getTime() &&
    a.signedTicket === b.signedTicket
  );
}

/** Rejects options a call can't use (null, a signal that is not an AbortSignal) before any I/O. */
function assertCallOptions(options: unknown): asserts options is CallOptions {
  if (typeof options !== 'object' || options === null) {
    throw new LicenseError('invalid_argument', `call options must be an object like { signal }, got ${options === null ? 'null' : typeof options}`);
  }
  const signal = (options as { signal?: unknown }).signal;
  if (signal === undefined) return;
  const s = signal as Partial<AbortSignal> | null;
  if (typeof s !== 'object' || s === null || typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function') {
    throw new LicenseError('invalid_argument', 'the signal option must be an AbortSignal, e.g. AbortSignal.timeout(5000) or new AbortController().signal');
  }
}

/** Resolves when `previous` settles; rejects with the signal's reason if it aborts first. */
function settledOrAborted(previous: Promise<unknown>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return previous.then(() => undefined);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    void previous.then(() => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else resolve();
    });
  });
}

/** Wraps an injected clock so a wrong one (NaN, a Date) fails loudly instead of corrupting the cache. */
function checkedClock(now: () => number): () => number {
  return () => {
    const t = now();
    if (typeof t !== 'number' || !Number.isFinite(t)) {
      throw new LicenseError('invalid_argument', `the now() option returned ${describeValue(t)}, not epoch milliseconds; pass a function like () => Date.now()`);
    }
    return t;
  };
}

function describeValue(v: unknown): string {
  if (v instanceof Date) return 'a Date';
  return typeof v === 'number' ? String(v) : typeof v;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason;
}

function signalOf(options: CallOptions): { signal?: AbortSignal } {
  return options.signal ? { signal: options.signal } : {};
}

/**
 * A failed release the service surely did not perform: it answered, and not with a failure of its
 * own (a 5xx may have released before failing). A 429 is a refusal. The rest (no answer, a time-out,
 * a 5xx, an answer in an unexpected shape) leaves the release unknown.
 */
function releaseRefused(e: unknown): boolean {
  return !isTransportFailure(e) || (isServiceError(e) && e.status === 429);
}

/** A release the service did not answer: the slot may be free, so the license is not used here until it is heard. */
function unknownRelease(error: LicenseError): LicenseError {
  return new LicenseError(error.code, `${error.message}; whether the slot was released is not known, so this computer does not use the license until the service answers (the next check settles it)`, {
    cause: error.cause,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.serviceCode === undefined ? {} : { serviceCode: error.serviceCode }),
    ...(error.retryAt === undefined ? {} : { retryAt: error.retryAt }),
  });
}

/** The wait a refused request was asked for (relative, capped by the api), if any. */
function retryAfterMsOf(e: unknown): number | undefined {
  const ms = (e as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : undefined;
}
