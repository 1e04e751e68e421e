#!/usr/bin/env node
// A launcher that exists before any build, so package managers can link the bin at install time.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
// A checkout that was never built has this launcher but not what it runs.
if (!existsSync(cli)) {
  process.stderr.write('plugin-license-emulator: this copy is not built yet (dist/cli.js is missing): run pnpm install && pnpm build in the repository first\n');
  process.exit(1);
}
await import(cli.href);
