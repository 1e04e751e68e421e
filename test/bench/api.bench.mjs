// Client overhead: activate + validate round trips through ServiceClient vs the same requests sent
// with a bare undici.request on one keep-alive Agent, in the same run, against the in-process
// emulator with rate limits raised. Rounds are paired and alternate which side goes first.
// Two ratios, both client / bare (higher = more client overhead), each the median of the paired
// rounds: wall time, and CPU time of this process (client + emulator), which other processes
// competing for the cores disturb far less than wall time.
import { ServiceClient } from '@plugin-license/api';
import { startEmulator } from '@plugin-license/emulator';
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
  const client = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, retry: false });
  try {
    const { code } = await client.activation.generate({ project_id: emu.projectId, max_activations: 10, notes: 'bench' });
    const body = { code, machine_id: 'm1_bench-machine', plugin_id: emu.projectId };
    const headers = { 'content-type': 'application/json', accept: 'application/json' };

    const bare = async () => {
      for (const action of ['activate', 'validate']) {
        const res = await request(`${emu.baseUrl}/plugin-activation/${action}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher: agent });
        const data = await res.body.json();
        if (res.statusCode !== 200) throw new Error(`bare ${action} answered ${res.statusCode}: ${JSON.stringify(data)}`);
      }
    };
    const viaClient = async () => {
      await client.activation.activate(body);
      await client.activation.validate(body);
    };

    for (let i = 0; i < WARMUP; i++) {
      await bare();
      await viaClient();
    }
    const wall = { bare: 0, client: 0 };
    const wallRatios = [];
    const cpuRatios = [];
    for (let round = 0; round < ROUNDS; round++) {
      const w = {};
      const c = {};
      for (const side of round % 2 === 0 ? ['bare', 'client'] : ['client', 'bare']) {
        const fn = side === 'bare' ? bare : viaClient;
        const cpuStart = cpuMs();
        const start = performance.now();
        for (let i = 0; i < PER_ROUND; i++) await fn();
        w[side] = performance.now() - start;
        c[side] = cpuMs() - cpuStart;
      }
      wall.bare += w.bare;
      wall.client += w.client;
      wallRatios.push(w.client / w.bare);
      cpuRatios.push(c.client / c.bare);
    }
    const requests = ROUNDS * PER_ROUND * 2;
    const clientRps = requests / (wall.client / 1000);
    const bareRps = requests / (wall.bare / 1000);
    const wallRatio = median(wallRatios);
    const cpuRatio = median(cpuRatios);
    return [
      {
        name: 'api: activate+validate via ServiceClient',
        value: clientRps,
        unit: 'req/s',
        baseline: bareRps,
        ratio: wallRatio,
        goal: 'ratio = client wall time / bare undici wall time <= 1.15',
      },
      { name: 'api: activate+validate via bare undici.request', value: bareRps, unit: 'req/s' },
      { name: 'api: client overhead, wall time (client / bare)', value: wallRatio, unit: 'x', goal: '<= 1.15' },
      { name: 'api: client overhead, CPU time (client / bare)', value: cpuRatio, unit: 'x', goal: '<= 1.15' },
    ];
  } finally {
    await client.close();
    await agent.close();
    await emu.close();
  }
}
