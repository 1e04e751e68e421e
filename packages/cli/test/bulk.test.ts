// Bulk generation loses nothing: a SIGINT in the middle of a 300-code run against the emulator
// with its default limits (60 activation-scope requests a minute, generate among them) leaves exactly the project's new codes in the
// file, none missing, none doubled, and at most one 429 per rate-limit window. The emulator's
// clock is set 5 seconds before a window ends, so the run crosses a window without a minute's wait.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { control, tempHome } from '@plugin-license/test-utils';
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
      const report = JSON.parse(run.stdout) as { generated: number; file_codes: number; interrupted: boolean; rate_limit_waits: number };
      expect(report.interrupted).toBe(true);
      expect(report.generated).toBeGreaterThanOrEqual(70);
      expect(report.generated).toBeLessThan(300);

      const inFile = csvCodes(file);
      expect(inFile).toHaveLength(report.generated);
      expect(report.file_codes).toBe(inFile.length);
      expect(new Set(inFile).size).toBe(inFile.length); // none doubled
      const created = (await listCodes(env)).filter((k) => !before.has(k.code));
      expect(new Set(created.map((k) => k.code))).toEqual(new Set(inFile)); // none missing, none extra
      for (const k of created) expect(k.notes).toBe('reseller A');
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
