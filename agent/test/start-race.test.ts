import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../src/index.js';
import { shortDir, useTestService } from './helpers.js';

// Many agents started at the same instant on one path (a DAW loading plugins that each start
// one, several CLI commands at once) must end with one agent: real processes on a real socket.
const CLI = join(__dirname, '..', 'bin', 'plugin-license-agent.js');
const { service, cleanups } = useTestService();
const hasPgrep = process.platform === 'linux' && spawnSync('sh', ['-c', 'command -v pgrep && command -v mkfifo']).status === 0;

interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; stderr: string; stdout: string }>;
}

/**
 * Starts `agent run` on `socket`, held before it loads the agent by a barrier: a preload that
 * reads one byte from a FIFO the test holds open, so every starter waits until the test writes
 * one byte for each (no real time window to line up).
 */
function startAgent(socket: string, home: string, barrier?: string): Started {
  const hold = barrier === undefined ? [] : ['--require', barrier];
  const args = [...hold, CLI, 'run', '--socket', socket, '--idle-exit-minutes', '0'];
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
  const exited = new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => child.once('exit', (code) => resolve({ code, stderr, stdout })));
  cleanups.push(() => void child.kill('SIGKILL'));
  return { child, exited };
}

function ready(s: Started): Promise<boolean> {
  return new Promise((resolve) => {
    const onData = (b: Buffer): void => {
      if (b.toString().includes('"ready":true')) resolve(true);
    };
    s.child.stdout!.on('data', onData);
    void s.exited.then(() => resolve(false));
  });
}

/** Processes whose command line names this socket (a unique path per test). */
function agentsOn(socket: string): number[] {
  const pattern = `run --socket ${socket}`.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const r = spawnSync('pgrep', ['-f', '--', pattern], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map(Number).filter((pid) => pid !== process.pid);
}

/** True when the process has the file open (Linux's /proc). */
function holds(pid: number, file: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

async function leaveStaleSocket(socket: string, home: string): Promise<void> {
  const a = startAgent(socket, home);
  expect(await ready(a)).toBe(true);
  a.child.kill('SIGKILL');
  await a.exited;
  expect(lstatSync(socket).isSocket()).toBe(true); // left behind: nobody listens
}

describe('many agents started at once on one socket end with one', () => {
  it.each([
    [5, 3],
    [10, 2],
  ])('%i `agent run` released at the same instant on a stale socket, %i rounds: one answers, the others exit socket_in_use, no orphan', async (n, rounds) => {
    if (!hasPgrep) throw new Error('Linux with pgrep and mkfifo (procps, coreutils) is needed to hold the starters and count the agents of a socket');
    const d = shortDir();
    cleanups.push(d.cleanup);
    // A hostile but valid folder name: spaces, a glob, quotes, $ and non-ASCII.
    const dir = join(d.dir, `s *'"$é`);
    mkdirSync(dir, { mode: 0o700 });
    const socket = join(dir, 'agent.sock');
    const home = join(d.dir, 'home');
    for (let round = 0; round < rounds; round++) {
      await leaveStaleSocket(socket, home);
      const fifo = join(d.dir, `go-${round}`);
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const barrier = join(d.dir, `hold-${round}.cjs`);
      writeFileSync(barrier, `const fs = require('fs'); fs.readSync(fs.openSync(${JSON.stringify(fifo)}, 'r'), Buffer.alloc(1));\n`);
      const gate = openSync(fifo, 'r+'); // a reader and writer: the starters' open never blocks, their read does
      cleanups.push(() => closeSync(gate));
      const starters = Array.from({ length: n }, () => startAgent(socket, home, barrier));
      const readies = starters.map(ready);
      // Wait until every starter holds the FIFO open (its next step is the blocking read), then release them all together.
      await expect.poll(() => starters.filter((s) => holds(s.child.pid!, fifo))).toHaveLength(n);
      writeSync(gate, Buffer.alloc(n, 0x67)); // one byte each
      const results = await Promise.all(readies);
      const winners = starters.filter((_, i) => results[i]);
      expect(winners).toHaveLength(1);
      const losers = await Promise.all(starters.filter((_, i) => !results[i]).map((s) => s.exited));
      for (const l of losers) {
        expect(l.code).toBe(1);
        expect(l.stderr).toMatch(/another agent is already running on .*agent\.sock/);
      }
      const winner = winners[0]!;
      const client = await AgentClient.connect({ socketPath: socket, reconnect: false });
      const hello = await client.hello();
      client.close();
      expect(hello.protocol).toBe(1);
      expect(agentsOn(socket)).toEqual([winner.child.pid]);
      expect(existsSync(`${socket}.lock`)).toBe(false); // the lock is released, nothing to repair
      winner.child.kill('SIGKILL'); // the next round starts from its stale socket
      await winner.exited;
    }
    expect(agentsOn(socket)).toEqual([]);
  }, 120_000);
});
