import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolveSocketPath, startAgent } from '@plugin-license/agent';
import { answeringPeer, otherUserUnavailable, OTHER_UID, squatSocket, type Squatter } from '@plugin-license/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentLink } from '../src/manager/agent-link.js';
import { cli, envFor, jsonOf, useCliService, type Run } from './helpers.js';

// Only the user's own agent (docs/architecture.md): the built CLI and the manager's agent link send
// nothing to a socket another user holds and say who holds it, once; an answer that cannot be
// read is one line in words.

const { service, home } = useCliService();
const unavailable = otherUserUnavailable();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The default socket of a fresh namespace, as a customer without XDG_RUNTIME_DIR has it: /tmp/APP-UID/agent.sock. */
function defaultSocket(prefix: string): { namespace: string; socketPath: string } {
  const namespace = `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const socketPath = resolveSocketPath({ namespace, platform: 'linux', env: {}, uid: process.getuid!() });
  cleanups.push(() => void spawnSync('rm', ['-rf', join(socketPath, '..')]));
  return { namespace, socketPath };
}

/** stderr said `text` exactly once, on one line, and nothing else. */
function saidOnce(run: Run, text: string): void {
  expect(run.stderr.split(text).length - 1, run.stderr).toBe(1);
  expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
}

describe.skipIf(unavailable !== undefined)('another user (uid 65534, by setpriv) holds the socket path', () => {
  async function squatted(folder: string, socketPath: string): Promise<Squatter> {
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o755);
    chownSync(folder, OTHER_UID, OTHER_UID);
    const squatter = await squatSocket(socketPath);
    cleanups.push(() => squatter.stop());
    return squatter;
  }

  it('activate, agent status|check|list and doctor send nothing, say who holds it once, exit 2 (doctor 1); the code reaches nobody', async () => {
    const { namespace, socketPath } = defaultSocket('plcsq');
    const folder = join(socketPath, '..');
    const squatter = await squatted(folder, socketPath);
    const env = envFor(service, home(), { PLUGIN_LICENSE_SOCKET: undefined, PLUGIN_LICENSE_APP: namespace });
    const says = `the agent's socket folder ${folder} belongs to nobody (uid 65534, mode 0755), not to you (root (uid 0)); another user may have created it to receive what you send the agent, so nothing was sent to it`;
    const code = await service.code(2);
    const projectId = service.emulator.projectId;

    const act = await cli(['activate', code, '--project', projectId], env);
    expect(act.code).toBe(2);
    expect(act.stdout).toBe('');
    saidOnce(act, says);
    expect(act.stderr).not.toContain(code);

    const json = await cli(['--json', 'activate', code, '--project', projectId], env);
    expect(json.code).toBe(2);
    expect(jsonOf(json)).toEqual({
      error: { code: 'socket_dir_unsafe', message: expect.stringContaining(says), details: { path: folder, holder: { path: folder, uid: OTHER_UID, user: 'nobody', mode: '0755' } } },
    });

    for (const args of [['agent', 'status'], ['agent', 'check', projectId], ['agent', 'list'], ['deactivate', '--project', projectId]]) {
      const r = await cli(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      saidOnce(r, says);
    }

    const doctor = await cli(['doctor'], env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout.split(says).length - 1, doctor.stdout).toBe(1);

    expect(await squatter.received()).toEqual({ connections: 0, bytes: 0, text: '' });
    // Nor did the CLI fall back to asking the service itself: the code is as it was.
    expect((await service.admin.activation.status(code)).activations).toBe(0);
  });

  it('a PLUGIN_LICENSE_SOCKET the user set goes through the same check', async () => {
    const folder = join(home(), 'theirs');
    const socketPath = join(folder, 'agent.sock');
    chmodSync(home(), 0o755);
    const squatter = await squatted(folder, socketPath);
    const env = envFor(service, home(), { PLUGIN_LICENSE_SOCKET: socketPath });
    const r = await cli(['agent', 'check', service.emulator.projectId], env);
    expect(r.code).toBe(2);
    saidOnce(r, `the agent's socket folder ${folder} belongs to nobody (uid 65534, mode 0755)`);
    expect(await squatter.received()).toEqual({ connections: 0, bytes: 0, text: '' });
  });

  it("the license manager's agent link shows who holds it, refuses actions with those words, and sends nothing", async () => {
    const { namespace, socketPath } = defaultSocket('plcmg');
    const folder = join(socketPath, '..');
    const squatter = await squatted(folder, socketPath);
    let changes = 0;
    const link = new AgentLink(socketPath, namespace, () => changes++);
    cleanups.push(() => link.close());
    await link.connect();
    expect(link.view).toEqual({ running: false, problem: expect.stringContaining(`the agent's socket folder ${folder} belongs to nobody (uid 65534, mode 0755)`) });
    expect(changes).toBe(1);
    await expect(link.client()).rejects.toMatchObject({ code: 'socket_dir_unsafe', message: expect.stringContaining('so nothing was sent to it') });
    expect(await squatter.received()).toEqual({ connections: 0, bytes: 0, text: '' });
  });
});

if (unavailable !== undefined) {
  describe('another user holds the socket path', () => {
    it.skip(`skipped: ${unavailable}`, () => undefined);
  });
}

describe('our own agent on the default path', () => {
  it('activate goes through it', async () => {
    const { namespace, socketPath } = defaultSocket('plcok');
    const h = home();
    const agent = await startAgent({ baseUrl: service.emulator.baseUrl, home: h, namespace, socketPath, logger: false });
    cleanups.push(() => agent.close());
    const env = envFor(service, h, { PLUGIN_LICENSE_SOCKET: undefined, PLUGIN_LICENSE_APP: namespace });
    const act = await cli(['activate', await service.code(2), '--project', service.emulator.projectId], env);
    expect(act.code, act.stderr).toBe(0);
    expect(act.stderr).toContain('through the running agent');
  });
});

describe("an answer the CLI cannot read is one line: the agent's answer could not be read", () => {
  /** A peer on the CLI's socket (a private folder of ours) answering every request with `answer`. */
  async function peer(socketPath: string, answer: (id: unknown, method: string) => string): Promise<void> {
    const server = await answeringPeer(socketPath, answer);
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  }

  const wrongShape = (id: unknown, method: string): string =>
    JSON.stringify({ jsonrpc: '2.0', id, result: method === 'hello' ? { protocol: 'one', agent: 1 } : method === 'list' ? { licenses: [{ valid: 'yes' }] } : { valid: 'yes', reason: 42, issues: ['not', 'a', 'state'] } });
  const table: Array<{ name: string; answer: (id: unknown, method: string) => string; says: string; statusSays: string }> = [
    { name: 'garbage', answer: () => 'SSH-2.0-OpenSSH_9.6 garbage', says: 'it sent a line that is not JSON', statusSays: 'it sent a line that is not JSON' },
    { name: 'valid JSON of the wrong shape', answer: wrongShape, says: "its answer to 'check' is not of the protocol's shape (project_id: ", statusSays: "its answer to 'hello' is not of the protocol's shape (protocol: " },
  ];

  for (const row of table) {
    it(`${row.name}: agent check, activate, agent status, --json`, async () => {
      const h = home();
      const env = envFor(service, h);
      await peer(env.PLUGIN_LICENSE_SOCKET as string, row.answer);
      const projectId = service.emulator.projectId;
      const code = await service.code(2);

      const check = await cli(['agent', 'check', projectId], env);
      expect(check.code).toBe(1);
      saidOnce(check, `the agent's answer could not be read: ${row.says}`);
      expect(check.stderr).not.toMatch(/ZodError|"expected"|"path"|invalid_type|unexpected failure/);

      const act = await cli(['activate', code, '--project', projectId], env);
      expect(act.code).toBe(1);
      saidOnce(act, `the agent's answer could not be read: ${row.says.replace("'check'", "'activate'")}`);
      expect(act.stderr).not.toContain(code);

      const status = await cli(['agent', 'status'], env);
      expect(status.code).toBe(1);
      saidOnce(status, `the agent's answer could not be read: ${row.statusSays}`);

      const json = await cli(['--json', 'agent', 'check', projectId], env);
      expect(json.code).toBe(1);
      expect(jsonOf(json)).toEqual({ error: { code: 'bad_answer', message: expect.stringContaining("the agent's answer could not be read") } });
    });
  }
});
