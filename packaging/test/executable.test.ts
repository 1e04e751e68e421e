// The Linux executable as a customer's computer runs it: built by `pnpm package` (the same
// module) with a vendor's baked defaults, run with no Node on the PATH and a bare environment,
// against the emulator on loopback.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { AgentClient, NODE_RUNTIME_VARIABLES } from '@plugin-license/agent';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { asOtherUser, startService, type TestService } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { packageRelease, parseOptions } from '../src/build.mjs';

interface Manifest {
  version: string;
  node: string;
  app: string;
  targets: Array<{ target: string; file: string; bytes: number; sha256: string }>;
  installers: Array<{ file: string; bytes: number; sha256: string }>;
}

let service: TestService<Emulator>;
let dir: string;
let release: string;
let exe: string;
let manifest: Manifest;
const children: ChildProcess[] = [];

beforeAll(async () => {
  service = await startService(startEmulator);
  dir = mkdtempSync(join(tmpdir(), 'plc-exe-'));
  release = join(dir, 'release');
  const options = parseOptions(['--targets', 'linux-x64', '--app', 'acme-audio', '--base-url', service.emulator.baseUrl, '--app-group', 'ABCDE12345.com.acme.audio', '--name', 'acme-license', '--out', release]);
  manifest = await packageRelease(options, { log: () => {} });
  exe = join(release, manifest.targets[0]!.file);
}, 300_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

/** A customer's computer: no Node on the PATH, nothing of ours in the environment. */
function bareEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: '/usr/bin:/bin', HOME: home, XDG_RUNTIME_DIR: join(home, 'run'), ...extra };
}

/** A customer's home, short (sun_path is 107 bytes), removed after the tests. */
const homes: string[] = [];
function newHome(): string {
  const home = mkdtempSync(join('/tmp', 'plx-'));
  homes.push(home);
  mkdirSync(join(home, 'run'), { mode: 0o700 });
  return home;
}

async function runFile(command: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(command, args, { env, timeout: 120_000, ...(cwd ? { cwd } : {}) });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `agent run` of the executable, up to its ready line; an exit before it fails with its stderr. */
async function startAgentExe(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; ready: { socket: string; namespace: string } }> {
  const child = spawn(exe, ['agent', 'run'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const line = await new Promise<string>((ok, fail) => {
    createInterface({ input: child.stdout! }).once('line', ok);
    child.once('exit', (c) => fail(new Error(`the agent exited (${c}): ${stderr}`)));
  });
  return { child, ready: JSON.parse(line) as { socket: string; namespace: string } };
}

function runExe(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFile(exe, args, env);
}

describe('pnpm package: the release folder', () => {
  it('holds the executable, the Linux tarball, SHA256SUMS and manifest.json, all agreeing', () => {
    expect(manifest).toMatchObject({ node: '22.23.2', app: 'acme-audio', app_group: 'ABCDE12345.com.acme.audio', targets: [{ target: 'linux-x64', file: `acme-license-${manifest.version}-linux-x64` }] });
    expect(manifest.installers.map((i) => i.file)).toEqual([`acme-license-${manifest.version}-linux-x64.tar.gz`]);
    const sums = readFileSync(join(release, 'SHA256SUMS'), 'utf8').trim().split('\n');
    for (const entry of [...manifest.targets, ...manifest.installers]) {
      const bytes = readFileSync(join(release, entry.file));
      expect(bytes.length).toBe(entry.bytes);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(entry.sha256);
      expect(sums).toContain(`${entry.sha256}  ${entry.file}`);
    }
    expect(existsSync(join(dir, `release.partial-${process.pid}`))).toBe(false);
  });
});

describe('the Linux executable serves the license relay', () => {
  it('relay serve: its start line, an activation answered with a signed ticket, SIGTERM: exit 0', async () => {
    const home = newHome();
    const { privateKey } = generateKeyPairSync('ed25519');
    const code = await service.code();
    const env = bareEnv(home, {
      RELAY_SIGNING_KEY: privateKey.export({ format: 'jwk' }).d!,
      RELAY_SERVICE_URL: service.emulator.baseUrl,
      RELAY_SERVICE_TOKEN: service.emulator.token,
      RELAY_APP: 'acme-audio',
      RELAY_PROJECTS: service.emulator.projectId,
    });
    const child = spawn(exe, ['relay', 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const exited = new Promise<number | null>((ok) => child.once('exit', ok));
    const line = await new Promise<string>((ok, fail) => {
      createInterface({ input: child.stdout! }).once('line', ok);
      void exited.then((c) => fail(new Error(`relay serve exited (${c})`)));
    });
    const { base_url, keys } = JSON.parse(line) as { base_url: string; keys: Array<{ kid: string; public_key: string }> };
    expect(keys).toEqual([{ kid: expect.stringMatching(/^[0-9a-f]{16}$/), public_key: privateKey.export({ format: 'jwk' }).x }]);
    const res = await fetch(`${base_url}/plugin-activation/activate`, { method: 'POST', body: JSON.stringify({ code, machine_id: 'm1_exe-relay', project_id: service.emulator.projectId }) });
    const body = (await res.json()) as { success: boolean; signed_ticket: string };
    expect([res.status, body.success]).toEqual([200, true]);
    const [line1, line2] = body.signed_ticket.split('\n');
    const signature = Buffer.from(line2!.split(':')[2]!, 'base64url');
    expect(verify(null, Buffer.from(`plugin-license/signed-ticket/v1\0${line1}`), createPublicKey(privateKey), signature)).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('the Linux executable, with no Node on the PATH', () => {
  it('--version names the version, Node, the target and the baked namespace; NODE_OPTIONS changes nothing', async () => {
    const home = newHome();
    const v = await runExe(['--version'], bareEnv(home));
    expect(v.stdout.trim()).toBe(`${manifest.version} (node 22.23.2, linux-x64, namespace acme-audio)`);
    const hostile = await runExe(['--version'], bareEnv(home, { NODE_OPTIONS: '--require /nonexistent/hook.js --max-old-space-size=1' }));
    expect(hostile).toMatchObject({ code: 0, stdout: v.stdout });
    expect((await runExe(['--version'], bareEnv(home, { PLUGIN_LICENSE_APP: 'other' }))).stdout).toContain('namespace other)');
    const help = await runExe(['--help'], bareEnv(home));
    expect(help.stdout).toMatch(/^Usage: acme-license /);
    const bad = await runExe(['stauts'], bareEnv(home));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^acme-license: .*status/);
  });

  it("Node's run-time variables, each with a hostile value and all at once, change nothing: the executable starts, the agent answers", async () => {
    const home = newHome();
    const hostile: Record<string, string> = {
      NODE_OPTIONS: '--require /nonexistent/hook.js',
      NODE_PATH: '/nonexistent',
      NODE_TLS_REJECT_UNAUTHORIZED: '0',
      NODE_DEBUG: 'net,http,module',
      NODE_DEBUG_NATIVE: 'SEA',
      NODE_V8_COVERAGE: join(home, 'coverage'),
      NODE_COMPILE_CACHE: join(home, 'compile-cache'),
      NODE_DISABLE_COMPILE_CACHE: '1',
      NODE_PENDING_DEPRECATION: '1',
      NODE_NO_WARNINGS: '1',
      NODE_REDIRECT_WARNINGS: '/nonexistent/warnings.txt',
      NODE_PRESERVE_SYMLINKS: '1',
      NODE_ICU_DATA: '/nonexistent',
      NODE_USE_ENV_PROXY: '1',
      NODE_DISABLE_COLORS: '1',
      NODE_REPL_EXTERNAL_MODULE: '/nonexistent/repl-hook.js',
      NODE_REPL_HISTORY: '/nonexistent/history',
      NODE_CHANNEL_FD: '99',
      NODE_CHANNEL_SERIALIZATION_MODE: 'advanced',
      NODE_UNIQUE_ID: 'x',
      NODE_TEST_CONTEXT: 'child-v8',
      NODE_SKIP_PLATFORM_CHECK: '1',
      UV_THREADPOOL_SIZE: 'abc',
      UV_USE_IO_URING: '1',
    };
    // Every listed variable has a hostile value here.
    expect(Object.keys(hostile).sort()).toEqual([...NODE_RUNTIME_VARIABLES].sort());
    const plain = await runExe(['--version'], bareEnv(home));
    for (const [name, value] of Object.entries(hostile)) {
      const r = await runExe(['--version'], bareEnv(home, { [name]: value }));
      // NODE_DEBUG is read by Node before our first line: its debug lines on stderr are all it can still add.
      expect(name.startsWith('NODE_DEBUG') ? { ...r, stderr: plain.stderr } : r, name).toEqual(plain);
    }
    // NODE_CHANNEL_FD is Node's IPC channel, opened before our first line: one naming a closed
    // descriptor ends a long-running process at its first write (EBADF). Only a starter can remove
    // it (the service unit does); the short run above shows it alone does not stop a start.
    const { NODE_CHANNEL_FD: _fd, NODE_CHANNEL_SERIALIZATION_MODE: _mode, ...longRun } = hostile;
    const env = bareEnv(home, longRun);
    const { child, ready } = await startAgentExe(env);
    const client = await AgentClient.connect({ socketPath: ready.socket, reconnect: false });
    try {
      const code = await service.code(2);
      expect(await client.activate(service.emulator.projectId, code)).toMatchObject({ valid: true });
    } finally {
      client.close();
    }
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('NODE_REPL_EXTERNAL_MODULE, which Node refuses in a single executable that ignores NODE_OPTIONS, set or empty: the executable starts and loads nothing', async () => {
    const home = newHome();
    const marker = join(home, 'repl-hook-ran');
    const hook = join(home, 'repl-hook.js');
    writeFileSync(hook, `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`);
    const plain = await runExe(['--version'], bareEnv(home));
    for (const value of ['', hook, 'x'.repeat(4096)]) {
      expect(await runExe(['--version'], bareEnv(home, { NODE_REPL_EXTERNAL_MODULE: value }))).toEqual(plain);
    }
    expect(existsSync(marker)).toBe(false);
  });

  it('uses the baked base URL with no variable; environment and config.json rank above it', async () => {
    const home = newHome();
    const code = await service.code(2);
    const status = await runExe(['--json', 'status', code], bareEnv(home));
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ activations: 0, max_activations: 2 });
    // A wrong URL above the baked one is used, and fails: the order is flag > env > config.json > baked.
    const wrong = 'http://127.0.0.1:9/functions/v1';
    expect((await runExe(['status', code], bareEnv(home, { PLUGIN_LICENSE_BASE_URL: wrong }))).code).toBe(1);
    mkdirSync(join(home, '.config', 'acme-audio'), { recursive: true });
    writeFileSync(join(home, '.config', 'acme-audio', 'config.json'), JSON.stringify({ base_url: wrong }));
    expect((await runExe(['status', code], bareEnv(home))).code).toBe(1);
    expect((await runExe(['status', code, '--base-url', service.emulator.baseUrl], bareEnv(home))).code).toBe(0);
  });

  it('agent run is the agent: ready line, answers on its socket, agent status; install writes the executable, never node', async () => {
    const home = newHome();
    const env = bareEnv(home);
    const { child, ready } = await startAgentExe(env);
    expect(ready).toMatchObject({ socket: join(home, 'run', 'acme-audio', 'agent.sock'), namespace: 'acme-audio' });
    const client = await AgentClient.connect({ socketPath: ready.socket, reconnect: false });
    try {
      const code = await service.code(2);
      expect(await client.activate(service.emulator.projectId, code)).toMatchObject({ valid: true, activations: 1 });
      expect(await client.check(service.emulator.projectId)).toMatchObject({ valid: true, source: 'online' });
    } finally {
      client.close();
    }
    const status = await runExe(['--json', 'agent', 'status'], env);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, from: 'agent', namespace: 'acme-audio', licenses: [expect.objectContaining({ valid: true })] });
    const unit = await runExe(['agent', 'install', '--dry-run', '--platform', 'linux'], env);
    expect(unit.stdout).toContain(`ExecStart="@${exe}" "${exe}" "agent" "run" "--app" "acme-audio" "--idle-exit-minutes" "0"\n`);
    expect(unit.stdout).toContain(`UnsetEnvironment=${NODE_RUNTIME_VARIABLES.join(' ')}\n`);
    expect(unit.stdout).not.toMatch(/node/);
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect((await runExe(['agent', 'status'], env)).code).toBe(1);
  });

  it('manager serves the license manager page from inside the executable, with the agent\'s licenses', async () => {
    const home = newHome();
    const env = bareEnv(home);
    const agent = spawn(exe, ['agent', 'run'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(agent);
    const ready = JSON.parse(await new Promise<string>((ok) => createInterface({ input: agent.stdout! }).once('line', ok))) as { socket: string };
    const client = await AgentClient.connect({ socketPath: ready.socket, reconnect: false });
    await client.activate(service.emulator.projectId, await service.code(2));
    client.close();

    const manager = spawn(exe, ['manager', '--no-open'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(manager);
    const { url } = JSON.parse(await new Promise<string>((ok) => createInterface({ input: manager.stdout! }).once('line', ok))) as { url: string };
    const { origin, port, hash } = new URL(url);
    const ask = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: Number(port), method, path, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => {
            text += d;
            if (text.includes('event: state')) res.destroy();
          });
          res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        });
        req.on('error', reject);
        req.end(body);
      });
    const page = await ask('GET', '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('<script src="/app.js" defer></script>');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
    expect((await ask('GET', '/app.js')).body.length).toBeGreaterThan(10_000);
    const session = await ask('POST', '/api/session', { origin, 'content-type': 'application/json' }, JSON.stringify({ token: hash.replace('#token=', '') }));
    expect(session.status).toBe(200);
    expect(session.headers['set-cookie']).toBeUndefined();
    // The page's session travels in a header, never a cookie (cookies go to every port of 127.0.0.1).
    const events = await ask('GET', '/api/events', { authorization: `Bearer ${(JSON.parse(session.body) as { session: string }).session}` });
    const state = JSON.parse(/data: (.*)/.exec(events.body)![1]!) as { namespace: string; program: string; licenses: Array<{ valid: boolean }> };
    expect(state).toMatchObject({ namespace: 'acme-audio', program: 'acme-license', licenses: [{ valid: true }] });
    const exited = new Promise<number | null>((r) => manager.once('exit', r));
    manager.kill('SIGTERM');
    expect(await exited).toBe(130);
    agent.kill('SIGTERM');
  });

  it('doctor derives the machine id a second time by running itself', async () => {
    const home = newHome();
    const doctor = await runExe(['--json', 'doctor'], bareEnv(home));
    const report = JSON.parse(doctor.stdout) as { checks: Array<{ section: string; name: string; level: string; detail: string }> };
    expect(report.checks.find((c) => c.section === 'machine id' && c.name === 'stable')).toMatchObject({ level: 'ok' });
  });
});

describe('the Linux installer (install.sh / uninstall.sh from the tarball)', () => {
  const unpack = (): string => {
    const into = mkdtempSync(join(dir, 'tar-'));
    execFileSync('tar', ['-xzf', join(release, manifest.installers[0]!.file), '-C', into]);
    return join(into, `acme-license-${manifest.version}-linux-x64`);
  };
  // Never spawnSync here: the emulator answers from this process's event loop.
  const sh = (script: string, args: string[], env: NodeJS.ProcessEnv) => runFile('sh', [script, ...args], env);
  const slots = async (code: string): Promise<number> => ((await (await fetch(`${service.emulator.baseUrl}/plugin-activation/status/${code}`)).json()) as { activations: number }).activations;

  it('installs per user, upgrades over a running agent keeping its licenses, refuses a damaged download, uninstalls with release', async () => {
    const home = newHome();
    const env = bareEnv(home);
    const kit = unpack();
    const first = await sh(join(kit, 'install.sh'), [], env);
    expect(first.code, first.stderr).toBe(0);
    const installed = join(home, '.local', 'lib', 'acme-audio', 'acme-license');
    expect(readlinkSync(join(home, '.local', 'bin', 'acme-license'))).toBe(installed);
    expect(JSON.parse(readFileSync(join(home, '.config', 'acme-audio', 'config.json'), 'utf8'))).toEqual({ base_url: service.emulator.baseUrl });
    // By default no resident agent: no unit; plugins and the program start the agent on demand.
    const unit = join(home, '.config', 'systemd', 'user', 'acme-audio-agent.service');
    expect(existsSync(unit)).toBe(false);
    expect(first.stdout).toContain('Its license agent starts when a plugin or acme-license needs it, and stops when idle.');
    // Asked for at login (pnpm package --agent-at-login bakes it in; the script's flag says it too),
    // where no systemd --user answers (none at this XDG_RUNTIME_DIR): nothing is registered, the
    // script says so and exits 0 (agent-at-login.test.ts tests those words and the other cases).
    const atLogin = await sh(join(kit, 'install.sh'), ['--agent-at-login'], env);
    expect(atLogin.code, atLogin.stderr).toBe(0);
    expect(existsSync(unit)).toBe(false);
    expect(atLogin.stdout).toContain('Its license agent will NOT start at login on this computer:');

    // The agent runs (started as the message says), a plugin's license is activated.
    const agent = spawn(installed, ['agent', 'run'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    children.push(agent);
    const ready = JSON.parse(await new Promise<string>((ok) => createInterface({ input: agent.stdout! }).once('line', ok))) as { socket: string };
    const code = await service.code(2);
    const client = await AgentClient.connect({ socketPath: ready.socket, reconnect: false });
    await client.activate(service.emulator.projectId, code);
    client.close();
    const before = statSync(installed).ino;

    // A damaged download changes nothing.
    const broken = unpack();
    writeFileSync(join(broken, 'acme-license'), readFileSync(join(broken, 'acme-license')).subarray(0, 4096));
    const refused = await sh(join(broken, 'install.sh'), [], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/does not run on this computer .* Nothing was changed/);
    expect(statSync(installed).ino).toBe(before);

    // An upgrade over the running agent: a new file in one rename, the licenses kept.
    const again = await sh(join(unpack(), 'install.sh'), [], env);
    expect(again.code, again.stderr).toBe(0);
    expect(statSync(installed).ino).not.toBe(before);
    const status = await runFile(installed, ['--json', 'agent', 'status'], env);
    expect(JSON.parse(status.stdout)).toMatchObject({ licenses: [expect.objectContaining({ project_id: service.emulator.projectId, valid: true })] });

    // Uninstall with release: the slot is given back through the agent, files go, data stays.
    expect(await slots(code)).toBe(1);
    const gone = await sh(join(home, '.local', 'lib', 'acme-audio', 'uninstall-acme-license.sh'), ['--release'], env);
    expect(gone.code, gone.stderr + gone.stdout).toBe(0);
    expect(await slots(code)).toBe(0);
    expect(existsSync(installed)).toBe(false);
    expect(existsSync(join(home, '.local', 'bin', 'acme-license'))).toBe(false);
    expect(existsSync(join(home, '.config', 'systemd', 'user', 'acme-audio-agent.service'))).toBe(false);
    expect(existsSync(join(home, '.config', 'acme-audio', 'config.json'))).toBe(true);
    agent.kill('SIGTERM');
  });

  it('uninstall keeps the license data, so a reinstall finds the license; --purge removes it', async () => {
    const home = newHome();
    const env = bareEnv(home);
    expect((await sh(join(unpack(), 'install.sh'), [], env)).code).toBe(0);
    const installed = join(home, '.local', 'lib', 'acme-audio', 'acme-license');
    const code = await service.code(2);
    const activated = await runFile(installed, ['activate', code, '--project', service.emulator.projectId], env);
    expect(activated.code, activated.stderr).toBe(0);
    expect((await sh(join(home, '.local', 'lib', 'acme-audio', 'uninstall-acme-license.sh'), [], env)).code).toBe(0);
    expect(await slots(code)).toBe(1);
    expect((await sh(join(unpack(), 'install.sh'), [], env)).code).toBe(0);
    const found = await runFile(installed, ['--json', 'agent', 'status'], env);
    expect(JSON.parse(found.stdout)).toMatchObject({ licenses: [expect.objectContaining({ project_id: service.emulator.projectId, valid: true })] });
    const purge = await sh(join(home, '.local', 'lib', 'acme-audio', 'uninstall-acme-license.sh'), ['--purge'], bareEnv(home, { RELEASE: '1' }));
    expect(purge.code, purge.stderr).toBe(0);
    expect(await slots(code)).toBe(0);
    expect(existsSync(join(home, '.config', 'acme-audio'))).toBe(false);
    expect(existsSync(join(home, '.local', 'share', 'acme-audio'))).toBe(false);
  });
});

describe('the Linux installer with hostile homes, other users, full disks and leftovers', () => {
  const unpack = (): string => {
    // Readable by every user: the setpriv cases run the kit as another user.
    const into = mkdtempSync(join('/tmp', 'plk-'));
    homes.push(into);
    chmodSync(into, 0o755);
    execFileSync('tar', ['-xzf', join(release, manifest.installers[0]!.file), '-C', into]);
    return join(into, `acme-license-${manifest.version}-linux-x64`);
  };
  let kit: string;
  beforeAll(() => {
    kit = unpack();
  });
  const sh = (script: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string) => runFile('sh', [script, ...args], env, cwd);
  const lib = (home: string) => join(home, '.local', 'lib', 'acme-audio');
  const root = process.getuid?.() === 0;

  it('--help of both scripts prints their whole comment block, and no line of code', async () => {
    for (const [script, last] of [
      ['install.sh', 'may change anything else.'],
      ['uninstall.sh', 'does the same as the installed one: it acts on the installed program, wherever it is run from.'],
    ] as const) {
      const help = await sh(join(kit, script), ['--help'], bareEnv(newHome()));
      expect(help.code).toBe(0);
      const lines = help.stdout.trimEnd().split('\n');
      expect(lines.at(-1)).toBe(last);
      expect(help.stdout).not.toMatch(/set -eu|^#|@[A-Z_]+@/m);
      expect(lines[0]).toMatch(/^acme-license(:| \d)/);
    }
    expect((await sh(join(kit, 'uninstall.sh'), ['--help'], bareEnv(newHome()))).stdout).toContain('--purge    also remove the license data');
  });

  // A home whose name a word split or a glob would turn into other paths, with the folders such a
  // mistake would hit (relative ones under the script's working folder).
  it.each([
    ['my home', ['my', 'cwd/home']],
    ['u*', ['u-other', 'uu']],
    ['a?b', ['axb']],
    ['x[ab]', ['xa', 'xb']],
    ["it's", []],
    ['say "hi"', ['say', 'cwd/"hi"']],
    ['cost$HOME', ['cost']],
    ['back\\slash', ['backslash']],
    ['new\nline', ['new', 'cwd/line']],
    ['naïve ü', ['naïve', 'cwd/ü']],
    ['-rf *', ['cwd/-rf', 'zz']],
  ])('uninstall --purge under the home %j removes exactly its own folders, and says so truly', async (name, decoys) => {
    const base = mkdtempSync(join('/tmp', 'plh-'));
    homes.push(base);
    const home = join(base, name);
    mkdirSync(join(home, 'run'), { recursive: true, mode: 0o700 });
    mkdirSync(join(base, 'cwd'));
    const env = bareEnv(home);
    const install = await sh(join(kit, 'install.sh'), [], env, join(base, 'cwd'));
    expect(install.code, install.stderr).toBe(0);
    const installed = join(lib(home), 'acme-license');
    const folders = (JSON.parse((await runFile(installed, ['--json', 'config', 'path'], env)).stdout) as { folders: Record<string, string> }).folders;
    const mine = ['config', 'data', 'cache', 'log'].map((k) => folders[k]!);
    for (const f of mine) {
      expect(f.startsWith(home + '/')).toBe(true);
      mkdirSync(f, { recursive: true });
      writeFileSync(join(f, 'license.json'), '{}');
    }
    // Each decoy looks like a home of ours, with the same folders, and must survive.
    const decoyFiles = decoys.flatMap((d) => mine.map((f) => join(base, d, f.slice(home.length + 1), 'keep')));
    for (const f of decoyFiles) {
      mkdirSync(join(f, '..'), { recursive: true });
      writeFileSync(f, 'not yours');
    }
    const purge = await sh(join(lib(home), 'uninstall-acme-license.sh'), ['--purge'], env, join(base, 'cwd'));
    expect(purge.code, purge.stderr).toBe(0);
    expect(purge.stdout).toContain('acme-license is removed, with its license data and settings.');
    for (const f of mine) expect(existsSync(f), f).toBe(false);
    for (const f of decoyFiles) expect(readFileSync(f, 'utf8'), f).toBe('not yours');
    expect(existsSync(installed)).toBe(false);
    expect(existsSync(lib(home))).toBe(false);
    expect(readdirSync(join(home, '.config'))).not.toContain('acme-audio');
  });

  it.skipIf(!root)('as root with the home of another user (sudo keeping HOME): both scripts refuse and create nothing; as that user they work (needs root)', async () => {
    const home = newHome();
    chownSync(home, 65534, 65534);
    chownSync(join(home, 'run'), 65534, 65534);
    const env = bareEnv(home);
    for (const script of [join(kit, 'install.sh'), join(kit, 'uninstall.sh')]) {
      const refused = await sh(script, ['--purge'].slice(script.endsWith('install.sh') && !script.endsWith('uninstall.sh') ? 1 : 0), env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/this runs as user 0, but the home folder .* belongs to user 65534 \(sudo keeps HOME\)\. .*run this as that user, without sudo\. Nothing was changed\./);
      expect(readdirSync(home)).toEqual(['run']);
    }
    const asUser = (script: string, args: string[]) => runFile(...asOtherUser(['sh', script, ...args]), env);
    const install = await asUser(join(kit, 'install.sh'), []);
    expect(install.code, install.stderr).toBe(0);
    expect(statSync(join(lib(home), 'acme-license')).uid).toBe(65534);
    for (const d of ['.local', '.config']) expect(statSync(join(home, d)).uid).toBe(65534);
    const removed = await asUser(join(lib(home), 'uninstall-acme-license.sh'), ['--purge']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(join(home, '.config', 'acme-audio'))).toBe(false);
  });

  it.skipIf(!root)('a full disk during install or upgrade: exit 1 with words, nothing half-written, the previous install unchanged (needs root: tmpfs)', async () => {
    const home = newHome();
    const env = bareEnv(home);
    const where = lib(home);
    mkdirSync(where, { recursive: true });
    const page = 4096;
    const exeBytes = Math.ceil(statSync(join(kit, 'acme-license')).size / page) * page;
    const mount = (options: string) => execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', where]);
    const used = () => {
      const s = statfsSync(where);
      return (s.blocks - s.bfree) * s.bsize;
    };
    // Leaves exactly `free` bytes (whole pages) on the install's disk.
    const leave = (free: number) => execFileSync('mount', ['-o', `remount,size=${used() + free}`, where]);
    const left = () => readdirSync(where).sort();
    mount(`size=${exeBytes * 3},mode=0755`);
    try {
      // A first install: room for half the program, then for the program but not uninstall.sh.
      for (const free of [exeBytes / 2, exeBytes + page]) {
        leave(free);
        const r = await sh(join(kit, 'install.sh'), [], env);
        expect(r.code, `${free}: ${r.stdout}`).toBe(1);
        expect(r.stderr).toMatch(/could not copy the program into .* \(is the disk full\?\)\. The previous install is unchanged\./);
        expect(left()).toEqual([]);
        expect(existsSync(join(home, '.local', 'bin', 'acme-license'))).toBe(false);
      }
      // Room for the program, its uninstaller and the product's record of plugins.
      leave(exeBytes + 8 * page);
      expect((await sh(join(kit, 'install.sh'), [], env)).code).toBe(0);
      const before = statSync(join(where, 'acme-license')).ino;
      // An upgrade on the full disk: the same, and the installed files as they were.
      for (const free of [0, exeBytes / 2, exeBytes + page]) {
        leave(free);
        const r = await sh(join(kit, 'install.sh'), [], env);
        expect(r.code, `${free}: ${r.stdout}`).toBe(1);
        expect(r.stderr).toMatch(/The previous install is unchanged\./);
        expect(left()).toEqual(['acme-license', 'installed-plugins', 'uninstall-acme-license.sh']);
        expect(statSync(join(where, 'acme-license')).ino).toBe(before);
        expect(readFileSync(join(where, 'uninstall-acme-license.sh'))).toEqual(readFileSync(join(kit, 'uninstall.sh')));
        expect((await runFile(join(where, 'acme-license'), ['--version'], env)).code).toBe(0);
      }
    } finally {
      execFileSync('umount', ['-l', where]);
    }
  });

  it('an interrupted install leaves copies that a new run and uninstall remove; the download\'s uninstall.sh uninstalls', async () => {
    const home = newHome();
    const env = bareEnv(home);
    const where = lib(home);
    // A first install killed while copying: only its copies exist.
    mkdirSync(where, { recursive: true });
    writeFileSync(join(where, '.acme-license.new'), readFileSync(join(kit, 'acme-license')).subarray(0, 1 << 20));
    const cleared = await sh(join(kit, 'uninstall.sh'), [], env);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toContain('leftovers of the unfinished install are removed');
    expect(existsSync(where)).toBe(false);
    // An upgrade killed while copying: the next run clears its copies.
    expect((await sh(join(kit, 'install.sh'), [], env)).code).toBe(0);
    const leftovers = () => {
      copyFileSync(join(kit, 'uninstall.sh'), join(where, '.uninstall-acme-license.sh.new'));
      writeFileSync(join(where, '.acme-license.new'), readFileSync(join(kit, 'acme-license')).subarray(0, 1 << 20));
    };
    leftovers();
    expect((await sh(join(kit, 'install.sh'), [], env)).code).toBe(0);
    expect(readdirSync(where).sort()).toEqual(['acme-license', 'installed-plugins', 'uninstall-acme-license.sh']);
    // Uninstall, run from the unpacked download (not the installed copy), removes them too.
    leftovers();
    const gone = await sh(join(kit, 'uninstall.sh'), [], env);
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stdout).toContain('acme-license is removed. Its license data is kept');
    expect(existsSync(where)).toBe(false);
    expect(existsSync(join(home, '.local', 'bin', 'acme-license'))).toBe(false);
  });

  it('uninstall and upgrade stop an agent started by hand (no service manager); another namespace\'s agent keeps running', async () => {
    const home = newHome();
    const env = bareEnv(home);
    expect((await sh(join(kit, 'install.sh'), [], env)).code).toBe(0);
    const installed = join(lib(home), 'acme-license');
    const start = async (args: string[]) => {
      const agent = spawn(installed, ['agent', 'run', ...args], { env, stdio: ['ignore', 'pipe', 'ignore'] });
      children.push(agent);
      const exited = new Promise<number | null>((r) => agent.once('exit', r));
      const ready = JSON.parse(await new Promise<string>((ok) => createInterface({ input: agent.stdout! }).once('line', ok))) as { socket: string };
      return { agent, exited, socket: ready.socket };
    };
    const answers = async (socketPath: string) => {
      try {
        (await AgentClient.connect({ socketPath, reconnect: false, connectTimeoutMs: 1000 })).close();
        return true;
      } catch {
        return false;
      }
    };
    const other = await start(['--app', 'other-vendor']);
    const first = await start([]);
    // An upgrade: the old program's agent is stopped (it would answer from a replaced file).
    const upgrade = await sh(join(unpack(), 'install.sh'), [], env);
    expect(upgrade.code, upgrade.stderr).toBe(0);
    expect(await first.exited).toBe(0);
    const second = await start([]);
    const removed = await sh(join(lib(home), 'uninstall-acme-license.sh'), [], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await second.exited).toBe(0);
    expect(await answers(second.socket)).toBe(false);
    expect(existsSync(second.socket)).toBe(false);
    expect(await answers(other.socket)).toBe(true);
    other.agent.kill('SIGTERM');
    expect(await other.exited).toBe(0);
  });
});
