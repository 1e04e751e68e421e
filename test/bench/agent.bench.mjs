// The agent's socket against a bare Node newline-JSON echo server on a sibling socket, in the same
// run: `check` round trips (one client), throughput with 64 pipelining connections, 200 clients
// connecting at once, cold start of the built bin, idle RSS and RSS growth over 100k requests.
// Both servers are child processes (the agent is the built dist bin), so neither shares an event
// loop with the measuring client. Loopback only; every loop is bounded. Needs `pnpm build`.
// The agent runs with its per-connection request rate raised: the limit is an abuse guard
// (200/s by default), and these figures measure the transport, not the guard.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '@plugin-license/emulator';
import { AgentClient } from '@plugin-license/agent';
import { NODE_ECHO_SERVER, isEchoReady } from './node-echo.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// The bin users run: it loads the one-file build through its V8 code cache.
const CLI = resolve(here, '../../agent/bin/plugin-license-agent.js');
const BUNDLE = resolve(here, '../../agent/dist/bin/agent.cjs');

const ROUND_TRIPS = 20_000; // per side, in 4 alternating blocks
const THROUGHPUT_REQUESTS = 200_000; // per side, in rounds
const THROUGHPUT_ROUNDS = 5;
const CONNECTIONS = 64;
const WINDOW = 16; // requests in flight per pipelining connection
const BURST_CLIENTS = 200;
// One burst's p99 swings from 0.4x to 3x of the other side's on a 2-core machine (both servers
// and the clients share it): the figure is the median over this many bursts a side, alternating
// (between runs of one build, the median of 15 moved from 0.75x to 1.3x, of 31 from 0.93x to
// 1.35x; of 101, a few percent). The CPU time the servers spend on the bursts is reported beside
// it: the steadier measure of the same work.
const BURST_ROUNDS = 101;
const COLD_STARTS = 7;
const GROWTH_REQUESTS = 100_000;
const IDLE_MS = 25_000;
// Linux counts CPU time in /proc in ticks of 1/USER_HZ second.
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();


function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Private (anonymous) memory: RSS less the Node binary's and libraries' shared file pages. */
function privateMb(pid) {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Anonymous:\s+(\d+)/m.exec(rollup)[1]) / 1024;
  } catch {
    return undefined;
  }
}

/** CPU time (user + system) a process has used, from /proc; NaN where there is none. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

function rssMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
    return kb / 1024;
  } catch {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim()) / 1024;
  }
}

/** A minimal line client: requests by id, answers resolve in order of arrival. */
function lineClient(path) {
  return new Promise((resolveClient, reject) => {
    const socket = createConnection(path);
    const pending = new Map();
    let buf = '';
    let nextId = 1;
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const id = Number(/"id":(\d+)/.exec(line)?.[1]);
        const done = pending.get(id);
        if (done) {
          pending.delete(id);
          done(line);
        }
      }
    });
    socket.once('error', reject);
    socket.once('connect', () =>
      resolveClient({
        request(projectId) {
          const id = nextId++;
          return new Promise((r) => {
            pending.set(id, r);
            socket.write(`{"jsonrpc":"2.0","id":${id},"method":"check","params":{"project_id":"${projectId}"}}\n`);
          });
        },
        close: () => socket.destroy(),
      }),
    );
  });
}

async function spawnReady(args, env, matcher) {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const lines = createInterface({ input: child.stdout });
  const line = await new Promise((ok, fail) => {
    lines.once('line', ok);
    child.once('exit', (code) => fail(new Error(`${args[0]} exited (${code}) before ready: ${stderr}`)));
  });
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (!matcher(line)) throw new Error(`unexpected first line: ${line}`);
  const exited = new Promise((r) => child.once('exit', r));
  return { child, readyMs, stop: async () => (child.exitCode === null ? (child.kill('SIGTERM'), await exited) : undefined) };
}

async function roundTrips(client, projectId, n) {
  const times = new Array(n);
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await client.request(projectId);
    times[i] = Number(process.hrtime.bigint() - t) / 1000;
  }
  return times;
}

async function throughput(path, projectId, total) {
  const clients = await Promise.all(Array.from({ length: CONNECTIONS }, () => lineClient(path)));
  const perClient = Math.ceil(total / CONNECTIONS);
  const started = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (c) => {
      let sent = 0;
      const lane = async () => {
        while (sent < perClient) {
          sent++;
          await c.request(projectId);
        }
      };
      await Promise.all(Array.from({ length: WINDOW }, lane));
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clients.forEach((c) => c.close());
  return (perClient * CONNECTIONS) / seconds;
}

async function burst(path, projectId) {
  const started = process.hrtime.bigint();
  const times = await Promise.all(
    Array.from({ length: BURST_CLIENTS }, async () => {
      const c = await lineClient(path);
      const line = await c.request(projectId);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      c.close();
      if (!line.includes('"result"')) throw new Error(`a burst client got no result: ${line}`);
      return ms;
    }),
  );
  return times.sort((a, b) => a - b);
}

export async function run() {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "pnpm build" first`);
  const dir = mkdtempSync('/tmp/plb-');
  const emu = await startEmulator({ rateLimits: { activation: 1e6, general: 1e6 } });
  const stops = [];
  try {
    const env = { PATH: process.env.PATH, HOME: dir, PLUGIN_LICENSE_HOME: join(dir, 'home'), PLUGIN_LICENSE_APP: 'bench', PLUGIN_LICENSE_BASE_URL: emu.baseUrl };
    const agentArgs = (sock) => [CLI, 'run', '--socket', sock, '--request-rate', '10000000', '--request-burst', '10000000', '--max-connections', '1024', '--log-level', 'warn'];
    const isReady = (line) => JSON.parse(line).ready === true;

    // Cold start to socket ready: spawn to the ready line (printed once the socket listens),
    // beside a bare Node server's spawn to listening, alternating so drift hits both alike.
    // The first start of a new build compiles everything and writes the code cache (after 2 s);
    // every later start (each login) reads it. Both are reported; the goal is on the usual one.
    const first = await spawnReady(agentArgs(join(dir, 'first.sock')), env, isReady);
    await new Promise((r) => setTimeout(r, 2500));
    await first.stop();
    const starts = [];
    const bareStarts = [];
    for (let i = 0; i < COLD_STARTS; i++) {
      const a = await spawnReady(agentArgs(join(dir, `cold${i}.sock`)), env, isReady);
      starts.push(a.readyMs);
      await a.stop();
      const b = await spawnReady(['-e', NODE_ECHO_SERVER, join(dir, `bare${i}.sock`)], env, isEchoReady);
      bareStarts.push(b.readyMs);
      await b.stop();
    }
    starts.sort((a, b) => a - b);
    bareStarts.sort((a, b) => a - b);
    const median = (xs) => xs[Math.floor(xs.length / 2)];

    const agentSock = join(dir, 'agent.sock');
    const echoSock = join(dir, 'echo.sock');
    const agent = await spawnReady(agentArgs(agentSock), env, isReady);
    stops.push(agent.stop);
    const echo = await spawnReady(['-e', NODE_ECHO_SERVER, echoSock], env, isEchoReady);
    stops.push(echo.stop);

    // A real activation, so `check` answers a valid license.
    const res = await fetch(`${emu.baseUrl}/plugin-activation/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: emu.projectId, max_activations: 5, notes: 'bench' }),
    });
    const { code } = await res.json();
    const ac = await AgentClient.connect({ socketPath: agentSock, reconnect: false });
    const state = await ac.activate(emu.projectId, code);
    ac.close();
    if (!state.valid) throw new Error('activation through the agent failed');

    // Round trips, one client each, alternating blocks so drift hits both sides alike.
    const agentClient = await lineClient(agentSock);
    const echoClient = await lineClient(echoSock);
    await roundTrips(agentClient, emu.projectId, 2000);
    await roundTrips(echoClient, emu.projectId, 2000);
    // Idle: both left alone long enough for V8's memory reducer (it starts after some seconds
    // without allocation and returns the young generation the requests grew).
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idleRss = rssMb(agent.child.pid);
    const echoRss = rssMb(echo.child.pid);
    const idlePrivate = privateMb(agent.child.pid);
    const echoPrivate = privateMb(echo.child.pid);

    // 200 clients at once: a DAW opening a session connects its plugins together, to an agent
    // that was idle, so the bursts run now, from the quiet state. One burst a side warms up
    // uncounted; then the sides alternate, so drift hits both alike.
    await burst(agentSock, emu.projectId);
    await burst(echoSock, emu.projectId);
    const agentBursts = [];
    const echoBursts = [];
    const cpuBefore = { agent: cpuMs(agent.child.pid), echo: cpuMs(echo.child.pid) };
    for (let round = 0; round < BURST_ROUNDS; round++) {
      const sides = round % 2 === 0 ? ['agent', 'echo'] : ['echo', 'agent'];
      for (const side of sides) {
        const times = await burst(side === 'agent' ? agentSock : echoSock, emu.projectId);
        (side === 'agent' ? agentBursts : echoBursts).push(percentile(times, 99));
      }
    }
    // Each server is idle while the other's burst runs: its CPU time over all bursts is its own.
    const agentBurstCpu = cpuMs(agent.child.pid) - cpuBefore.agent;
    const echoBurstCpu = cpuMs(echo.child.pid) - cpuBefore.echo;
    agentBursts.sort((x, y) => x - y);
    echoBursts.sort((x, y) => x - y);
    const agentBurstP99 = median(agentBursts);
    const echoBurstP99 = median(echoBursts);

    const a = [];
    const e = [];
    for (let block = 0; block < 4; block++) {
      a.push(...(await roundTrips(agentClient, emu.projectId, ROUND_TRIPS / 4)));
      e.push(...(await roundTrips(echoClient, emu.projectId, ROUND_TRIPS / 4)));
    }
    a.sort((x, y) => x - y);
    e.sort((x, y) => x - y);

    // RSS growth over 100k requests (after the warm-up above), pipelined on 4 connections.
    const before = rssMb(agent.child.pid);
    const growthClients = await Promise.all(Array.from({ length: 4 }, () => lineClient(agentSock)));
    await Promise.all(
      growthClients.map(async (c) => {
        for (let i = 0; i < GROWTH_REQUESTS / 4 / 50; i++) {
          await Promise.all(Array.from({ length: 50 }, () => c.request(emu.projectId)));
        }
      }),
    );
    growthClients.forEach((c) => c.close());
    const after = rssMb(agent.child.pid);

    // Throughput in alternating rounds: one run a side moved from 0.6x to 1.1x between runs.
    const agentTps = [];
    const echoTps = [];
    for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
      for (const side of round % 2 === 0 ? ['agent', 'echo'] : ['echo', 'agent']) {
        const rate = await throughput(side === 'agent' ? agentSock : echoSock, emu.projectId, THROUGHPUT_REQUESTS / THROUGHPUT_ROUNDS);
        (side === 'agent' ? agentTps : echoTps).push(rate);
      }
    }
    const agentTp = median(agentTps.sort((x, y) => x - y));
    const echoTp = median(echoTps.sort((x, y) => x - y));

    agentClient.close();
    echoClient.close();

    const p50a = percentile(a, 50);
    const p50e = percentile(e, 50);
    const p99a = percentile(a, 99);
    const p99e = percentile(e, 99);
    return [
      { name: 'agent check round trip p50 (1 client)', value: p50a, unit: 'µs', baseline: p50e, ratio: p50a / p50e, goal: '<= 1.3x echo' },
      { name: 'agent check round trip p99 (1 client)', value: p99a, unit: 'µs', baseline: p99e, ratio: p99a / p99e },
      { name: `agent throughput (${CONNECTIONS} pipelining connections, median of ${THROUGHPUT_ROUNDS} rounds)`, value: agentTp, unit: 'req/s', baseline: echoTp, ratio: agentTp / echoTp, goal: '>= 0.7x echo' },
      {
        name: `agent ${BURST_CLIENTS} clients at once, p99 connect+answer (median of ${BURST_ROUNDS} bursts)`,
        value: agentBurstP99,
        unit: 'ms',
        baseline: echoBurstP99,
        ratio: agentBurstP99 / echoBurstP99,
        goal: `<= 1.2x echo, all ${BURST_CLIENTS} answered`,
      },
      // The steadier measure of the same bursts: the server's own work, not the machine's timing.
      ...(Number.isNaN(agentBurstCpu) || !(echoBurstCpu > 0)
        ? []
        : [{ name: `agent CPU time for the ${BURST_ROUNDS} bursts of ${BURST_CLIENTS} clients`, value: agentBurstCpu, unit: 'ms', baseline: echoBurstCpu, ratio: agentBurstCpu / echoBurstCpu }]),
      { name: 'agent cold start to socket ready (median)', value: median(starts), unit: 'ms', baseline: median(bareStarts), ratio: median(starts) / median(bareStarts), goal: '<= 3x a bare Node server' },
      { name: 'agent first start of a new build (no code cache)', value: first.readyMs, unit: 'ms', baseline: median(bareStarts), ratio: first.readyMs / median(bareStarts) },
      { name: 'agent idle RSS (after an activation)', value: idleRss, unit: 'MB', baseline: echoRss, ratio: idleRss / echoRss, goal: '<= 60 MB' },
      ...(idlePrivate === undefined || echoPrivate === undefined
        ? []
        : [{ name: 'agent idle private memory (RSS less shared file pages)', value: idlePrivate, unit: 'MB', baseline: echoPrivate, ratio: idlePrivate / echoPrivate }]),
      { name: `agent RSS growth over ${GROWTH_REQUESTS / 1000}k requests`, value: after - before, unit: 'MB', goal: '< 5 MB' },
    ];
  } finally {
    for (const stop of stops.reverse()) await stop();
    await emu.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
