import { execFile } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { access, constants, stat, statfs } from 'node:fs/promises';
import { isIP } from 'node:net';
import { promisify } from 'node:util';
import { createDispatcher, NO_PROXY_VARIABLES, PROXY_VARIABLES } from '@plugin-license/api';
import { selfCommand } from '@plugin-license/agent';
import { agentCommandHint, getMachineId, readCachedStatus, type ResolvedConfig } from '@plugin-license/licensing';
import { request } from 'undici';
import type { Context } from '../context.js';
import { classify, EXIT, type ExitCode } from '../errors.js';
import { when, formatBytes } from '../output.js';

export type Level = 'ok' | 'warning' | 'failed' | 'info';

/** One line of the report: what was checked, what was seen, and what to do about it. */
export interface Check {
  section: string;
  name: string;
  level: Level;
  detail: string;
  fix?: string;
}

const SECTIONS = ['configuration', 'service', 'token', 'clock', 'machine id', 'data folder', 'licenses', 'agent'] as const;
const PROBE_TIMEOUT_MS = 8000;

/**
 * `doctor [--project ID]`: one report for a support ticket, every secret masked, each check
 * ok, warning or failed with what to do, in the order of cli.md. Exit 0 when nothing failed.
 */
export async function doctorCommand(ctx: Context, o: { project?: string }): Promise<ExitCode> {
  const checks: Check[] = [];
  const add = (c: Check): void => void checks.push(c);
  const projectId = o.project === undefined ? undefined : ctx.projectId(o.project);

  let config: ResolvedConfig | undefined;
  try {
    config = ctx.config;
  } catch (err) {
    add({ section: 'configuration', name: 'configuration', level: 'failed', detail: classify(err).message, fix: 'correct the value named above' });
  }
  if (config) {
    configuration(config, add);
    const probe = await service(ctx, config, add);
    await token(ctx, config, add);
    clock(probe, add);
    await machineId(ctx, config, add);
    await dataFolder(config, add);
    await licenses(config, projectId, add);
    await agent(ctx, projectId, add);
  }

  const failed = checks.filter((c) => c.level === 'failed').length;
  const warnings = checks.filter((c) => c.level === 'warning').length;
  if (ctx.out.json) {
    ctx.out.document({ ok: failed === 0, failed, warnings, checks });
  } else {
    const mark: Record<Level, string> = { ok: ctx.out.ok('ok     '), warning: ctx.out.warn('warning'), failed: ctx.out.bad('failed '), info: ctx.out.c.dim('info   ') };
    for (const section of SECTIONS) {
      const inSection = checks.filter((c) => c.section === section);
      if (inSection.length === 0) continue;
      ctx.out.line(ctx.out.c.bold(section));
      for (const c of inSection) {
        ctx.out.line(`  ${mark[c.level]}  ${c.name}: ${c.detail}`);
        if (c.fix && c.level !== 'ok' && c.level !== 'info') ctx.out.line(`           ${ctx.out.c.dim('→')} ${c.fix}`);
      }
    }
    ctx.out.line();
    ctx.out.line(failed === 0 ? ctx.out.ok(`no problems found${warnings ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}`) : ctx.out.bad(`${failed} failed, ${warnings} warning${warnings === 1 ? '' : 's'}`));
  }
  return failed === 0 ? EXIT.ok : EXIT.failed;
}

function configuration(config: ResolvedConfig, add: (c: Check) => void): void {
  const section = 'configuration';
  const from = (v: { source: string }): string => `(${v.source})`;
  add({ section, name: 'namespace', level: 'info', detail: `${config.namespace.value} ${from(config.namespace)}` });
  add({ section, name: 'home', level: 'info', detail: config.home.value === undefined ? 'per-OS folders (default)' : `${config.home.value} ${from(config.home)}` });
  add({ section, name: 'config file', level: 'info', detail: `${config.configFile}${config.configFileFound ? '' : ' (none)'}` });
  add(
    config.baseUrl.value === undefined
      ? { section, name: 'base URL', level: 'failed', detail: 'not set', fix: `pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${config.configFile}` }
      : { section, name: 'base URL', level: 'ok', detail: `${config.baseUrl.value} ${from(config.baseUrl)}` },
  );
  add({ section, name: 'token', level: 'info', detail: config.token.value === undefined ? 'not set' : `set ${from(config.token)}` });
  add({ section, name: 'socket', level: 'info', detail: config.socket.value === undefined ? 'default' : `${config.socket.value} ${from(config.socket)}` });
  add({ section, name: 'proxy', level: 'info', detail: config.proxy.value === undefined ? 'the proxy variables (default)' : config.proxy.value === false ? 'none (config file)' : `${maskUrl(config.proxy.value)} (config file)` });
}

interface Probe {
  localAt: number;
  serviceDate: number | undefined;
}

async function service(ctx: Context, config: ResolvedConfig, add: (c: Check) => void): Promise<Probe | undefined> {
  const section = 'service';
  const set = [...PROXY_VARIABLES, ...NO_PROXY_VARIABLES].filter((v) => (ctx.env[v] ?? '').trim() !== '');
  add({ section, name: 'proxy variables', level: 'info', detail: set.length === 0 ? 'none set' : set.map((v) => `${v}=${maskUrl(ctx.env[v] as string)}`).join(', ') });
  const base = config.baseUrl.value;
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
  const dispatcher = await createDispatcher({ timeoutMs: PROBE_TIMEOUT_MS, ...(config.proxy.value === undefined ? {} : { proxy: config.proxy.value }), env: ctx.env });
  const started = performance.now();
  try {
    const res = await request(`${base}/plugin-activation/status/doctor-probe`, { dispatcher, headersTimeout: PROBE_TIMEOUT_MS, bodyTimeout: PROBE_TIMEOUT_MS });
    await res.body.text();
    const ms = performance.now() - started;
    const date = Date.parse(String(res.headers.date ?? ''));
    const answered = res.statusCode < 500;
    add({
      section,
      name: 'connect and TLS',
      level: answered ? 'ok' : 'failed',
      detail: `${url.host} answered HTTP ${res.statusCode} to a public request in ${ms.toFixed(0)} ms`,
      ...(answered ? {} : { fix: 'the service is failing; try again later or check the service status page' }),
    });
    if (answered && ms > 2000) add({ section, name: 'latency', level: 'warning', detail: `${ms.toFixed(0)} ms for one request`, fix: 'a slow network or proxy; activation still works, but slowly' });
    return { localAt: Date.now() - ms / 2, serviceDate: Number.isNaN(date) ? undefined : date };
  } catch (err) {
    const e = err as Error & { code?: string; cause?: { code?: string } };
    const code = e.code ?? e.cause?.code ?? '';
    const tls = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/i.test(code + e.message);
    add({
      section,
      name: 'connect and TLS',
      level: 'failed',
      detail: `${url.host}: ${tls ? `the certificate is not trusted (${code || e.message})` : `no answer (${code || e.message})`}`,
      fix: tls ? 'if the service sits behind a private CA, point NODE_EXTRA_CA_CERTS at its PEM file' : 'check the network connection, the proxy settings and the base URL; licenses stay valid offline during the grace period',
    });
    return undefined;
  } finally {
    await dispatcher.close();
  }
}

async function token(ctx: Context, config: ResolvedConfig, add: (c: Check) => void): Promise<void> {
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
  if (config.baseUrl.value === undefined) return;
  try {
    await ctx.client(true, { retry: false }).builds.usage({ timeoutMs: PROBE_TIMEOUT_MS });
    add({ section, name: 'accepted', level: 'ok', detail: 'an authenticated request succeeded' });
  } catch (err) {
    const f = classify(err);
    const refused = f.code === 'unauthorized' || f.code === 'forbidden';
    add({ section, name: 'accepted', level: refused ? 'failed' : 'warning', detail: f.message, ...(refused ? { fix: 'get a new token from the portal' } : { fix: 'see the service checks above' }) });
  }
}

function clock(probe: Probe | undefined, add: (c: Check) => void): void {
  const section = 'clock';
  if (probe?.serviceDate === undefined) {
    add({ section, name: 'offset', level: 'info', detail: 'not measured (no answer from the service)' });
    return;
  }
  // The Date header has one-second resolution: offsets under two seconds are noise.
  const offset = probe.localAt - probe.serviceDate;
  const abs = Math.abs(offset);
  const text = abs < 2000 ? 'in step with the service' : `${formatDuration(abs)} ${offset > 0 ? 'ahead of' : 'behind'} the service`;
  const level: Level = abs > 3_600_000 ? 'failed' : abs > 300_000 ? 'warning' : 'ok';
  add({ section, name: 'offset', level, detail: text, fix: "set this computer's clock from the network (automatic date and time); a clock set back more than an hour makes licenses clock_tampered until the next online check" });
}

async function machineId(ctx: Context, config: ResolvedConfig, add: (c: Check) => void): Promise<void> {
  const section = 'machine id';
  const opts = { namespace: config.namespace.value, ...(config.home.value === undefined ? {} : { home: config.home.value }) };
  const first = await getMachineId(opts);
  add({ section, name: 'id', level: 'info', detail: `${first.id} (source: ${first.source})` });
  // A second derivation in a fresh process, as the next start of a plugin host would do.
  try {
    const [command, ...self] = selfCommand();
    const args = [...self, '--json', '--app', config.namespace.value, ...(config.home.value === undefined ? [] : ['--home', config.home.value]), 'machine-id'];
    const { stdout } = await promisify(execFile)(command!, args, { timeout: 15_000, env: { ...process.env, ...ctx.env } as NodeJS.ProcessEnv });
    const second = (JSON.parse(stdout) as { machine_id: string }).machine_id;
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

async function licenses(config: ResolvedConfig, projectId: string | undefined, add: (c: Check) => void): Promise<void> {
  const section = 'licenses';
  let all;
  try {
    all = await readCachedStatus({
      namespace: config.namespace.value,
      ...(config.home.value === undefined ? {} : { home: config.home.value }),
      offlinePublicKeys: config.offlinePublicKeys.value,
    });
  } catch (err) {
    add({ section, name: 'cache', level: 'failed', detail: classify(err).message });
    return;
  }
  const shown = projectId === undefined ? all : all.filter((l) => l.projectId === projectId);
  if (projectId !== undefined && shown.length === 0) {
    add({ section, name: projectId, level: 'failed', detail: 'not activated on this machine', fix: `activate it: plugin-license activate CODE --project ${projectId}` });
  }
  if (projectId === undefined && all.length === 0) add({ section, name: 'licenses', level: 'info', detail: 'none stored in this namespace' });
  for (const l of shown) {
    const s = l.status;
    const parts = [
      s.valid ? 'valid' : `not valid: ${s.reason}`,
      `code ${s.codeHint ?? '-'}`,
      `source ${s.source}`,
      `last online check ${when(s.validatedAt)}`,
      `${l.offline ? 'valid' : 'valid offline'} until ${when(s.graceUntil)}`,
    ];
    if (l.offline) {
      parts.push(`activated offline for ${l.offline.machineName || 'an unnamed machine'}, ${l.offline.keyId ? `signed by key ${l.offline.keyId}` : 'unsigned'}`);
    }
    if (l.problem) parts.push(l.problem);
    if (l.setAside.length) parts.push(`files set aside: ${l.setAside.join(', ')}`);
    if (l.pendingIntents) parts.push(`${l.pendingIntents} unfinished operation(s), settled at the next online call`);
    add({ section, name: l.projectId, level: s.valid ? (l.setAside.length || l.pendingIntents ? 'warning' : 'ok') : 'failed', detail: parts.join('; '), fix: fixFor(s.reason, l.projectId) });
  }
}

async function agent(ctx: Context, projectId: string | undefined, add: (c: Check) => void): Promise<void> {
  const section = 'agent';
  const socket = await ctx.socketPath();
  add({ section, name: 'socket', level: 'info', detail: socket });
  let client;
  try {
    client = await ctx.agent(1500);
  } catch (err) {
    add({ section, name: 'running', level: 'failed', detail: classify(err).message });
    return;
  }
  if (!client) {
    add({ section, name: 'running', level: 'warning', detail: 'no agent answers', fix: `plugins ask the agent: start it with "${agentCommandHint('run')}", or install it as a service with "${agentCommandHint('install')}"` });
    return;
  }
  const hello = await client.hello();
  add({ section, name: 'running', level: 'ok', detail: `${hello.agent}, protocol ${hello.protocol}, namespace ${hello.namespace}` });
  const target = projectId ?? (await client.list())[0]?.projectId;
  if (target !== undefined) {
    const started = performance.now();
    const state = await client.check(target);
    add({ section, name: 'check', level: 'ok', detail: `answered for ${target} in ${(performance.now() - started).toFixed(1)} ms (${state.valid ? 'valid' : state.reason})` });
  }
}

function fixFor(reason: string | null, projectId: string): string | undefined {
  switch (reason) {
    case null:
      return undefined;
    case 'grace_expired':
      return `connect this machine to the internet once, then: plugin-license validate --project ${projectId} (a machine that is never online: plugin-license offline renew --project ${projectId})`;
    case 'clock_tampered':
      return "set the clock right (automatic date and time), then validate online: plugin-license validate --project " + projectId;
    case 'cache_invalid':
      return 'the stored state was edited or copied from another machine: activate again';
    case 'code_revoked':
      return 'the vendor revoked this code: contact the vendor for a new one';
    case 'deactivated':
    case 'not_activated':
      return `activate again: plugin-license activate CODE --project ${projectId}`;
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


