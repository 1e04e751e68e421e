import { execFile } from 'node:child_process';
import { arch, platform, release } from 'node:os';
import { lookup } from 'node:dns/promises';
import { access, constants, stat, statfs } from 'node:fs/promises';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { closeDispatcher, createDispatcher, isTimeoutError, NO_PROXY_VARIABLES, PROXY_VARIABLES } from '@plugin-license/api';
import { selfCommand } from '@plugin-license/agent';
import { agentCommandHint, askServiceAbout, getMachineId, readCachedStatus, resolveConfig, type CachedLicense, type ResolvedConfig, type ServiceView } from '@plugin-license/licensing';
import { programName } from '@plugin-license/licensing/executable';
import { request } from 'undici';
import type { Context } from '../context.js';
import { classify, EXIT, type ExitCode } from '../errors.js';
import { CLI_VERSION } from '../exit.js';
import { nextCommand } from '../next-step.js';
import { nameField, projectLabel } from '../plugin-names.js';
import { when, formatBytes } from '../output.js';

export type Level = 'ok' | 'warning' | 'failed' | 'info';

/** One line of the report: what was checked, what was seen, and what to do about it. */
export interface Check {
  section: string;
  name: string;
  /** What the human report shows in place of `name` (a license's plugin name and project id); not in the JSON. */
  shown?: string;
  level: Level;
  detail: string;
  fix?: string;
}

const SECTIONS = ['versions', 'configuration', 'service', 'token', 'clock', 'machine id', 'data folder', 'licenses', 'agent'] as const;

/** The report's values as data, for `--json`: each its own field, never inside prose. */
interface Facts {
  versions?: { tool: string; version: string; node: string; os: string; os_release: string; arch: string };
  configuration?: Record<string, { value: unknown; source: string } | string | boolean | null>;
  machine?: { id: string; source: string; stable: boolean | null };
  service?: { base_url: string | null; reachable: boolean; is_the_service: boolean | null; status: number | null; latency_ms: number | null; clock_offset_ms: number | null };
  licenses?: Array<Record<string, unknown>>;
  agent?: { socket: string; running: boolean; agent: string | null; protocol: number | null; check_ms: number | null };
}

/**
 * `doctor [--project ID]`: one report for a support ticket, every secret masked, each check
 * ok, warning or failed with what to do, in the order of cli.md. It goes on past every failure
 * (a broken config file, an unreachable service) to the end, since support needs the rest most
 * then; it asks the service about each license when it can (the cache may be behind); and it
 * changes nothing. Exit 0 when nothing failed.
 */
export async function doctorCommand(ctx: Context, o: { project?: string }): Promise<ExitCode> {
  const checks: Check[] = [];
  const facts: Facts = {};
  const add = (c: Check): void => void checks.push(c);
  const projectId = o.project === undefined ? undefined : ctx.projectId(o.project);

  versions(facts, add);
  const config = doctorConfig(ctx, add);
  if (config) {
    const cached = await readLicenses(config, add);
    configuration(config, cached, facts, add);
    const probe = await service(ctx, config, facts, add);
    await token(ctx, config, probe, add);
    clock(probe, facts, add);
    await machineId(ctx, config, facts, add);
    await dataFolder(config, add);
    await licenses(ctx, config, cached, projectId, probe?.isService === true, facts, add);
    await agent(ctx, projectId, facts, add);
  }

  const failed = checks.filter((c) => c.level === 'failed').length;
  const warnings = checks.filter((c) => c.level === 'warning').length;
  if (ctx.out.json) {
    ctx.out.document({ ok: failed === 0, failed, warnings, ...facts, checks: checks.map(({ shown: _shown, ...c }) => c) });
  } else {
    const mark: Record<Level, string> = { ok: ctx.out.ok('ok     '), warning: ctx.out.warn('warning'), failed: ctx.out.bad('failed '), info: ctx.out.c.dim('info   ') };
    for (const section of SECTIONS) {
      const inSection = checks.filter((c) => c.section === section);
      if (inSection.length === 0) continue;
      ctx.out.line(ctx.out.c.bold(section));
      for (const c of inSection) {
        ctx.out.line(`  ${mark[c.level]}  ${c.shown ?? c.name}: ${c.detail}`);
        if (c.fix && c.level !== 'ok' && c.level !== 'info') ctx.out.line(`           ${ctx.out.c.dim('→')} ${c.fix}`);
      }
    }
    ctx.out.line();
    ctx.out.line(failed === 0 ? ctx.out.ok(`no problems found${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}`) : ctx.out.bad(`${failed} failed, ${warnings} warning${warnings === 1 ? '' : 's'}`));
  }
  return failed === 0 ? EXIT.ok : EXIT.failed;
}

function versions(facts: Facts, add: (c: Check) => void): void {
  const section = 'versions';
  const v = { tool: programName(), version: CLI_VERSION, node: process.versions.node, os: platform(), os_release: release(), arch: arch() };
  facts.versions = v;
  add({ section, name: 'tool', level: 'info', detail: `${v.tool} ${v.version}` });
  add({ section, name: 'node', level: 'info', detail: v.node });
  add({ section, name: 'os', level: 'info', detail: `${v.os} ${v.os_release} ${v.arch}` });
}

/**
 * The configuration, however broken: a config file that can't be used is a failed check and the
 * rest is resolved without it; a bad flag or environment value is a failed check and the rest is
 * resolved without the base URL and token. Undefined only when not even the folders are known.
 */
function doctorConfig(ctx: Context, add: (c: Check) => void): ResolvedConfig | undefined {
  const section = 'configuration';
  const flags = { app: ctx.options.app, home: ctx.options.home, baseUrl: ctx.options.baseUrl, token: ctx.options.token };
  let config: ResolvedConfig;
  try {
    config = resolveConfig(flags, ctx.env, { fileProblems: 'report' });
  } catch (err) {
    const first = classify(err).message;
    const { PLUGIN_LICENSE_BASE_URL: _b, PLUGIN_LICENSE_TOKEN: _t, ...env } = ctx.env;
    try {
      config = resolveConfig({ app: flags.app, home: flags.home }, env, { fileProblems: 'report' });
    } catch (again) {
      // The folders fail too: said once (an unusable HOME fails both the same way).
      const second = classify(again).message;
      if (second !== first) add({ section, name: 'value', level: 'failed', detail: first, fix: 'correct the value named above' });
      add({ section, name: 'folders', level: 'failed', detail: second, fix: 'correct the namespace or home named above' });
      return undefined;
    }
    add({ section, name: 'value', level: 'failed', detail: first, fix: 'correct the value named above' });
  }
  if (config.fileProblem !== undefined) {
    add({ section, name: 'config file', level: 'failed', detail: `${config.fileProblem}; the rest of this report goes on without it`, fix: `fix or remove ${config.configFile}` });
  }
  return config;
}

async function readLicenses(config: ResolvedConfig, add: (c: Check) => void): Promise<CachedLicense[] | undefined> {
  try {
    return await readCachedStatus({
      namespace: config.namespace.value,
      ...(config.home.value === undefined ? {} : { home: config.home.value }),
      offlinePublicKeys: config.offlinePublicKeys.value,
    });
  } catch (err) {
    add({ section: 'licenses', name: 'cache', level: 'failed', detail: classify(err).message });
    return undefined;
  }
}

function configuration(config: ResolvedConfig, cached: CachedLicense[] | undefined, facts: Facts, add: (c: Check) => void): void {
  const section = 'configuration';
  const from = (v: { source: string }): string => `(${v.source})`;
  const pair = (v: { value: unknown; source: string }) => ({ value: v.value === undefined ? null : v.value, source: v.source });
  facts.configuration = {
    namespace: pair(config.namespace),
    home: pair(config.home),
    config_file: config.configFile,
    config_file_found: config.configFileFound,
    config_problem: config.fileProblem ?? null,
    base_url: pair(config.baseUrl),
    token: { value: config.token.value === undefined ? null : 'set (masked)', source: config.token.source },
    socket: pair(config.socket),
    proxy: { value: config.proxy.value === undefined ? null : config.proxy.value === false ? false : maskUrl(config.proxy.value), source: config.proxy.source },
  };
  add({ section, name: 'namespace', level: 'info', detail: `${config.namespace.value} ${from(config.namespace)}` });
  add({ section, name: 'home', level: 'info', detail: config.home.value === undefined ? 'per-OS folders (default)' : `${config.home.value} ${from(config.home)}` });
  add({ section, name: 'config file', level: 'info', detail: `${config.configFile}${config.configFileFound ? '' : ' (none)'}` });
  if (config.baseUrl.value !== undefined) add({ section, name: 'base URL', level: 'ok', detail: `${config.baseUrl.value} ${from(config.baseUrl)}` });
  else {
    // Not set is a fault only where something needs it: an air-gapped studio's offline
    // activations never ask the service.
    const stored = (cached ?? []).filter((l) => l.status.reason !== 'not_activated');
    const offlineOnly = stored.length > 0 && stored.every((l) => l.status.source === 'offline');
    add(
      offlineOnly
        ? { section, name: 'base URL', level: 'info', detail: 'not set; not needed here: every license on this machine is an offline activation' }
        : { section, name: 'base URL', level: 'warning', detail: 'not set: online activation and checks cannot run (offline activation still can)', fix: `pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${config.configFile}` },
    );
  }
  add({ section, name: 'token', level: 'info', detail: config.token.value === undefined ? 'not set' : `set ${from(config.token)}` });
  add({ section, name: 'socket', level: 'info', detail: config.socket.value === undefined ? 'default' : `${config.socket.value} ${from(config.socket)}` });
  add({ section, name: 'proxy', level: 'info', detail: config.proxy.value === undefined ? 'the proxy variables (default)' : config.proxy.value === false ? 'none (config file)' : `${maskUrl(config.proxy.value)} (config file)` });
}

interface Probe {
  localAt: number;
  serviceDate: number | undefined;
  /** The answer came from the service (its error body, or a success), not from whatever else answers at the URL. */
  isService: boolean;
}

async function service(ctx: Context, config: ResolvedConfig, facts: Facts, add: (c: Check) => void): Promise<Probe | undefined> {
  const section = 'service';
  const set = [...PROXY_VARIABLES, ...NO_PROXY_VARIABLES].filter((v) => (ctx.env[v] ?? '').trim() !== '');
  add({ section, name: 'proxy variables', level: 'info', detail: set.length === 0 ? 'none set' : set.map((v) => `${v}=${maskUrl(ctx.env[v] as string)}`).join(', ') });
  const base = config.baseUrl.value;
  const seen: NonNullable<Facts['service']> = { base_url: base ?? null, reachable: false, is_the_service: null, status: null, latency_ms: null, clock_offset_ms: null };
  facts.service = seen;
  if (base === undefined) return undefined;
  const url = new URL(base);
  add({ section, name: 'base URL form', level: 'ok', detail: `${url.protocol === 'https:' ? 'https' : 'http (loopback)'}, ends in /functions/v1` });
  if (isIP(url.hostname.replace(/^\[|\]$/g, '')) === 0) {
    try {
      const addresses = await lookup(url.hostname, { all: true });
      add({ section, name: 'DNS', level: 'ok', detail: `${url.hostname} → ${addresses.map((a) => a.address).join(', ')}` });
    } catch (err) {
      add({ section, name: 'DNS', level: set.length ? 'warning' : 'failed', detail: `${url.hostname} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})`, fix: 'check the host name in the base URL and this machine\'s network and DNS settings' });
    }
  }
  const PROBE_TIMEOUT_MS = ctx.requestTimeoutMs;
  const dispatcher = await createDispatcher({ timeoutMs: PROBE_TIMEOUT_MS, ...(config.proxy.value === undefined ? {} : { proxy: config.proxy.value }), env: ctx.env });
  const started = performance.now();
  try {
    // The command's deadline ends the probe whatever stage hangs (a proxy that never answers
    // CONNECT is not aborted by undici itself); the stuck connection goes with the dispatcher.
    const { res, text } = await ctx.deadline.bound(
      (async () => {
        const answer = await request(`${base}/plugin-activation/status/doctor-probe`, { dispatcher, headersTimeout: PROBE_TIMEOUT_MS, bodyTimeout: PROBE_TIMEOUT_MS });
        return { res: answer, text: await answer.body.text() };
      })(),
      'GET /plugin-activation/status/:code, the public request of this check',
    );
    const ms = performance.now() - started;
    const date = Date.parse(String(res.headers.date ?? ''));
    const answered = res.statusCode < 500;
    // The service answers an unknown code with its error body ({"error": …, "message": …}); a
    // web server, a portal or a wrong path answers something else.
    const isService = answered && (res.statusCode < 300 || serviceErrorBody(text));
    Object.assign(seen, { reachable: true, is_the_service: isService, status: res.statusCode, latency_ms: Math.round(ms) });
    add({
      section,
      name: 'connect and TLS',
      level: answered ? 'ok' : 'failed',
      detail: `${url.host} answered HTTP ${res.statusCode} to a public request in ${ms.toFixed(0)} ms`,
      ...(answered ? {} : { fix: 'the service is failing; try again later or check the service status page' }),
    });
    if (answered) {
      add(
        isService
          ? { section, name: 'is the service', level: 'ok', detail: 'answered as the service does' }
          : { section, name: 'is the service', level: 'failed', detail: `HTTP ${res.statusCode} without the service's error body: something answers at this URL, but not the service`, fix: "check the base URL: the service's ends in /functions/v1" },
      );
    }
    if (answered && ms > 2000) add({ section, name: 'latency', level: 'warning', detail: `${ms.toFixed(0)} ms for one request`, fix: 'a slow network or proxy; activation still works, but slowly' });
    return { localAt: Date.now() - ms / 2, serviceDate: Number.isNaN(date) ? undefined : date, isService };
  } catch (err) {
    if (ctx.signal.aborted) throw err; // Ctrl-C: the report stops here
    const e = err as Error & { code?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code ?? '';
    const tls = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code + e.message);
    add({
      section,
      name: 'connect and TLS',
      level: 'failed',
      detail: `${url.host}: ${tls ? `the certificate is not trusted (${code || e.message})` : isTimeoutError(err) ? err.message : `no answer (${code || e.message})`}`,
      fix: tls ? 'if the service sits behind a private CA, point NODE_EXTRA_CA_CERTS at its PEM file' : 'check the network connection, the proxy settings and the base URL; licenses stay valid offline during the grace period',
    });
    return undefined;
  } finally {
    // A probe that got no answer may leave a stuck connection: it is not waited for.
    await closeDispatcher(dispatcher, ctx.deadline.remainingMs());
  }
}

function serviceErrorBody(text: string): boolean {
  try {
    const body = JSON.parse(text) as { error?: unknown; message?: unknown } | null;
    return typeof body === 'object' && body !== null && typeof body.error === 'string' && typeof body.message === 'string';
  } catch {
    return false;
  }
}

async function token(ctx: Context, config: ResolvedConfig, probe: Probe | undefined, add: (c: Check) => void): Promise<void> {
  const section = 'token';
  const value = config.token.value;
  if (value === undefined) {
    add({ section, name: 'token', level: 'warning', detail: 'not set; vendor commands (keys, generate, usage) need it', fix: 'set PLUGIN_LICENSE_TOKEN or put "token" in the config file' });
    return;
  }
  const exp = jwtExpiry(value);
  if (exp === null) add({ section, name: 'form', level: 'info', detail: 'present, opaque (not a JWT; no expiry to read)' });
  else if (exp === undefined) add({ section, name: 'form', level: 'warning', detail: 'present, a JWT without an expiry', fix: 'ask for a token with an expiry' });
  else if (exp <= Date.now()) add({ section, name: 'expiry', level: 'failed', detail: `expired ${when(new Date(exp))}`, fix: 'get a new token from the portal' });
  else add({ section, name: 'expiry', level: exp - Date.now() < 7 * 86_400_000 ? 'warning' : 'ok', detail: `expires ${when(new Date(exp))}`, fix: 'get a new token soon' });
  if (!probe?.isService) return; // the service checks above say why
  try {
    await ctx.client(true, { retry: false, config }).builds.usage();
    add({ section, name: 'accepted', level: 'ok', detail: 'an authenticated request succeeded' });
  } catch (err) {
    const f = classify(err);
    const refused = f.code === 'unauthorized' || f.code === 'forbidden';
    add({ section, name: 'accepted', level: refused ? 'failed' : 'warning', detail: f.message, ...(refused ? { fix: 'get a new token from the portal' } : { fix: 'see the service checks above' }) });
  }
}

function clock(probe: Probe | undefined, facts: Facts, add: (c: Check) => void): void {
  const section = 'clock';
  if (probe?.serviceDate === undefined || !probe.isService) {
    add({ section, name: 'offset', level: 'info', detail: 'not measured (no answer from the service)' });
    return;
  }
  // The Date header has one-second resolution: offsets under two seconds are noise.
  const offset = probe.localAt - probe.serviceDate;
  if (facts.service) facts.service.clock_offset_ms = Math.abs(offset) < 2000 ? 0 : Math.round(offset);
  const abs = Math.abs(offset);
  const text = abs < 2000 ? 'in step with the service' : `${formatDuration(abs)} ${offset > 0 ? 'ahead of' : 'behind'} the service`;
  const level: Level = abs > 3_600_000 ? 'failed' : abs > 300_000 ? 'warning' : 'ok';
  add({ section, name: 'offset', level, detail: text, fix: "set this computer's clock from the network (automatic date and time); a clock set back more than an hour makes licenses clock_tampered until the next online check" });
}

async function machineId(ctx: Context, config: ResolvedConfig, facts: Facts, add: (c: Check) => void): Promise<void> {
  const section = 'machine id';
  const opts = { namespace: config.namespace.value, ...(config.home.value === undefined ? {} : { home: config.home.value }) };
  let first;
  try {
    first = await getMachineId(opts);
  } catch (err) {
    add({ section, name: 'id', level: 'failed', detail: classify(err).message });
    return;
  }
  const machine: NonNullable<Facts['machine']> = { id: first.id, source: first.source, stable: null };
  facts.machine = machine;
  add({ section, name: 'id', level: 'info', detail: `${first.id} (source: ${first.source})` });
  // A second derivation in a fresh process, as the next start of a plugin host would do.
  try {
    const [command, ...self] = selfCommand();
    const args = [...self, '--json', '--app', config.namespace.value, ...(config.home.value === undefined ? [] : ['--home', config.home.value]), 'machine-id'];
    const { stdout } = await promisify(execFile)(command!, args, { timeout: 15_000, env: { ...process.env, ...ctx.env } as NodeJS.ProcessEnv });
    const second = (JSON.parse(stdout) as { machine_id: string }).machine_id;
    machine.stable = second === first.id;
    add(second === first.id
      ? { section, name: 'stable', level: 'ok', detail: 'the same id from a second derivation in a new process' }
      : { section, name: 'stable', level: 'failed', detail: `a second derivation gave ${second}`, fix: 'the OS id changes between runs (a cloned VM or container?); licenses will not stay bound: pass a fixed machine id' });
  } catch (err) {
    add({ section, name: 'stable', level: 'warning', detail: `could not derive it again (${(err as Error).message.split('\n')[0]})` });
  }
}

async function dataFolder(config: ResolvedConfig, add: (c: Check) => void): Promise<void> {
  const section = 'data folder';
  const dir = config.paths.data;
  let st;
  try {
    st = await stat(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    add(code === 'ENOENT'
      ? { section, name: 'path', level: 'info', detail: `${dir} (not created yet: nothing has been activated here)` }
      : { section, name: 'path', level: 'failed', detail: `${dir}: ${code}`, fix: 'check the folder\'s permissions' });
    return;
  }
  const mode = (st.mode & 0o777).toString(8).padStart(3, '0');
  const mine = typeof process.getuid !== 'function' || st.uid === process.getuid();
  add({ section, name: 'path', level: 'info', detail: dir });
  add({ section, name: 'owner and permissions', level: mine ? ((st.mode & 0o022) !== 0 ? 'warning' : 'ok') : 'warning', detail: `uid ${st.uid}, mode ${mode}`, fix: mine ? 'others can write here: chmod go-w the folder' : 'the folder belongs to another user: run as its owner, or fix the owner' });
  try {
    await access(dir, constants.W_OK);
  } catch {
    add({ section, name: 'writable', level: 'failed', detail: 'this user cannot write here', fix: 'fix the folder permissions; activation needs to store its state here' });
  }
  try {
    const fs = await statfs(dir);
    const free = fs.bavail * fs.bsize;
    add({ section, name: 'free space', level: free < 50 * 1024 * 1024 ? 'warning' : 'ok', detail: formatBytes(free), fix: 'free some disk space: the license state needs a few kilobytes, but a full disk fails every write' });
  } catch {
    // statfs is not everywhere; nothing to report then
  }
}

async function licenses(
  ctx: Context,
  config: ResolvedConfig,
  cached: CachedLicense[] | undefined,
  projectId: string | undefined,
  serviceUp: boolean,
  facts: Facts,
  add: (c: Check) => void,
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
    if (l.problem) parts.push(l.problem);
    if (l.setAside.length) parts.push(`files set aside: ${l.setAside.join(', ')}`);
    if (l.pendingIntents) parts.push(`${l.pendingIntents} unfinished operation(s), settled at the next online call`);
    const valid = view?.answered ? view.valid : s.valid;
    const reason = view?.answered ? view.reason : s.reason;
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
      offline: l.offline ? { valid_until: l.offline.validUntil.toISOString(), key_id: l.offline.keyId, machine_name: l.offline.machineName } : null,
      problem: l.problem,
      set_aside: l.setAside,
      pending_operations: l.pendingIntents,
    });
  }
}

async function agent(ctx: Context, projectId: string | undefined, facts: Facts, add: (c: Check) => void): Promise<void> {
  const section = 'agent';
  const socket = await ctx.socketPath();
  const seen: NonNullable<Facts['agent']> = { socket, running: false, agent: null, protocol: null, check_ms: null };
  facts.agent = seen;
  add({ section, name: 'socket', level: 'info', detail: socket });
  let client;
  try {
    client = await ctx.agent(1500);
  } catch (err) {
    add({ section, name: 'running', level: 'failed', detail: classify(err).message });
    return;
  }
  if (!client) {
    add({ section, name: 'running', level: 'warning', detail: 'no agent answers', fix: `plugins ask the agent: start it with "${agentCommandHint('run', ctx.inspectionConfig.namespace.value)}", or install it as a service with "${agentCommandHint('install', ctx.inspectionConfig.namespace.value)}"` });
    return;
  }
  let step: 'running' | 'check' = 'running';
  try {
    const hello = await client.hello();
    Object.assign(seen, { running: true, agent: hello.agent, protocol: hello.protocol });
    add({ section, name: 'running', level: 'ok', detail: `${hello.agent}, protocol ${hello.protocol}, namespace ${hello.namespace}` });
    step = 'check';
    const target = projectId ?? (await client.list())[0]?.projectId;
    if (target !== undefined) {
      const started = performance.now();
      const state = await client.check(target);
      const ms = performance.now() - started;
      seen.check_ms = Math.round(ms * 10) / 10;
      add({ section, name: 'check', level: 'ok', detail: `answered for ${target} in ${ms.toFixed(1)} ms (${state.valid ? 'valid' : state.reason})` });
    }
  } catch (err) {
    // An answer that cannot be read (or none) is this section's finding; the report goes on.
    add({ section, name: step, level: 'failed', detail: classify(err).message });
  }
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
    case 'code_revoked':
      return 'the vendor revoked this code: contact the vendor for a new one';
    case 'deactivated':
    case 'not_activated':
      return `activate again: ${nextCommand(ctx, 'here', 'activate', 'YOUR-CODE', '--project', projectId)}`;
    default:
      return 'activate again, or contact the vendor';
  }
}

/** The expiry of a JWT in ms; undefined when it has none; null when the token is not a JWT. */
function jwtExpiry(token: string): number | undefined | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return null;
  }
}

/** A proxy URL without its password. */
function maskUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = '****';
    return u.href;
  } catch {
    return value.includes('@') ? '(set, with credentials)' : value;
  }
}

function formatDuration(ms: number): string {
  if (ms >= 86_400_000) return `${(ms / 86_400_000).toFixed(1)} days`;
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}


