import { closeSync, fstatSync, fsyncSync, readFileSync, writeSync } from 'node:fs';
import { openOutFile } from '../out-file.js';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Presets, SingleBar } from 'cli-progress';
import { codeHint, isServiceError, MAX_SERVICE_WAIT_MS, type GeneratedKey, type ServiceClient } from '@plugin-license/api';
import type { Context } from '../context.js';
import { EXIT, type ExitCode } from '../exit.js';
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
    ctx.out.line('No codes yet. Create some with: plugin-license generate ' + projectId);
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

/**
 * `generate <project_id> …`: one code, or `--count K` of them. With `--out FILE` every code is
 * appended (CSV) and flushed before the next request, so nothing the service created is lost;
 * requests are paced by the rate-limit headers; Ctrl-C (`signal`) stops after the request in flight.
 */
export async function generateCommand(ctx: Context, rawProject: string, o: GenerateOptions, signal: AbortSignal): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  const client = ctx.client(true, { retry: false });
  const file = o.out === undefined ? undefined : openOut(o.out, o.append === true);
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
        // Not aborted by Ctrl-C: a code the service creates is always written down.
        key = await client.activation.generate({ project_id: projectId, max_activations: o.maxActivations, notes: o.notes ?? '' });
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
      if (file) file.append(key);
      else if (!ctx.out.json) ctx.out.line(key.code);
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
      ...(file ? { file: file.path, file_codes: file.codes() } : { keys: created }),
    });
  } else if (file) {
    const what = `${created.length} of ${o.count} codes generated; ${file.path} holds ${file.codes()} codes`;
    ctx.out.note(interrupted ? `interrupted: ${what}` : what);
  } else if (interrupted) {
    ctx.out.note(`interrupted: ${created.length} of ${o.count} codes generated (printed above)`);
  }
  return exit;
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
  append(key: GeneratedKey): void;
  /** Codes the file holds now (its lines less the header). */
  codes(): number;
  close(): void;
}

/** Opens FILE before any request, so a bad path costs nothing: new only, or appended with --append. */
function openOut(path: string, append: boolean): OutFile {
  const full = resolve(path);
  const fd = openOutFile(full, { append, offersAppend: true });
  // Codes already there: the rows after the header (a batch file holds thousands, not millions).
  let lines = 0;
  if (fstatSync(fd).size === 0) writeSync(fd, CSV_HEADER);
  else lines = readFileSync(full, 'utf8').split('\n').filter((l) => l.trim() !== '').length - 1;
  return {
    path: full,
    append(key) {
      writeSync(fd, `${[key.code, key.max_activations, key.notes ?? '', key.created_at].map(csvField).join(',')}\n`);
      fsyncSync(fd);
      lines += 1;
    },
    codes: () => lines,
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

