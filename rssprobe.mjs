import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startEmulator } from '/work/main/packages/emulator/dist/index.js';
import { AgentClient } from '/work/main/agent/dist/index.js';
const emu = await startEmulator({ rateLimits: { activation: 1e5, general: 1e5 } });
async function measure(flags) {
  const dir = mkdtempSync('/tmp/rp-');
  const child = spawn(process.execPath, [...flags, '/work/main/agent/dist/cli.js', 'run', '--socket', `${dir}/a.sock`], { env: { ...process.env, PLUGIN_LICENSE_HOME: dir, PLUGIN_LICENSE_BASE_URL: emu.baseUrl }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((r) => createInterface({ input: child.stdout }).once('line', r));
  const gen = await fetch(`${emu.baseUrl}/plugin-activation/generate`, { method: 'POST', headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ project_id: emu.projectId, max_activations: 5, notes: '' }) });
  const { code } = await gen.json();
  const c = await AgentClient.connect({ socketPath: `${dir}/a.sock` });
  await c.activate(emu.projectId, code);
  for (let i = 0; i < 4000; i++) await c.check(emu.projectId);
  c.close();
  await new Promise((r) => setTimeout(r, 500));
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]);
  child.kill('SIGTERM');
  return (kb / 1024).toFixed(1);
}
for (const flags of [[], ['--max-semi-space-size=1'], ['--max-semi-space-size=1', '--max-old-space-size=64'], ['--jitless']]) console.log(flags.join(' ') || '(none)', await measure(flags), 'MB');
const bare = spawn(process.execPath, ['-e', 'setTimeout(()=>{},2000)']); await new Promise((r) => setTimeout(r, 800));
console.log('bare node', (Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${bare.pid}/status`, 'utf8'))[1]) / 1024).toFixed(1), 'MB');
bare.kill(); await emu.close();
