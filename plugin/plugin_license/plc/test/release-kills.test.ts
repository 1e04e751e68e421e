// The real CLI killed with SIGKILL at every durable step of a release (its test hook
// PLUGIN_LICENSE_TEST_KILL_AT), the ticket then judged by plc, as a plugin would without the
// agent, and by the library: once the service may have freed the slot (or an offline release
// proof exists), no ticket grants the license; the next command settles state, ticket and slot.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { judgeTicket, ticketPath } from '@plugin-license/licensing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCode } from './helpers/agent.js';
import { compile, C_FLAGS, hasCc, PLC_C, ROOT } from './helpers/toolchain.js';

const CLI = join(ROOT, 'packages', 'cli', 'bin', 'plugin-license.js');
const APP = 'kill-steps';
const linux = process.platform === 'linux';

/** A deactivation's durable steps (the library's `WriteStep`s), each killed at in turn. */
const DEACTIVATE = ['intent-recorded#1', 'ticket-written#1', 'release-answered#1', 'ticket-written#2', 'state-removed#1', 'intent-cleared#1'];
const OFFLINE_RELEASE = ['intent-recorded#1', 'ticket-written#1', 'release-proof-written#1', 'ticket-written#2', 'state-removed#1', 'intent-cleared#1'];

function rawMachineId(): string {
  for (const f of ['/var/lib/dbus/machine-id', '/etc/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').split('\n')[0]!;
  }
  throw new Error('no machine id on this computer');
}
const hasMachineId = ['/var/lib/dbus/machine-id', '/etc/machine-id'].some((f) => existsSync(f));

describe.skipIf(!hasCc || !linux || !hasMachineId)('the CLI killed at every step of a release, the ticket read by plc', () => {
  let emulator: Emulator;
  let dir: string;
  let plcTicket: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'release-kills-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('cc', [...C_FLAGS, 'tools/plc-ticket.c', join(dir, 'plc.o'), '-o', (plcTicket = join(dir, 'plc-ticket'))]);
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    PATH: process.env.PATH,
    HOME: home,
    PLUGIN_LICENSE_HOME: home,
    PLUGIN_LICENSE_APP: APP,
    PLUGIN_LICENSE_SOCKET: join(home, 'agent.sock'),
    PLUGIN_LICENSE_BASE_URL: emulator.baseUrl,
    PLUGIN_LICENSE_NO_AUTOSTART: '1',
    ...extra,
  });
  const cli = (args: string[], e: NodeJS.ProcessEnv): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> =>
    new Promise((done, fail) => {
      const child = spawn(process.execPath, [CLI, ...args], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('error', fail);
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        done({ code, signal, stdout, stderr });
      });
    });
  /** plc's verdict, as a plugin reads the ticket (this machine's real id, the clock now). */
  const plc = (home: string): string => {
    const r = spawnSync(plcTicket, ['--app', APP, emulator.projectId], { encoding: 'utf8', env: { PATH: process.env.PATH, PLUGIN_LICENSE_HOME: home } });
    return (JSON.parse(r.stdout) as { verdict: string }).verdict;
  };
  const library = (home: string): string =>
    judgeTicket(ticketPath({ home, namespace: APP }, emulator.projectId), { app: APP, projectId: emulator.projectId, now: Math.floor(Date.now() / 1000), rawMachineId: rawMachineId() }).verdict;
  const slots = async (code: string): Promise<number> => ((await (await fetch(`${emulator.baseUrl}/plugin-activation/status/${code}`)).json()) as { activations: number }).activations;
  /**
   * A lock the killed command held is taken over by the next one once stale (10 s; tested with the
   * library in processes.test.ts); removed here so each kill costs no wait.
   */
  const dropDeadLock = (home: string): void => rmSync(join(home, 'data', 'licenses', `${emulator.projectId}.json.lock`), { recursive: true, force: true });

  async function activated(): Promise<{ home: string; code: string }> {
    const home = mkdtempSync(join(dir, 'home-'));
    const code = await generateCode(emulator);
    const run = await cli(['activate', code, '--project', emulator.projectId], env(home));
    expect(run.code, run.stderr).toBe(0);
    expect(plc(home)).toBe('valid');
    return { home, code };
  }

  it.each(DEACTIVATE)('deactivate killed after %s', async (step) => {
    const { home, code } = await activated();
    const killed = await cli(['deactivate', '--project', emulator.projectId], env(home, { PLUGIN_LICENSE_TEST_KILL_AT: step }));
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    dropDeadLock(home);
    const released = (await slots(code)) === 0;
    expect(released).toBe(DEACTIVATE.indexOf(step) >= DEACTIVATE.indexOf('release-answered#1'));
    const verdict = plc(home);
    expect(library(home)).toBe(verdict);
    // Not licensed from the step that wrote it on; above all, never valid for a freed slot.
    if (released || DEACTIVATE.indexOf(step) >= 1) expect(verdict).toBe('not_licensed');

    // The next command that reaches the service settles what was left (validate settles first).
    await cli(['validate', '--project', emulator.projectId], env(home));
    const held = (await slots(code)) === 1;
    expect(held).toBe(!released);
    expect(plc(home)).toBe(held ? 'valid' : 'not_licensed');
    const intents = join(home, 'data', 'licenses', 'intents');
    expect(existsSync(intents) ? readdirSync(intents) : []).toEqual([]);
  }, 60_000);

  it.each(OFFLINE_RELEASE)('offline deactivate killed after %s', async (step) => {
    const { home } = await activated();
    const proof = join(home, 'release.json');
    const killed = await cli(['offline', 'deactivate', '--project', emulator.projectId, '--out', proof], env(home, { PLUGIN_LICENSE_TEST_KILL_AT: step }));
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    dropDeadLock(home);
    const kept = join(home, 'data', 'offline', `${emulator.projectId}.release.json`);
    expect(existsSync(kept)).toBe(OFFLINE_RELEASE.indexOf(step) >= OFFLINE_RELEASE.indexOf('release-proof-written#1'));
    if (OFFLINE_RELEASE.indexOf(step) >= 1) expect(plc(home)).toBe('not_licensed');
    expect(library(home)).toBe(plc(home));
    // Run again (into a new file: the killed run's --out is never overwritten), it finishes: the
    // proof, and a ticket that says not_activated.
    const again = await cli(['offline', 'deactivate', '--project', emulator.projectId, '--out', `${proof}.again`], env(home));
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(readFileSync(`${proof}.again`, 'utf8'))).toMatchObject({ type: 'offline_release' });
    expect(plc(home)).toBe('not_licensed');
  }, 60_000);
});
