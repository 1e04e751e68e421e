// The packaged executable (pnpm package) against the same agent run as a Node script by the same
// Node (the pinned 22.23.2 the executable is built on, so the figure is the packaging's cost, not a
// Node version's), in the same run: cold start to the ready line (each side with its code cache on disk, as on a customer's
// computer from the second start on), idle RSS after an activation, and the `check` round trip.
// Then the size of every target's executable, raw and xz-compressed (the download).
// Both agents are child processes on loopback, against the emulator; runs alternate sides.
// Each side runs from a copy of its binary made as the Linux installer makes one (`cp`), so both
// come into the page cache the same way: RSS counts every page of the binary mapped into the
// process, and Linux (6.x, ext4 and xfs) caches a file written in one large write in large folios
// and maps a whole folio at a fault. The build writes the executable in one 127 MB write, tar
// extracts Node in small ones: run where each was written, the executable counted ~15 MB more of
// its own text and read-only data than Node, pages it never touched (packaging/README.md).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const AGENT = join(root, 'agent', 'bin', 'plugin-license-agent.js');
const EMULATOR = join(root, 'packages', 'emulator', 'bin', 'plugin-license-emulator.js');
const STARTS = 15;
const ROUND_TRIPS = 3000;
const RSS_ROUNDS = 3;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function rssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

/** Starts an agent (`command args`), resolves at its ready line with the time it took. */
async function start(command, args, env) {
  const started = process.hrtime.bigint();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const line = await new Promise((ok, fail) => {
    createInterface({ input: child.stdout }).once('line', ok);
    child.once('exit', (code) => fail(new Error(`${command} exited ${code}: ${stderr}`)));
  });
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6;
  const stop = () => new Promise((done) => {
    child.once('exit', done);
    child.kill('SIGTERM');
  });
  return { child, ready: JSON.parse(line), readyMs, stop };
}

/** One connection, requests one at a time: the latency a plugin sees. */
async function roundTrips(socket, projectId, n) {
  const conn = createConnection(socket);
  await new Promise((ok) => conn.once('connect', ok));
  const lines = createInterface({ input: conn });
  const times = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    conn.write(JSON.stringify({ jsonrpc: '2.0', id: i, method: 'check', params: { project_id: projectId } }) + '\n');
    await new Promise((ok) => lines.once('line', ok));
    times.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  conn.destroy();
  return median(times);
}

/** A copy of `file` in `into`, made as install.sh makes the installed program: the binary each side runs. */
function installedCopy(file, into) {
  mkdirSync(into);
  const to = join(into, basename(file));
  execFileSync('cp', ['--', file, to]);
  return to;
}

async function activate(socket, projectId, code) {
  const conn = createConnection(socket);
  await new Promise((ok) => conn.once('connect', ok));
  conn.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'activate', params: { project_id: projectId, code } }) + '\n');
  const line = await new Promise((ok) => createInterface({ input: conn }).once('line', ok));
  conn.destroy();
  if (!JSON.parse(line).result?.valid) throw new Error(`activation failed: ${line}`);
}

export async function run() {
  const work = mkdtempSync(join(tmpdir(), 'plc-bench-exe-'));
  const emulator = spawn(process.execPath, [EMULATOR, '--port', '0', '--quiet', '--rate-limit-activation', '100000', '--rate-limit-general', '100000'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const info = JSON.parse(await new Promise((ok) => createInterface({ input: emulator.stdout }).once('line', ok)));
    const { packageRelease, parseOptions } = await import('../../packaging/src/build.mjs');
    const release = join(work, 'release');
    console.log('building every target (pnpm package) ...');
    const manifest = await packageRelease(parseOptions(['--out', release, '--name', 'plugin-license']), { log: () => {} });
    const exe = installedCopy(join(release, manifest.targets.find((t) => t.target === 'linux-x64').file), join(work, 'installed-exe'));
    const { nodeBinary } = await import('../../packaging/src/node-binaries.mjs');
    const node = installedCopy(await nodeBinary('linux-x64', join(work, 'node')), join(work, 'installed-node'));

    const sides = {
      node: { command: node, args: [AGENT, 'run'] },
      exe: { command: exe, args: ['agent', 'run'] },
    };
    const homes = {};
    for (const side of Object.keys(sides)) homes[side] = mkdtempSync(join('/tmp', `plx-${side}-`));
    const envOf = (side) => ({ PATH: process.env.PATH, HOME: homes[side], PLUGIN_LICENSE_HOME: homes[side], PLUGIN_LICENSE_BASE_URL: info.base_url, PLUGIN_LICENSE_SOCKET: join(homes[side], 'a.sock') });
    const launch = (side) => start(sides[side].command, sides[side].args, envOf(side));

    // Cold start: a new process each time, its code cache on disk (written by a first start).
    for (const side of Object.keys(sides)) {
      const a = await launch(side);
      await new Promise((r) => setTimeout(r, 2500));
      await a.stop();
    }
    const starts = { node: [], exe: [] };
    for (let i = 0; i < STARTS; i++) {
      for (const side of i % 2 === 0 ? ['node', 'exe'] : ['exe', 'node']) {
        const a = await launch(side);
        starts[side].push(a.readyMs);
        await a.stop();
      }
    }

    // Idle RSS after an activation, and the check round trip, on the same agents.
    const rss = { node: [], exe: [] };
    const p50 = { node: [], exe: [] };
    for (let round = 0; round < RSS_ROUNDS; round++) {
      for (const side of round % 2 === 0 ? ['node', 'exe'] : ['exe', 'node']) {
        rmSync(join(homes[side], 'data'), { recursive: true, force: true });
        const a = await launch(side);
        const gen = await fetch(`${info.base_url}/plugin-activation/generate`, {
          method: 'POST',
          headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ project_id: info.project_id, max_activations: 2 }),
        });
        await activate(a.ready.socket, info.project_id, (await gen.json()).code);
        await new Promise((r) => setTimeout(r, 3000));
        rss[side].push(rssMb(a.child.pid));
        p50[side].push(await roundTrips(a.ready.socket, info.project_id, ROUND_TRIPS));
        await a.stop();
      }
    }

    const sizes = [];
    for (const t of manifest.targets) {
      const file = join(release, t.file);
      const xz = Number(execFileSync('sh', ['-c', `xz -T0 -6 -c "${file}" | wc -c`], { encoding: 'utf8' }).trim());
      sizes.push({ name: `executable size ${t.target}`, value: statSync(file).size / 1e6, unit: 'MB' });
      sizes.push({ name: `executable size ${t.target}, xz`, value: xz / 1e6, unit: 'MB' });
    }
    const s = { node: median(starts.node), exe: median(starts.exe) };
    const r = { node: median(rss.node), exe: median(rss.exe) };
    const c = { node: median(p50.node), exe: median(p50.exe) };
    for (const home of Object.values(homes)) rmSync(home, { recursive: true, force: true });
    return [
      { name: `executable agent cold start to ready (median of ${STARTS})`, value: s.exe, unit: 'ms', baseline: s.node, ratio: s.exe / s.node, goal: '<= 1.1x the node script (Node 22.23.2 both)' },
      { name: 'executable agent idle RSS after an activation', value: r.exe, unit: 'MB', baseline: r.node, ratio: r.exe / r.node, goal: `<= node + 3 MB (${(r.node + 3).toFixed(1)} MB)` },
      { name: `executable agent check round trip p50 (${ROUND_TRIPS} in a row)`, value: c.exe, unit: 'µs', baseline: c.node, ratio: c.exe / c.node, goal: '<= 1.1x the node script' },
      ...sizes,
    ];
  } finally {
    emulator.kill('SIGTERM');
    rmSync(work, { recursive: true, force: true });
  }
}
