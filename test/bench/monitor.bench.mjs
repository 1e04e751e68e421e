// What a plugin's license thread costs at idle, licensed and nothing changing: plc::Monitor's
// thread ("plc-watch", 50 instances sharing it, blocked on the agent's notifications) against
// the baseline, host-example's license thread ("plc-poll"): `check` once a second, a stop flag
// looked at every 10 ms, the usual shape of a plugin's license thread without a subscription
// (plc::Monitor before it followed the agent polled too, on a condition variable). Linux only: it reads
// each thread's run time (/proc/PID/task/TID/schedstat, ns) and its wake-ups
// (voluntary_ctxt_switches) over the same 10 s.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '@plugin-license/emulator';
import { generateCode, rpc, startReady } from './helpers.mjs';

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
    return [
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
