// `licensing memory with no plugin open` (issue 28): the memory licensing holds on a computer
// where no plugin is open, once `idle_exit_minutes` has passed after the last client left. The
// agent runs with a tiny idle time (--idle-exit-minutes 0.01, 0.6 s); a client like a plugin
// (subscribe + check) connects and leaves; then the RSS of every agent process of that socket is
// summed: 0 when none remains, as it must be. Baseline: the same agent, activated, resident
// (--idle-exit-minutes 0) after the same client left. Linux (/proc); loopback only; every loop is
// bounded. Needs `pnpm build`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '@plugin-license/emulator';
import { AgentClient } from '@plugin-license/agent';
import { generateCode, startReady } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = resolve(here, '../../agent/bin/plugin-license-agent.js');
const BUNDLE = resolve(here, '../../agent/dist/bin/agent.cjs');
const IDLE_EXIT_MINUTES = 0.01;
/** After the idle time, how long the agent may take to finish closing (bounded poll). */
const EXIT_SLACK_MS = 10_000;
/** The resident agent is left alone this long before its RSS is read (the client's work settles). */
const SETTLE_MS = 3_000;

/** The processes whose command line names this socket (from /proc: exact, no pattern). */
function agentsOn(socket) {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.[0];
      if (state !== 'Z' && argv.includes('run') && argv.includes(socket)) pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

/** Sum of the RSS of these processes, in MB (a process gone meanwhile counts 0). */
function rssMb(pids) {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited between the listing and the read
    }
  }
  return kb / 1024;
}

/** What a plugin does: connect, subscribe, check, then close (the DAW closes the project). */
async function pluginVisit(socketPath, projectId) {
  const client = await AgentClient.connect({ socketPath, reconnect: false, clientName: 'bench-plugin' });
  await client.subscribe(projectId);
  const state = await client.check(projectId);
  client.close();
  return state;
}

export async function run() {
  if (process.platform !== 'linux') throw new Error('this benchmark reads /proc: run it on Linux');
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "pnpm build" first`);
  const dir = mkdtempSync('/tmp/plm-');
  const emu = await startEmulator({});
  const stops = [];
  try {
    const env = { PATH: process.env.PATH, HOME: dir, PLUGIN_LICENSE_HOME: join(dir, 'home'), PLUGIN_LICENSE_APP: 'bench', PLUGIN_LICENSE_BASE_URL: emu.baseUrl };
    const agentRun = (socket, minutes) => startReady(process.execPath, [CLI, 'run', '--socket', socket, '--idle-exit-minutes', String(minutes), '--log-level', 'warn'], env);

    // Baseline: resident (idle_exit 0), activated, after a plugin came and went.
    const residentSocket = join(dir, 'resident.sock');
    const resident = agentRun(residentSocket, 0);
    stops.push(resident.stop);
    await resident.ready;
    const ac = await AgentClient.connect({ socketPath: residentSocket, reconnect: false });
    const activated = await ac.activate(emu.projectId, await generateCode(emu));
    ac.close();
    if (!activated.valid) throw new Error('activation through the agent failed');
    if (!(await pluginVisit(residentSocket, emu.projectId)).valid) throw new Error('the resident agent did not answer a valid license');
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const residentPids = agentsOn(residentSocket);
    if (residentPids.length !== 1) throw new Error(`expected one resident agent on ${residentSocket}, found ${residentPids.length}`);
    const residentRss = rssMb(residentPids);
    await resident.stop();

    // On demand: the same home (the license is there), a tiny idle time, a plugin came and went.
    const socket = join(dir, 'on-demand.sock');
    const onDemand = agentRun(socket, IDLE_EXIT_MINUTES);
    stops.push(onDemand.stop);
    await onDemand.ready;
    if (!(await pluginVisit(socket, emu.projectId)).valid) throw new Error('the agent started on demand did not answer a valid license');
    const left = Date.now();
    const idleMs = IDLE_EXIT_MINUTES * 60_000;
    await new Promise((r) => setTimeout(r, idleMs));
    // Then every agent process of that socket, once it had the time to finish closing.
    for (let i = 0; i < EXIT_SLACK_MS / 50 && agentsOn(socket).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    const remaining = agentsOn(socket);
    const value = rssMb(remaining);
    const gone = remaining.length === 0 ? `gone ${Date.now() - left} ms after the last client left` : `${remaining.length} still running`;

    return [
      {
        name: 'licensing memory with no plugin open',
        value,
        unit: 'MB',
        baseline: residentRss,
        ratio: value / residentRss,
        goal: `0 (no agent process; ${gone}; idle_exit_minutes ${IDLE_EXIT_MINUTES})`,
      },
    ];
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Run directly (`node test/bench/idle-memory.bench.mjs`): print the figures.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const f of await run()) console.log(JSON.stringify(f));
}
