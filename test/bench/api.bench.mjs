// Client overhead: activate + validate round trips through ServiceClient vs the same requests sent
// with a bare undici.request on one keep-alive Agent, in the same run, against the in-process
// emulator with rate limits raised. Rounds are paired and alternate which side goes first, so drift
// and noise from other processes hit both alike; the ratio is the median of the paired rounds' ratios.
import { ServiceClient } from '@plugin-license/api';
import { startEmulator } from '@plugin-license/emulator';
import { Agent, request } from 'undici';

const WARMUP = 300; // activate + validate pairs per side before measuring (JIT, connection pool)
const ROUNDS = 15;
const PER_ROUND = 150; // activate + validate pairs per round and side

export async function run() {
  const emu = await startEmulator({ port: 0, rateLimits: { activation: 1e9, builds: 1e9, general: 1e9, trigger: 1e9 } });
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const client = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, retry: false });
  try {
    const { code } = await client.activation.generate({ project_id: emu.projectId, max_activations: 10, notes: 'bench' });
    const body = { code, machine_id: 'm1_bench-machine', plugin_id: emu.projectId };
    const json = JSON.stringify(body);
    const headers = { 'content-type': 'application/json', accept: 'application/json' };

    const bare = async () => {
      for (const action of ['activate', 'validate']) {
        const res = await request(`${emu.baseUrl}/plugin-activation/${action}`, { method: 'POST', headers, body: json, dispatcher: agent });
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
    let bareMs = 0;
    let clientMs = 0;
    const ratios = [];
    for (let round = 0; round < ROUNDS; round++) {
      const elapsed = {};
      for (const side of round % 2 === 0 ? ['bare', 'client'] : ['client', 'bare']) {
        const fn = side === 'bare' ? bare : viaClient;
        const start = performance.now();
        for (let i = 0; i < PER_ROUND; i++) await fn();
        elapsed[side] = performance.now() - start;
      }
      bareMs += elapsed.bare;
      clientMs += elapsed.client;
      ratios.push(elapsed.client / elapsed.bare);
    }
    ratios.sort((a, b) => a - b);
    const ratio = ratios[Math.floor(ratios.length / 2)];
    const requests = ROUNDS * PER_ROUND * 2;
    const clientRps = requests / (clientMs / 1000);
    const bareRps = requests / (bareMs / 1000);
    return [
      {
        name: 'api: activate+validate via ServiceClient',
        value: clientRps,
        unit: 'req/s',
        baseline: bareRps,
        ratio,
        goal: 'ratio = client time / bare undici time (median of paired rounds) <= 1.15',
      },
      { name: 'api: activate+validate via bare undici.request', value: bareRps, unit: 'req/s' },
      { name: 'api: client overhead (client time / bare time)', value: ratio, unit: 'x', goal: '<= 1.15' },
    ];
  } finally {
    await client.close();
    await agent.close();
    await emu.close();
  }
}
