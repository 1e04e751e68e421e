// What a plugin's license thread costs at idle, licensed and nothing changing: plc::Monitor's
// thread ("plc-watch", 50 instances sharing it, blocked on the agent's notifications) against
// the baseline, host-example's license thread ("plc-poll"): `check` once a second, a stop flag
// looked at every 10 ms, the usual shape of a plugin's license thread without a subscription
// (plc::Monitor before it followed the agent polled too, on a condition variable). Linux only: it reads
// each thread's run time (/proc/PID/task/TID/schedstat, ns) and its wake-ups
// (voluntary_ctxt_switches) over the same 10 s.
//
// Then the ticket and the agent on demand (monitor-probe), with the agent stopped:
// - "plugin load to known state (agent stopped, 50 instances) p99": each instance's construction
//   and first isLicensed() read, 50 per process over LOAD_RUNS processes, by a ticket the agent
//   wrote; baseline the same load with the agent running (the ticket is read first either way, so
//   the agent changes nothing at load).
// - "autostart to first answer": a Monitor made with no agent running and PLUGIN_LICENSE_EXECUTABLE
//   set to its first answer from the agent it started; baseline the agent's cold start alone (the
//   same executable spawned as `EXE agent run --app APP`, to its first answer on the socket).
//   Medians of AUTOSTART_RUNS.
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '@plugin-license/emulator';
import { generateCode, rpc, startReady } from './helpers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const examples = join(root, 'examples', 'plugin-host-c');
const plc = join(root, 'plugin', 'plugin_license', 'plc');
const agentCli = join(root, 'agent', 'bin', 'plugin-license-agent.js');
const cli = join(root, 'packages', 'cli', 'bin', 'plugin-license.js');
const IDLE_MS = 10_000;
const LOAD_RUNS = 40;
const AUTOSTART_RUNS = 5;

export async function run() {
  if (process.platform !== 'linux') {
    console.log('monitor: reads /proc; Linux only, skipped');
    return [];
  }
  for (const tool of ['cc', 'c++']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0) {
      console.log(`monitor: no \`${tool}\` on PATH, skipped`);
      return [];
    }
  }
  if (!existsSync(join(root, 'agent', 'dist'))) throw new Error('monitor: the agent is not built; run `pnpm build` first');
  const build = mkdtempSync(join(tmpdir(), 'plc-monitor-bench-'));
  const sockets = mkdtempSync('/tmp/plc-mon-');
  const children = [];
  let emulator;
  try {
    const cflags = ['-std=c11', '-O2', `-I${plc}`];
    compile('cc', [...cflags, '-c', join(plc, 'plc.c'), '-o', join(build, 'plc.o')]);
    compile('c++', ['-std=c++17', '-O2', `-I${plc}`, '-pthread', join(examples, 'wrapper-example.cpp'), join(build, 'plc.o'), '-o', join(build, 'wrapper-example')]);
    compile('cc', [...cflags, '-pthread', join(examples, 'host-example.c'), join(build, 'plc.o'), '-o', join(build, 'host-example')]);
    compile('c++', ['-std=c++17', '-O2', `-I${plc}`, '-pthread', join(plc, 'tools', 'monitor-probe.cpp'), join(build, 'plc.o'), '-o', join(build, 'monitor-probe')]);

    emulator = await startEmulator({ port: 0 });
    const socket = join(sockets, 'agent.sock');
    const home = join(build, 'home');
    const agent = startReady(process.execPath, [agentCli, 'run'], { PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: socket, PLUGIN_LICENSE_BASE_URL: emulator.baseUrl, PLUGIN_LICENSE_LOG_LEVEL: 'warn' });
    children.push(agent);
    await agent.ready;
    await rpc(socket, 'activate', { project_id: emulator.projectId, code: await generateCode(emulator) });

    const env = { PLUGIN_LICENSE_SOCKET: socket };
    const watch = startReady(join(build, 'wrapper-example'), ['follow', socket, emulator.projectId, '50', 'keep', String(IDLE_MS + 8000)], env, /^state=valid/);
    children.push(watch);
    await watch.ready;
    const poll = startReady(join(build, 'host-example'), [socket, emulator.projectId, String(IDLE_MS + 8000), '1000', '200'], env, /^state valid/);
    children.push(poll);
    await poll.ready;

    const [watchPid, pollPid] = [watch.child.pid, poll.child.pid];
    const watchThread = threadNamed(watchPid, 'plc-watch');
    const pollThread = threadNamed(pollPid, 'plc-poll');
    const before = [sample(watchPid, watchThread), sample(pollPid, pollThread)];
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const after = [sample(watchPid, watchThread), sample(pollPid, pollThread)];
    const seconds = IDLE_MS / 1000;
    const cpu = (i) => (after[i].ns - before[i].ns) / seconds / 1000; // µs of CPU per second
    const wakeups = (i) => (after[i].switches - before[i].switches) / seconds;
    const ratio = (a, b) => (b === 0 ? undefined : a / b);
    for (const c of [watch, poll]) await c.stop();

    // The ticket the agent wrote at the activation, with the agent running, then stopped.
    const probe = join(build, 'monitor-probe');
    const probeEnv = { PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: socket, PLUGIN_LICENSE_EXECUTABLE: '' };
    const loadRunning = loadTimes(probe, emulator.projectId, probeEnv);
    await agent.stop();
    const loadStopped = loadTimes(probe, emulator.projectId, probeEnv);
    const load = { value: p99(loadStopped), baseline: p99(loadRunning) };

    // Autostart: an executable that runs the CLI, a namespace of its own.
    const app = `bench-mon-${process.pid}`;
    const exe = join(build, 'plugin license');
    writeFileSync(exe, `#!/bin/sh\nexec '${process.execPath}' '${cli}' "$@"\n`);
    chmodSync(exe, 0o755);
    const startEnv = { ...probeEnv, PLUGIN_LICENSE_APP: app, PLUGIN_LICENSE_BASE_URL: emulator.baseUrl, PLUGIN_LICENSE_LOG_LEVEL: 'warn' };
    const cold = [];
    const autostart = [];
    for (let i = 0; i < AUTOSTART_RUNS; i++) {
      cold.push(await coldStart(exe, app, socket, emulator.projectId, startEnv));
      await stopAgents(app);
      autostart.push(await autostartToAnswer(probe, emulator.projectId, { ...startEnv, PLUGIN_LICENSE_EXECUTABLE: exe }));
      await stopAgents(app);
    }
    const auto = { value: median(autostart), baseline: median(cold) };
    return [
      { name: 'plugin load to known state (agent stopped, 50 instances) p99', value: load.value, unit: 'ms', baseline: load.baseline, ratio: ratio(load.value, load.baseline), goal: 'at most 1 ms' },
      { name: 'autostart to first answer', value: auto.value, unit: 'ms', baseline: auto.baseline, ratio: ratio(auto.value, auto.baseline), goal: 'ratio at most 3' },
      { name: 'monitor thread at idle, 50 instances (CPU)', value: cpu(0), unit: 'us/s', baseline: cpu(1), ratio: ratio(cpu(0), cpu(1)), goal: 'far below a polling thread' },
      { name: 'monitor thread at idle, 50 instances (wake-ups)', value: wakeups(0), unit: '/s', baseline: wakeups(1), ratio: ratio(wakeups(0), wakeups(1)), goal: '0: it waits for the agent' },
    ];
  } finally {
    for (const c of children) await c.stop();
    await emulator?.close();
    rmSync(build, { recursive: true, force: true });
    rmSync(sockets, { recursive: true, force: true });
  }
}

// Each instance's construction and first read (ms), 50 per process, LOAD_RUNS processes.
function loadTimes(probe, projectId, env) {
  const times = [];
  for (let i = 0; i < LOAD_RUNS; i++) {
    const r = spawnSync(probe, ['load', projectId, '50', '--no-start'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    const line = JSON.parse(r.stdout.split('\n')[0]);
    if (line.state !== 'valid') throw new Error(`monitor: the ticket did not license the load: ${r.stdout}`);
    times.push(...line.load_ns.map((ns) => ns / 1e6));
  }
  return times;
}

const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// The agent's cold start alone: spawn to its first answer to `check` on the socket (ms).
async function coldStart(exe, app, socket, projectId, env) {
  const t0 = performance.now();
  const child = spawn(exe, ['agent', 'run', '--app', app], { env: { ...process.env, ...env }, stdio: 'ignore', detached: true });
  child.unref();
  for (let i = 0; i < 6000; i++) {
    if (await answers(socket, projectId)) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('monitor: the agent did not answer within 30 s of its start');
}

// A Monitor made with no agent running to its first answer from the agent it started (ms).
function autostartToAnswer(probe, projectId, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(probe, ['follow', projectId, '50', '30000'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let found;
    let buffered = '';
    child.stdout.on('data', (d) => {
      buffered += d;
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (found === undefined && line.origin === 'agent') {
          found = line.t_us / 1000;
          child.kill('SIGTERM');
        }
      }
    });
    child.once('exit', () => (found === undefined ? reject(new Error('monitor: no agent answer within 30 s')) : resolve(found)));
  });
}

function answers(socket, projectId) {
  return new Promise((resolve) => {
    const conn = connect(socket);
    const done = (ok) => {
      conn.destroy();
      resolve(ok);
    };
    conn.on('error', () => done(false));
    conn.on('connect', () => conn.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'check', params: { project_id: projectId } }) + '\n'));
    conn.on('data', (d) => done(String(d).includes('"id":1')));
  });
}

// Stops every agent of namespace `app` (found by its command line), and waits until each is gone.
async function stopAgents(app) {
  const pids = readdirSync('/proc').filter((e) => /^\d+$/.test(e)).filter((pid) => {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('run');
      return at > 0 && argv[at - 1] === 'agent' && argv[at + 2] === app;
    } catch {
      return false;
    }
  });
  for (const pid of pids) process.kill(Number(pid), 'SIGTERM');
  for (let i = 0; i < 400 && pids.some((pid) => existsSync(`/proc/${pid}`)); i++) await new Promise((r) => setTimeout(r, 25));
}

function compile(tool, args) {
  const r = spawnSync(tool, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tool} failed:\n${r.stderr}`);
}

function threadNamed(pid, name) {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === name) return tid;
  }
  throw new Error(`no thread named ${name} in process ${pid}`);
}

function sample(pid, tid) {
  const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
  const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
  const switches = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]);
  return { ns, switches };
}
