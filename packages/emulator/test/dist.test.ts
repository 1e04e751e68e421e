import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// Starts the built emulator, asks it one question, closes it; prints what it saw.
const body = `
  const e = await m.startEmulator();
  const r = await fetch(e.baseUrl + '/sdk/status', { headers: { authorization: 'Bearer ' + e.token } });
  console.log(JSON.stringify({ status: r.status, keys: Object.keys(m).sort(), base: e.baseUrl }));
  await e.close();
`;

describe('built dist', () => {
  it('is built', () => {
    expect(existsSync(resolve(packageDir, 'dist/index.js')), 'run pnpm build first').toBe(true);
  });

  it('loads as ESM (import)', async () => {
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `const m = await import('@plugin-license/emulator');${body}`], {
      cwd: packageDir,
      timeout: 20_000,
    });
    const out = JSON.parse(stdout.trim()) as { status: number; keys: string[] };
    expect(out.status).toBe(200);
    expect(out.keys).toContain('startEmulator');
  });

  it('loads as CommonJS (require), also where require(esm) is unavailable', async () => {
    const flags = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : [];
    const { stdout } = await run(process.execPath, [...flags, '-e', `const m = require('@plugin-license/emulator'); (async () => {${body}})();`], {
      cwd: packageDir,
      timeout: 20_000,
    });
    const out = JSON.parse(stdout.trim()) as { status: number; keys: string[] };
    expect(out.status).toBe(200);
    expect(out.keys).toContain('EmulatorError');
  });
});
