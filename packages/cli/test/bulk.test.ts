// Bulk generation loses nothing: a SIGINT in the middle of a 300-code run against the emulator
// with its default limits (60 activation-scope requests a minute, generate among them) leaves exactly the project's new codes in the
// file, none missing, none doubled, and at most one 429 per rate-limit window. The emulator's
// clock is set 5 seconds before a window ends, so the run crosses a window without a minute's wait.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { control, fullDisk, tempHome } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, envFor } from './helpers.js';

let emulator: Emulator;
beforeAll(async () => {
  emulator = await startEmulator(); // the default limits
});
afterAll(async () => {
  await emulator?.close();
});

const csvCodes = (path: string): string[] =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(',')[0] as string);

describe('generate --count --out', () => {
  it('Ctrl-C in the middle of 300 codes: the file holds exactly the new codes, one 429 per window at most', async () => {
    const home = tempHome('plc-bulk-');
    try {
      const env = envFor(undefined, home.dir, { PLUGIN_LICENSE_BASE_URL: emulator.baseUrl, PLUGIN_LICENSE_TOKEN: emulator.token });
      const ctl = control(emulator.origin);
      const { now_ms } = await ctl.clock({ advance_ms: 0 });
      const windowEnd = Math.ceil((now_ms + 60_000) / 60_000) * 60_000;
      await ctl.clock({ now: windowEnd - 5_000 }); // this window ends 5 s from now
      const before = new Set((await listCodes(env)).map((k) => k.code));
      const file = join(home.dir, 'batch.csv');

      let interrupted = false;
      const run = await cli(['--json', 'generate', emulator.projectId, '--count', '300', '--notes', 'reseller A', '--out', file], env, (child) => {
        // Interrupt once the run is past the first window (more than 60 codes written).
        const poll = setInterval(() => {
          let lines = 0;
          try {
            lines = readFileSync(file, 'utf8').split('\n').length - 2;
          } catch {
            return;
          }
          if (lines >= 70 && !interrupted) {
            interrupted = true;
            clearInterval(poll);
            child.kill('SIGINT');
          }
        }, 20);
        child.on('close', () => clearInterval(poll));
      });
      expect(interrupted).toBe(true);
      expect(run.code, run.stderr).toBe(130);
      const report = JSON.parse(run.stdout) as { generated: number; file_codes: number; interrupted: boolean; rate_limit_waits: number; batch: string };
      expect(report.interrupted).toBe(true);
      expect(report.generated).toBeGreaterThanOrEqual(70);
      expect(report.generated).toBeLessThan(300);

      const inFile = csvCodes(file);
      expect(inFile).toHaveLength(report.generated);
      expect(report.file_codes).toBe(inFile.length);
      expect(new Set(inFile).size).toBe(inFile.length); // none doubled
      const created = (await listCodes(env)).filter((k) => !before.has(k.code));
      expect(new Set(created.map((k) => k.code))).toEqual(new Set(inFile)); // none missing, none extra
      for (const k of created) expect(k.notes).toBe(`reseller A [batch ${report.batch}]`);
      // The run crossed one window boundary (maybe two): never more than one 429 in each.
      expect(report.rate_limit_waits).toBeLessThanOrEqual(2);
    } finally {
      home.cleanup();
    }
  }, 120_000);
});

async function listCodes(env: Record<string, string>): Promise<Array<{ code: string; notes: string | null }>> {
  const run = await cli(['--json', 'keys', emulator.projectId, '--all-codes'], env);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { keys: Array<{ code: string; notes: string | null }> }).keys;
}

describe('generate under faults: the file never holds a torn row, and nothing is lost for good', () => {
  let fast: Emulator;
  beforeAll(async () => {
    fast = await startEmulator({ rateLimits: { activation: 100_000, general: 100_000 } });
  });
  afterAll(async () => {
    await fast?.close();
  });
  const envOf = (dir: string) => envFor(undefined, dir, { PLUGIN_LICENSE_BASE_URL: fast.baseUrl, PLUGIN_LICENSE_TOKEN: fast.token });
  /** The codes of the service tagged with this batch. */
  const batchCodes = async (env: Record<string, string>, batch: string): Promise<string[]> => {
    const run = await cli(['--json', 'keys', fast.projectId, '--all-codes'], env);
    return (JSON.parse(run.stdout) as { keys: Array<{ code: string; notes: string | null }> }).keys.filter((k) => k.notes?.includes(`[batch ${batch}]`)).map((k) => k.code);
  };
  const wholeRows = (path: string): void => {
    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('\n'), 'the file ends with a whole row').toBe(true);
    for (const line of text.trim().split('\n').slice(1)) expect(line).toMatch(/^[0-9a-f-]{36},\d+,.*\[batch [0-9a-f]{8}\],\S+$/);
  };
  /** Runs a batch and sends `signals` once the file holds `after` codes. */
  const interruptAt = (env: Record<string, string>, file: string, after: number, signals: NodeJS.Signals[]) =>
    cli(['--json', 'generate', fast.projectId, '--count', '5000', '--out', file], env, (child) => {
      const poll = setInterval(() => {
        let rows = 0;
        try {
          rows = readFileSync(file, 'utf8').split('\n').length - 2;
        } catch {
          return;
        }
        if (rows >= after) {
          clearInterval(poll);
          for (const s of signals) child.kill(s);
        }
      }, 5);
      child.on('close', () => clearInterval(poll));
    });
  const batchOf = (stderr: string, file: string): string => {
    const tags = [...readFileSync(file, 'utf8').matchAll(/\[batch ([0-9a-f]{8})\]/g)].map((m) => m[1]);
    return (tags[0] ?? /batch ([0-9a-f]{8}):/.exec(stderr)?.[1]) as string;
  };

  it('SIGTERM stops after the request in flight, like Ctrl-C: every code the service created is in the file', async () => {
    const home = tempHome('plc-bulk-');
    try {
      const env = envOf(home.dir);
      const file = join(home.dir, 'batch.csv');
      const run = await interruptAt(env, file, 20, ['SIGTERM']);
      expect(run.code, run.stderr).toBe(130);
      const report = JSON.parse(run.stdout) as { batch: string; interrupted: boolean; file_codes: number };
      expect(report.interrupted).toBe(true);
      wholeRows(file);
      expect(new Set(csvCodes(file))).toEqual(new Set(await batchCodes(env, report.batch)));
    } finally {
      home.cleanup();
    }
  });

  it('two quick interrupts: it stops at once, but only after the code in flight has its row', async () => {
    const home = tempHome('plc-bulk-');
    try {
      const env = envOf(home.dir);
      const file = join(home.dir, 'batch.csv');
      const run = await interruptAt(env, file, 20, ['SIGINT', 'SIGINT']);
      expect(run.code).toBe(130);
      wholeRows(file);
      const batch = batchOf(run.stderr, file);
      expect(new Set(csvCodes(file))).toEqual(new Set(await batchCodes(env, batch)));
    } finally {
      home.cleanup();
    }
  });

  it('SIGKILL loses the code in flight from the file only: --recover brings back every code of the batch, once', async () => {
    const home = tempHome('plc-bulk-');
    try {
      const env = envOf(home.dir);
      const file = join(home.dir, 'batch.csv');
      const run = await interruptAt(env, file, 30, ['SIGKILL']);
      expect(run.code).toBe(null);
      const batch = batchOf(run.stderr, file);
      const recovered = await cli(['--json', 'generate', fast.projectId, '--recover', file], env);
      expect(recovered.code, recovered.stderr).toBe(0);
      wholeRows(file);
      const service = await batchCodes(env, batch);
      expect(csvCodes(file).sort()).toEqual(service.sort());
      // Again: nothing to add, nothing doubled.
      const again = JSON.parse((await cli(['--json', 'generate', fast.projectId, '--recover', file], env)).stdout) as { recovered: number };
      expect(again.recovered).toBe(0);
      expect(csvCodes(file)).toHaveLength(service.length);
    } finally {
      home.cleanup();
    }
  });

  it('a full disk stops the batch with whole rows only; with room again, --recover completes it and --append adds cleanly', async (ctx) => {
    const home = tempHome('plc-bulk-');
    const disk = join(home.dir, 'disk');
    const full = fullDisk(disk, { freeBytes: 4096 });
    if (!full.ok) {
      home.cleanup();
      return ctx.skip(full.reason);
    }
    try {
      const env = envOf(home.dir);
      const file = join(disk, 'batch.csv');
      const run = await cli(['--json', 'generate', fast.projectId, '--count', '200', '--notes', 'order 1042', '--out', file], env);
      expect(run.code).toBe(1);
      const error = (JSON.parse(run.stdout) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('output_failed');
      expect(error.message).toMatch(/ENOSPC.*the service created it.*--recover/);
      wholeRows(file);
      const batch = batchOf(run.stderr, file);
      const before = csvCodes(file).length;
      expect((await batchCodes(env, batch)).length).toBe(before + 1); // the code in flight
      rmSync(join(disk, '.filler'));
      expect((await cli(['generate', fast.projectId, '--recover', file], env)).stdout).toMatch(/^1 code recovered from the service/);
      expect(csvCodes(file).sort()).toEqual((await batchCodes(env, batch)).sort());
      const more = await cli(['--json', 'generate', fast.projectId, '--count', '3', '--out', file, '--append'], env);
      expect(more.code, more.stderr).toBe(0);
      wholeRows(file);
      expect(csvCodes(file)).toHaveLength(before + 1 + 3);
    } finally {
      full.undo();
      home.cleanup();
    }
  });

  it('a torn last row (a kill mid-write) is cut off when the file is opened again, and --recover restores its code', async () => {
    const home = tempHome('plc-bulk-');
    try {
      const env = envOf(home.dir);
      const file = join(home.dir, 'batch.csv');
      expect((await cli(['generate', fast.projectId, '--count', '3', '--out', file], env)).code).toBe(0);
      const text = readFileSync(file, 'utf8');
      writeFileSync(file, text.slice(0, text.length - 20)); // the last row torn
      const more = await cli(['generate', fast.projectId, '--count', '1', '--out', file, '--append'], env);
      expect(more.code).toBe(0);
      expect(more.stderr).toMatch(/ended in a torn row.*--recover/);
      wholeRows(file);
      expect(csvCodes(file)).toHaveLength(3);
      await cli(['generate', fast.projectId, '--recover', file], env);
      expect(csvCodes(file)).toHaveLength(4);
      wholeRows(file);
    } finally {
      home.cleanup();
    }
  });

  it('--append without --out, and --recover mixed with a batch, are usage errors', async () => {
    const home = tempHome('plc-bulk-');
    try {
      const env = envOf(home.dir);
      expect((await cli(['generate', fast.projectId, '--append'], env)).stderr).toContain('--append adds to the --out file');
      expect((await cli(['generate', fast.projectId, '--recover', 'x.csv', '--count', '2'], env)).code).toBe(2);
      expect((await cli(['generate', fast.projectId, '--recover', join(home.dir, 'none.csv')], env)).stderr).toContain('--batch TAG');
    } finally {
      home.cleanup();
    }
  });
});
