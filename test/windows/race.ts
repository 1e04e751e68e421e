// The rename-while-reading race, bundled into one file and run by Windows Node under Wine.
//   race writer HOME PROJECT BASE_URL N CODE   activates CODE, then validates N times (each validation rewrites the cache)
//                                        and prints {"writes", "failures", "codes"}
//   race reader HOME PROJECT BASE_URL MS  loops new License(...).check() for MS ms
//   race rename DIR N raw|rule           renames a new file over DIR/target N times, with or without the rule
//   race read DIR MS                     reads DIR/target in a loop (the other process of the rename race)
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { License, isLicenseError, renameRetryingSync } from '@plugin-license/licensing';
import { systemRenameEnvironment } from '../../packages/fs/src/rename-retry.js';

const [mode, a, b, c, d, e] = process.argv.slice(2);
const print = (value: unknown): void => {
  writeFileSync(1, `${JSON.stringify(value)}\n`);
};

/**
 * Watches the rename rule at work in this process: for each rename a reader held up, how many
 * attempts it took and how long the reader held it up in all (the rule gives up after 2 s).
 */
function watchRenames(): () => { heldUp: number; maxAttempts: number; maxWaitMs: number } {
  const real = systemRenameEnvironment.rename;
  let streak = 0;
  let streakStart = 0;
  const seen = { heldUp: 0, maxAttempts: 0, maxWaitMs: 0 };
  systemRenameEnvironment.rename = async (from, to) => {
    try {
      await real(from, to);
    } catch (e) {
      if (streak === 0) streakStart = performance.now();
      streak += 1;
      throw e;
    }
    if (streak > 0) {
      seen.heldUp += 1;
      seen.maxAttempts = Math.max(seen.maxAttempts, streak + 1);
      seen.maxWaitMs = Math.max(seen.maxWaitMs, Math.round(performance.now() - streakStart));
      streak = 0;
    }
  };
  return () => seen;
}

async function writer(home: string, projectId: string, baseUrl: string, n: number, code: string): Promise<void> {
  const renames = watchRenames();
  const license = new License({ projectId, baseUrl, home, machineId: 'race-machine' });
  await license.activate(code);
  let failures = 0;
  const codes: Record<string, number> = {};
  let first: string | undefined;
  for (let i = 0; i < n; i++) {
    try {
      await license.validate({ force: true });
    } catch (e) {
      failures += 1;
      const code = isLicenseError(e) ? `${e.code}:${e.systemCode ?? ''}` : String(e);
      codes[code] = (codes[code] ?? 0) + 1;
      first ??= e instanceof Error ? e.message : String(e);
    }
  }
  await license.close();
  print({ writes: n, failures, codes, renames: renames(), ...(first === undefined ? {} : { first }) });
}

async function reader(home: string, projectId: string, baseUrl: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  let reads = 0;
  while (Date.now() < until) {
    const license = new License({ projectId, baseUrl, home, machineId: 'race-machine' });
    await license.check();
    await license.close();
    reads += 1;
  }
  print({ reads });
}

/** Renames a fresh file over DIR/target N times, with or without the rename rule. */
function rename(dir: string, n: number, withRule: boolean): void {
  const target = join(dir, 'target');
  let failures = 0;
  const codes: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const tmp = join(dir, `tmp-${process.pid}-${i}`);
    writeFileSync(tmp, `write ${i}\n`.repeat(64));
    try {
      if (withRule) renameRetryingSync(tmp, target);
      else renameSync(tmp, target);
    } catch (e) {
      failures += 1;
      const code = (e as NodeJS.ErrnoException).code ?? 'unknown';
      codes[code] = (codes[code] ?? 0) + 1;
      rmSync(tmp, { force: true });
    }
  }
  print({ renames: n, failures, codes, rule: withRule });
}

/** Reads DIR/target in a loop for MS ms, as a plugin's check or a scanner would. */
function read(dir: string, ms: number): void {
  const until = Date.now() + ms;
  let reads = 0;
  while (Date.now() < until) {
    try {
      readFileSync(join(dir, 'target'));
      reads += 1;
    } catch {
      // between two renames, or not there yet
    }
  }
  print({ reads });
}

async function main(): Promise<void> {
  if (mode === 'writer') await writer(a!, b!, c!, Number(d), e!);
  else if (mode === 'reader') await reader(a!, b!, c!, Number(d));
  else if (mode === 'rename') rename(a!, Number(b), c === 'rule');
  else if (mode === 'read') read(a!, Number(b));
  else {
    process.stderr.write('usage: race writer|reader|rename|read ...\n');
    process.exitCode = 2;
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`race: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});
