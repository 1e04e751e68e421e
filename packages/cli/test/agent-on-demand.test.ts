import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { PassThrough } from 'node:stream';
import { dirname, join } from 'node:path';
import { AGENT_START_INTERVAL_MS, resolveAgentConfig, startAgentDetached } from '@plugin-license/agent';
import { afterEach, describe, expect, it } from 'vitest';
import { Context } from '../src/context.js';
import { Output } from '../src/output.js';
import { CLI, cli, envFor, useCliService } from './helpers.js';
import { bearer, session, startManager } from './manager-helpers.js';

const { service } = useCliService();
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A home and a runtime folder of its own: the agent's socket is the namespace's default one there. */
function onDemandEnv(idleExitMinutes: number, extra: Record<string, string | undefined> = {}) {
  const dir = mkdtempSync('/tmp/pld-');
  chmodSync(dir, 0o700);
  const run = join(dir, 'run');
  mkdirSync(run, { mode: 0o700 });
  const home = join(dir, 'home');
  mkdirSync(home);
  const env = envFor(service, home, { PLUGIN_LICENSE_SOCKET: undefined, XDG_RUNTIME_DIR: run, ...extra });
  const config = resolveAgentConfig({}, env);
  mkdirSync(dirname(config.configFile), { recursive: true });
  writeFileSync(config.configFile, JSON.stringify({ idle_exit_minutes: idleExitMinutes }));
  cleanups.push(async () => {
    for (const pid of agentsOf(run)) process.kill(pid, 'SIGTERM');
    await expect.poll(() => agentsOf(run)).toHaveLength(0);
    rmSync(dir, { recursive: true, force: true });
  });
  return { env, run, home, socket: config.socketPath };
}

/** The agent processes started with this runtime folder (read from /proc: exact, no name matching). */
function agentsOf(run: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (state !== 'Z' && cmdline.includes('agent') && cmdline.includes('run') && environ.includes(`XDG_RUNTIME_DIR=${run}`)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** The first state the page's live view sends. */
function firstState(port: number, headers: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: '/api/events', headers: { ...headers, host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
        const m = /event: state\ndata: (.*)\n\n/.exec(text);
        if (m) {
          req.destroy();
          resolve(JSON.parse(m[1]!));
        }
      });
      res.once('end', () => reject(new Error(`the live view ended without a state (${res.statusCode}): ${text}`)));
    });
    req.once('error', reject);
  });
}

function context(env: Record<string, string | undefined>, options = {}): Context {
  const streams = { stdout: new PassThrough(), stderr: new PassThrough(), env } as unknown as ConstructorParameters<typeof Output>[0];
  return new Context(new Output(streams, { json: true, color: false, debug: false }), options, env);
}

describe('the CLI starts the agent on demand', () => {
  it('a command that uses the agent starts it; it exits when idle, leaving no socket; the next command starts it again', async () => {
    const { env, run, socket } = onDemandEnv(0.01);
    const first = await cli(['--json', 'agent', 'list'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ licenses: [] });
    // The last client (the CLI) left: the agent goes within its idle time (0.6 s) plus slack.
    await expect.poll(() => agentsOf(run)).toHaveLength(0);
    expect(existsSync(socket)).toBe(false);
    const code = await service.code(2);
    const activated = await cli(['--json', 'activate', code, '--project', service.emulator.projectId], env);
    expect(activated.code, activated.stderr).toBe(0);
    expect(JSON.parse(activated.stdout)).toMatchObject({ via: 'agent', license: { valid: true } });
    await expect.poll(() => agentsOf(run)).toHaveLength(0);
  }, 60_000);

  /** Five commands that need the agent, at once: each answered, one agent left; then stopped. */
  async function fiveAtOnceEndWithOne(env: Record<string, string>, run: string): Promise<void> {
    const runs = await Promise.all(Array.from({ length: 5 }, () => cli(['--json', 'agent', 'list'], env)));
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    await expect.poll(() => agentsOf(run)).toHaveLength(1);
    const stopped = await cli(['--json', 'agent', 'stop'], env);
    expect(stopped.code, stopped.stderr).toBe(0);
    await expect.poll(() => agentsOf(run)).toHaveLength(0);
  }

  it('five commands at once end with exactly one agent', async () => {
    const { env, run } = onDemandEnv(1);
    await fiveAtOnceEndWithOne(env, run);
  }, 60_000);

  it('five commands at once on a stale socket (its agent was SIGKILLed) end with one agent, each answered, rounds', async () => {
    const { env, run, socket } = onDemandEnv(1);
    for (let round = 0; round < 2; round++) {
      const first = await cli(['--json', 'agent', 'list'], env);
      expect(first.code, first.stderr).toBe(0);
      await expect.poll(() => agentsOf(run)).toHaveLength(1);
      process.kill(agentsOf(run)[0]!, 'SIGKILL');
      await expect.poll(() => agentsOf(run)).toHaveLength(0);
      expect(lstatSync(socket).isSocket()).toBe(true); // left behind, nobody listens
      await fiveAtOnceEndWithOne(env, run);
    }
  }, 90_000);

  it('the manager with no agent running starts one and waits for it: the first page already shows it running', async () => {
    const { env, run } = onDemandEnv(1);
    const manager = await startManager(env as Record<string, string>, ['--no-open']);
    cleanups.push(async () => void (await manager.stop()));
    // The url is printed only once the first look for the agent is over: no 2 s retry needed.
    expect(agentsOf(run)).toHaveLength(1);
    const s = await session(manager);
    const state = await firstState(manager.port, bearer(s));
    expect(state).toMatchObject({ agent: { running: true, protocol: 1 } });
  }, 60_000);

  it('the agent runs detached: its own session, the home as working folder, no inherited descriptors, no Node run-time variables', async () => {
    const { env, run, home } = onDemandEnv(1, { NODE_OPTIONS: '--no-deprecation', NODE_DEBUG: 'none' });
    // An extra descriptor (3) open in the CLI: the agent must not hold it.
    const child = spawn(process.execPath, [CLI, '--json', 'agent', 'list'], { env, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    const exit = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(exit).toBe(0);
    await expect.poll(() => agentsOf(run)).toHaveLength(1);
    const pid = agentsOf(run)[0]!;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    expect(Number(stat[3])).toBe(pid); // session id: it leads its own session
    expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(home);
    for (const fd of ['0', '1', '2']) expect(readlinkSync(`/proc/${pid}/fd/${fd}`)).toBe('/dev/null');
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      let target = '';
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      expect(target.startsWith('pipe:') && Number(fd) <= 3 ? `fd ${fd}: ${target}` : 'ok').toBe('ok');
    }
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ.filter((e) => e.startsWith('NODE_OPTIONS=') || e.startsWith('NODE_DEBUG='))).toEqual([]);
    expect(environ).toContain(`PLUGIN_LICENSE_HOME=${home}`);
  }, 60_000);

  it.each([
    ['PLUGIN_LICENSE_SOCKET points at a socket on purpose', (run: string) => ({ PLUGIN_LICENSE_SOCKET: join(run, 'chosen.sock') })],
    ['PLUGIN_LICENSE_NO_AUTOSTART=1', () => ({ PLUGIN_LICENSE_NO_AUTOSTART: '1' })],
  ])('no agent is started when %s: the command says none answers', async (_what, extra) => {
    const base = onDemandEnv(1);
    const env = { ...base.env, ...extra(base.run) };
    const r = await cli(['--json', 'agent', 'list'], env);
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/no agent answers/);
    expect(agentsOf(base.run)).toEqual([]);
  }, 60_000);
});

describe('the one rule of when the CLI starts the agent', () => {
  it.each([
    ['1', true],
    ['yes', true],
    ['true', true],
    [' 1 ', true],
    ['*', true],
    ["'0'", true],
    ['$X', true],
    ['ä', true],
    ['0', false],
    [' 0 ', false],
    ['', false],
    [' ', false],
  ])('PLUGIN_LICENSE_NO_AUTOSTART=%j turns it off: %s', async (value, off) => {
    const ctx = context({ HOME: '/tmp', XDG_RUNTIME_DIR: '/tmp/r', PLUGIN_LICENSE_NO_AUTOSTART: value });
    expect('off' in (await ctx.agentStart())).toBe(off);
  });

  it.each(['/tmp/a b/agent.sock', '/tmp/*/agent.sock', '/tmp/$HOME/agent.sock', "/tmp/it's/\"x\".sock", '/tmp/ü/agent.sock', '/tmp/a\\b/agent.sock'])(
    'PLUGIN_LICENSE_SOCKET=%j (chosen on purpose) turns it off',
    async (socket) => {
      expect(await context({ HOME: '/tmp', PLUGIN_LICENSE_SOCKET: socket }).agentStart()).toEqual({ off: 'the socket was chosen by PLUGIN_LICENSE_SOCKET' });
    },
  );

  it('the default socket starts this program with "agent", and the CLI flags reach it as variables, never as arguments', async () => {
    const start = await context({ HOME: '/tmp', XDG_RUNTIME_DIR: '/tmp/r' }, { home: '/tmp/h ome', baseUrl: 'http://127.0.0.1:1/functions/v1', token: 'tok-secret' }).agentStart();
    if ('off' in start) throw new Error(start.off);
    expect(start.command.at(-1)).toBe('agent');
    expect(start.command.join(' ')).not.toContain('tok-secret');
    expect(start.env).toMatchObject({ PLUGIN_LICENSE_HOME: '/tmp/h ome', PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:1/functions/v1', PLUGIN_LICENSE_TOKEN: 'tok-secret' });
  });

  it('a process starts the agent of one namespace and socket at most once per 30 s', () => {
    let now = 1_000_000;
    const start = (namespace: string, socketPath: string) => startAgentDetached({ command: ['/bin/true'], namespace, socketPath, env: {}, now: () => now });
    expect(start('ns-a', '/tmp/x/agent.sock')).toBeTypeOf('number');
    expect(start('ns-a', '/tmp/x/agent.sock')).toBeUndefined();
    expect(start('ns-b', '/tmp/x/agent.sock')).toBeTypeOf('number'); // another project
    expect(start('ns-a', '/tmp/y/agent.sock')).toBeTypeOf('number'); // another socket
    now += AGENT_START_INTERVAL_MS - 1;
    expect(start('ns-a', '/tmp/x/agent.sock')).toBeUndefined();
    now += 1;
    expect(start('ns-a', '/tmp/x/agent.sock')).toBeTypeOf('number');
  });
});
