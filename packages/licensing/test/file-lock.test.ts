// The one cross-process lock, and its take-over of a lock whose named holder died: a run killed
// mid-way (an installer closed, a power cut) must not make the next one wait out the stale time,
// and nothing but a holder known to be gone is ever taken over.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireFileLock, takeOverFromTheDead } from '../src/file-lock.js';
import { tempHome } from './helpers.js';

let home: ReturnType<typeof tempHome>;
beforeEach(() => {
  home = tempHome('plc-lock-');
});
afterEach(() => home.cleanup());

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  if (child.pid === undefined) throw new Error('could not start a process');
  return child.pid;
}

/** A lock left as a holder left it: the lock folder, and `holder` in its pid file. */
function leftLock(holder: string | undefined): string {
  const lockPath = join(home.dir, 'records', '.lock');
  mkdirSync(lockPath, { recursive: true });
  if (holder !== undefined) writeFileSync(`${lockPath}-pid`, holder);
  return lockPath;
}

describe('takeOverFromTheDead', () => {
  it('removes a lock whose named holder has exited, with its pid file', async () => {
    for (const text of [`${deadPid()}\n`, `${deadPid()}`, `  ${deadPid()} \n`]) {
      const lockPath = leftLock(text);
      await takeOverFromTheDead(lockPath);
      expect([existsSync(lockPath), existsSync(`${lockPath}-pid`)]).toEqual([false, false]);
    }
  });

  it('leaves a lock whose holder is alive, is this process, or is not named as a pid', async () => {
    const live = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const dead = deadPid();
      // What a holder writes is its pid and a newline; anything else is not a holder we named.
      const holders = [String(live.pid), String(process.pid), '', 'abc', '0', '-1', `-${dead}`, `${dead}.0`, `${dead}e0`, `+${dead}`, `0x${dead.toString(16)}`, `${dead} ${dead}`, '99999999999', '9'.repeat(400)];
      for (const text of holders) {
        const lockPath = leftLock(text);
        await takeOverFromTheDead(lockPath);
        expect([text, existsSync(lockPath), readFileSync(`${lockPath}-pid`, 'utf8')]).toEqual([text, true, text]);
      }
      const unnamed = leftLock(undefined);
      await takeOverFromTheDead(unnamed);
      expect(existsSync(unnamed)).toBe(true);
    } finally {
      live.kill('SIGKILL');
    }
  });

  it('leaves a pid file with no lock beside it alone', async () => {
    const lockPath = join(home.dir, '.lock');
    writeFileSync(`${lockPath}-pid`, `${deadPid()}\n`);
    await takeOverFromTheDead(lockPath);
    expect(existsSync(`${lockPath}-pid`)).toBe(true);
  });
});

describe('acquireFileLock with a named holder', () => {
  it('takes over a dead holder at once, names itself while it holds the lock, and removes its name on release', async () => {
    const file = join(home.dir, 'records');
    const lockPath = leftLock(`${deadPid()}\n`);
    // A stale time far longer than the test: only the take-over can let it in.
    const started = Date.now();
    const release = await acquireFileLock(file, { lockPath, staleMs: 600_000, namedHolder: true });
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(readFileSync(`${lockPath}-pid`, 'utf8')).toBe(`${process.pid}\n`);
    await release();
    expect([existsSync(lockPath), existsSync(`${lockPath}-pid`)]).toEqual([false, false]);
  });

  it('without a named holder, writes no pid file', async () => {
    const file = join(home.dir, 'state.json');
    const lockPath = `${file}.lock`;
    const release = await acquireFileLock(file, { lockPath, staleMs: 10_000 });
    expect([existsSync(lockPath), existsSync(`${lockPath}-pid`)]).toEqual([true, false]);
    await release();
    expect(existsSync(lockPath)).toBe(false);
  });
});
