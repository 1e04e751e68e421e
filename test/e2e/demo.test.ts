import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The main job (`pnpm demo`) as a newcomer runs it: a child process over the built packages.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function run(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(root, 'examples/demo/demo.mjs')], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

describe('pnpm demo', () => {
  it('narrates activation, a plugin check, offline grace, revocation pushed, clean stop; exit 0', async () => {
    expect(existsSync(join(root, 'agent/dist/bin/agent.cjs')), 'run `pnpm build` first').toBe(true);
    const { code, stdout, stderr } = await run();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/installer activates[\s\S]*VALID, source online/);
    expect(stdout).toMatch(/boards a plane[\s\S]*refresh\s+VALID, source cache[\s\S]*plugin sees\s+VALID/);
    expect(stdout).toMatch(/plugin told\s+changed: NOT VALID \(code_revoked\)/);
    expect(stdout).toMatch(/agent\s+exited 0 on SIGTERM/);
    expect(stdout).toMatch(/edited copy\s+tampered: authentication tag does not match/);
    expect(stdout).toMatch(/relay signs the ticket[\s\S]*plugin reads\s+valid, signed by [0-9a-f]{16}[\s\S]*forged ticket\s+a plugin without keys: valid; built with the key: not_licensed \(unsigned\)[\s\S]*a year added\s+tampered/);
    expect(stdout).toMatch(/docs push\s+no build: trigger 0: no changed file matches paths.include/);
    expect(stdout).toMatch(/success\s+completed\s+100%/);
    expect(stdout).toMatch(/downloaded\s+dist\/DemoReverb-1\.0\.1-windows\.vst3\.zip: \d+ bytes, sha256 [0-9a-f]{16}… matches/);
    expect(stdout).toMatch(/receiver got\s+build\.queued, build\.started, build\.success/);
    // Codes appear only as hints: the only full UUIDs are project and build ids.
    for (const m of stdout.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi)) {
      expect(stdout.slice(Math.max(0, m.index - 20), m.index)).toMatch(/project|build /);
    }
  }, 90_000);
});
