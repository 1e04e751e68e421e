import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Presets, SingleBar } from 'cli-progress';
import { BuildFlags, closeDispatcher, createDispatcher, type Artifact, type Build, type Format, type Platform, type ReleaseType } from '@plugin-license/api';
import { renameRetrying } from '@plugin-license/fs';
import type { Dispatcher } from 'undici';
import type { Context } from '../context.js';
import { nextCommand } from '../next-step.js';
import { CliError, EXIT, usageError, type ExitCode } from '../exit.js';
import { formatBytes, when } from '../output.js';

const FINISHED = new Set(['success', 'failed', 'cancelled']);

function statusText(ctx: Context, status: string): string {
  if (status === 'success') return ctx.out.ok(status);
  if (status === 'failed' || status === 'cancelled') return ctx.out.bad(status);
  return ctx.out.warn(status);
}

/** `builds list [--project ID] [--status S] [--limit N] [--offset N]`. */
export async function listCommand(ctx: Context, o: { project?: string; status?: string; limit?: number; offset?: number }): Promise<ExitCode> {
  const client = ctx.client(true);
  const list = await ctx.out.spin('listing builds', () =>
    client.builds.list({
      ...(o.project === undefined ? {} : { project_id: ctx.projectId(o.project) }),
      ...(o.status === undefined ? {} : { status: o.status as Build['status'] }),
      ...(o.limit === undefined ? {} : { limit: o.limit }),
      ...(o.offset === undefined ? {} : { offset: o.offset }),
    }),
  );
  if (ctx.out.json) {
    ctx.out.document(list);
    return EXIT.ok;
  }
  if (list.builds.length === 0) {
    ctx.out.line(list.total === 0 ? 'No builds.' : `No builds at offset ${list.offset} (${list.total} in all).`);
    return EXIT.ok;
  }
  ctx.out.table(
    ['build', '#', 'version', 'status', 'queued', 'completed'],
    list.builds.map((b) => {
      const extra = b as { build_number?: number; queued_at?: string };
      return [b.id, extra.build_number === undefined ? '' : String(extra.build_number), b.version_number, statusText(ctx, b.status), when(extra.queued_at), when(b.completed_at)];
    }),
  );
  const shown = list.offset + list.builds.length;
  if (shown < list.total) ctx.out.note(`${list.builds.length} of ${list.total} builds; --offset ${shown} for the next page`);
  return EXIT.ok;
}

function buildFields(ctx: Context, b: Build): Array<[string, string]> {
  return [
    ['build', b.id],
    ['project', b.project_id],
    ['status', statusText(ctx, b.status)],
    ['step', `${b.metadata.current_step} (${b.metadata.step_progress}%)`],
    ['version', `${b.version_number} (build ${b.build_number})`],
    ['platforms', b.platforms.join(', ')],
    ['formats', b.formats.join(', ')],
    ['queued', when(b.queued_at)],
    ['started', when(b.started_at)],
    ...(b.completed_at ? ([['completed', when(b.completed_at)]] as Array<[string, string]>) : []),
    ['run', b.github_run_url ?? '-'],
  ];
}

/** `builds get <id>`. */
export async function getCommand(ctx: Context, id: string): Promise<ExitCode> {
  const client = ctx.client(true);
  const b = await ctx.out.spin('asking the service', () => client.builds.get(id));
  if (ctx.out.json) ctx.out.document(b);
  else ctx.out.fields(buildFields(ctx, b));
  return EXIT.ok;
}

export interface BuildSpec {
  platform?: Platform[];
  format?: Format[];
  releaseType?: ReleaseType;
  flag?: string[];
  clean?: boolean;
}

/** The flags the interface defines, read from the api's schema so the two never drift. */
const FLAGS = Object.keys(BuildFlags.shape);

/** `builds create <project_id> …`. */
export async function createCommand(ctx: Context, rawProject: string, o: BuildSpec): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  const flags: Record<string, boolean> = {};
  for (const name of o.flag ?? []) {
    if (!FLAGS.includes(name)) throw usageError(`unknown build flag '${name}'; the flags are ${FLAGS.join(', ')}`, { field: 'flag' });
    flags[name] = true;
  }
  const client = ctx.client(true, { retry: false });
  const created = await ctx.out.spin('creating the build', () =>
    client.builds.create({
      project_id: projectId,
      ...(o.platform ? { platforms: o.platform } : {}),
      ...(o.format ? { formats: o.format } : {}),
      ...(o.releaseType ? { release_type: o.releaseType } : {}),
      ...(Object.keys(flags).length > 0 ? { flags } : {}),
      ...(o.clean ? { clean_build: true } : {}),
    }),
  );
  if (ctx.out.json) {
    ctx.out.document(created);
    return EXIT.ok;
  }
  ctx.out.line(created.id);
  ctx.out.note(`build ${created.build_number} (${created.version_number}) is ${created.status}; follow it with: ${nextCommand(ctx, 'here', 'builds', 'watch', created.id)}`);
  return EXIT.ok;
}

/** `builds cancel <id>`. */
export async function cancelCommand(ctx: Context, id: string): Promise<ExitCode> {
  const client = ctx.client(true, { retry: false });
  const answer = await ctx.out.spin('cancelling', () => client.builds.cancel(id));
  if (ctx.out.json) ctx.out.document(answer);
  else ctx.out.line(`Build ${answer.id} cancelled.`);
  return EXIT.ok;
}

/** `builds artifacts <id>`. */
export async function artifactsCommand(ctx: Context, id: string): Promise<ExitCode> {
  const client = ctx.client(true);
  const { artifacts } = await ctx.out.spin('listing artifacts', () => client.builds.artifacts(id));
  if (ctx.out.json) {
    ctx.out.document({ build_id: id, artifacts });
    return EXIT.ok;
  }
  if (artifacts.length === 0) {
    ctx.out.line(`No artifacts: the build has not finished successfully. Follow it with: ${nextCommand(ctx, 'here', 'builds', 'watch', id)}`);
    return EXIT.ok;
  }
  ctx.out.table(
    ['artifact', 'platform', 'format', 'file', 'size', 'signed', 'downloads'],
    artifacts.map((a) => [a.id, a.platform, a.format, a.file_name, formatBytes(a.file_size), a.is_signed ? 'yes' : 'no', String(a.download_count)]),
  );
  return EXIT.ok;
}

export interface DownloadOptions {
  out?: string;
  platform?: string;
  format?: string;
}

interface Downloaded {
  artifact_id: string;
  file: string;
  bytes: number;
  checksum_sha256: string;
}

/** A file name from the service, reduced to a plain name: it must not place a file outside the folder. */
function safeName(name: string): string {
  const plain = basename(name.replace(/\\/g, '/'));
  if (plain === '' || plain === '.' || plain === '..') throw new CliError(EXIT.failed, 'bad_artifact', `the service named an artifact file '${name}', which is not a file name`);
  return plain;
}

/**
 * `builds download <build_id> [artifact_id] [--out PATH]`: each artifact streams to
 * `NAME.part` beside its target while its SHA-256 is computed, and becomes NAME only when the
 * checksum matches `checksum_sha256`; a mismatch or a failure deletes the partial file (exit 1).
 * Existing files are never overwritten.
 */
export async function downloadCommand(ctx: Context, buildId: string, artifactId: string | undefined, o: DownloadOptions, signal: AbortSignal): Promise<ExitCode> {
  // Downloads run on by design (files are large): each request has its own deadline, the bytes their stall rule.
  const client = ctx.client(true, { steps: true });
  const { artifacts } = await ctx.out.spin('listing artifacts', () => client.builds.artifacts(buildId));
  const chosen = artifacts.filter(
    (a) => (artifactId === undefined || a.id === artifactId.toLowerCase()) && (o.platform === undefined || a.platform === o.platform) && (o.format === undefined || a.format === o.format),
  );
  if (chosen.length === 0) {
    const why = artifacts.length === 0 ? 'the build has no artifacts (it has not finished successfully)' : 'no artifact of the build matches';
    throw new CliError(EXIT.negative, 'not_found', `${why}; list them with: ${nextCommand(ctx, 'here', 'builds', 'artifacts', buildId)}`);
  }
  // --out is a folder, except with an artifact id, where it may name the file (unless it is an
  // existing folder or ends in a separator).
  const out = resolve(o.out ?? '.');
  const intoFolder = artifactId === undefined || o.out === undefined || /[/\\]$/.test(o.out) || (existsSync(out) && statSync(out).isDirectory());
  if (intoFolder && existsSync(out) && !statSync(out).isDirectory()) {
    throw usageError(`${out} is a file, and artifacts go into a folder: pass --out FOLDER, or an artifact id to download one to a file`, { file: out });
  }
  if (intoFolder) mkdirSync(out, { recursive: true });
  const all = chosen.map((a) => ({ artifact: a, file: intoFolder ? join(out, safeName(a.file_name)) : out }));
  // A file already there with the artifact's checksum is kept (an earlier run fetched it); one
  // that differs is never overwritten: nothing is fetched until it is moved away.
  const kept: Downloaded[] = [];
  const targets: typeof all = [];
  for (const t of all) {
    if (!existsSync(t.file)) {
      targets.push(t);
      continue;
    }
    const have = await fileDigest(t.file);
    if (have.sha256 === t.artifact.checksum_sha256.toLowerCase() && have.bytes === t.artifact.file_size) {
      kept.push({ artifact_id: t.artifact.id, file: t.file, bytes: have.bytes, checksum_sha256: have.sha256 });
      continue;
    }
    throw usageError(`${t.file} already exists and is not this artifact (its checksum differs); downloads never overwrite a file: move it away or pass --out`, { file: t.file });
  }
  const dispatcher = await createDispatcher({ timeoutMs: ctx.requestTimeoutMs, ...(ctx.config.proxy.value === undefined ? {} : { proxy: ctx.config.proxy.value }) });
  const done: Downloaded[] = [];
  try {
    for (const t of targets) {
      if (signal.aborted) break;
      try {
        const link = await client.builds.download(buildId, t.artifact.id);
        done.push(await fetchVerified(ctx, link.url, t.artifact, t.file, dispatcher, signal));
      } catch (err) {
        // Interrupted: the partial file is gone; what was fetched and kept is still reported.
        if (signal.aborted) break;
        throw err;
      }
    }
  } finally {
    await closeDispatcher(dispatcher);
  }
  const interrupted = done.length < targets.length;
  if (ctx.out.json) ctx.out.document({ build_id: buildId, downloaded: done, kept, interrupted });
  else {
    for (const d of kept) ctx.out.line(`${d.file}  ${formatBytes(d.bytes)}  sha256 ${d.checksum_sha256} kept (already here)`);
    for (const d of done) ctx.out.line(`${d.file}  ${formatBytes(d.bytes)}  sha256 ${d.checksum_sha256} ok`);
  }
  if (interrupted) ctx.out.note(`interrupted: ${done.length} of ${targets.length} artifacts downloaded${kept.length ? `, ${kept.length} already here` : ''}; run the same command again for the rest`);
  return interrupted ? EXIT.interrupted : EXIT.ok;
}

async function fetchVerified(ctx: Context, url: string, artifact: Artifact, file: string, dispatcher: Dispatcher, signal: AbortSignal): Promise<Downloaded> {
  /** The longest a download may go without receiving anything. */
  const DOWNLOAD_STALL_MS = 3 * ctx.requestTimeoutMs;
  const part = `${file}.part`;
  const hash = createHash('sha256');
  let bytes = 0;
  const progress = startProgress(ctx, artifact);
  // A download has no end-to-end deadline (files are large), but it never stalls for longer than
  // this, whatever carries it: connecting, a proxy's CONNECT, the headers, or a pause in the body.
  const stall = new AbortController();
  let stallTimer = setTimeout(() => stall.abort(), DOWNLOAD_STALL_MS);
  const progressed = (): void => {
    clearTimeout(stallTimer);
    stallTimer = setTimeout(() => stall.abort(), DOWNLOAD_STALL_MS);
  };
  try {
    const res = await dispatcher.request({ ...requestOf(url), method: 'GET', signal: AbortSignal.any([signal, stall.signal]) });
    progressed();
    if (res.statusCode !== 200) {
      const text = await res.body.text().catch(() => '');
      const message = (() => {
        try {
          return (JSON.parse(text) as { message?: string }).message;
        } catch {
          return undefined;
        }
      })();
      throw new CliError(EXIT.failed, 'download_failed', `downloading ${artifact.file_name} failed: the file server answered ${res.statusCode}${message ? ` (${message})` : ''}`);
    }
    // NAME.part is this command's own: one left by a download that was killed is replaced.
    const sink = createWriteStream(part, { flags: 'w', mode: 0o644 });
    const closed = new Promise<void>((ok, fail) => {
      sink.on('close', ok);
      sink.on('error', fail);
    });
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        progressed();
        hash.update(buf);
        bytes += buf.length;
        progress.update(bytes);
        if (!sink.write(buf)) await new Promise<void>((ok) => sink.once('drain', () => ok()));
      }
    } finally {
      sink.end();
      await closed;
    }
    const actual = hash.digest('hex');
    if (actual !== artifact.checksum_sha256.toLowerCase() || bytes !== artifact.file_size) {
      throw new CliError(
        EXIT.failed,
        'checksum_mismatch',
        `${artifact.file_name}: the downloaded bytes do not match the service's checksum (got ${bytes} bytes, sha256 ${actual}; expected ${artifact.file_size} bytes, ${artifact.checksum_sha256}); the partial file was deleted, download again`,
      );
    }
    // A scanner may hold a freshly written file on Windows: the one rename rule retries it.
    await renameRetrying(part, file);
    return { artifact_id: artifact.id, file, bytes, checksum_sha256: actual };
  } catch (err) {
    rmSync(part, { force: true });
    if (signal.aborted && !(err instanceof CliError)) throw new CliError(EXIT.interrupted, 'interrupted', `interrupted while downloading ${artifact.file_name}; the partial file was deleted`);
    if (stall.signal.aborted && !(err instanceof CliError)) {
      throw new CliError(EXIT.failed, 'download_stalled', `downloading ${artifact.file_name} stalled: nothing arrived for ${DOWNLOAD_STALL_MS / 1000} s; the partial file was deleted; check the network or proxy, then run the same command again`);
    }
    throw err;
  } finally {
    clearTimeout(stallTimer);
    progress.stop();
  }
}

/** SHA-256 and size of a file on disk. */
async function fileDigest(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

function requestOf(url: string): { origin: string; path: string } {
  const u = new URL(url);
  return { origin: u.origin, path: `${u.pathname}${u.search}` };
}

function startProgress(ctx: Context, artifact: Artifact): { update(bytes: number): void; stop(): void } {
  if (!ctx.out.interactive) return { update() {}, stop() {} };
  const bar = new SingleBar(
    { stream: ctx.out.streams.stderr as NodeJS.WriteStream, format: `${artifact.file_name} {bar} {percentage}% | {value}/{total} bytes | {eta_formatted} left`, hideCursor: true },
    Presets.shades_classic,
  );
  bar.start(artifact.file_size, 0);
  return { update: (bytes) => bar.update(bytes), stop: () => bar.stop() };
}

/**
 * `builds watch <id> [--interval S]`: follows a build until it finishes, one line per status or
 * step change. Exit 0 on success, 3 on failed or cancelled, 130 on Ctrl-C. The default interval
 * (6 s) keeps within the builds endpoints' 10 requests a minute.
 */
export async function watchCommand(ctx: Context, id: string, o: { interval: number }, signal: AbortSignal): Promise<ExitCode> {
  // A watch runs until the build ends: each look has its own deadline.
  const client = ctx.client(true, { steps: true });
  const seen: Array<{ at: string; status: string; step: string; progress: number }> = [];
  let build: Build | undefined;
  for (;;) {
    build = await client.builds.get(id);
    const last = seen[seen.length - 1];
    if (!last || last.status !== build.status || last.step !== build.metadata.current_step) {
      const entry = { at: new Date().toISOString(), status: build.status, step: build.metadata.current_step, progress: build.metadata.step_progress };
      seen.push(entry);
      const time = new Date(entry.at).toLocaleTimeString();
      const step = entry.step === entry.status ? '' : `  ${entry.step}`;
      ctx.out.line(`${ctx.out.c.dim(time)}  ${statusText(ctx, entry.status)}${step}  ${entry.progress}%`);
    }
    if (FINISHED.has(build.status) || signal.aborted) break;
    await delay(o.interval * 1000, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
  }
  const finished = FINISHED.has(build.status);
  if (ctx.out.json) ctx.out.document({ build, changes: seen, finished });
  else if (finished && build.status === 'success') ctx.out.note(`build ${build.build_number} succeeded; its artifacts: ${nextCommand(ctx, 'here', 'builds', 'artifacts', build.id)}`);
  else if (finished) ctx.out.note(`build ${build.build_number} ${build.status}${build.status === 'failed' ? ` at ${build.metadata.current_step}` : ''}`);
  else ctx.out.note(`interrupted: build ${build.build_number} is still ${build.status}`);
  if (!finished) return EXIT.interrupted;
  return build.status === 'success' ? EXIT.ok : EXIT.negative;
}

export interface TriggerOptions {
  ref?: string;
  commit?: string;
  platform?: Platform[];
  format?: Format[];
  releaseType?: ReleaseType;
  sendSecret?: boolean;
}

/**
 * `trigger <project_id> …`: the manual build trigger, as external CI calls it. The project's
 * webhook secret comes from PLUGIN_LICENSE_WEBHOOK_SECRET; by default it only signs the body
 * (X-Signature), so it never travels; `--send-secret` sends it as X-Webhook-Secret instead.
 */
export async function triggerCommand(ctx: Context, rawProject: string, o: TriggerOptions): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  const secret = ctx.env.PLUGIN_LICENSE_WEBHOOK_SECRET;
  if (secret === undefined || secret === '') {
    throw usageError("trigger needs the project's webhook secret in PLUGIN_LICENSE_WEBHOOK_SECRET (from the project settings of the web portal)");
  }
  const client = ctx.client(false, { retry: false });
  const answer = await ctx.out.spin('triggering', () =>
    client.trigger(
      projectId,
      {
        ...(o.ref ? { ref: o.ref } : {}),
        ...(o.commit ? { commit_sha: o.commit } : {}),
        ...(o.platform ? { platforms: o.platform } : {}),
        ...(o.format ? { formats: o.format } : {}),
        ...(o.releaseType ? { release_type: o.releaseType } : {}),
      },
      o.sendSecret ? { webhookSecret: secret } : { signingSecret: secret },
    ),
  );
  if (ctx.out.json) {
    ctx.out.document(answer);
    return EXIT.ok;
  }
  ctx.out.line(answer.build_id);
  ctx.out.note(`build ${answer.status}; follow it with: ${nextCommand(ctx, 'here', 'builds', 'watch', answer.build_id)}`);
  return EXIT.ok;
}
