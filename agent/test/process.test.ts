import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { AgentClient, type LicenseState } from '../src/index.js';
import { shortDir, useTestService } from './helpers.js';

const AGENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(AGENT_DIR, 'bin', 'plugin-license-agent.js');

const { service, cleanups } = useTestService();

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "pnpm build" first`);
});

interface Spawned {
  child: ChildProcess;
  ready: { ready: true; socket: string; namespace: string; pid: number; protocol: 1 };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

function env(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_APP: 'proc-test', ...extra };
  return e;
}

async function spawnAgent(home: string, socket: string, args: string[] = [], clockOffsetMs = 0): Promise<Spawned> {
  const shim = clockOffsetMs === 0 ? [] : ['--import', pathToFileURL(join(AGENT_DIR, 'test', 'fixtures', 'clock-offset.mjs')).href];
  const child = spawn(process.execPath, [...shim, CLI, 'run', '--socket', socket, ...args], {
    env: env(home, { PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl, CLOCK_OFFSET_MS: String(clockOffsetMs) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((ok, fail) => {
    lines.once('line', ok);
    child.once('exit', (code) => fail(new Error(`agent exited (${code}) before ready: ${stderr}`)));
  });
  return { child, ready: JSON.parse(first), exited, stderr: () => stderr };
}

function cli(args: string[], home: string, extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { env: env(home, extra), encoding: 'utf8', timeout: 20_000 });
}

describe('plugin-license-agent (built dist, child processes)', () => {
  it('run prints one ready line, serves, and SIGTERM exits 0 removing the socket', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 's', 'agent.sock');
    const a = await spawnAgent(d.dir, socket);
    expect(a.ready).toEqual({ ready: true, socket, namespace: 'proc-test', pid: a.child.pid, protocol: 1 });
    const client = await AgentClient.connect({ socketPath: socket, reconnect: false });
    const code = await service.code(2);
    await client.activate(service.emulator.projectId, code);
    client.close();
    a.child.kill('SIGTERM');
    expect(await a.exited).toEqual({ code: 0, signal: null });
    expect(existsSync(socket)).toBe(false);
    const logs = readdirSync(join(d.dir, 'log')).filter((f) => /^agent(\.\d+)?\.log$/.test(f));
    const text = logs.map((f) => readFileSync(join(d.dir, 'log', f), 'utf8')).join('');
    expect(text).toContain('"msg":"agent stopped"');
    expect(text).not.toContain(code);
    for (const line of text.trim().split('\n')) expect(() => JSON.parse(line)).not.toThrow();

    // Restart from the cache, then status reads the running agent, then the cache when stopped.
    const b = await spawnAgent(d.dir, socket);
    const running = cli(['status', '--json', '--socket', socket], d.dir);
    expect(running.status).toBe(0);
    const report = JSON.parse(running.stdout);
    expect(report).toMatchObject({ running: true, from: 'agent', namespace: 'proc-test', licenses: [{ project_id: service.emulator.projectId, valid: true, source: 'cache' }] });
    b.child.kill('SIGINT');
    expect((await b.exited).code).toBe(0);
    const stopped = cli(['status', '--socket', socket], d.dir);
    expect(stopped.stdout).toContain('agent not running');
    expect(stopped.stdout).toContain(`${service.emulator.projectId}  valid`);
  });

  it('a second agent exits non-zero with a clear message', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 's', 'agent.sock');
    await spawnAgent(d.dir, socket);
    const second = cli(['run', '--socket', socket], d.dir, { PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl });
    expect(second.status).toBe(1);
    expect(second.stderr).toContain('another agent is already running');
    expect(second.stdout).toBe('');
  });

  it('SIGHUP reloads the configuration (log level, limits)', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 's', 'agent.sock');
    mkdirSync(join(d.dir, 'config'), { recursive: true });
    writeFileSync(join(d.dir, 'config', 'config.json'), JSON.stringify({ log_level: 'info' }));
    const a = await spawnAgent(d.dir, socket);
    writeFileSync(join(d.dir, 'config', 'config.json'), JSON.stringify({ log_level: 'debug', agent: { max_connections: 2 } }));
    a.child.kill('SIGHUP');
    const log = (): string => readdirSync(join(d.dir, 'log')).filter((f) => /^agent(\.\d+)?\.log$/.test(f)).map((f) => readFileSync(join(d.dir, 'log', f), 'utf8')).join('');
    await expect.poll(log).toContain('configuration reloaded');
    const c1 = await AgentClient.connect({ socketPath: socket, reconnect: false });
    const c2 = await AgentClient.connect({ socketPath: socket, reconnect: false });
    await c1.hello();
    await c2.hello();
    const c3 = await AgentClient.connect({ socketPath: socket, reconnect: false });
    await expect(c3.hello()).rejects.toMatchObject({ code: 'disconnected' });
    [c1, c2, c3].forEach((c) => c.close());
    await expect.poll(log).toContain('"msg":"connection accepted"'); // a debug line
  });

  it('bad arguments and configuration: clear error, exit 2', () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const unknown = cli(['run', '--frobnicate'], d.dir);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--frobnicate'");
    const badNumber = cli(['run', '--max-connections', 'lots'], d.dir);
    expect(badNumber.status).toBe(2);
    expect(badNumber.stderr).toContain('--max-connections must be a positive whole number');
    const noUrl = cli(['run', '--socket', join(d.dir, 'a.sock')], d.dir);
    expect(noUrl.status).toBe(2);
    expect(noUrl.stderr).toContain('no service base URL');
    const httpUrl = cli(['run', '--base-url', 'http://service.example/functions/v1'], d.dir);
    expect(httpUrl.status).toBe(2);
    expect(httpUrl.stderr).toContain('use https://');
    // A base URL the agent would refuse at the first activation is refused at start instead.
    const noPath = cli(['run', '--socket', join(d.dir, 'b.sock'), '--base-url', new URL(service.emulator.baseUrl).origin], d.dir);
    expect(noPath.status).toBe(2);
    expect(noPath.stdout).toBe('');
    expect(noPath.stderr).toMatch(/does not end in \/functions\/v1; pass the full service base address, e\.g\. http:\/\/127\.0\.0\.1:\d+\/functions\/v1/);
    const longPath = cli(['socket-path', '--socket', '/tmp/' + 'y'.repeat(120)], d.dir);
    expect(longPath.status).toBe(2);
    expect(longPath.stderr).toContain('over the 107-byte limit');
    const badPlatform = cli(['install', '--dry-run', '--platform', 'beos'], d.dir);
    expect(badPlatform.status).toBe(2);
    expect(badPlatform.stderr).toContain("platform 'beos' has no per-user service");
    expect(cli(['nonsense'], d.dir).status).toBe(2);
    expect(cli(['--help'], d.dir).status).toBe(0);
  });

  it('socket-path prints the resolved path', () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    expect(cli(['socket-path'], d.dir, { XDG_RUNTIME_DIR: '/run/user/4242' }).stdout).toBe('/run/user/4242/proc-test/agent.sock\n');
    expect(cli(['socket-path', '--app', 'acme'], d.dir).stdout).toBe(`/tmp/acme-${process.getuid!()}/agent.sock\n`);
  });

  it('install --dry-run prints this OS file; install --no-enable writes it; another OS is refused, not previewed wrongly; uninstall removes it', () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const here = process.platform as 'linux' | 'darwin' | 'win32';
    const marker = { linux: 'ExecStart=', darwin: '<key>ProgramArguments</key>', win32: '<LogonTrigger>' }[here];
    const r = cli(['install', '--dry-run', '--platform', here], d.dir);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(marker);
    expect(r.stdout).toContain(`${CLI}`);
    for (const other of (['linux', 'darwin', 'win32'] as const).filter((p) => p !== here)) {
      const refused = cli(['install', '--dry-run', '--platform', other], d.dir);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toContain(`a service file for ${other} can only be made on ${other}`);
      expect(refused.stdout).toBe('');
    }
    expect(existsSync(join(d.dir, '.config'))).toBe(false);
    const wrote = cli(['install', '--no-enable', '--platform', 'linux'], d.dir, { XDG_CONFIG_HOME: join(d.dir, '.config') });
    expect(wrote.status).toBe(0);
    const unit = join(d.dir, '.config', 'systemd', 'user', 'proc-test-agent.service');
    expect(readFileSync(unit, 'utf8')).toContain(`"run" "--app" "proc-test"`);
    expect(existsSync(join(d.dir, 'Library'))).toBe(false);
    const removed = cli(['uninstall', '--no-enable', '--platform', 'linux'], d.dir, { XDG_CONFIG_HOME: join(d.dir, '.config') });
    expect(removed.status).toBe(0);
    expect(existsSync(unit)).toBe(false);
  });

  it('install writes the home, socket and base URL chosen by flags or environment into the service (a service manager passes no environment on), never the token', () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const fromEnv = cli(['install', '--dry-run', '--platform', 'linux'], d.dir, {
      PLUGIN_LICENSE_BASE_URL: 'https://licenses.example/functions/v1',
      PLUGIN_LICENSE_SOCKET: join(d.dir, 's', 'agent.sock'),
      PLUGIN_LICENSE_TOKEN: 'secret-token-value',
    });
    expect(fromEnv.status).toBe(0);
    expect(fromEnv.stdout).toContain(`"run" "--app" "proc-test" "--home" "${d.dir}" "--socket" "${join(d.dir, 's', 'agent.sock')}" "--base-url" "https://licenses.example/functions/v1"`);
    expect(fromEnv.stdout).not.toContain('secret-token-value');
    // A flag beats the environment; a bad base URL is refused before anything is written.
    const flag = cli(['install', '--dry-run', '--platform', 'linux', '--base-url', 'https://other.example/functions/v1'], d.dir, { PLUGIN_LICENSE_BASE_URL: 'https://licenses.example/functions/v1' });
    expect(flag.stdout).toContain('"--base-url" "https://other.example/functions/v1"');
    expect(flag.stdout).not.toContain('licenses.example');
    const bad = cli(['install', '--platform', 'linux'], d.dir, { PLUGIN_LICENSE_BASE_URL: 'http://10.1.2.3/functions/v1', XDG_CONFIG_HOME: join(d.dir, '.config') });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('https://');
    expect(existsSync(join(d.dir, '.config'))).toBe(false);
  });

  it('the built package loads by import and by require()', () => {
    const script = (kind: 'esm' | 'cjs') =>
      kind === 'esm'
        ? `import('@plugin-license/agent').then(m => console.log(typeof m.startAgent, typeof m.AgentClient, m.PROTOCOL_VERSION))`
        : `const m = require('@plugin-license/agent'); console.log(typeof m.startAgent, typeof m.AgentClient, m.PROTOCOL_VERSION)`;
    for (const kind of ['esm', 'cjs'] as const) {
      const r = spawnSync(process.execPath, ['-e', script(kind)], { cwd: join(AGENT_DIR, '..', 'test', 'bench'), encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('function function 1');
    }
  });

  it('status only inspects: a tampered cache is reported where it is, never moved, however often status runs', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 'a.sock');
    const a = await spawnAgent(d.dir, socket);
    const client = await AgentClient.connect({ socketPath: socket });
    await client.activate(service.emulator.projectId, await service.code(2));
    client.close();
    a.child.kill('SIGTERM');
    await a.exited;
    const dir = join(d.dir, 'data', 'licenses');
    const file = join(dir, `${service.emulator.projectId}.json`);
    const tampered = readFileSync(file, 'utf8').replace('"activations":1', '"activations":0');
    writeFileSync(file, tampered);
    for (let round = 0; round < 2; round++) {
      const r = cli(['status', '--json', '--socket', socket], d.dir);
      // No agent answers: exit 1, and the report read from the files.
      expect(r.status).toBe(1);
      const report = JSON.parse(r.stdout);
      expect(report).toMatchObject({ running: false, from: 'cache', data_dir: join(d.dir, 'data') });
      expect(report.licenses).toEqual([expect.objectContaining({ project_id: service.emulator.projectId, valid: false, reason: 'cache_invalid' })]);
      expect(report.files[0]).toMatchObject({ file, problem: expect.stringMatching(/authentication tag does not match/) });
      const text = cli(['status', '--socket', socket], d.dir).stdout;
      expect(text).toContain(`${file}: not trusted: authentication tag does not match`);
    }
    expect(readFileSync(file, 'utf8')).toBe(tampered);
    expect(readdirSync(dir).filter((n) => n.includes('.invalid-'))).toEqual([]);
  });

  it('status --home names the other home when the agent on the socket serves a different one', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 'a.sock');
    await spawnAgent(join(d.dir, 'one'), socket);
    const r = cli(['status', '--json', '--socket', socket, '--home', join(d.dir, 'two')], d.dir);
    // An agent answers, but not for this data folder: not this configuration's agent, exit 1.
    expect(r.status).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ running: true, from: 'cache', data_dir: join(d.dir, 'two', 'data'), other_agent_data_dir: join(d.dir, 'one', 'data') });
    expect(cli(['status', '--socket', socket, '--home', join(d.dir, 'two')], d.dir).stdout).toContain(`an agent runs on this socket but serves ${join(d.dir, 'one', 'data')}`);
  });

  it('killed at random moments during activate and deactivate, the restarted agent and the service agree on the slot, every time', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 'a.sock');
    const projectId = service.emulator.projectId;
    const code = await service.code(5);
    const slots = async (): Promise<number> => ((await (await fetch(`${service.emulator.baseUrl}/plugin-activation/status/${code}`)).json()) as { activations: number }).activations;
    // The service acts on a request even when the caller is gone: a kill while it has the request
    // leaves a slot taken (or released) that the killed agent never recorded. Every fourth kill
    // comes while the service holds the request (held until the agent is dead, then let go): that
    // case happens every run, whatever the machine's speed. The others come at spread-out moments
    // of a 150 ms latency (before, during and after the service's answer); the outcome must be
    // the same whichever moment it was.
    cleanups.push(async () => void (await service.control.faults({ mode: 'none' })));
    let agentProcess = await spawnAgent(d.dir, socket);
    const kills = 16;
    for (let i = 0; i < kills; i++) {
      const whileHeld = i % 4 === 0;
      // The latency stays on across the restart, as a slow service's would: the restarted agent's
      // own requests then arrive behind the one the killed agent left in flight.
      await service.control.faults(whileHeld ? { mode: 'hold' } : { mode: 'latency', latency_ms: 150 });
      const client = await AgentClient.connect({ socketPath: socket, reconnect: false });
      const valid = (await client.check(projectId)).valid;
      const call = valid ? client.deactivate(projectId) : client.activate(projectId, code);
      call.catch(() => undefined);
      if (whileHeld) {
        // Whatever else the agent asks meanwhile is held too, until the call itself is.
        const op = valid ? '/plugin-activation/deactivate' : '/plugin-activation/activate';
        for (let n = 1; !(await service.control.held(n)).some((h) => h.path.endsWith(op)); n++);
      } else {
        await new Promise((r) => setTimeout(r, (i * 53) % 320)); // 0..319 ms
      }
      agentProcess.child.kill('SIGKILL');
      await agentProcess.exited;
      client.close();
      // Held: let go (answered to nobody, the slot changes all the same) before the restart asks.
      if (whileHeld) await service.control.faults({ mode: 'none' });
      agentProcess = await spawnAgent(d.dir, socket); // settles unfinished intents before it is ready
      const again = await AgentClient.connect({ socketPath: socket, reconnect: false });
      const state = await again.check(projectId);
      again.close();
      expect({ kill: i, held: await slots() }).toEqual({ kill: i, held: state.valid ? 1 : 0 });
    }
    agentProcess.child.kill('SIGTERM');
    expect((await agentProcess.exited).code).toBe(0);
  }, 60_000);

  it('a machine whose clock ran 3 h fast and is set right: clock_tampered is cleared online within seconds, not in 26 h', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 'a.sock');
    const projectId = service.emulator.projectId;
    const fast = await spawnAgent(d.dir, socket, [], 3 * 3600_000); // a dual-boot machine before network time
    const c1 = await AgentClient.connect({ socketPath: socket, reconnect: false });
    const activated = await c1.activate(projectId, await service.code(2));
    expect(activated).toMatchObject({ valid: true });
    expect(activated.validatedAt!.getTime() - Date.now()).toBeGreaterThan(2.9 * 3600_000); // the shim took effect
    c1.close();
    fast.child.kill('SIGTERM');
    await fast.exited;

    await spawnAgent(d.dir, socket); // network time has set the clock right
    const c2 = await AgentClient.connect({ socketPath: socket, reconnect: false });
    cleanups.push(() => c2.close());
    // The online check the agent makes at once is awaited as the change it pushes, not polled for.
    const sub = await c2.subscribe(projectId);
    const becameValid = new Promise<LicenseState>((resolve) => sub.on('changed', (s) => s.valid && resolve(s)));
    let state = await c2.check(projectId);
    if (!state.valid) state = await becameValid;
    expect(state).toMatchObject({ valid: true, reason: null, source: 'online' });
    expect(state.nextCheckAt!.getTime() - Date.now(), JSON.stringify({ state, now: new Date() })).toBeGreaterThan(22 * 3600_000);
  });

  // The bin keeps a V8 code cache of its one-file build: written once after start, used by the
  // next start (it is then not rewritten), and a damaged or foreign one is ignored and replaced.
  it('the code cache: written after start, used as it is, a damaged or foreign one replaced', async () => {
    const d = shortDir();
    cleanups.push(d.cleanup);
    const socket = join(d.dir, 's', 'agent.sock');
    const folder = join(d.dir, 'cache', 'compile');
    const cacheFile = (): string | undefined => (existsSync(folder) ? readdirSync(folder).find((f) => f.startsWith('agent-agent-') && f.endsWith('.v8cache')) : undefined);
    const startAndWait = async (): Promise<void> => {
      const a = await spawnAgent(d.dir, socket);
      const client = await AgentClient.connect({ socketPath: socket, reconnect: false });
      expect((await client.check(service.emulator.projectId)).reason).toBe('not_activated');
      client.close();
      await new Promise((r) => setTimeout(r, 2600)); // the cache is written 2 s after start
      a.child.kill('SIGTERM');
      expect(await a.exited).toEqual({ code: 0, signal: null });
    };
    await startAndWait();
    const name = cacheFile();
    expect(name).toMatch(/^agent-agent-v\d+\.\d+\.\d+-\w+-\d+-\d+-\d+\.v8cache$/);
    const path = join(folder, name!);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const written = readFileSync(path);
    const check = (bytes: Buffer): boolean => createHash('sha256').update(bytes.subarray(32)).digest().equals(bytes.subarray(0, 32));
    expect(check(written)).toBe(true);

    // Accepted as it is: the next start does not write it again.
    const before = statSync(path).mtimeMs;
    await startAndWait();
    expect(statSync(path).mtimeMs).toBe(before);

    // One byte flipped: ignored (the agent starts all the same) and written anew.
    const damaged = Buffer.from(written);
    damaged[damaged.length - 100]! ^= 0xff;
    writeFileSync(path, damaged);
    await startAndWait();
    expect(check(readFileSync(path))).toBe(true);

    // Writable by others: ignored and replaced by the user's own.
    chmodSync(path, 0o666);
    await startAndWait();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(folder).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  }, 30_000);
});
