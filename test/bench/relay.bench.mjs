// The license relay on Node (`plugin-license relay serve`, the built CLI) against a bare
// pass-through proxy (pass-through-proxy.mjs) of the same requests to the same emulator, in the
// same run; all three are child processes, the client is this one. The requests are activations
// of distinct code and machine pairs, each answered valid: every one reaches the service (no
// coalescing, no cache) and every relay answer is signed, the relay's most expensive case.
// Throughput: CONCURRENCY clients each sending requests one after another, rounds alternating
// which side goes first; the ratio is relay / proxy requests per second (goal >= 0.8). Added
// p99: one client, requests one after another, p99 through the relay minus p99 through the proxy
// (goal <= 5 ms on loopback). Loopback only; every loop is bounded. Needs `pnpm build`.
import { generateKeyPairSync } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { startReady } from './helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = resolve(here, '../../packages/cli/bin/plugin-license.js');
const EMULATOR = resolve(here, '../../packages/emulator/dist/cli.js');

const CONCURRENCY = 8;
const WARMUP = 400; // requests per side
const ROUNDS = 6;
const PER_ROUND = 800; // requests per side and round
const LATENCY_SAMPLES = 1500; // per side, in 3 alternating blocks

/** CPU time (user + system) a process has used, in ms (Linux /proc; USER_HZ is 100 there). */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

function median(values) {
  return percentile(values, 0.5);
}

export async function run() {
  const emulator = startReady(process.execPath, [EMULATOR, '--port', '0', '--quiet', '--rate-limit-activation', '100000000', '--rate-limit-general', '100000000'], {}, /base_url/);
  let relay;
  let proxy;
  let logDir;
  const dispatcher = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });
  try {
    const info = JSON.parse(await new Promise((ok, fail) => {
      emulator.child.stdout.once('data', (d) => ok(String(d).split('\n')[0]));
      emulator.ready.catch(fail);
    }));
    await emulator.ready;
    // One code per client, enough slots for every machine a client uses.
    const codes = [];
    for (let i = 0; i < CONCURRENCY + 1; i++) {
      const res = await request(`${info.base_url}/plugin-activation/generate`, { method: 'POST', headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ project_id: info.project_id, max_activations: 4 }) });
      codes.push((await res.body.json()).code);
    }
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    // The relay's one line per request goes to a file, as a process manager's log would take it
    // (a pipe to this process would wake the measuring client at every line).
    logDir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
    const log = openSync(join(logDir, 'relay.log'), 'w');
    relay = startReady(process.execPath, [CLI, 'relay', 'serve', '--port', '0'], { RELAY_SIGNING_KEY: pem, RELAY_SERVICE_URL: info.base_url, RELAY_SERVICE_TOKEN: info.token, RELAY_APP: 'bench', RELAY_PROJECTS: info.project_id }, /base_url/, 15_000, log);
    closeSync(log);
    proxy = startReady(process.execPath, [resolve(here, 'pass-through-proxy.mjs'), new URL(info.base_url).origin]);
    const relayLine = new Promise((ok) => relay.child.stdout.once('data', (d) => ok(JSON.parse(String(d).split('\n')[0]))));
    const proxyLine = new Promise((ok) => proxy.child.stdout.once('data', (d) => ok(JSON.parse(String(d).split('\n')[0]))));
    await Promise.all([relay.ready, proxy.ready]);
    const relayUrl = `${(await relayLine).base_url}/plugin-activation/activate`;
    const proxyUrl = `http://127.0.0.1:${(await proxyLine).port}/functions/v1/plugin-activation/activate`;

    const sides = {
      relay: (client) => ({ url: relayUrl, body: JSON.stringify({ code: codes[client], machine_id: `m1_bench-${client}`, project_id: info.project_id }) }),
      proxy: (client) => ({ url: proxyUrl, body: JSON.stringify({ code: codes[client], machine_id: `m1_bench-${client}` }) }),
    };
    const once = async (side, client) => {
      const { url, body } = sides[side](client);
      const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher });
      const answer = await res.body.json();
      if (res.statusCode !== 200 || answer.success !== true) throw new Error(`${side} answered ${res.statusCode}: ${JSON.stringify(answer).slice(0, 200)}`);
      if (side === 'relay' && typeof answer.signed_ticket !== 'string') throw new Error('the relay answered valid without a signed ticket');
    };
    const burst = async (side, total) => {
      const start = performance.now();
      await Promise.all(Array.from({ length: CONCURRENCY }, async (_, client) => {
        for (let i = 0; i < total / CONCURRENCY; i++) await once(side, client);
      }));
      return performance.now() - start;
    };

    await burst('relay', WARMUP);
    await burst('proxy', WARMUP);
    const rps = { relay: [], proxy: [] };
    const cpu = { relay: [], proxy: [] };
    const pids = { relay: relay.child.pid, proxy: proxy.child.pid };
    const ratios = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['relay', 'proxy'] : ['proxy', 'relay'];
      const ms = {};
      for (const side of order) {
        const before = cpuMs(pids[side]);
        ms[side] = await burst(side, PER_ROUND);
        cpu[side].push((cpuMs(pids[side]) - before) / PER_ROUND);
      }
      rps.relay.push(PER_ROUND / (ms.relay / 1000));
      rps.proxy.push(PER_ROUND / (ms.proxy / 1000));
      ratios.push(ms.proxy / ms.relay);
    }

    const latency = { relay: [], proxy: [] };
    for (let block = 0; block < 3; block++) {
      for (const side of block % 2 === 0 ? ['relay', 'proxy'] : ['proxy', 'relay']) {
        for (let i = 0; i < LATENCY_SAMPLES / 3; i++) {
          const start = performance.now();
          await once(side, CONCURRENCY);
          latency[side].push(performance.now() - start);
        }
      }
    }
    const p99 = { relay: percentile(latency.relay, 0.99), proxy: percentile(latency.proxy, 0.99) };
    const ratio = median(ratios);
    return [
      { name: 'relay throughput', value: median(rps.relay), unit: 'req/s', baseline: median(rps.proxy), ratio, goal: 'ratio = relay / pass-through proxy >= 0.8' },
      { name: 'relay added p99', value: p99.relay - p99.proxy, unit: 'ms', baseline: p99.proxy, goal: '<= 5 ms on loopback' },
      { name: 'relay p99 (activate, signed)', value: p99.relay, unit: 'ms', baseline: p99.proxy, ratio: p99.relay / p99.proxy },
      { name: 'relay CPU per request (its own process)', value: median(cpu.relay), unit: 'ms', baseline: median(cpu.proxy), ratio: median(cpu.relay) / median(cpu.proxy) },
      { name: 'relay p50 (activate, signed)', value: median(latency.relay), unit: 'ms', baseline: median(latency.proxy), ratio: median(latency.relay) / median(latency.proxy) },
    ];
  } finally {
    await dispatcher.close();
    await Promise.all([relay?.stop(), proxy?.stop()]);
    await emulator.stop();
    if (logDir) rmSync(logDir, { recursive: true, force: true });
  }
}
