#!/usr/bin/env node
// `pnpm relay:deno [--host 127.0.0.1] [--port 0]`: the relay under Deno (the npm package `deno`),
// running dist/deno/relay.js with the same environment, flags and start line as
// `plugin-license relay serve`. Deno gets the network and the environment, nothing else.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const entry = fileURLToPath(new URL('../dist/deno/relay.js', import.meta.url));
if (!existsSync(entry)) {
  process.stderr.write(`relay:deno: ${entry} is missing; run "pnpm build" first\n`);
  process.exit(2);
}
let deno;
try {
  deno = createRequire(import.meta.url)('deno/install_api.cjs').runInstall();
} catch (e) {
  process.stderr.write(`relay:deno: Deno is not installed (${e.message}); run "pnpm install"\n`);
  process.exit(2);
}
const child = spawn(deno, ['run', '--allow-net', '--allow-env', '--no-prompt', entry, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' },
});
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' ? 130 : 1)));
