#!/usr/bin/env node
// `pnpm relay:workerd [--host 127.0.0.1] [--port 0]`: the relay as a Cloudflare Worker, run by
// workerd (the npm package @cloudflare/workerd-linux-64), with the same environment, flags and
// start line as `plugin-license relay serve`. A generated capnp config hands each RELAY_*
// variable to the Worker as a binding (`fromEnvironment`: the secrets are never written to disk);
// the script waits for workerd's port, asks the Worker for its keys, then prints the line.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { isRelayConfigError, loadRelayConfig, originOf, parseServeFlags, RELAY_VARIABLES, startLine } from '../dist/index.js';

const NAME = 'plugin-license relay';
const fail = (message) => {
  process.stderr.write(`${NAME}: ${message}\n`);
  process.exit(2);
};
const worker = fileURLToPath(new URL('../dist/workerd/worker.js', import.meta.url));
if (!existsSync(worker)) fail(`${worker} is missing; run "pnpm build" first`);
const flags = parseServeFlags(process.argv.slice(2));
if ('problem' in flags) fail(flags.problem);
// The Worker reads its bindings with the same loadRelayConfig: checked here first, so a bad
// variable stops the start with the same words and exit 2 as on Node and Deno.
try {
  await loadRelayConfig(process.env);
} catch (e) {
  if (!isRelayConfigError(e)) throw e;
  fail(`${e.message}; the relay did not start`);
}
let workerd;
try {
  workerd = join(createRequire(import.meta.url).resolve('@cloudflare/workerd-linux-64/package.json'), '..', 'bin', 'workerd');
} catch {
  fail('workerd is not installed (the npm package @cloudflare/workerd-linux-64, Linux x64 only); run "pnpm install" on Linux x64');
}

const dir = mkdtempSync(join(tmpdir(), 'relay-workerd-'));
copyFileSync(worker, join(dir, 'worker.js'));
const bindings = RELAY_VARIABLES.filter((name) => process.env[name] !== undefined).map((name) => `(name = "${name}", fromEnvironment = "${name}")`);
writeFileSync(
  join(dir, 'relay.capnp'),
  `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "relay", worker = .relay),
    (name = "internet", network = (allow = ["public", "private", "local"], tlsOptions = (trustBrowserCas = true))),
  ],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "relay")],
);
const relay :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2025-06-01",
  bindings = [${bindings.join(', ')}],
  globalOutbound = "internet",
);
`,
);
const address = `${flags.host.includes(':') ? `[${flags.host}]` : flags.host}:${flags.port}`;
const child = spawn(workerd, ['serve', join(dir, 'relay.capnp'), `--socket-addr=http=${address}`, '--control-fd=3'], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
// The Worker's console (its one line per request) and workerd's own words go to stderr: stdout is the start line's.
child.stdout.pipe(process.stderr);
child.stderr.pipe(process.stderr);
const cleanup = () => rmSync(dir, { recursive: true, force: true });
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  cleanup();
  process.exit(code ?? (signal === 'SIGINT' ? 130 : 1));
});
const control = createInterface({ input: child.stdio[3] });
control.on('line', async (line) => {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    return;
  }
  if (event.event !== 'listen' || event.socket !== 'http') return;
  control.close();
  const origin = originOf(flags.host, event.port);
  const res = await fetch(`${origin}/.well-known/plugin-license-keys`).catch((e) => e);
  const body = res instanceof Error ? undefined : await res.json().catch(() => undefined);
  if (res instanceof Error || res.status !== 200 || !Array.isArray(body?.keys)) {
    process.stderr.write(`${NAME}: the Worker did not answer its keys (${res instanceof Error ? res.message : `${res.status} ${body?.message ?? ''}`}); stopping\n`);
    child.kill('SIGTERM');
    process.exitCode = 2;
    return;
  }
  process.stdout.write(`${startLine(origin, body.keys)}\n`);
});
