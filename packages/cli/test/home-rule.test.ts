// HOME empty or relative, no PLUGIN_LICENSE_HOME: the built CLI and the agent refuse in one line
// and write nothing anywhere (an agent the CLI started in / once wrote /.local/share/APP). The rule
// itself (licensing's userHome) and its agreement with plc are tested beside them.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENT_CLI } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers.js';

const PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const CODE = '3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601';
/** Where a relative home would land when the working folder is / (the agent started on demand works there), and the agent's socket folder. */
const ROOT_SPOTS = ['/.local', '/.cache', '/.config', '/relative', `/tmp/home-rule-${process.getuid?.() ?? 0}`];

function run(program: string, args: string[], home: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Nothing inherited: no PLUGIN_LICENSE_HOME, no XDG_* (the runner's would hide HOME).
    const env = { PATH: process.env.PATH, HOME: home, PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:9/functions/v1', PLUGIN_LICENSE_APP: 'home-rule' };
    const child = spawn(process.execPath, [program, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('an empty or relative HOME', () => {
  let cwd: string;
  const before = new Map(ROOT_SPOTS.map((p) => [p, existsSync(p)]));
  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), 'home-rule-'));
  });
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  const commands: Array<[string, string, string[]]> = [
    ['plugin-license activate', CLI, ['activate', CODE, '--project', PROJECT]],
    ['plugin-license deactivate', CLI, ['deactivate', '--project', PROJECT]],
    ['plugin-license machine-id', CLI, ['machine-id']],
    ['plugin-license agent run', CLI, ['agent', 'run']],
    ['plugin-license-agent run', AGENT_CLI, ['run']],
  ];
  const cases = ['', 'relative/path', '.'].flatMap((home) => commands.flatMap(([name, program, args]) => [
    [`${name} with HOME=${JSON.stringify(home)} in a scratch folder`, program, args, home, 'scratch'] as const,
    [`${name} with HOME=${JSON.stringify(home)} in /`, program, args, home, '/'] as const,
  ]));

  it.each(cases)('%s: one line saying why, exit 2, nothing written', async (_, program, args, home, where) => {
    const r = await run(program, [...args], home, where === '/' ? '/' : cwd);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^plugin-license(-agent)?: HOME is .*(set but empty|not an absolute path), so this user's folders .* are unknown and nothing was written; set HOME to the home folder as an absolute path .*, or PLUGIN_LICENSE_HOME/);
    expect(readdirSync(cwd)).toEqual([]);
    for (const spot of ROOT_SPOTS) expect(existsSync(spot), spot).toBe(before.get(spot));
  }, 40_000);

  it.each(['', 'relative/path'])('doctor with HOME=%j: the folders fail once, in those words, and nothing is written', async (home) => {
    const r = await run(CLI, ['--json', 'doctor'], home, cwd);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as { checks: Array<{ section: string; name: string; level: string; detail: string }> };
    const failed = report.checks.filter((c) => c.level === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ section: 'configuration', name: 'folders', detail: expect.stringMatching(/^HOME is .*nothing was written/) });
    expect(readdirSync(cwd)).toEqual([]);
  }, 40_000);
});
