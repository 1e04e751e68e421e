// The C client's `check` round trip (plugin/plugin_license/plc, plc_check one request at a time)
// against the real agent, beside the same client against a bare C echo server on a sibling
// socket (the floor of a Unix-socket round trip on this machine) and against a bare Node echo
// server (the floor of any Node server: the agent's own overhead is the ratio to it). Rounds
// rotate which side goes first, so drift and noise from other processes hit all alike; each
// figure is the median of the rounds' percentiles.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '@plugin-license/emulator';
import { generateCode, rpc, startReady } from './helpers.mjs';
import { NODE_ECHO_SERVER } from './node-echo.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const plc = join(root, 'plugin', 'plugin_license', 'plc');
const tools = join(plc, 'tools');
const agentCli = join(root, 'agent', 'bin', 'plugin-license-agent.js');

const ROUNDS = 5;
const PER_ROUND = 4000; // measured checks per round and side
const WARMUP = 1000; // unmeasured checks per run (connection, JIT, caches)

export async function run() {
  if (spawnSync('cc', ['--version'], { stdio: 'ignore' }).status !== 0) {
    console.log('c-client: no `cc` on PATH; the C client benchmark needs a C compiler, skipped');
    return [];
  }
  if (!existsSync(agentCli)) throw new Error(`c-client: ${agentCli} is missing; run \`pnpm build\` first`);

  const build = mkdtempSync(join(tmpdir(), 'plc-bench-build-'));
  const sockets = mkdtempSync('/tmp/plc-bench-');
  const home = mkdtempSync(join(tmpdir(), 'plc-bench-home-'));
  const children = [];
  let emulator;
  try {
    const flags = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-O2', `-I${plc}`];
    cc([...flags, '-c', join(plc, 'plc.c'), '-o', join(build, 'plc.o')]);
    cc([...flags, join(tools, 'bench-check.c'), join(build, 'plc.o'), '-o', join(build, 'bench-check')]);
    cc([...flags, join(tools, 'echo-server.c'), '-o', join(build, 'echo-server')]);

    emulator = await startEmulator({ port: 0 });
    const agentSocket = join(sockets, 'agent.sock');
    const echoSocket = join(sockets, 'echo.sock');
    const nodeEchoSocket = join(sockets, 'node-echo.sock');

    // One client sending back to back is far over the default per-connection rate (200/s):
    // lift it for this agent only, through its config file.
    mkdirSync(join(home, 'config'), { recursive: true });
    writeFileSync(join(home, 'config', 'config.json'), JSON.stringify({ agent: { request_rate: 1_000_000, request_burst: 1_000_000 } }));
    const agent = startReady(process.execPath, [agentCli, 'run'], {
      PLUGIN_LICENSE_HOME: home,
      PLUGIN_LICENSE_SOCKET: agentSocket,
      PLUGIN_LICENSE_BASE_URL: emulator.baseUrl,
      PLUGIN_LICENSE_LOG_LEVEL: 'warn',
    });
    children.push(agent);
    const echo = startReady(join(build, 'echo-server'), [echoSocket], {});
    children.push(echo);
    const nodeEcho = startReady(process.execPath, ['-e', NODE_ECHO_SERVER, nodeEchoSocket], {});
    children.push(nodeEcho);
    await Promise.all([agent.ready, echo.ready, nodeEcho.ready]);

    const code = await generateCode(emulator);
    const activated = await rpc(agentSocket, 'activate', { project_id: emulator.projectId, code });
    if (activated.error) throw new Error(`c-client: activation through the agent failed: ${JSON.stringify(activated.error)}`);

    const sides = { agent: agentSocket, echo: echoSocket, nodeEcho: nodeEchoSocket };
    const runs = { agent: [], echo: [], nodeEcho: [] };
    const order = Object.keys(sides);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < order.length; i++) {
        const side = order[(round + i) % order.length];
        const result = await benchCheck(join(build, 'bench-check'), sides[side], emulator.projectId);
        if (side === 'agent' && result.valid !== true) throw new Error('c-client: the agent did not report the license valid');
        runs[side].push(result);
      }
    }

    const at = (side, key) => median(runs[side].map((r) => r[key]));
    const figure = (side, key, base, label, goal) => {
      const value = at(side, key);
      const baseline = at(base, key);
      return { name: `c-client check ${label}`, value, unit: 'µs', baseline, ratio: value / baseline, ...(goal ? { goal } : {}) };
    };
    return [
      figure('agent', 'p50_us', 'echo', 'p50 (agent; baseline a C echo server)', '<= 1.3x'),
      figure('agent', 'p99_us', 'echo', 'p99 (agent; baseline a C echo server)', '<= 1.3x'),
      figure('nodeEcho', 'p50_us', 'echo', 'p50 (a bare Node echo server; baseline a C echo server)'),
      figure('agent', 'p50_us', 'nodeEcho', 'p50 (agent; baseline a bare Node echo server)'),
      figure('agent', 'p99_us', 'nodeEcho', 'p99 (agent; baseline a bare Node echo server)'),
    ];
  } finally {
    for (const child of children) await child.stop();
    await emulator?.close();
    rmSync(build, { recursive: true, force: true });
    rmSync(sockets, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

function cc(args) {
  const r = spawnSync('cc', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`c-client: cc ${args.join(' ')} failed:\n${r.stderr}`);
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function benchCheck(bin, socket, projectId) {
  return new Promise((resolve, reject) => {
    execFile(bin, [socket, projectId, String(PER_ROUND), String(WARMUP)], { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`c-client: bench-check against ${socket} failed: ${stdout}${stderr}${error.message}`));
      resolve(JSON.parse(stdout));
    });
  });
}
