// Licensing library costs, each beside the same-run baseline that makes it meaningful:
// - check() per call vs a plain Map lookup (what a host would do with its own flag);
// - cache-only validate() vs an awaited Map lookup (the async-call floor). The emulator is offline,
//   so the first validate() fails over to the cache and schedules a back-off; every measured call
//   then answers from the cache without a request (the library's own back-off rule, not a flag).
//   The cost of one validate() that does try the offline service is reported too, for scale;
// - getMachineId() first call (asks the OS through node-machine-id, in a fresh process) vs that
//   raw node-machine-id call alone, and the memoized call vs one HMAC-SHA256 (the recompute cost);
// - cold load (new License + first check(): read, HMAC-verify, schema-check the cache file) vs a
//   bare readFileSync + JSON.parse of the same file.
// Rounds alternate which side goes first; each figure is the median over rounds.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceClient } from '@plugin-license/api';
import { startEmulator } from '@plugin-license/emulator';
import { cacheFilePath, License } from '@plugin-license/licensing';
import { Agent, request } from 'undici';

const ROUNDS = 11;
const RAW = '0123456789abcdef0123456789abcdef';
const licensingDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'licensing');

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median per-op time in µs of `a` and `b`, measured in alternating rounds of `n` ops. */
async function paired(n, a, b) {
  const ta = [];
  const tb = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? ['a', 'b'] : ['b', 'a']) {
      const fn = side === 'a' ? a : b;
      const start = performance.now();
      await fn(n);
      const us = ((performance.now() - start) * 1000) / n;
      (side === 'a' ? ta : tb).push(us);
    }
  }
  return [median(ta), median(tb)];
}

function figure(name, value, baseline, goal) {
  return { name, value, unit: 'µs', baseline, ratio: value / baseline, ...(goal ? { goal } : {}) };
}

export async function run() {
  const emu = await startEmulator({ port: 0, rateLimits: { activation: 1e9, general: 1e9 } });
  const dispatcher = new Agent({ keepAliveTimeout: 1000 });
  const admin = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, dispatcher, retry: false });
  const client = new ServiceClient({ baseUrl: emu.baseUrl, dispatcher, retry: false });
  const home = mkdtempSync(join(tmpdir(), 'licensing-bench-'));
  const opts = { projectId: emu.projectId, baseUrl: emu.baseUrl, home, client, rawMachineIdProvider: () => RAW };
  let sink = 0;
  try {
    const { code } = await admin.activation.generate({ project_id: emu.projectId, max_activations: 5, notes: 'bench' });
    const license = new License(opts);
    await license.activate(code);

    // check() vs Map lookup
    const map = new Map([[emu.projectId, { valid: true }]]);
    const id = emu.projectId;
    const [checkUs, mapUs] = await paired(
      200_000,
      (n) => {
        for (let i = 0; i < n; i++) sink += license.check().valid ? 1 : 0;
      },
      (n) => {
        for (let i = 0; i < n; i++) sink += map.get(id).valid ? 1 : 0;
      },
    );

    // cache-only validate(): offline; the first call fails over and sets the back-off.
    const fault = await request(`${emu.origin}/__emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'offline' }), dispatcher });
    await fault.body.text();
    const offline = new License({ ...opts, policy: { minRevalidateIntervalMs: 0 } });
    const first = await offline.validate();
    if (!first.valid || first.source !== 'cache') throw new Error(`expected a cache answer offline, got ${JSON.stringify(first)}`);
    const [validateUs, asyncMapUs] = await paired(
      20_000,
      async (n) => {
        for (let i = 0; i < n; i++) sink += (await offline.validate()).valid ? 1 : 0;
      },
      async (n) => {
        for (let i = 0; i < n; i++) sink += (await Promise.resolve(map.get(id))).valid ? 1 : 0;
      },
    );
    // One validate() that does try the offline service: connection reset, fallback, locked write.
    const forcedTimes = [];
    for (let i = 0; i < 30; i++) {
      const start = performance.now();
      await offline.validate({ force: true });
      forcedTimes.push((performance.now() - start) * 1000);
    }
    const forcedUs = median(forcedTimes);

    // Cold load: a new License and its first check() vs bare readFileSync + JSON.parse.
    const file = cacheFilePath(emu.projectId, { home });
    const [coldUs, bareUs] = await paired(
      300,
      (n) => {
        for (let i = 0; i < n; i++) sink += new License(opts).check().valid ? 1 : 0;
      },
      (n) => {
        for (let i = 0; i < n; i++) sink += JSON.parse(readFileSync(file, 'utf8')).format;
      },
    );

    // Machine id, in fresh processes so the first call is really the first.
    const script = `
      import { getMachineId } from '@plugin-license/licensing';
      import nmi from 'node-machine-id';
      import { createHmac } from 'node:crypto';
            const { mkdtempSync } = await import('node:fs');
      const home = mkdtempSync((await import('node:os')).tmpdir() + '/mid-');
      const order = process.argv[1];
      const t = () => performance.now();
      let rawMs, firstMs;
      if (order === 'raw-first') { let s = t(); await nmi.machineId(true); rawMs = t() - s; s = t(); await getMachineId({ home }); firstMs = t() - s; }
      else { let s = t(); await getMachineId({ home }); firstMs = t() - s; s = t(); await nmi.machineId(true); rawMs = t() - s; }
      let s = t(); for (let i = 0; i < 10000; i++) await getMachineId({ home }); const cachedMs = (t() - s) / 10000;
      s = t(); let x = 0; for (let i = 0; i < 10000; i++) x += createHmac('sha256', 'ns').update('${RAW}').digest('hex').length; const hmacMs = (t() - s) / 10000;
      (await import('node:fs')).rmSync(home, { recursive: true, force: true });
      console.log(JSON.stringify({ rawMs, firstMs, cachedMs, hmacMs, x }));`;
    const samples = [];
    for (let i = 0; i < 6; i++) {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, i % 2 === 0 ? 'raw-first' : 'lib-first'], { cwd: licensingDir, encoding: 'utf8' });
      samples.push(JSON.parse(out));
    }
    const firstIdUs = median(samples.map((s) => s.firstMs)) * 1000;
    const rawIdUs = median(samples.map((s) => s.rawMs)) * 1000;
    const cachedIdUs = median(samples.map((s) => s.cachedMs)) * 1000;
    const hmacUs = median(samples.map((s) => s.hmacMs)) * 1000;

    await offline.close();
    await license.close();
    if (sink === 0) throw new Error('benchmark results were not used');
    return [
      figure('licensing: check() per call', checkUs, mapUs, '<= 2 µs'),
      figure('licensing: cache-only validate() per call', validateUs, asyncMapUs, '<= 20 µs'),
      { name: 'licensing: validate() trying an offline service', value: forcedUs, unit: 'µs' },
      figure('licensing: machine id, first call', firstIdUs, rawIdUs),
      figure('licensing: machine id, cached call', cachedIdUs, hmacUs),
      figure('licensing: cold load (new License + check())', coldUs, bareUs),
    ];
  } finally {
    await client.close();
    await admin.close();
    await dispatcher.close();
    await emu.close();
    rmSync(home, { recursive: true, force: true });
  }
}
