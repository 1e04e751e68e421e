import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, ftruncateSync, readFileSync } from 'node:fs';
import { openOutFile, writeAllAt } from '../out-file.js';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Presets, SingleBar } from 'cli-progress';
import { codeHint, isServiceError, MAX_SERVICE_WAIT_MS, type GeneratedKey, type ServiceClient } from '@plugin-license/api';
import type { Context } from '../context.js';
import { CliError, EXIT, usageError, type ExitCode } from '../exit.js';
import { nextCommand } from '../next-step.js';
import { when } from '../output.js';

/** `keys <project_id> [--all-codes] [--csv]`. */
export async function keysCommand(ctx: Context, rawProject: string, o: { allCodes?: boolean; csv?: boolean }): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  const client = ctx.client(true);
  const { keys } = await ctx.out.spin('listing codes', () => client.activation.keys(projectId));
  const shown = (code: string): string => (o.allCodes ? code : codeHint(code));
  if (ctx.out.json) {
    ctx.out.document({
      project_id: projectId,
      keys: keys.map((k) => ({
        ...(o.allCodes ? { code: k.code } : {}),
        code_hint: codeHint(k.code),
        key_type: k.key_type,
        current_activations: k.current_activations,
        max_activations: k.max_activations,
        is_revoked: k.is_revoked,
        notes: k.notes ?? null,
        created_at: k.created_at,
      })),
    });
    return EXIT.ok;
  }
  if (o.csv) {
    ctx.out.line('code,type,activations,max_activations,revoked,notes,created_at');
    for (const k of keys) ctx.out.line([shown(k.code), k.key_type, k.current_activations, k.max_activations, k.is_revoked, k.notes ?? '', k.created_at].map(csvField).join(','));
    return EXIT.ok;
  }
  if (keys.length === 0) {
    ctx.out.line(`No codes yet. Create some with: ${nextCommand(ctx, 'here', 'generate', projectId)}`);
    return EXIT.ok;
  }
  ctx.out.table(
    ['code', 'type', 'activations', 'revoked', 'notes', 'created'],
    keys.map((k) => [shown(k.code), k.key_type, `${k.current_activations}/${k.max_activations}`, k.is_revoked ? ctx.out.bad('yes') : 'no', k.notes ?? '', when(k.created_at)]),
  );
  if (!o.allCodes) ctx.out.note('codes are shown as hints; --all-codes prints them in full');
  return EXIT.ok;
}

/** `usage`: the build quota of the period. */
export async function usageCommand(ctx: Context): Promise<ExitCode> {
  const client = ctx.client(true);
  const u = await ctx.out.spin('asking the service', () => client.builds.usage());
  if (ctx.out.json) {
    ctx.out.document(u);
    return EXIT.ok;
  }
  ctx.out.fields([
    ['period', u.period],
    ['builds used', `${u.used} of ${u.limit}`],
    ['remaining', u.remaining === 0 ? ctx.out.warn('0') : String(u.remaining)],
    ['extra builds', String(u.extra_builds)],
    ['resets', when(u.reset_at)],
  ]);
  return EXIT.ok;
}

export interface GenerateOptions {
  maxActivations: number;
  notes?: string;
  count: number;
  out?: string;
  append?: boolean;
}

/** A batch's tag, in the notes of every code it writes to a file: how the service's list tells its codes. */
const BATCH_TAG = /\[batch ([0-9a-f]{8})\]/g;

function tagged(notes: string | undefined, batch: string): string {
  return `${notes === undefined || notes === '' ? '' : `${notes} `}[batch ${batch}]`;
}

/**
 * `generate <project_id> …`: one code, or `--count K` of them. With `--out FILE` every code is
 * appended (CSV) as a whole row and made durable before the next request, so nothing the
 * service created is lost; each carries the batch's tag in its notes, so a batch cut short by a
 * kill or a full disk is completed from the service (`--recover FILE`). Requests are paced by
 * the rate-limit headers; Ctrl-C or SIGTERM (`signal`) stops after the request in flight.
 */
export async function generateCommand(ctx: Context, rawProject: string, o: GenerateOptions, signal: AbortSignal): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  // A batch runs on by design: each request has its own deadline.
  const client = ctx.client(true, { retry: false, steps: true });
  const file = o.out === undefined ? undefined : openOut(ctx, o.out, o.append === true, projectId);
  const batch = file ? randomBytes(4).toString('hex') : undefined;
  const notes = batch === undefined ? (o.notes ?? '') : tagged(o.notes, batch);
  if (file && batch) ctx.out.note(`batch ${batch}: if it is cut short, complete ${file.path} with: ${nextCommand(ctx, 'here', 'generate', projectId, '--recover', o.out as string, ...(file.codes() === 0 ? ['--batch', batch] : []))}`);
  const created: GeneratedKey[] = [];
  let waits = 0;
  let interrupted = false;
  const progress = o.count > 1 ? startProgress(ctx, o.count) : undefined;
  try {
    while (created.length < o.count) {
      if (signal.aborted) {
        interrupted = true;
        break;
      }
      await paceByRateLimit(ctx, client, signal);
      if (signal.aborted) continue;
      let key: GeneratedKey;
      try {
        // Not aborted by an interrupt: a code the service creates is always written down, and a
        // second interrupt waits for that row.
        key = await ctx.hold(async () => {
          const made = await client.activation.generate({ project_id: projectId, max_activations: o.maxActivations, notes });
          if (file) file.append(made);
          else if (!ctx.out.json) ctx.out.line(made.code);
          return made;
        });
      } catch (err) {
        if (isServiceError(err) && err.code === 'rate_limited') {
          waits += 1;
          ctx.out.debugLine(`429 rate_limited: waiting ${err.retryAfterMs ?? 60_000} ms`);
          await sleep(Math.min(err.retryAfterMs ?? 60_000, MAX_SERVICE_WAIT_MS), signal);
          continue;
        }
        throw err;
      }
      created.push(key);
      progress?.tick(created.length);
    }
  } finally {
    progress?.stop();
    file?.close();
  }
  const exit = interrupted ? EXIT.interrupted : EXIT.ok;
  if (ctx.out.json) {
    ctx.out.document({
      project_id: projectId,
      requested: o.count,
      generated: created.length,
      interrupted,
      rate_limit_waits: waits,
      ...(file ? { file: file.path, file_codes: file.codes(), batch } : { keys: created }),
    });
  } else if (file) {
    const what = `${created.length} of ${o.count} codes generated; ${file.path} holds ${file.codes()} codes`;
    ctx.out.note(interrupted ? `interrupted: ${what}` : what);
  } else if (interrupted) {
    ctx.out.note(`interrupted: ${created.length} of ${o.count} codes generated (printed above)`);
  }
  return exit;
}

/**
 * `generate <project_id> --recover FILE [--batch TAG]`: appends to FILE every code of its
 * batch(es) that the service holds and FILE lacks. The service is the truth: whatever cut a
 * batch short (SIGKILL, a full disk), its codes are in the project's list, with the tag.
 */
export async function recoverCommand(ctx: Context, rawProject: string, o: { file: string; batch?: string }): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  if (o.batch !== undefined && !/^[0-9a-f]{8}$/.test(o.batch)) throw usageError(`--batch must be the 8-character tag the batch printed (like 1a2b3c4d), got '${o.batch}'`);
  const file = openOut(ctx, o.file, true, projectId);
  try {
    const batches = new Set([...file.batches(), ...(o.batch === undefined ? [] : [o.batch])]);
    if (batches.size === 0) throw usageError(`${file.path} holds no code of a tagged batch; pass the tag the batch printed when it started: --batch TAG`);
    const { keys } = await ctx.out.spin('listing codes', () => ctx.client(true).activation.keys(projectId));
    const have = file.codeSet();
    const missing = keys
      .filter((k) => [...(k.notes ?? '').matchAll(BATCH_TAG)].some((m) => batches.has(m[1] as string)) && !have.has(k.code))
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
    for (const k of missing) file.append({ code: k.code, key_type: k.key_type, max_activations: k.max_activations, notes: k.notes ?? '', created_at: k.created_at });
    if (ctx.out.json) ctx.out.document({ project_id: projectId, file: file.path, batches: [...batches], recovered: missing.length, file_codes: file.codes() });
    else ctx.out.line(`${missing.length} code${missing.length === 1 ? '' : 's'} recovered from the service; ${file.path} holds ${file.codes()} codes of batch ${[...batches].join(', ')}`);
    return EXIT.ok;
  } finally {
    file.close();
  }
}

/** Waits out the window when the last answer said no request is left in it. */
async function paceByRateLimit(ctx: Context, client: ServiceClient, signal: AbortSignal): Promise<void> {
  const rl = client.rateLimit;
  if (rl === undefined || rl.remaining > 0) return;
  const wait = rl.resetAt.getTime() - Date.now();
  ctx.out.debugLine(`rate limit: none left of ${rl.limit} in this window; waiting ${Math.max(0, wait)} ms for the next`);
  if (wait > 0) await sleep(Math.min(wait + 250, MAX_SERVICE_WAIT_MS), signal);
}

/** Waits `ms`, or less when Ctrl-C comes (the loop then stops). */
async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => undefined);
}

const CSV_HEADER = 'code,max_activations,notes,created_at\n';

interface OutFile {
  path: string;
  /** Appends one whole, durable row; on failure the file is as before and the error says what to do. */
  append(key: GeneratedKey): void;
  /** Codes the file holds now (its rows). */
  codes(): number;
  /** The codes themselves. */
  codeSet(): Set<string>;
  /** Batch tags found in its notes. */
  batches(): string[];
  close(): void;
}

/**
 * Opens FILE before any request, so a bad path costs nothing: new only, or appended with
 * --append. Every row is whole: a row cut short (a full disk, a kill mid-write) is cut off at
 * open, and a write that fails part way is taken back, so the next row never joins a torn one.
 */
function openOut(ctx: Context, path: string, append: boolean, projectId: string): OutFile {
  const full = resolve(path);
  const fd = openOutFile(full, { append, offersAppend: true });
  let size = fstatSync(fd).size;
  let rows: string[] = [];
  if (size > 0) {
    const text = readFileSync(full, 'utf8');
    const whole = text.lastIndexOf('\n') + 1;
    if (whole < text.length) {
      ftruncateSync(fd, Buffer.byteLength(text.slice(0, whole)));
      size = Buffer.byteLength(text.slice(0, whole));
      ctx.out.note(`${full} ended in a torn row (a write cut short); it was cut off: ${nextCommand(ctx, 'here', 'generate', projectId, '--recover', path)} brings back the code it held`);
    }
    rows = text.slice(0, whole).split('\n').filter((l) => l.trim() !== '').slice(1);
  }
  const write = (text: string): void => {
    const bytes = Buffer.from(text);
    try {
      writeAllAt(fd, bytes, size);
      fsyncSync(fd);
    } catch (err) {
      try {
        ftruncateSync(fd, size);
      } catch {
        // cut off at the next open
      }
      throw err;
    }
    size += bytes.length;
  };
  if (size === 0) {
    try {
      write(CSV_HEADER);
    } catch (err) {
      closeSync(fd);
      throw usageError(`cannot write ${full} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); free some space or choose another --out file (nothing was asked of the service)`);
    }
  }
  return {
    path: full,
    append(key) {
      const row = [key.code, key.max_activations, key.notes ?? '', key.created_at].map(csvField).join(',');
      try {
        write(`${row}\n`);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        throw new CliError(EXIT.failed, 'output_failed', `could not write a code to ${full} (${code}); the service created it: once that is fixed, ${nextCommand(ctx, 'here', 'generate', projectId, '--recover', path)} adds it and any other of the batch`, { system_code: code });
      }
      rows.push(row);
    },
    codes: () => rows.length,
    codeSet: () => new Set(rows.map((r) => r.split(',')[0] ?? '')),
    batches: () => [...new Set(rows.flatMap((r) => [...r.matchAll(BATCH_TAG)].map((m) => m[1] as string)))],
    close: () => closeSync(fd),
  };
}

function startProgress(ctx: Context, total: number): { tick(done: number): void; stop(): void } {
  if (ctx.out.json) return { tick() {}, stop() {} };
  if (ctx.out.interactive) {
    const bar = new SingleBar(
      { stream: ctx.out.streams.stderr as NodeJS.WriteStream, format: 'generating {bar} {value}/{total} codes | {rate}/min | {eta_formatted} left', hideCursor: true, etaBuffer: 50 },
      Presets.shades_classic,
    );
    const started = Date.now();
    bar.start(total, 0, { rate: '0' });
    return {
      tick: (done) => bar.update(done, { rate: ((done / Math.max(1, Date.now() - started)) * 60_000).toFixed(0) }),
      stop: () => bar.stop(),
    };
  }
  return {
    tick: (done) => {
      if (done % 100 === 0 || done === total) ctx.out.note(`${done}/${total} codes`);
    },
    stop() {},
  };
}

function csvField(v: unknown): string {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

