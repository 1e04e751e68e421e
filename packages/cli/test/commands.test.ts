// The built `plugin-license` binary as a child process against the emulator over loopback: every
// command in human and --json form, every exit code, the agent path, another machine's slot.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgent } from '@plugin-license/agent';
import { describe, expect, it } from 'vitest';
import { CLI, cli, envFor, useCliService } from './helpers.js';

const { service, home } = useCliService();
const ESC = '\u001b[';

/** Asserts the --json contract: stdout is exactly one JSON document, and stderr has nothing. */
function oneDocument(run: { stdout: string; stderr: string }): Record<string, unknown> {
  expect(() => JSON.parse(run.stdout)).not.toThrow();
  expect(run.stdout.trim().startsWith('{')).toBe(true);
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe('plugin-license commands', () => {
  it('status: human and --json; exit 0 valid, 3 revoked, 3 unknown; no full code printed', async () => {
    const env = envFor(service, home());
    const code = await service.code(2);
    const human = await cli(['status', code], env);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/activations\s+0 of 2/);
    expect(human.stdout).not.toContain(code);
    expect(human.stdout).not.toContain(ESC);
    const json = await cli(['--json', 'status', code], env);
    expect(json.code).toBe(0);
    expect(oneDocument(json)).toEqual({ code_hint: `${code.slice(0, 4)}…${code.slice(-4)}`, activations: 0, max_activations: 2, available: 2, is_revoked: false });
    await service.control.revoke(code);
    expect((await cli(['status', code], env)).code).toBe(3);
    const unknown = await cli(['--json', 'status', '00000000-0000-4000-8000-000000000000'], env);
    expect(unknown.code).toBe(3);
    expect((oneDocument(unknown).error as { code: string }).code).toBe('code_not_found');
  });

  it('generate, keys (table, --csv, --all-codes, --json) and usage', async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    const gen = await cli(['--json', 'generate', projectId, '--max-activations', '3', '--notes', 'reseller, "A"', '--count', '2'], env);
    expect(gen.code).toBe(0);
    const keys = (oneDocument(gen).keys as Array<{ code: string; max_activations: number }>);
    expect(keys).toHaveLength(2);
    expect(keys[0]!.max_activations).toBe(3);
    const single = await cli(['generate', projectId], env);
    expect(single.code).toBe(0);
    expect(single.stdout.trim()).toMatch(/^[A-Za-z0-9-]{8,}$/); // the one place a full code is printed unasked

    const table = await cli(['keys', projectId], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^code\s+type\s+activations\s+revoked\s+notes\s+created/);
    for (const k of keys) expect(table.stdout).not.toContain(k.code);
    const csv = await cli(['keys', projectId, '--csv', '--all-codes'], env);
    expect(csv.stdout.split('\n')[0]).toBe('code,type,activations,max_activations,revoked,notes,created_at');
    for (const k of keys) expect(csv.stdout).toContain(`${k.code},project_test,0,3,false,"reseller, ""A""",`);
    const listed = oneDocument(await cli(['--json', 'keys', projectId], env)).keys as Array<Record<string, unknown>>;
    expect(listed.some((k) => 'code' in k)).toBe(false);
    const full = oneDocument(await cli(['--json', 'keys', projectId, '--all-codes'], env)).keys as Array<{ code: string }>;
    for (const k of keys) expect(full.map((f) => f.code)).toContain(k.code);

    const usage = await cli(['--json', 'usage'], env);
    expect(usage.code).toBe(0);
    expect(oneDocument(usage)).toMatchObject({ period: expect.stringMatching(/^\d{4}-\d{2}$/), limit: expect.any(Number) });
    expect((await cli(['usage'], env)).stdout).toMatch(/builds used\s+\d+ of \d+/);
  });

  it('activate, validate, deactivate with the library: exit 0, 3 when not activated, and the state stored', async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    expect((await cli(['validate', '--project', projectId], env)).code).toBe(3);
    const code = await service.code(1);
    const act = await cli(['activate', code, '--project', projectId], env);
    expect(act.code, act.stderr).toBe(0);
    expect(act.stdout).toMatch(/license\s+valid/);
    expect(act.stderr).toContain('directly with the library');
    expect(readdirSync(join(home(), 'data', 'licenses'))).toContain(`${projectId}.json`);
    const val = await cli(['--json', 'validate', '--project', projectId], env);
    expect(val.code).toBe(0);
    expect(oneDocument(val)).toMatchObject({ via: 'library', license: { valid: true, source: 'online', code_hint: `${code.slice(0, 4)}…${code.slice(-4)}` } });
    // No slot left for a second machine: a negative answer, exit 3.
    const other = await cli(['--json', 'activate', code, '--project', projectId, '--machine-id', 'studio-pc-2'], envFor(service, home(), { PLUGIN_LICENSE_HOME: join(home(), 'other') }));
    expect(other.code).toBe(3);
    expect((oneDocument(other).error as { code: string }).code).toBe('max_activations_reached');
    const deact = await cli(['--json', 'deactivate', '--project', projectId], env);
    expect(deact.code).toBe(0);
    expect(oneDocument(deact)).toMatchObject({ via: 'library', license: { valid: false, reason: 'not_activated' } });
    expect((await service.admin.activation.status(code)).activations).toBe(0);
  });

  it("validate and deactivate another machine's slot by --code and --machine-id (a dead computer)", async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    await service.admin.activation.activate({ code, machine_id: 'dead-studio-pc', plugin_id: projectId });
    const val = await cli(['--json', 'validate', '--project', projectId, '--code', code, '--machine-id', 'dead-studio-pc'], env);
    expect(val.code).toBe(0);
    expect(oneDocument(val)).toMatchObject({ valid: true, machine_id: 'dead-studio-pc' });
    const freed = await cli(['deactivate', '--project', projectId, '--code', code, '--machine-id', 'dead-studio-pc'], env);
    expect(freed.code).toBe(0);
    expect(freed.stdout).toContain('Released the slot of machine dead-studio-pc');
    expect(freed.stdout).not.toContain(code);
    expect((await service.admin.activation.status(code)).activations).toBe(0);
    expect((await cli(['validate', '--project', projectId, '--code', code, '--machine-id', 'dead-studio-pc'], env)).code).toBe(3);
    // Again, or a mistyped machine id: nothing is released, and the exit code says so.
    const nothing = await cli(['--json', 'deactivate', '--project', projectId, '--code', code, '--machine-id', 'dead-studio-pc'], env);
    expect(nothing.code).toBe(3);
    expect(oneDocument(nothing)).toMatchObject({ released: false, activations: 0, max_activations: 2 });
    const half = await cli(['deactivate', '--project', projectId, '--code', code], env);
    expect(half.code).toBe(2);
    expect(half.stderr).toContain('--code and --machine-id go together');
  });

  it("--machine-id of this computer with a license stored here is refused: this computer's slot goes back only through deactivate --project (its ticket first)", async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    expect((await cli(['activate', code, '--project', projectId], env)).code).toBe(0);
    const id = (oneDocument(await cli(['--json', 'machine-id'], env)) as { machine_id: string }).machine_id;
    const run = await cli(['deactivate', '--project', projectId, '--code', code, '--machine-id', id], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`machine id ${id} is this computer's, and it holds a license of`);
    expect(run.stderr).toContain(`give it back with deactivate --project ${projectId}`);
    expect((await service.admin.activation.status(code)).activations).toBe(1);
    expect((await cli(['--json', 'validate', '--project', projectId], env)).code).toBe(0);
    // Nothing stored here: the slot this computer's id holds at the service is released as asked.
    expect((await cli(['deactivate', '--project', projectId], env)).code).toBe(0);
    await service.admin.activation.activate({ code, machine_id: id, plugin_id: projectId });
    expect((await cli(['deactivate', '--project', projectId, '--code', code, '--machine-id', id], env)).code).toBe(0);
    expect((await service.admin.activation.status(code)).activations).toBe(0);
  });

  it('through a running agent: activate says so, the agent holds it at once; agent status|check|refresh|list', async () => {
    const h = home();
    const env = envFor(service, h);
    const projectId = service.emulator.projectId;
    const agent = await startAgent({ baseUrl: service.emulator.baseUrl, home: h, socketPath: join(h, 'agent.sock'), logger: false });
    try {
      const code = await service.code(2);
      const act = await cli(['activate', code, '--project', projectId], env);
      expect(act.code, act.stderr).toBe(0);
      expect(act.stderr).toContain('through the running agent');
      const status = await cli(['--json', 'agent', 'status'], env);
      expect(status.code).toBe(0);
      expect(oneDocument(status)).toMatchObject({ running: true, from: 'agent', protocol: 1, licenses: [expect.objectContaining({ project_id: projectId, valid: true })] });
      const check = await cli(['--json', 'agent', 'check', projectId], env);
      expect(oneDocument(check)).toMatchObject({ via: 'agent', license: { valid: true } });
      expect((await cli(['agent', 'refresh', projectId], env)).code).toBe(0);
      // validate always asks with the library: it says so, and never that no agent answers.
      const val = await cli(['validate', '--project', projectId], env);
      expect(val.code, val.stderr).toBe(0);
      expect(val.stderr).toContain('validated directly with the library (a running agent reads the stored answer within a second)');
      expect(val.stderr).not.toContain('no agent answers');
      const list = await cli(['agent', 'list'], env);
      expect(list.stdout).toContain(projectId);
      const deact = await cli(['deactivate', '--project', projectId], env);
      expect(deact.code).toBe(0);
      expect(deact.stderr).toContain('through the running agent');
      expect((await cli(['agent', 'check', projectId], env)).code).toBe(3);
    } finally {
      await agent.close();
    }
    const stopped = await cli(['--json', 'agent', 'status'], env);
    expect(stopped.code).toBe(1);
    // Read from the cache files, where the deactivated license no longer is.
    expect(oneDocument(stopped)).toMatchObject({ running: false, from: 'cache', licenses: [] });
    const check = await cli(['agent', 'check', projectId], env);
    expect(check.code).toBe(1);
    expect(check.stderr).toMatch(/no agent answers for namespace 'plugin-license' at .*agent\.sock; start it with: plugin-license-agent run/);
  });

  it('config: path shows where, set writes one checked key (keeping the others, 0600), unset removes it; bad input changes nothing', async () => {
    const h = home();
    const env = envFor(undefined, h);
    const file = join(h, 'config', 'config.json');
    expect((await cli(['config', 'path'], env)).stdout).toBe(`${file}\n`);
    expect((await cli(['config', 'path', '--folder', 'data'], env)).stdout).toBe(`${join(h, 'data')}\n`);
    expect(oneDocument(await cli(['--json', 'config', 'path'], env))).toMatchObject({ namespace: 'plugin-license', config_file: file, exists: false, folders: { log: join(h, 'log') } });
    const set = await cli(['config', 'set', 'base_url', 'http://127.0.0.1:5555/functions/v1/'], env);
    expect(set.code, set.stderr).toBe(0);
    expect((await cli(['config', 'set', 'offline_max_days', '30'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ base_url: 'http://127.0.0.1:5555/functions/v1', offline_max_days: 30 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = oneDocument(await cli(['--json', 'config', 'set', 'token', 'secret-token-value'], env));
    expect(JSON.stringify(token)).not.toContain('secret-token-value');
    for (const [args, message] of [
      [['config', 'set', 'base_url', 'http://10.0.0.1/functions/v1'], /https:\/\//],
      [['config', 'set', 'offline_max_days', '0'], /from 1 to 3650/],
      [['config', 'set', 'log_level', 'loud'], /log_level 'loud' is unknown/],
      [['config', 'set', 'app_group', '../escape'], /app_group must be an app group id such as ABCDE12345\.com\.acme\.audio/],
      [['config', 'set', 'baseUrl', 'x'], /'baseUrl' is not a setting config set writes; use one of base_url/],
    ] as const) {
      const r = await cli([...args], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect((await cli(['config', 'unset', 'token'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ base_url: 'http://127.0.0.1:5555/functions/v1', offline_max_days: 30 });
    writeFileSync(file, '{ broken');
    const broken = await cli(['config', 'set', 'proxy', ''], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/is not valid JSON .*fix or remove it/);
    expect(readFileSync(file, 'utf8')).toBe('{ broken');
    // A folder the disk refuses (a file where the config folder goes): a clear error, nothing written.
    const blocked = join(h, 'blocked');
    mkdirSync(blocked);
    writeFileSync(join(blocked, 'config'), 'not a folder');
    const refused = await cli(['config', 'set', 'base_url', 'https://licenses.example.com/functions/v1'], envFor(undefined, blocked));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/cannot write .*config\.json \((ENOTDIR|EEXIST)\); check the folder's permissions/);
    expect(readFileSync(join(blocked, 'config'), 'utf8')).toBe('not a folder');
  });

  it('deactivate needs --project or --all, never both; --all with nothing held says so and exits 0', async () => {
    const env = envFor(service, home());
    for (const [args, message] of [
      [['deactivate'], /give --project ID \(or --all for every license of this computer\)/],
      [['deactivate', '--all', '--project', service.emulator.projectId], /--all releases every license of this computer: give it alone/],
      [['deactivate', '--all', '--code', 'X', '--machine-id', 'm1_x'], /give it alone/],
    ] as const) {
      const r = await cli([...args], env);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const none = await cli(['--json', 'deactivate', '--all'], env);
    expect(none.code).toBe(0);
    expect(oneDocument(none)).toEqual({ via: 'library', released: [], skipped: [], failed: [] });
  });

  it('machine-id: the id, its source, stable between runs', async () => {
    const env = envFor(service, home());
    const a = oneDocument(await cli(['--json', 'machine-id'], env));
    const b = oneDocument(await cli(['--json', 'machine-id'], env));
    expect(a.machine_id).toMatch(/^m1_[0-9a-f]{64}$/);
    expect(['os', 'generated']).toContain(a.source);
    expect(b.machine_id).toBe(a.machine_id);
    expect((await cli(['machine-id'], env)).stdout).toMatch(/machine id\s+m1_/);
  });

  it('colour only on a terminal and without NO_COLOR', async () => {
    const env = envFor(service, home());
    const code = await service.code(1);
    await service.control.revoke(code);
    const piped = await cli(['status', code], env);
    expect(piped.stdout + piped.stderr).not.toContain(ESC);
    // A pseudo-terminal through script(1), where it exists.
    try {
      execFileSync('script', ['--version'], { stdio: 'ignore' });
    } catch {
      console.warn('skipped the terminal half: script(1) is not installed');
      return;
    }
    const viaTty = (extra: Record<string, string>): Promise<string> =>
      new Promise((resolve) => {
        const child = spawn('script', ['-qec', `"${process.execPath}" "${CLI}" status ${code}`, '/dev/null'], { env: { ...env, TERM: 'xterm', ...extra } });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', () => resolve(out));
      });
    const tty = await viaTty({});
    expect(tty).toContain(ESC);
    expect(tty).toContain('revoked');
    expect(await viaTty({ NO_COLOR: '1' })).not.toContain(ESC);
  });
});
