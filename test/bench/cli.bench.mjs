// The CLI as users run it (the bin, a new process each time), against baselines in the same run:
// `plugin-license --version` vs `node -e 0`, and `plugin-license status CODE --json` against the
// emulator (a separate process, loopback) vs a bare Node script doing the same request with
// undici.request. Runs alternate between the two sides; medians of RUNS each.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = resolve(here, '../../packages/cli/bin/plugin-license.js');
const BUILT = resolve(here, '../../packages/cli/dist/bin/cli.cjs');
const EMULATOR = resolve(here, '../../packages/emulator/bin/plugin-license-emulator.js');
const RUNS = 15;

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function timed(args, env) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', fail);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) fail(new Error(`${args.join(' ')} exited ${code}: ${err}`));
      else done({ ms, out });
    });
  });
}

async function pair(a, b, env) {
  const as = [];
  const bs = [];
  for (let i = 0; i < RUNS; i++) {
    for (const side of i % 2 === 0 ? ['a', 'b'] : ['b', 'a']) {
      const r = await timed(side === 'a' ? a : b, env);
      (side === 'a' ? as : bs).push(r.ms);
    }
  }
  return { a: median(as), b: median(bs) };
}

export async function run() {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run "pnpm build" first`);
  const dir = mkdtempSync(join(tmpdir(), 'plc-bench-'));
  const emulator = spawn(process.execPath, [EMULATOR, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const info = JSON.parse(await new Promise((r) => createInterface({ input: emulator.stdout }).once('line', r)));
    const env = { PATH: process.env.PATH, HOME: dir, PLUGIN_LICENSE_HOME: dir, PLUGIN_LICENSE_BASE_URL: info.base_url };
    const gen = await fetch(`${info.base_url}/plugin-activation/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${info.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: info.project_id, max_activations: 2, notes: 'bench' }),
    });
    const { code } = await gen.json();
    const bare = join(dir, 'bare-status.mjs');
    writeFileSync(
      bare,
      `import { request } from ${JSON.stringify(import.meta.resolve('undici'))};\n` +
        `const res = await request(process.env.PLUGIN_LICENSE_BASE_URL + '/plugin-activation/status/' + encodeURIComponent(process.argv[2]));\n` +
        `process.stdout.write(JSON.stringify(await res.body.json(), null, 2) + '\\n');\n`,
    );
    const version = await pair([CLI, '--version'], ['-e', '0'], env);
    const status = await pair([CLI, 'status', code, '--json'], [bare, code], env);
    return [
      { name: 'cli --version, spawn to exit (median)', value: version.a, unit: 'ms', baseline: version.b, ratio: version.a / version.b, goal: '<= 2x node -e 0' },
      { name: 'cli status CODE --json against the emulator', value: status.a, unit: 'ms', baseline: status.b, ratio: status.a / status.b, goal: '<= 1.5x a bare undici script' },
    ];
  } finally {
    emulator.kill('SIGTERM');
  }
}
