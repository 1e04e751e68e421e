// The one rename rule (rename-retry.ts). Windows' refusal to replace a file another process holds
// cannot be produced on Linux, so its rename is injected here; the real race runs under Windows
// Node in `pnpm test:windows`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RENAME_RETRY_MS, renameRetrying, renameRetryingSync, type RenameEnvironment } from '../src/index.js';
import { systemRenameEnvironment } from '../src/rename-retry.js';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: operation refused`), { code });
}

/** A world whose clock moves only when the code waits, and whose rename refuses `failures` times. */
function world(platform: NodeJS.Platform, failures: number, code = 'EPERM', random = () => 0.999) {
  let now = 0;
  let calls = 0;
  const waits: number[] = [];
  const attempt = (): void => {
    calls += 1;
    if (calls <= failures) throw errno(code);
  };
  const env: RenameEnvironment = {
    platform,
    clock: () => now,
    random,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
    sleepSync: (ms) => {
      waits.push(ms);
      now += ms;
    },
    rename: async () => attempt(),
    renameSync: () => attempt(),
  };
  return { env, waits, calls: () => calls, elapsed: () => now };
}

describe('renameRetrying', () => {
  it.each(['EPERM', 'EACCES', 'EBUSY'])('on Windows retries %s with backoff until the holder lets go', async (code) => {
    const w = world('win32', 5, code);
    await renameRetrying('a', 'b', w.env);
    expect(w.calls()).toBe(6);
    expect(w.waits).toEqual([5, 10, 20, 20, 20]);
  });

  it('jitters each step between half and all of it, so it never falls into step with a reader', async () => {
    const low = world('win32', 4, 'EPERM', () => 0);
    await renameRetrying('a', 'b', low.env);
    expect(low.waits).toEqual([3, 5, 10, 10]);
    const draws = [0.2, 0.9, 0.5, 0.1];
    const mixed = world('win32', 4, 'EPERM', () => draws.shift() ?? 0);
    await renameRetrying('a', 'b', mixed.env);
    expect(mixed.waits).toEqual([3, 10, 15, 11]);
  });

  it('on Windows gives up after about 2 seconds with the last error', async () => {
    const w = world('win32', Number.POSITIVE_INFINITY);
    await expect(renameRetrying('a', 'b', w.env)).rejects.toMatchObject({ code: 'EPERM' });
    expect(w.elapsed()).toBe(RENAME_RETRY_MS);
    expect(Math.max(...w.waits)).toBeLessThanOrEqual(20);
    // What counts against a reader that holds the file most of the time is the number of attempts.
    expect(w.calls()).toBeGreaterThan(95);
    const quick = world('win32', Number.POSITIVE_INFINITY, 'EPERM', () => 0);
    await expect(renameRetrying('a', 'b', quick.env)).rejects.toMatchObject({ code: 'EPERM' });
    expect(quick.elapsed()).toBe(RENAME_RETRY_MS);
    expect(quick.calls()).toBeGreaterThan(195);
  });

  it('the sync form follows the same rule', () => {
    const w = world('win32', 3);
    renameRetryingSync('a', 'b', w.env);
    expect(w.waits).toEqual([5, 10, 20]);
    const never = world('win32', Number.POSITIVE_INFINITY, 'EBUSY');
    expect(() => renameRetryingSync('a', 'b', never.env)).toThrow(/EBUSY/);
    expect(never.elapsed()).toBe(RENAME_RETRY_MS);
  });

  it.each(['linux', 'darwin'] as const)('on %s a refused rename is a real permission problem: it fails at once', async (platform) => {
    const w = world(platform, 1, 'EACCES');
    await expect(renameRetrying('a', 'b', w.env)).rejects.toMatchObject({ code: 'EACCES' });
    expect(w.calls()).toBe(1);
    expect(() => renameRetryingSync('a', 'b', world(platform, 1, 'EPERM').env)).toThrow(/EPERM/);
  });

  it('other errors (a missing file, a full disk) are never retried, on any OS', async () => {
    for (const code of ['ENOENT', 'ENOSPC', 'EXDEV']) {
      const w = world('win32', 1, code);
      await expect(renameRetrying('a', 'b', w.env)).rejects.toMatchObject({ code });
      expect(w.calls()).toBe(1);
    }
  });

  it('with the system environment it replaces a real file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plc-rename-'));
    try {
      writeFileSync(join(dir, 'new'), 'new');
      writeFileSync(join(dir, 'old'), 'old');
      await renameRetrying(join(dir, 'new'), join(dir, 'old'), systemRenameEnvironment);
      expect(readFileSync(join(dir, 'old'), 'utf8')).toBe('new');
      writeFileSync(join(dir, 'again'), 'again');
      renameRetryingSync(join(dir, 'again'), join(dir, 'old'));
      expect(readFileSync(join(dir, 'old'), 'utf8')).toBe('again');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
