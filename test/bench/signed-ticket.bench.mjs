// The signed ticket in C (docs/signed-ticket.md, issue 36's budgets):
// - "signed ticket verify p99": one plc_signed_ticket_judge of a valid signed ticket with no cache
//   (its Ed25519 signature verified every call), timed call by call in the thread's CPU time (the
//   work done; wall time on a shared machine measures its scheduler at the p99) over ITERATIONS
//   (after a warm-up) by plugin/plugin_license/plc/test/signed-bench.c; baseline, interleaved in the same
//   process, the HMAC ticket's judge (plc_ticket_judge) for the same reader: what a plugin paid
//   before keys. Goal: at most 0.3 ms.
// - "plugin load to known state, signed ticket (agent stopped, 50 instances) p99": monitor-probe's
//   load (50 Monitors per process, each constructor and first isLicensed() read timed) built with
//   the vendor's key, on a ticket and a signed ticket the library's writers made for this computer,
//   LOAD_RUNS processes; baseline the same load without keys (the ticket alone). Goal: at most 1 ms,
//   as the unsigned load (the signature verified once per process and file version, not per instance).
// Compiled with -O2 as a plugin would be. Linux and macOS (monitor-probe reads the OS's machine id).
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeSignedTicket, encodeTicket, machineIdOf, signedTicketPath, ticketKeyOf, ticketPath } from '@plugin-license/licensing';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const plc = join(root, 'plugin', 'plugin_license', 'plc');
const vectors = join(root, 'packages', 'licensing', 'test', 'signed-ticket-vectors');
const ITERATIONS = 5000;
const LOAD_RUNS = 40;
const PROJECT = '123e4567-e89b-12d3-a456-426614174000';

export async function run() {
  for (const tool of ['cc', 'c++']) {
    if (spawnSync(tool, ['--version'], { stdio: 'ignore' }).status !== 0) {
      console.log(`signed-ticket: no \`${tool}\` on PATH, skipped`);
      return [];
    }
  }
  const build = mkdtempSync(join(tmpdir(), 'plc-signed-bench-'));
  try {
    compile('cc', ['-std=c11', '-O2', `-I${plc}`, join(plc, 'test', 'signed-bench.c'), '-o', join(build, 'signed-bench')]);
    const manifest = JSON.parse(readFileSync(join(vectors, 'manifest.json'), 'utf8'));
    const r = spawnSync(join(build, 'signed-bench'), [join(vectors, 'valid.ticket'), join(vectors, 'valid-online.signed'), manifest.keys['vendor-key-1'].public_key, String(ITERATIONS)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`signed-ticket: signed-bench failed: ${r.stderr}`);
    const verify = JSON.parse(r.stdout);
    const figures = [
      { name: 'signed ticket verify p99', value: verify.signed_p99_ms, unit: 'ms', baseline: verify.ticket_p99_ms, ratio: verify.signed_p99_ms / verify.ticket_p99_ms, goal: 'at most 0.3 ms' },
      { name: 'signed ticket verify median', value: verify.signed_median_ms, unit: 'ms', baseline: verify.ticket_median_ms, ratio: verify.signed_median_ms / verify.ticket_median_ms },
    ];

    const raw = rawMachineId();
    if (raw === undefined) {
      console.log('signed-ticket: no OS machine id here, the plugin-load figure skipped');
      return figures;
    }
    compile('cc', ['-std=c11', '-O2', `-I${plc}`, '-c', join(plc, 'plc.c'), '-o', join(build, 'plc.o')]);
    compile('c++', ['-std=c++17', '-O2', `-I${plc}`, '-pthread', join(plc, 'tools', 'monitor-probe.cpp'), join(build, 'plc.o'), '-o', join(build, 'monitor-probe')]);
    const app = `bench-signed-${process.pid}`;
    const home = join(build, 'home');
    const now = Math.floor(Date.now() / 1000);
    const ticket = ticketPath({ namespace: app, home }, PROJECT);
    mkdirSync(dirname(ticket), { recursive: true, mode: 0o700 });
    const fields = { app, project_id: PROJECT, code_hint: 'abcd…1234', source: 'online', issued_at: now - 60, valid_until: now + 30 * 86_400 };
    writeFileSync(ticket, encodeTicket(ticketKeyOf(raw, app), { v: 1, ...fields, valid: true, reason: null }), { mode: 0o600 });
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(signedTicketPath({ namespace: app, home }, PROJECT), encodeSignedTicket({ ...fields, machine_id: machineIdOf(raw, app) }, { privateKey }), { mode: 0o600 });
    const key = `ed25519:${publicKey.export({ format: 'jwk' }).x}`;
    const env = { PLUGIN_LICENSE_APP: app, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: join(build, 'none.sock'), PLUGIN_LICENSE_EXECUTABLE: '' };
    const signedLoad = p99(loadTimes(join(build, 'monitor-probe'), env, ['--key', key]));
    const plainLoad = p99(loadTimes(join(build, 'monitor-probe'), env, []));
    figures.push({
      name: 'plugin load to known state, signed ticket (agent stopped, 50 instances) p99',
      value: signedLoad,
      unit: 'ms',
      baseline: plainLoad,
      ratio: signedLoad / plainLoad,
      goal: 'at most 1 ms',
    });
    return figures;
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
}

// Each instance's construction and first read (ms), 50 per process, LOAD_RUNS processes; every
// load must be licensed (by the signed ticket with the key, by the ticket without).
function loadTimes(probe, env, extra) {
  const times = [];
  for (let i = 0; i < LOAD_RUNS; i++) {
    const r = spawnSync(probe, ['load', PROJECT, '50', '--no-start', ...extra], { env: { ...process.env, ...env }, encoding: 'utf8' });
    const line = JSON.parse(r.stdout.split('\n')[0]);
    if (line.state !== 'valid' || line.licensed_first_read !== 50) throw new Error(`signed-ticket: the load was not licensed: ${r.stdout}${r.stderr}`);
    times.push(...line.load_ns.map((ns) => ns / 1e6));
  }
  return times;
}

function rawMachineId() {
  for (const f of ['/var/lib/dbus/machine-id', '/etc/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').split('\n')[0].trim();
  }
  return undefined;
}

const p99 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];

function compile(tool, args) {
  const r = spawnSync(tool, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tool} failed:\n${r.stderr}`);
}
