// plc::Monitor with the ticket first and the agent on demand, against real parts: the CLI's agent
// as a process (`plugin-license agent run --app APP`), the emulator over HTTP, tickets written by
// the library, and monitor-probe (compiled with c++) as the host.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { encodeTicket, ticketKeyOf, ticketPath, type TicketFields } from '@plugin-license/licensing';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateCode, rpc } from './helpers/agent.js';
import { run, spawnLines, WAIT, type LineProcess } from './helpers/run.js';
import { C_FLAGS, compile, CXX_FLAGS, hasCc, hasCxx, PLC_C, ROOT } from './helpers/toolchain.js';

const CLI = join(ROOT, 'packages', 'cli', 'bin', 'plugin-license.js');
const linux = process.platform === 'linux';

type Line = Record<string, unknown>;

/** This machine's raw id as the library reads it (Linux). */
function rawMachineId(): string {
  for (const f of ['/var/lib/dbus/machine-id', '/etc/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').split('\n')[0]!;
  }
  throw new Error('no machine id on this computer');
}

/** Pids of agents of namespace `app` (their command line holds `agent run --app APP`). */
function agentPids(app: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('run');
      if (at > 0 && argv[at - 1] === 'agent' && argv[at + 1] === '--app' && argv[at + 2] === app) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The first line printed from index `from` on that matches, parsed. */
function lineAfter(p: LineProcess, from: number, match: (l: Line) => boolean, what: string): Promise<Line> {
  return vi.waitFor(() => {
    const line = p.lines.slice(from).map((l) => JSON.parse(l) as Line).find(match);
    if (line === undefined) throw new Error(`no line yet: ${what}`);
    return line;
  }, WAIT);
}

/** The agents of namespace `app` once there is exactly one. */
function oneAgent(app: string): Promise<number[]> {
  return vi.waitFor(() => {
    const pids = agentPids(app);
    expect(pids).toHaveLength(1);
    return pids;
  }, WAIT);
}

describe.skipIf(!hasCc || !hasCxx || !linux)('plc::Monitor: the ticket first, the agent on demand', () => {
  let dir: string;
  let probe: string;
  /** The same host built with an hour between its agent starts (PLC_AGENT_START_INTERVAL_S), for the case of a second kill "within the interval". */
  let patientProbe: string;
  let emulator: Emulator;
  let n = 0;
  const apps: string[] = [];
  const children: LineProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'plc-monitor-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('c++', [...CXX_FLAGS, '-pthread', 'tools/monitor-probe.cpp', join(dir, 'plc.o'), '-o', join(dir, 'monitor-probe')]);
    probe = join(dir, 'monitor-probe');
    compile('c++', [...CXX_FLAGS, '-DPLC_AGENT_START_INTERVAL_S=3600', '-pthread', 'tools/monitor-probe.cpp', join(dir, 'plc.o'), '-o', join(dir, 'monitor-probe-patient')]);
    patientProbe = join(dir, 'monitor-probe-patient');
    emulator = await startEmulator();
  });
  afterAll(async () => {
    for (const c of children) await c.stop('SIGKILL').catch(() => undefined);
    for (const app of apps) for (const pid of agentPids(app)) process.kill(pid, 'SIGKILL');
    await emulator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh namespace with its own home, socket folder and an executable that runs the CLI (and logs each start). */
  function setting() {
    const app = `mon-${process.pid}-${++n}`;
    apps.push(app);
    const root = mkdtempSync('/tmp/plc-m-');
    const home = join(root, 'home');
    const starts = join(root, 'starts.log');
    const exe = join(root, 'plugin license');
    writeFileSync(exe, `#!/bin/sh\necho start >> '${starts}'\nexec '${process.execPath}' '${CLI}' "$@"\n`);
    chmodSync(exe, 0o755);
    const env = {
      PLUGIN_LICENSE_APP: app,
      PLUGIN_LICENSE_HOME: home,
      PLUGIN_LICENSE_SOCKET: join(root, 'agent.sock'),
      PLUGIN_LICENSE_BASE_URL: emulator.baseUrl,
      PLUGIN_LICENSE_EXECUTABLE: '',
    };
    return {
      app,
      home,
      env,
      exe,
      ticket: ticketPath({ namespace: app, home }, emulator.projectId),
      starts: () => (existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean).length : 0),
    };
  }
  type Setting = ReturnType<typeof setting>;

  async function startCliAgent(s: Setting): Promise<LineProcess> {
    const p = spawnLines(process.execPath, [CLI, 'agent', 'run', '--app', s.app], s.env);
    children.push(p);
    await p.waitFor(/"ready"\s*:\s*true/, 'the ready line');
    return p;
  }

  /** A real activation through the agent (which writes the ticket), then the agent stopped. */
  async function activated(s: Setting): Promise<void> {
    const agent = await startCliAgent(s);
    const code = await generateCode(emulator);
    expect((await rpc(s.env.PLUGIN_LICENSE_SOCKET, 'activate', { project_id: emulator.projectId, code })).error).toBeUndefined();
    expect(await agent.stop('SIGTERM')).toBe(0);
    expect(existsSync(s.ticket)).toBe(true);
  }

  async function load(s: Setting, extra: string[] = ['--no-start'], env: NodeJS.ProcessEnv = {}): Promise<Line> {
    const r = await run(probe, ['load', emulator.projectId, '50', ...extra], { ...s.env, ...env });
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout.split('\n')[0]!) as Line;
  }

  it('with the agent stopped, 50 instances are licensed at construction by the ticket the library wrote', async () => {
    const s = setting();
    await activated(s);
    const line = await load(s);
    expect(line).toMatchObject({ event: 'load', licensed_first_read: 50, unlicensed_first_read: 0, state: 'valid', origin: 'ticket', settled: true, connections: 1 });
    // The first constructor read and judged the ticket; every later one shares its answer.
    expect(Math.max(...(line.load_ns as number[])) / 1e6).toBeLessThan(200);
  });

  it('each bad ticket is a known "not licensed" at construction, never a licensed read, and no hang', async () => {
    const s = setting();
    await activated(s);
    const good = readFileSync(s.ticket, 'utf8');
    const [line1] = good.split('\n');
    const fields = JSON.parse(line1!) as TicketFields;
    const raw = rawMachineId();
    const key = ticketKeyOf(raw, s.app);
    const now = Math.floor(Date.now() / 1000);
    const otherProject = '00000000-0000-4000-8000-000000000001';
    const cases: [string, () => void, string][] = [
      ['a byte changed', () => writeFileSync(s.ticket, good.replace(/"issued_at":(\d+)/, (_, d: string) => `"issued_at":${Number(d) + 1}`)), 'cache_invalid'],
      ['a byte changed in the MAC', () => writeFileSync(s.ticket, good.slice(0, -2) + (good.at(-2) === '0' ? '1' : '0') + '\n'), 'cache_invalid'],
      ["another machine's key", () => writeFileSync(s.ticket, encodeTicket(ticketKeyOf('0123456789abcdef0123456789abcdef', s.app), fields)), 'cache_invalid'],
      ["another app's ticket", () => writeFileSync(s.ticket, encodeTicket(ticketKeyOf(raw, 'other-vendor'), { ...fields, app: 'other-vendor' })), 'cache_invalid'],
      ["another project's ticket", () => writeFileSync(s.ticket, encodeTicket(key, { ...fields, project_id: otherProject })), 'cache_invalid'],
      ['revoked', () => writeFileSync(s.ticket, encodeTicket(key, { ...fields, valid: false, reason: 'code_revoked', valid_until: fields.issued_at })), 'code_revoked'],
      ['expired', () => writeFileSync(s.ticket, encodeTicket(key, { ...fields, issued_at: now - 86400, valid_until: now - 60 })), 'grace_expired'],
      ['the clock 2 h before issued_at', () => writeFileSync(s.ticket, encodeTicket(key, { ...fields, issued_at: now + 7200, valid_until: now + 86400 })), 'clock_tampered'],
      ['a FIFO', () => execFileSync('mkfifo', [s.ticket]), 'cache_invalid'],
      ['a folder', () => mkdirSync(s.ticket), 'cache_invalid'],
      ['a link to /dev/zero', () => symlinkSync('/dev/zero', s.ticket), 'cache_invalid'],
      ['a 10 MB file', () => writeFileSync(s.ticket, Buffer.alloc(10 * 1024 * 1024, 0x41)), 'cache_invalid'],
    ];
    for (const [what, make, reason] of cases) {
      rmSync(s.ticket, { recursive: true, force: true });
      make();
      const line = await load(s);
      expect({ what, ...line, load_ns: undefined }).toMatchObject({ what, licensed_first_read: 0, state: 'invalid', origin: 'ticket', reason, settled: true });
      expect(Math.max(...(line.load_ns as number[])) / 1e6, what).toBeLessThan(200);
      // Followed a while with no agent: every read silent (the ticket judged again at each retry).
      const r = await run(probe, ['follow', emulator.projectId, '3', '400', '--no-start', '--policy', 'keep'], s.env);
      const done = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Line;
      expect({ what, ...done }).toMatchObject({ what, event: 'done', unlicensed: done.samples, disagreements: 0 });
    }
  });

  it('the agent SIGKILLed under a licensed host: no unlicensed read; the host brings one back, then a second kill within its start interval stays with the ticket', async () => {
    const s = setting();
    await activated(s);
    const first = await startCliAgent(s);
    // Built with an hour between starts (30 s by default): the second kill always falls within it.
    const host = spawnLines(patientProbe, ['follow', emulator.projectId, '50', '120000'], { ...s.env, PLUGIN_LICENSE_EXECUTABLE: s.exe });
    children.push(host);
    // Licensed from the first read, then by the agent. The first read is the ticket's unless the
    // host's connection to the running agent answered before the host's first sample (a loaded
    // machine may pause the host there): either way licensed; the ticket alone is tested above.
    await host.waitFor(/"origin":"agent".*"starts":0/, 'the running agent');
    expect(JSON.parse(host.lines[0]!)).toMatchObject({ state: 'valid', licensed: true, origin: expect.stringMatching(/^(ticket|agent)$/) });

    let from = host.lines.length;
    first.child.kill('SIGKILL');
    await lineAfter(host, from, (l) => l.origin === 'ticket' && l.state === 'valid', 'the ticket governing');
    await lineAfter(host, from, (l) => l.origin === 'agent' && l.starts === 1, 'the agent the host started');
    expect(s.starts()).toBe(1);
    const [second] = await oneAgent(s.app);

    from = host.lines.length;
    const heldBefore = JSON.parse(host.lines.at(-1)!).held_back as number;
    process.kill(second!, 'SIGKILL');
    // Within the start interval of the host's start: held back, the ticket governs, nothing started.
    const held = await lineAfter(host, from, (l) => l.origin === 'ticket' && (l.held_back as number) > heldBefore, 'a start held back');
    expect(held).toMatchObject({ state: 'valid', licensed: true, last_status: 4, last_origin: 'ticket' });
    expect(held.grace_until_s as number).toBeGreaterThan(Date.now() / 1000);
    expect(s.starts()).toBe(1);
    expect(agentPids(s.app)).toEqual([]);

    expect(await host.stop('SIGTERM')).toBe(0);
    const done = JSON.parse(host.lines.at(-1)!) as Line;
    expect(done).toMatchObject({ event: 'done', unlicensed: 0, unlicensed_after_licensed: 0, disagreements: 0 });
    expect(done.samples as number).toBeGreaterThan(100);
  });

  it('the agent a host started exits idle_exit_minutes after the last host left, leaving nothing to repair; the next load starts it again', async () => {
    const s = setting();
    await activated(s);
    // A tiny idle time (0.6 s), from the agent's config.json as a vendor would set it.
    mkdirSync(join(s.home, 'config'), { recursive: true });
    writeFileSync(join(s.home, 'config', 'config.json'), JSON.stringify({ idle_exit_minutes: 0.01 }));
    const socket = s.env.PLUGIN_LICENSE_SOCKET;
    const follow = () => {
      const h = spawnLines(probe, ['follow', emulator.projectId, '5', '120000'], { ...s.env, PLUGIN_LICENSE_EXECUTABLE: s.exe });
      children.push(h);
      return h;
    };
    const host = follow();
    await host.waitFor(/"origin":"agent".*"starts":1/, 'the agent the host started');
    const [pid] = await oneAgent(s.app);
    // Connected (subscribed) for more than twice the idle time: the agent stays (a lower bound on
    // how long it is watched, not a window it must hit).
    await delay(1_500);
    expect(agentPids(s.app)).toEqual([pid]);
    expect(existsSync(socket)).toBe(true);
    expect(await host.stop('SIGTERM')).toBe(0);
    expect(JSON.parse(host.lines.at(-1)!)).toMatchObject({ event: 'done', unlicensed: 0 });
    // Gone by itself after the last client left: no process, no socket, no pending intent.
    await expect.poll(() => ({ agents: agentPids(s.app), socket: existsSync(socket) }), { message: 'the idle exit' }).toEqual({ agents: [], socket: false });
    const intents = join(s.home, 'data', 'licenses', 'intents');
    expect(existsSync(intents) ? readdirSync(intents) : []).toEqual([]);
    // The next plugin load starts it again, licensed from its first read.
    const again = follow();
    expect(JSON.parse(await again.waitFor(/"state"/, 'the first read'))).toMatchObject({ state: 'valid', licensed: true, origin: 'ticket' });
    await again.waitFor(/"origin":"agent".*"starts":1/, 'a new agent');
    expect(s.starts()).toBe(2);
    expect(await again.stop('SIGTERM')).toBe(0);
    expect(JSON.parse(again.lines.at(-1)!)).toMatchObject({ event: 'done', unlicensed: 0 });
    await expect.poll(() => agentPids(s.app), { message: 'the second idle exit' }).toEqual([]);
  });

  it('five hosts at once with no agent running end with one agent', async () => {
    const s = setting();
    await activated(s);
    const hosts = Array.from({ length: 5 }, () => spawnLines(probe, ['follow', emulator.projectId, '10', '120000'], { ...s.env, PLUGIN_LICENSE_EXECUTABLE: s.exe }));
    children.push(...hosts);
    for (const h of hosts) await h.waitFor(/"origin":"agent"/, 'an agent answer');
    const pids = await oneAgent(s.app);
    expect(pids).toHaveLength(1);
    expect(s.starts()).toBeGreaterThanOrEqual(1);
    expect(s.starts()).toBeLessThanOrEqual(5);
    for (const h of hosts) {
      expect(await h.stop('SIGTERM')).toBe(0);
      expect(JSON.parse(h.lines.at(-1)!)).toMatchObject({ event: 'done', unlicensed: 0 });
    }
    process.kill(pids[0]!, 'SIGTERM');
  });

  it('no ticket, no agent, no executable: unknown, playing a while, then silent (silentAfter(1) here; the 5 s default checked on the arithmetic)', async () => {
    const policy = JSON.parse((await run(probe, ['policy'])).stdout) as Line;
    expect(policy).toMatchObject({
      default_unknown: [true, true, true, true, true, false, false, false],
      keep_unknown: [true, true, true, true, true, true, true, true],
      default_after_invalid: Array(8).fill(false),
      default_unsettled: Array(8).fill(false),
      ticket_valid: true,
      ticket_invalid: false,
    });
    const s = setting();
    const host = spawnLines(probe, ['follow', emulator.projectId, '3', '20000', '--policy', '1'], s.env);
    children.push(host);
    await host.waitFor(/"state":"unknown","licensed":true,"origin":"none"/, 'unknown, playing');
    await host.waitFor(/"state":"unknown","licensed":false,"origin":"none".*"settled":true/, 'unknown, silent after a second');
    expect(await host.stop('SIGTERM')).toBe(0);
    expect(s.starts()).toBe(0);
  });
});
