import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '@plugin-license/agent';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { isLicenseError, License, type LicenseOptions } from '@plugin-license/licensing';
import { generateCode, rejection, startConnectProxy, type TestProxy } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The https:// path for real: the emulator serves HTTPS with a certificate made at start, and
// the library and the agent reach it with the CA given by option or by NODE_EXTRA_CA_CERTS,
// directly and through a real CONNECT proxy on loopback.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const AGENT_CLI = join(ROOT, 'agent', 'bin', 'plugin-license-agent.js');
const LICENSING = join(ROOT, 'packages', 'licensing', 'dist', 'index.js');

let emu: Emulator;
let proxy: TestProxy;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  emu = await startEmulator({ tls: true, rateLimits: { activation: 10_000, general: 10_000 } });
  proxy = await startConnectProxy();
});
afterAll(async () => {
  await proxy?.close();
  await emu?.close();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  proxy.tunnels.length = 0;
});

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pl-tls-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function license(options: Partial<LicenseOptions>): License {
  const l = new License({ projectId: emu.projectId, baseUrl: emu.baseUrl, home: home(), rawMachineIdProvider: () => '0123456789abcdef0123456789abcdef', proxy: false, ...options });
  cleanups.push(() => l.close());
  return l;
}

const code = (): Promise<string> => generateCode(emu.baseUrl, emu.token, emu.projectId, 5, emu.ca);

/** Runs a Node script with the given environment; resolves with its stdout. */
function node(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (c) => done({ code: c, stdout, stderr }));
  });
}

describe('the library over https', () => {
  it('serves https with the certificate in its start-up identity', () => {
    expect(emu.baseUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/functions\/v1$/);
    expect(emu.ca).toContain('BEGIN CERTIFICATE');
  });

  it('activates with the CA passed by option', async () => {
    expect(await license({ ca: emu.ca }).activate(await code())).toMatchObject({ valid: true, source: 'online' });
    expect(proxy.tunnels).toEqual([]);
  });

  it('a certificate it does not trust is a clear error naming the host, not "unreachable"', async () => {
    const e = await rejection(license({}).activate(await code()), isLicenseError);
    expect(e.code).toBe('unavailable');
    expect(e.message).toMatch(/the TLS certificate of 127\.0\.0\.1 is not trusted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/);
    expect(e.message).toMatch(/pass its PEM as the ca option or set NODE_EXTRA_CA_CERTS/);
    expect(e.message).not.toMatch(/could not be reached|unreachable/);
  });

  it('goes through a proxy given by option (a CONNECT tunnel to the service)', async () => {
    expect(await license({ ca: emu.ca, proxy: proxy.url }).activate(await code())).toMatchObject({ valid: true, source: 'online' });
    expect(proxy.tunnels).toEqual([new URL(emu.baseUrl).host]);
  });

  it('honours HTTPS_PROXY and NODE_EXTRA_CA_CERTS from the environment, and NO_PROXY', async () => {
    const script = `
      import { License } from ${JSON.stringify(LICENSING)};
      const l = new License({ projectId: ${JSON.stringify(emu.projectId)}, baseUrl: ${JSON.stringify(emu.baseUrl)}, home: process.env.H, rawMachineIdProvider: () => '0123456789abcdef0123456789abcdef' });
      const s = await l.activate(process.env.CODE);
      console.log(JSON.stringify({ valid: s.valid, source: s.source }));
      await l.close();`;
    const env = { H: home(), NODE_EXTRA_CA_CERTS: emu.caFile as string, HTTPS_PROXY: proxy.url };
    const through = await node(script, { ...env, CODE: await code() });
    expect(through.stderr).toBe('');
    expect(JSON.parse(through.stdout)).toEqual({ valid: true, source: 'online' });
    expect(proxy.tunnels).toHaveLength(1);
    const bypassed = await node(script, { ...env, H: home(), CODE: await code(), NO_PROXY: '127.0.0.1' });
    expect(JSON.parse(bypassed.stdout)).toEqual({ valid: true, source: 'online' });
    expect(proxy.tunnels).toHaveLength(1);
  });
});

describe('the agent over https', () => {
  async function runAgent(dir: string, env: Record<string, string>): Promise<string> {
    const socket = join(dir, 'agent.sock');
    const child = spawn(process.execPath, [AGENT_CLI, 'run', '--socket', socket], {
      env: { PATH: process.env.PATH, HOME: dir, PLUGIN_LICENSE_HOME: dir, PLUGIN_LICENSE_BASE_URL: emu.baseUrl, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const exited = new Promise((r) => child.once('exit', r));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    await new Promise<string>((ok, fail) => {
      createInterface({ input: child.stdout }).once('line', ok);
      child.once('exit', (c) => fail(new Error(`agent exited (${c}): ${stderr}`)));
    });
    return socket;
  }

  it('with NODE_EXTRA_CA_CERTS, through the proxy named in config.json', async () => {
    const dir = home();
    mkdirSync(join(dir, 'config'), { recursive: true });
    writeFileSync(join(dir, 'config', 'config.json'), JSON.stringify({ proxy: proxy.url }));
    const socket = await runAgent(dir, { NODE_EXTRA_CA_CERTS: emu.caFile as string });
    const client = await AgentClient.connect({ socketPath: socket });
    cleanups.push(() => client.close());
    expect(await client.activate(emu.projectId, await code())).toMatchObject({ valid: true, source: 'online' });
    expect(proxy.tunnels.length).toBeGreaterThanOrEqual(1);
  });

  it('without the CA: the activation fails with the certificate named, the agent keeps running', async () => {
    const dir = home();
    const socket = await runAgent(dir, {});
    const client = await AgentClient.connect({ socketPath: socket });
    cleanups.push(() => client.close());
    await expect(client.activate(emu.projectId, await code())).rejects.toMatchObject({
      rpcCode: -32002,
      message: expect.stringMatching(/the TLS certificate of 127\.0\.0\.1 is not trusted/),
    });
    expect(await client.check(emu.projectId)).toMatchObject({ valid: false, reason: 'not_activated' });
  });
});
