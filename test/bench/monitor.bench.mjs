// What a plugin's license thread costs at idle, licensed and nothing changing: plc::Monitor's
// thread ("plc-watch", 50 instances sharing it, blocked on the agent's notifications) against
// the baseline, host-example's license thread ("plc-poll"): `check` once a second, a stop flag
// looked at every 10 ms, the usual shape of a plugin's license thread without a subscription
// (plc::Monitor before it followed the agent polled too, on a condition variable). Linux only: it reads
// each thread's run time (/proc/PID/task/TID/schedstat, ns) and its wake-ups
// (voluntary_ctxt_switches) over the same 10 s.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '@plugin-license/emulator';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const sources = join(root, 'examples', 'plugin-host-c');
const plc = join(root, 'plugin', 'plugin_license', 'plc');
const agentCli = join(root, 'agent', 'bin', 'plugin-license-agent.js');
const IDLE_MS = 10_000;

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
    compile('c++', ['-std=c++17', '-O2', `-I${plc}`, '-pthread', join(sources, 'wrapper-example.cpp'), join(build, 'plc.o'), '-o', join(build, 'wrapper-example')]);
    compile('cc', [...cflags, '-pthread', join(sources, 'host-example.c'), join(build, 'plc.o'), '-o', join(build, 'host-example')]);

    emulator = await startEmulator({ port: 0 });
    const socket = join(sockets, 'agent.sock');
    const home = join(build, 'home');
    const agent = spawn(process.execPath, [agentCli, 'run'], {
      env: { ...process.env, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: socket, PLUGIN_LICENSE_BASE_URL: emulator.baseUrl, PLUGIN_LICENSE_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(agent);
    await firstLine(agent, /"ready"/);
    const code = await generate(emulator);
    await rpc(socket, 'activate', { project_id: emulator.projectId, code });

    const env = { ...process.env, PLUGIN_LICENSE_SOCKET: socket };
    const watch = spawn(join(build, 'wrapper-example'), ['follow', socket, emulator.projectId, '50', 'keep', String(IDLE_MS + 8000)], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(watch);
    await firstLine(watch, /^state=valid/m);
    const poll = spawn(join(build, 'host-example'), [socket, emulator.projectId, String(IDLE_MS + 8000), '1000', '200'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(poll);
    await firstLine(poll, /^state valid/m);

    const watchThread = threadNamed(watch.pid, 'plc-watch');
    const pollThread = threadNamed(poll.pid, 'plc-poll');
    const before = [sample(watch.pid, watchThread), sample(poll.pid, pollThread)];
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const after = [sample(watch.pid, watchThread), sample(poll.pid, pollThread)];
    const seconds = IDLE_MS / 1000;
    const cpu = (i) => (after[i].ns - before[i].ns) / seconds / 1000; // µs of CPU per second
    const wakeups = (i) => (after[i].switches - before[i].switches) / seconds;
    const ratio = (a, b) => (b === 0 ? undefined : a / b);
    return [
      { name: 'monitor thread at idle, 50 instances (CPU)', value: cpu(0), unit: 'us/s', baseline: cpu(1), ratio: ratio(cpu(0), cpu(1)), goal: 'far below a polling thread' },
      { name: 'monitor thread at idle, 50 instances (wake-ups)', value: wakeups(0), unit: '/s', baseline: wakeups(1), ratio: ratio(wakeups(0), wakeups(1)), goal: '0: it waits for the agent' },
    ];
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await emulator?.close();
    rmSync(build, { recursive: true, force: true });
    rmSync(sockets, { recursive: true, force: true });
  }
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

function firstLine(child, pattern) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within 15 s: ${seen.slice(-500)}`)), 15_000);
    child.stdout.on('data', (d) => {
      seen += d;
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (c) => reject(new Error(`exited (${c}) before a line matching ${pattern}: ${seen.slice(-500)}`)));
  });
}

async function generate(emulator) {
  const res = await fetch(`${emulator.baseUrl}/plugin-activation/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: emulator.projectId, max_activations: 2 }),
  });
  return (await res.json()).code;
}

function rpc(socket, method, params) {
  return new Promise((resolve, reject) => {
    const c = connect(socket, () => c.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) + '\n'));
    let buf = '';
    c.on('data', (d) => {
      buf += d;
      if (buf.includes('\n')) {
        c.end();
        resolve(JSON.parse(buf));
      }
    });
    c.on('error', reject);
  });
}
