// `agent stop` and the `shutdown` method: the agent of this namespace stops however it was
// started; an older agent without `shutdown` is ended only when it is this user's process; an
// agent of another namespace, or another user's process, is left alone. Real processes, real sockets.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createConnection } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { asOtherUser, otherUserUnavailable } from '@plugin-license/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../src/index.js';
import { shortDir, useTestService } from './helpers.js';

const CLI = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'bin', 'plugin-license-agent.js');
const { service } = useTestService();
const dirs: Array<() => void> = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of dirs) d();
});

function home(): { dir: string; socket: string; env: NodeJS.ProcessEnv } {
  const d = shortDir();
  dirs.push(d.cleanup);
  chmodSync(d.dir, 0o755);
  mkdirSync(join(d.dir, 'sock'), { mode: 0o700 });
  const socket = join(d.dir, 'sock', 'agent.sock');
  return { dir: d.dir, socket, env: { PATH: process.env.PATH, HOME: d.dir, PLUGIN_LICENSE_HOME: d.dir, PLUGIN_LICENSE_APP: 'stop-test', PLUGIN_LICENSE_SOCKET: socket, PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl } };
}

async function started(command: string, args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  await new Promise<string>((ok) => createInterface({ input: child.stdout! }).once('line', ok));
  return { child, exited };
}

/** An agent of an older version: answers `hello` for `namespace`, knows no `shutdown`. */
const OLD_AGENT = `
const net = require('node:net');
const [socket, namespace] = process.argv.slice(1);
net.createServer((c) => {
  let buf = '';
  c.on('data', (d) => {
    buf += d;
    for (let i; (i = buf.indexOf('\\n')) >= 0; buf = buf.slice(i + 1)) {
      const req = JSON.parse(buf.slice(0, i));
      const answer = req.method === 'hello'
        ? { jsonrpc: '2.0', id: req.id, result: { protocol: 1, agent: '0.0.9', namespace } }
        : { jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'method not found' } };
      c.write(JSON.stringify(answer) + '\\n');
    }
  });
}).listen(socket, () => console.log('ready'));
process.on('SIGTERM', () => process.exit(0));
`;

async function stop(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, [CLI, 'stop', '--json', '--timeout-ms', '20000'], { env, timeout: 60_000 });
    return { code: 0, ...r };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const answers = async (socketPath: string): Promise<boolean> => {
  try {
    (await AgentClient.connect({ socketPath, reconnect: false, connectTimeoutMs: 1000 })).close();
    return true;
  } catch {
    return false;
  }
};

describe('agent stop', () => {
  it('asks the running agent to stop (shutdown), waits until its process is gone; with none running it says so', async () => {
    const h = home();
    const agent = await started(process.execPath, [CLI, 'run'], h.env);
    const r = await stop(h.env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ was_running: true, namespace: 'stop-test', pid: agent.child.pid, how: 'request' });
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(h.socket)).toBe(false);
    const none = await stop(h.env);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual({ was_running: false, socket_path: h.socket, namespace: 'stop-test' });
  });

  it('ends an older agent that has no shutdown method, found as this user\'s process listening on the socket', async () => {
    const h = home();
    const old = await started(process.execPath, ['-e', OLD_AGENT, h.socket, 'stop-test'], h.env);
    const r = await stop(h.env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ was_running: true, pid: old.child.pid, how: 'signal' });
    expect(await old.exited).toEqual({ code: 0, signal: null });
    expect(await answers(h.socket)).toBe(false);
  });

  it('leaves alone an agent of another namespace on the socket', async () => {
    const h = home();
    const other = await started(process.execPath, ['-e', OLD_AGENT, h.socket, 'another-vendor'], h.env);
    const r = await stop(h.env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/serves namespace another-vendor, not stop-test .*it was left running/);
    expect(other.child.exitCode).toBe(null);
    expect(await answers(h.socket)).toBe(true);
  });

  it.skipIf(otherUserUnavailable() !== undefined)("never signals another user's process, even one that answers for this namespace (needs root for setpriv)", async () => {
    const h = home();
    chmodSync(join(h.dir, 'sock'), 0o777);
    const theirs = await started(...asOtherUser([process.execPath, '-e', OLD_AGENT, h.socket, 'stop-test']), h.env);
    chmodSync(h.socket, 0o777);
    // The folder is open to others (so that user could bind in it): refused before anything is sent (exit 2), and
    // no process is looked for or signalled.
    const r = await stop(h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/writable by other users.*nothing was sent to it/);
    expect(theirs.child.exitCode).toBe(null);
    // Still listening (a raw connection: AgentClient refuses that folder, as agent stop did).
    await new Promise<void>((resolve, reject) => {
      const s = createConnection(h.socket, () => (s.destroy(), resolve()));
      s.once('error', reject);
    });
  });
});
