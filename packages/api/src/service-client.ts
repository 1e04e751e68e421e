import type { Dispatcher } from 'undici';
import type * as z from 'zod';
import { connectionRoute } from './dispatcher.js';
import { createCarrier, undiciCarrier, type Carrier } from './carrier.js';
import { assertBaseUrl } from './base-url.js';
import type { Deadline } from './deadline.js';
import { ConfigError } from './errors.js';
import type { RateLimit } from './rate-limit.js';
import { createRetryPolicy, type RetryHooks, type RetryOptions } from './retry-policy.js';
import {
  ActivateResult,
  ArtifactList,
  Build,
  BuildList,
  BuildUsage,
  CancelledBuild,
  CodeStatus,
  CreatedBuild,
  CreatedProject,
  DeactivateResult,
  DiscoveredRepos,
  DownloadLink,
  GeneratedKey,
  HostingConnection,
  LinkResult,
  ProjectKeys,
  SdkDescriptor,
  SdkDownload,
  SuccessMessage,
  TriggerResult,
  UnlinkResult,
  ValidateResult,
  type ActivationRequest,
  type BuildStatus,
  type CreateAndLinkRequest,
  type CreateBuildRequest,
  type GenerateRequest,
  type LinkRepoRequest,
  type TriggerRequest,
  type UnlinkRepoRequest,
} from './schemas.js';
import { signTrigger } from './trigger-signature.js';
import { Transport, type CallOptions, type CallSpec } from './transport.js';
import { version } from './version.js';

/** Options of `new ServiceClient(...)`. */
export interface ServiceClientOptions {
  /**
   * Service base URL, ending in `/functions/v1`. `https://` unless the host is loopback.
   * @example 'https://service.example/functions/v1'
   */
  baseUrl: string;
  /**
   * Bearer token (JWT) for the endpoints that need one. Never appears in errors.
   * @example process.env.PLUGIN_LICENSE_TOKEN
   */
  token?: string;
  /**
   * undici dispatcher to send through (proxy agents, MockAgent in tests). The client does not close
   * an injected dispatcher. By default it owns its connections and closes them in `close()`: a
   * keep-alive agent of Node's `http`/`https` for a direct connection, undici's proxy agents
   * through a proxy.
   * @example new Agent({ keepAliveTimeout: 1000 })
   */
  dispatcher?: Dispatcher;
  /**
   * A proxy for every request (`http://host:port`, credentials allowed), or `false` to ignore the
   * proxy variables. Default: `HTTPS_PROXY` / `HTTP_PROXY` / `NO_PROXY` when set. Ignored with `dispatcher`.
   * @example 'http://proxy.studio.lan:3128'
   */
  proxy?: string | false;
  /**
   * PEM certificate(s) to trust in addition to Node's default roots, for a service behind a private CA
   * (or the emulator's `--tls`). Without it, `NODE_EXTRA_CA_CERTS` works as well (Node adds those to
   * its default roots only). Ignored with `dispatcher`.
   * @example readFileSync('/etc/acme/ca.pem', 'utf8')
   */
  ca?: string | Buffer | Array<string | Buffer>;
  /**
   * Time-out of each attempt in ms, per phase: connecting (own agent), waiting for the response
   * headers, and any pause in the body. Default 10000.
   * @example 5000
   */
  timeoutMs?: number;
  /**
   * A deadline every call of this client obeys, attempts and retries together: one
   * {@link Deadline} shared with other calls and clients (a command's), or a function giving a
   * new one per call. A call's own `{ deadline }` overrides it. Default: none (each attempt has
   * `timeoutMs`, each call `retry.deadlineMs`).
   * @example new Deadline(10_000, { name: 'PLUGIN_LICENSE_TIMEOUT', signal: interrupted })
   */
  deadline?: Deadline | (() => Deadline);
  /**
   * Retries of safe calls (GETs and `activation.validate`) on network errors, time-outs, 5xx and 429;
   * `false` turns them off. Defaults: `{ retries: 2, minDelayMs: 250, maxDelayMs: 5000, deadlineMs: 30000 }`.
   * @example { retries: 4, deadlineMs: 60000 }
   */
  retry?: false | RetryOptions;
  /**
   * `User-Agent` header. Default `plugin-license-api/<version> node/<version>`.
   * @example 'my-installer/2.1 plugin-license-api'
   */
  userAgent?: string;
}

/** Query of `builds.list`. */
export interface ListBuildsParams {
  project_id?: string;
  status?: BuildStatus;
  /** Page size; the service defaults to 20. */
  limit?: number;
  offset?: number;
}

/** Trigger authentication: the shared secret itself, or an HMAC of the raw body keyed by it. */
export type TriggerAuth = { webhookSecret: string } | { signingSecret: string };

function requireId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(`${name} must be a non-empty string (got ${value === '' ? 'an empty string' : typeof value})`, name);
  }
  // One path segment, always. "." and ".." cannot be one: a URL resolves them (even encoded as
  // %2E) to another path, so status/.. would ask another endpoint.
  if (/^\.{1,2}$/.test(value.trim())) throw new ConfigError(`${name} '${value}' is not ${name === 'code' ? 'an activation code' : 'an id'}: a URL reads it as a step to another path`, name);
  return encodeURIComponent(value);
}

/** The activation code of a request body, which no message may show. */
function codeOf(body: ActivationRequest): string | undefined {
  return body !== null && typeof body === 'object' && typeof body.code === 'string' ? body.code : undefined;
}

function requireObject(value: unknown, name: string): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError(`${name} must be an object with the request fields`, name);
  }
}

/** One endpoint of the service, as its interface declares it. */
interface Route<T, P extends string> {
  method: CallSpec<T>['method'];
  /**
   * The interface's path template; each `:name` is one path segment given per call. With the
   * method, it is also the endpoint's name in messages, which never hold ids or codes.
   */
  path: P;
  schema: z.ZodType<T>;
  /** Sends the bearer token. */
  bearer: boolean;
  /** Safe to repeat, so retried: GETs and validate. Everything else is never retried. */
  idempotent: boolean;
  /** `json`: the body is the caller's object, sent as JSON. `raw`: the caller serialises it (the trigger signs those bytes). */
  body?: 'json' | 'raw';
  credential?: CallSpec<T>['credential'];
  onRedirect?: CallSpec<T>['onRedirect'];
}

/** The `:name` segments of a path template. */
type ParamsOf<P extends string> = P extends `${string}:${infer N}/${infer Rest}` ? N | ParamsOf<`/${Rest}`> : P extends `${string}:${infer N}` ? N : never;

/** One call of a route: its path segments (already checked and encoded), body, query, headers, and the secrets no message may show. */
type RouteCall<P extends string> = (ParamsOf<P> extends never ? { params?: undefined } : { params: Record<ParamsOf<P>, string> }) & {
  body?: unknown;
  query?: CallSpec<unknown>['query'];
  headers?: Record<string, string>;
  secrets?: (string | undefined)[];
};

const route = <T, const P extends string>(r: Route<T, P>): Route<T, P> => r;

/** Every endpoint the client calls, each declared once, grouped as the client's methods are. */
const ROUTES = {
  builds: {
    create: route({ method: 'POST', path: '/builds', schema: CreatedBuild, bearer: true, idempotent: false, body: 'json' }),
    get: route({ method: 'GET', path: '/builds/:id', schema: Build, bearer: true, idempotent: true }),
    list: route({ method: 'GET', path: '/builds', schema: BuildList, bearer: true, idempotent: true }),
    artifacts: route({ method: 'GET', path: '/builds/:id/artifacts', schema: ArtifactList, bearer: true, idempotent: true }),
    download: route({ method: 'GET', path: '/builds/:buildId/download/:artifactId', schema: DownloadLink, bearer: true, idempotent: true, onRedirect: (url) => ({ url, expires_at: null }) }),
    cancel: route({ method: 'POST', path: '/builds/:id/cancel', schema: CancelledBuild, bearer: true, idempotent: false }),
    usage: route({ method: 'GET', path: '/builds/usage', schema: BuildUsage, bearer: true, idempotent: true }),
  },
  trigger: route({ method: 'POST', path: '/external-builds/:project_id/trigger', schema: TriggerResult, bearer: false, idempotent: false, body: 'raw', credential: 'webhook secret' }),
  activation: {
    activate: route({ method: 'POST', path: '/plugin-activation/activate', schema: ActivateResult, bearer: false, idempotent: false, body: 'json' }),
    deactivate: route({ method: 'POST', path: '/plugin-activation/deactivate', schema: DeactivateResult, bearer: false, idempotent: false, body: 'json' }),
    validate: route({ method: 'POST', path: '/plugin-activation/validate', schema: ValidateResult, bearer: false, idempotent: true, body: 'json' }),
    status: route({ method: 'GET', path: '/plugin-activation/status/:code', schema: CodeStatus, bearer: false, idempotent: true }),
    generate: route({ method: 'POST', path: '/plugin-activation/generate', schema: GeneratedKey, bearer: true, idempotent: false, body: 'json' }),
    keys: route({ method: 'GET', path: '/plugin-activation/project/:projectId/keys', schema: ProjectKeys, bearer: true, idempotent: true }),
  },
  hosting: {
    status: route({ method: 'GET', path: '/github-app-callback/status', schema: HostingConnection, bearer: true, idempotent: true }),
    disconnect: route({ method: 'DELETE', path: '/github-app-callback/disconnect', schema: SuccessMessage, bearer: true, idempotent: false }),
  },
  repos: {
    discover: route({ method: 'GET', path: '/plugin-repos/discover', schema: DiscoveredRepos, bearer: true, idempotent: true }),
    link: route({ method: 'POST', path: '/plugin-repos/link', schema: LinkResult, bearer: true, idempotent: false, body: 'json' }),
    unlink: route({ method: 'POST', path: '/plugin-repos/unlink', schema: UnlinkResult, bearer: true, idempotent: false, body: 'json' }),
    createAndLink: route({ method: 'POST', path: '/plugin-repos/create-and-link', schema: CreatedProject, bearer: true, idempotent: false, body: 'json' }),
  },
  sdk: {
    status: route({ method: 'GET', path: '/sdk/status', schema: SdkDescriptor, bearer: true, idempotent: true }),
    download: route({ method: 'GET', path: '/sdk/download', schema: SdkDownload, bearer: true, idempotent: true }),
  },
};

/** What the transport needs for one call of a route; throws `ConfigError` for a body that is not an object. */
function callSpec<T, P extends string>(r: Route<T, P>, call: RouteCall<P>): CallSpec<T> {
  if (r.body === 'json') requireObject(call.body, 'body');
  const params: Partial<Record<string, string>> = call.params ?? {};
  return {
    method: r.method,
    path: r.path.replace(/:(\w+)/g, (_, name: string) => params[name] as string),
    endpoint: `${r.method} ${r.path}`,
    schema: r.schema,
    query: call.query,
    body: r.body === 'json' ? { json: call.body } : r.body === 'raw' ? { raw: call.body as string } : undefined,
    bearer: r.bearer,
    headers: call.headers,
    idempotent: r.idempotent,
    secrets: call.secrets,
    onRedirect: r.onRedirect,
    credential: r.credential,
  };
}

/**
 * Typed client of every endpoint of the service. Methods resolve to the parsed wire objects
 * (snake_case, unknown fields kept) and reject with the errors of this package.
 *
 * @example
 * const client = new ServiceClient({ baseUrl: 'https://service.example/functions/v1', token });
 * const result = await client.activation.validate({ code, machine_id: machineId, plugin_id: projectId });
 * if (!result.valid) console.log(result.reason);
 * await client.close();
 */
export class ServiceClient {
  readonly #transport: Transport;
  /** The carrier of the injected dispatcher, or the own one: a promise while it is made, then itself. */
  #carrier: Carrier | Promise<Carrier> | undefined;
  #rateLimit: RateLimit | undefined;
  #closed = false;

  /**
   * @param hooks internal: random source, sleep and clock of the retry policy, injected by tests.
   */
  constructor(options: ServiceClientOptions, hooks: RetryHooks = {}) {
    if (!options || typeof options !== 'object') throw new ConfigError('ServiceClient needs an options object with baseUrl', 'options');
    const baseUrl = assertBaseUrl(options.baseUrl);
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
      throw new ConfigError(`timeoutMs must be a positive number of milliseconds (got ${String(timeoutMs)})`, 'timeoutMs');
    }
    if (options.token !== undefined && (typeof options.token !== 'string' || options.token === '')) {
      throw new ConfigError('token must be a non-empty string when given', 'token');
    }
    // A header cannot carry a line break or other control character: a token pasted with its
    // line end would otherwise fail every request as if the network were down.
    if (options.token !== undefined && /[\u0000-\u001f\u007f\s]/.test(options.token)) {
      throw new ConfigError('the token contains a line break, a space or another control character (copied with its line end?); set it again without them', 'token');
    }
    // The own connections are made on the first request (undici loaded then only for a proxy);
    // a bad proxy URL, given or in the environment, fails now.
    this.#carrier = options.dispatcher === undefined ? undefined : undiciCarrier(options.dispatcher, false);
    const deadline = options.deadline;
    // By shape, not class: a bundle may carry its own copy of this package.
    if (deadline !== undefined && typeof deadline !== 'function' && typeof (deadline as Partial<Deadline> | null)?.remainingMs !== 'function') {
      throw new ConfigError('deadline must be a Deadline, or a function that returns a new one per call', 'deadline');
    }
    const connection = { timeoutMs, ...(options.proxy === undefined ? {} : { proxy: options.proxy }), ...(options.ca === undefined ? {} : { ca: options.ca }) };
    if (options.dispatcher === undefined) connectionRoute(connection);
    const carrier = (): Carrier | Promise<Carrier> =>
      (this.#carrier ??= createCarrier(connection).then(
        (made) => (this.#carrier = made),
        (e: unknown) => {
          this.#carrier = undefined; // the next request tries again
          throw e;
        },
      ));
    this.#transport = new Transport({
      baseUrl,
      token: options.token,
      carrier,
      timeoutMs,
      deadline: deadline === undefined ? undefined : typeof deadline === 'function' ? deadline : () => deadline,
      userAgent: options.userAgent ?? `plugin-license-api/${version} node/${process.versions.node}`,
      policy: createRetryPolicy(options.retry, hooks),
      onRateLimit: (rateLimit) => {
        this.#rateLimit = rateLimit;
      },
    });
  }

  /** The rate-limit window of the last response that carried `X-RateLimit-*` headers. */
  get rateLimit(): RateLimit | undefined {
    return this.#rateLimit;
  }

  /**
   * Calls one route. Not async, and no extra promise per call (the hot path of plugins and the
   * agent): whatever goes wrong still rejects, never throws.
   */
  #send<T, P extends string>(r: Route<T, P>, call: RouteCall<P>, options?: CallOptions): Promise<T> {
    let spec: CallSpec<T>;
    try {
      spec = callSpec(r, call);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.#closed) return Promise.reject(new ConfigError('this ServiceClient was closed; create a new one', 'client'));
    return this.#transport.call(spec, options);
  }

  /** Builds: create, inspect, list, download artifacts, cancel, quota. All need the bearer token. */
  readonly builds = {
    /**
     * Starts a build. Never retried.
     * @example await client.builds.create({ project_id, platforms: ['macos'], formats: ['vst3'] });
     */
    create: async (body: CreateBuildRequest, opts?: CallOptions): Promise<CreatedBuild> => this.#send(ROUTES.builds.create, { body }, opts),
    /** @example const build = await client.builds.get(buildId); */
    get: async (id: string, opts?: CallOptions): Promise<Build> => this.#send(ROUTES.builds.get, { params: { id: requireId(id, 'id') } }, opts),
    /** @example const { builds, total } = await client.builds.list({ project_id, status: 'success', limit: 50 }); */
    list: async (query: ListBuildsParams = {}, opts?: CallOptions): Promise<BuildList> =>
      this.#send(ROUTES.builds.list, { query: { project_id: query.project_id, status: query.status, limit: query.limit, offset: query.offset } }, opts),
    /** @example const { artifacts } = await client.builds.artifacts(buildId); */
    artifacts: async (id: string, opts?: CallOptions): Promise<ArtifactList> => this.#send(ROUTES.builds.artifacts, { params: { id: requireId(id, 'id') } }, opts),
    /**
     * A download link for an artifact. The service answers `{url, expires_at}` or a 302 to the file;
     * both give the same `DownloadLink` (`expires_at: null` for a redirect). The file itself is never fetched.
     * @example const { url } = await client.builds.download(buildId, artifactId);
     */
    download: async (buildId: string, artifactId: string, opts?: CallOptions): Promise<DownloadLink> =>
      this.#send(ROUTES.builds.download, { params: { buildId: requireId(buildId, 'buildId'), artifactId: requireId(artifactId, 'artifactId') } }, opts),
    /** Cancels a pending or running build. Never retried. @example await client.builds.cancel(buildId); */
    cancel: async (id: string, opts?: CallOptions): Promise<CancelledBuild> => this.#send(ROUTES.builds.cancel, { params: { id: requireId(id, 'id') } }, opts),
    /** @example const { remaining, reset_at } = await client.builds.usage(); */
    usage: async (opts?: CallOptions): Promise<BuildUsage> => this.#send(ROUTES.builds.usage, {}, opts),
  };

  /**
   * Starts a build from external CI. The body is serialised once and sent byte for byte; with
   * `signingSecret` the `X-Signature` header is `sha256=` + HMAC-SHA256 of exactly those bytes,
   * with `webhookSecret` the secret goes in `X-Webhook-Secret`. Never retried.
   *
   * @example
   * await client.trigger(projectId, { ref: 'refs/heads/main', commit_sha: sha }, { signingSecret: process.env.WEBHOOK_SECRET! });
   */
  async trigger(projectId: string, body: TriggerRequest, auth: TriggerAuth, opts?: CallOptions): Promise<TriggerResult> {
    const params = { project_id: requireId(projectId, 'projectId') };
    requireObject(body, 'body');
    requireObject(auth, 'auth');
    const raw = JSON.stringify(body);
    let headers: Record<string, string>;
    let secret: string;
    if ('signingSecret' in auth && typeof auth.signingSecret === 'string' && auth.signingSecret) {
      secret = auth.signingSecret;
      headers = { 'x-signature': signTrigger(raw, secret) };
    } else if ('webhookSecret' in auth && typeof auth.webhookSecret === 'string' && auth.webhookSecret) {
      secret = auth.webhookSecret;
      headers = { 'x-webhook-secret': secret };
    } else {
      throw new ConfigError('auth must be { webhookSecret } or { signingSecret } with the project webhook secret', 'auth');
    }
    return this.#send(ROUTES.trigger, { params, body: raw, headers, secrets: [secret] }, opts);
  }

  /**
   * Plugin activation. Activate, deactivate and validate need no token; pass `plugin_id` (the project id)
   * when known so the service can refuse a code of another product. Only validate is retried.
   */
  readonly activation = {
    /** @example await client.activation.activate({ code, machine_id, plugin_id: projectId }); */
    activate: (body: ActivationRequest, opts?: CallOptions): Promise<ActivateResult> => this.#send(ROUTES.activation.activate, { body, secrets: [codeOf(body)] }, opts),
    /** @example await client.activation.deactivate({ code, machine_id, plugin_id: projectId }); */
    deactivate: (body: ActivationRequest, opts?: CallOptions): Promise<DeactivateResult> => this.#send(ROUTES.activation.deactivate, { body, secrets: [codeOf(body)] }, opts),
    /**
     * Problems come back in the body (`valid: false` and a `reason`), not as errors.
     * @example const { valid, reason } = await client.activation.validate({ code, machine_id });
     */
    validate: (body: ActivationRequest, opts?: CallOptions): Promise<ValidateResult> => this.#send(ROUTES.activation.validate, { body, secrets: [codeOf(body)] }, opts),
    /** Slots of a code; no token needed. @example const { available } = await client.activation.status(code); */
    status: async (code: string, opts?: CallOptions): Promise<CodeStatus> => this.#send(ROUTES.activation.status, { params: { code: requireId(code, 'code') }, secrets: [code] }, opts),
    /** Issues a new code (bearer token). Never retried. @example const { code } = await client.activation.generate({ project_id, max_activations: 3 }); */
    generate: async (body: GenerateRequest, opts?: CallOptions): Promise<GeneratedKey> => this.#send(ROUTES.activation.generate, { body }, opts),
    /** Every code of a project (bearer token). @example const { keys } = await client.activation.keys(projectId); */
    keys: async (projectId: string, opts?: CallOptions): Promise<ProjectKeys> => this.#send(ROUTES.activation.keys, { params: { projectId: requireId(projectId, 'projectId') } }, opts),
  };

  /** The code-hosting (GitHub App) connection of the token's account. */
  readonly hosting = {
    /** @example const { connected, account_login } = await client.hosting.status(); */
    status: async (opts?: CallOptions): Promise<HostingConnection> => this.#send(ROUTES.hosting.status, {}, opts),
    /** Never retried. @example await client.hosting.disconnect(); */
    disconnect: async (opts?: CallOptions): Promise<SuccessMessage> => this.#send(ROUTES.hosting.disconnect, {}, opts),
  };

  /** Plugin repositories of the connected code-hosting account. */
  readonly repos = {
    /** @example const { repos } = await client.repos.discover(); */
    discover: async (opts?: CallOptions): Promise<DiscoveredRepos> => this.#send(ROUTES.repos.discover, {}, opts),
    /** @example await client.repos.link({ project_id, repo_full_name: 'acme/reverb', branch: 'main' }); */
    link: async (body: LinkRepoRequest, opts?: CallOptions): Promise<LinkResult> => this.#send(ROUTES.repos.link, { body }, opts),
    /** @example await client.repos.unlink({ project_id }); */
    unlink: async (body: UnlinkRepoRequest, opts?: CallOptions): Promise<UnlinkResult> => this.#send(ROUTES.repos.unlink, { body }, opts),
    /** @example await client.repos.createAndLink({ repo_full_name: 'acme/delay', name: 'Delay', description: '', visibility: 'private' }); */
    createAndLink: async (body: CreateAndLinkRequest, opts?: CallOptions): Promise<CreatedProject> => this.#send(ROUTES.repos.createAndLink, { body }, opts),
  };

  /** The plugin SDK descriptor. */
  readonly sdk = {
    /** @example const { available, version } = await client.sdk.status(); */
    status: async (opts?: CallOptions): Promise<SdkDescriptor> => this.#send(ROUTES.sdk.status, {}, opts),
    /** @example const { url } = await client.sdk.download(); */
    download: async (opts?: CallOptions): Promise<SdkDownload> => this.#send(ROUTES.sdk.download, {}, opts),
  };

  /**
   * Closes the client's own connections (an injected dispatcher is left open). Idempotent.
   * @example await client.close();
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#carrier === undefined) return;
    const carrier = await Promise.resolve(this.#carrier).catch(() => undefined);
    await carrier?.close();
  }
}
