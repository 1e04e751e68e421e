// client side only: the emulator runs in another process
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { ServiceClient } from '@plugin-license/api';
const child = spawn(process.execPath, ['../../packages/emulator/bin/plugin-license-emulator.js', '--rate-limit-activation', '1000000000', '--rate-limit-general', '1000000000'], { stdio: ['ignore', 'pipe', 'ignore'] });
const line = await new Promise((r) => createInterface({ input: child.stdout }).once('line', r));
const emu = JSON.parse(line);
const client = new ServiceClient({ baseUrl: emu.base_url, token: emu.token, retry: false });
const { code } = await client.activation.generate({ project_id: emu.project_id, max_activations: 10, notes: 'bench' });
const body = { code, machine_id: 'm1_bench-machine', plugin_id: emu.project_id };
const httpAgent = new HttpAgent({ keepAlive: true, timeout: 10_000 });
const headers = { 'content-type': 'application/json', accept: 'application/json' };
const post = (url) => new Promise((resolve, reject) => {
  const req = httpRequest(url, { method: 'POST', headers, agent: httpAgent }, (res) => {
    const chunks = []; res.on('data', (c) => chunks.push(c));
    res.on('end', () => resolve({ status: res.statusCode, data: JSON.parse(Buffer.concat(chunks).toString('utf8')) })); res.on('error', reject);
  });
  req.on('error', reject); req.end(JSON.stringify(body));
});
const side = process.argv[2];
const N = Number(process.argv[3] ?? 5000);
const one = side === 'bare' ? async () => { await post(`${emu.base_url}/plugin-activation/activate`); await post(`${emu.base_url}/plugin-activation/validate`); }
  : async () => { await client.activation.activate(body); await client.activation.validate(body); };
for (let i = 0; i < 500; i++) await one();
const c0 = process.cpuUsage(); const t = performance.now();
for (let i = 0; i < N; i++) await one();
const c = process.cpuUsage(c0);
console.log(side, (performance.now() - t).toFixed(0), 'ms wall', ((c.user + c.system) / 1000).toFixed(0), 'ms cpu');
await client.close(); httpAgent.destroy(); child.kill();
