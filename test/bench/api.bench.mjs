// Client overhead: activate + validate round trips through ServiceClient vs the same requests sent
// bare over the same carrier (node:http's request on one keep-alive Agent: what the client uses for
// a direct connection), in the same run, against the in-process emulator with rate limits raised.
// Rounds rotate which side goes first. A third side, bare undici.request, is reported beside them:
// what the direct connection gave up in raw speed by not using undici (for the agent's memory).
// Two ratios, both client / bare (higher = more client overhead), each the median of the paired
// rounds: wall time, and CPU time of this process (client + emulator), which other processes
// competing for the cores disturb far less than wall time.
import { ServiceClient } from '@plugin-license/api';
import { startEmulator } from '@plugin-license/emulator';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent, request } from 'undici';

const WARMUP = 300; // activate + validate pairs per side before measuring (JIT, connection pool)
const ROUNDS = 15;
const PER_ROUND = 150; // activate + validate pairs per round and side

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export async function run() {
  const emu = await startEmulator({ port: 0, rateLimits: { activation: 1e9, builds: 1e9, general: 1e9, trigger: 1e9 } });
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const httpAgent = new HttpAgent({ keepAlive: true, timeout: 10_000 });
  const client = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, retry: false });
  try {
    const { code } = await client.activation.generate({ project_id: emu.projectId, max_activations: 10, notes: 'bench' });
    const body = { code, machine_id: 'm1_bench-machine', plugin_id: emu.projectId };
    const headers = { 'content-type': 'application/json', accept: 'application/json' };

    const post = (url) =>
      new Promise((resolve, reject) => {
        const req = httpRequest(url, { method: 'POST', headers, agent: httpAgent }, (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode, data: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    const bare = async () => {
      for (const action of ['activate', 'validate']) {
        const { status, data } = await post(`${emu.baseUrl}/plugin-activation/${action}`);
        if (status !== 200) throw new Error(`bare ${action} answered ${status}: ${JSON.stringify(data)}`);
      }
    };
    const bareUndici = async () => {
      for (const action of ['activate', 'validate']) {
        const res = await request(`${emu.baseUrl}/plugin-activation/${action}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher: agent });
        const data = await res.body.json();
        if (res.statusCode !== 200) throw new Error(`bare undici ${action} answered ${res.statusCode}: ${JSON.stringify(data)}`);
      }
    };
    const viaClient = async () => {
      await client.activation.activate(body);
      await client.activation.validate(body);
    };

    for (let i = 0; i < WARMUP; i++) {
      await bare();
      await viaClient();
      await bareUndici();
    }
    const sides = { bare, client: viaClient, undici: bareUndici };
    const orders = [
      ['bare', 'client', 'undici'],
      ['client', 'undici', 'bare'],
      ['undici', 'bare', 'client'],
    ];
    const wall = { bare: 0, client: 0, undici: 0 };
    const wallRatios = [];
    const cpuRatios = [];
    for (let round = 0; round < ROUNDS; round++) {
      const w = {};
      const c = {};
      for (const side of orders[round % orders.length]) {
        const fn = sides[side];
        const cpuStart = cpuMs();
        const start = performance.now();
        for (let i = 0; i < PER_ROUND; i++) await fn();
        w[side] = performance.now() - start;
        c[side] = cpuMs() - cpuStart;
      }
      wall.bare += w.bare;
      wall.client += w.client;
      wall.undici += w.undici;
      wallRatios.push(w.client / w.bare);
      cpuRatios.push(c.client / c.bare);
    }
    const requests = ROUNDS * PER_ROUND * 2;
    const clientRps = requests / (wall.client / 1000);
    const bareRps = requests / (wall.bare / 1000);
    const undiciRps = requests / (wall.undici / 1000);
    const wallRatio = median(wallRatios);
    const cpuRatio = median(cpuRatios);
    return [
      {
        name: 'api: activate+validate via ServiceClient',
        value: clientRps,
        unit: 'req/s',
        baseline: bareRps,
        ratio: wallRatio,
        goal: 'ratio = client wall time / bare node:http wall time <= 1.15',
      },
      { name: 'api: activate+validate via bare node:http request', value: bareRps, unit: 'req/s' },
      { name: 'api: activate+validate via bare undici.request (not the carrier; for comparison)', value: undiciRps, unit: 'req/s', baseline: bareRps, ratio: undiciRps / bareRps },
      { name: 'api: client overhead, wall time (client / bare)', value: wallRatio, unit: 'x', goal: '<= 1.15' },
      { name: 'api: client overhead, CPU time (client / bare)', value: cpuRatio, unit: 'x', goal: '<= 1.15' },
    ];
  } finally {
    await client.close();
    await agent.close();
    httpAgent.destroy();
    await emu.close();
  }
}
