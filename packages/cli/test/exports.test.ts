// The built package loads as ESM and as CommonJS (yocto-spinner, ESM-only, is bundled in), and
// run() works embedded: a script can call it with its own streams. The executable is files that
// load when needed: `--version` reads the parser alone.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { tempHome } from '@plugin-license/test-utils';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = async (args: string[]): Promise<string> => (await promisify(execFile)(process.execPath, args, { cwd: packageDir })).stdout.trim();

const probe = `
  let out = '';
  const sink = { write: (s) => { out += s; return true; }, isTTY: false };
  m.run(['--json', 'machine-id', '--project', 'not-a-uuid-is-fine-here'], { stdout: sink, stderr: sink, env: { PLUGIN_LICENSE_HOME: require('node:os').tmpdir() + '/plc-exports' } })
    .then((code) => console.log(JSON.stringify({ names: Object.keys(m).sort(), code, id: JSON.parse(out).machine_id.slice(0, 3), exit: m.EXIT })));
`;

describe('built package', () => {
  it('loads with require() and with import, and run() answers with an exit code', async () => {
    const cjs = JSON.parse(await node(['-e', `const m = require('@plugin-license/cli');${probe}`]));
    const esm = JSON.parse(await node(['--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/package.json'); const m = await import('@plugin-license/cli');${probe}`]));
    expect(esm.names).toEqual(cjs.names);
    for (const r of [cjs, esm]) {
      expect(r.names).toEqual(expect.arrayContaining(['run', 'EXIT', 'CliError', 'classify', 'CLI_VERSION']));
      expect(r.code).toBe(0);
      expect(r.id).toBe('m1_');
      expect(r.exit).toEqual({ ok: 0, failed: 1, usage: 2, negative: 3, interrupted: 130 });
    }
  });
});

describe('the executable', () => {
  it('--version and --help read the parser alone; a command loads the rest, each through the code cache', async () => {
    const home = tempHome('plc-bin-');
    try {
      const env = { PATH: process.env.PATH, HOME: home.dir, PLUGIN_LICENSE_HOME: home.dir };
      const run = (args: string[]) => promisify(execFile)(process.execPath, [CLI, ...args], { env }).then((r) => ({ ...r, code: 0 }), (e: { code: number; stdout: string; stderr: string }) => e);
      const cached = (): string[] => readdirSync(join(home.dir, 'cache', 'compile')).map((f) => f.replace(/-v\d.*$/, '')).sort();
      expect((await run(['--version'])).stdout.trim()).toBe(`0.1.0 (node ${process.versions.node}, ${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}, namespace plugin-license)`);
      expect((await run(['--app', 'acme-audio', '--version'])).stdout).toContain('namespace acme-audio)');
      expect((await run(['--help'])).stdout).toContain('Exit codes:');
      expect(cached()).toEqual(['cli-cli']);
      expect((await run(['--json', 'machine-id'])).stdout).toContain('"machine_id": "m1_');
      expect(cached()).toEqual(['cli-cli', 'cli-commands']);
      // The relay is a file of its own, loaded by `relay serve` alone (no RELAY_* here: exit 2).
      const relay = await run(['relay', 'serve']);
      expect([relay.code, relay.stderr]).toEqual([2, expect.stringContaining('RELAY_SIGNING_KEY is missing')]);
      expect(cached()).toEqual(['cli-cli', 'cli-commands', 'cli-relay']);
    } finally {
      home.cleanup();
    }
  });
});
