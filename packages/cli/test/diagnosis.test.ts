// Support's diagnoses (issue 20): what the tool says must be what is true at the service and on
// this machine. The built binary against the emulator over loopback, with real mounts for the
// folder faults.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fullDisk, readOnlyFolder } from '@plugin-license/test-utils';
import { describe, expect, it } from 'vitest';
import { cli, envFor, jsonOf, useCliService } from './helpers.js';

const { service, home } = useCliService();

describe('acting for another machine', () => {
  it("activate --machine-id takes that machine's slot and stores nothing here: this machine's license is untouched", async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    const mine = await service.code(1);
    expect((await cli(['activate', mine, '--project', projectId], env)).code).toBe(0);
    const before = readdirSync(join(home(), 'data', 'licenses')).sort();

    const theirs = await service.code(2);
    const other = await cli(['activate', theirs, '--project', projectId, '--machine-id', 'm1_other-studio'], env);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stdout).toMatch(/activations\s+1 of 2/);
    expect(other.stderr).toContain('nothing was stored on this computer');
    expect((await service.admin.activation.status(theirs)).activations).toBe(1);
    expect(readdirSync(join(home(), 'data', 'licenses')).sort()).toEqual(before);

    // This machine's own license is as it was, on the next command and the one after.
    for (let i = 0; i < 2; i++) {
      const val = await cli(['--json', 'validate', '--project', projectId], env);
      expect(val.code, val.stdout).toBe(0);
      expect(jsonOf(val)).toMatchObject({ license: { valid: true, code_hint: `${mine.slice(0, 4)}…${mine.slice(-4)}` } });
    }
    // --json: the service's answer as fields.
    const again = await cli(['--json', 'activate', theirs, '--project', projectId, '--machine-id', 'm1_third'], env);
    expect(jsonOf(again)).toMatchObject({ activated: true, machine_id: 'm1_third', activations: 2, max_activations: 2 });
  });

  it('--machine-id with this machine\'s own id is this machine: stored as usual', async () => {
    const env = envFor(service, home());
    const own = (jsonOf(await cli(['--json', 'machine-id'], env)) as { machine_id: string }).machine_id;
    const code = await service.code(1);
    const run = await cli(['--json', 'activate', code, '--project', service.emulator.projectId, '--machine-id', own], env);
    expect(run.code).toBe(0);
    expect(jsonOf(run)).toMatchObject({ via: 'library', license: { valid: true } });
  });
});

describe('what validate shows is the service\'s word now', () => {
  it('slot counts follow another machine taking a slot; a negative answer moves "last online check"', async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    const code = await service.code(3);
    const act = jsonOf(await cli(['--json', 'activate', code, '--project', projectId], env)) as { license: { activations: number; checked_at: string } };
    expect(act.license.activations).toBe(1);
    await service.admin.activation.activate({ code, machine_id: 'm1_laptop', plugin_id: projectId });
    const val = jsonOf(await cli(['--json', 'validate', '--project', projectId], env)) as { license: { activations: number; checked_at: string } };
    expect(val.license).toMatchObject({ activations: 2, max_activations: 3 });
    expect(val.license.checked_at > act.license.checked_at).toBe(true);

    await service.control.revoke(code);
    const revoked = await cli(['--json', 'validate', '--project', projectId], env);
    expect(revoked.code).toBe(3);
    const after = (jsonOf(revoked) as { license: { reason: string; checked_at: string } }).license;
    expect(after.reason).toBe('code_revoked');
    expect(after.checked_at > val.license.checked_at).toBe(true);
    const human = await cli(['validate', '--project', projectId], env);
    expect(human.stdout).toMatch(/last online check\s+\S/);
    expect(human.stdout).not.toMatch(/last online check\s+-/);
  });
});

describe('who holds the slots', () => {
  it('status and deactivate --help say the service cannot list the machines, and where a machine id is found', async () => {
    const env = envFor(service, home());
    const code = await service.code(2);
    await service.admin.activation.activate({ code, machine_id: 'm1_a', plugin_id: service.emulator.projectId });
    const status = await cli(['status', code], env);
    expect(status.stderr).toMatch(/which machines hold the slots is not something the service can say: a machine's id is in its doctor report, or printed by machine-id/);
    for (const help of [await cli(['deactivate', '--help'], env), await cli(['status', '--help'], env)]) {
      expect(help.stdout).toContain('cannot say which machines hold them');
      expect(help.stdout).toContain('doctor report');
    }
  });
});

describe('a slot is taken only where its state can be stored', () => {
  it('a read-only licenses folder (intents writable): refused before the service is asked', async (ctx) => {
    const env = envFor(service, home());
    const licenses = join(home(), 'data', 'licenses');
    const intents = join(licenses, 'intents');
    mkdirSync(intents, { recursive: true });
    const writable = join(home(), 'writable-intents');
    mkdirSync(writable);
    const ro = readOnlyFolder(licenses);
    if (!ro.ok) return ctx.skip(ro.reason);
    try {
      execFileSync('mount', ['--bind', writable, intents]);
      try {
        const code = await service.code(1);
        const run = await cli(['--json', 'activate', code, '--project', service.emulator.projectId], env);
        expect(run.code).toBe(1);
        const error = (jsonOf(run) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe('cache_io');
        expect(error.message).toContain('nothing was asked of the service');
        expect((await service.admin.activation.status(code)).activations).toBe(0);
      } finally {
        execFileSync('umount', ['-l', intents]);
      }
    } finally {
      ro.undo();
    }
  });

  it('a disk that fills between the check and the write: the slot taken is given back', async (ctx) => {
    const env = envFor(service, home());
    const licenses = join(home(), 'data', 'licenses');
    // One page free: the check's probe fits (and is removed), the intent takes the page, the state finds none.
    const full = fullDisk(licenses, { freeBytes: 4096 });
    if (!full.ok) return ctx.skip(full.reason);
    try {
      const code = await service.code(1);
      const run = await cli(['--json', 'activate', code, '--project', service.emulator.projectId], env);
      const error = (jsonOf(run) as { error: { code: string; message: string } }).error;
      expect(run.code).toBe(1);
      expect(error.code).toBe('cache_io');
      expect(error.message).toContain('so the slot was given back');
      expect((await service.admin.activation.status(code)).activations).toBe(0);
    } finally {
      full.undo();
      rmSync(licenses, { recursive: true, force: true });
    }
  });
});

describe('doctor tells what is true now, and goes on to the end', () => {
  interface Report {
    ok: boolean;
    versions: { tool: string; version: string; node: string; os: string; arch: string };
    configuration: Record<string, unknown>;
    machine: { id: string; source: string; stable: boolean | null };
    service: { reachable: boolean; is_the_service: boolean | null };
    licenses: Array<{ project_id: string; valid: boolean; reason: string | null; stored: { valid: boolean }; service: { valid: boolean; reason: string | null; activations: number } | null }>;
    agent: { socket: string; running: boolean };
    checks: Array<{ section: string; name: string; level: string; detail: string; fix?: string }>;
  }
  const doctor = async (env: Record<string, string>, ...args: string[]) => {
    const run = await cli(['--json', 'doctor', ...args], env);
    return { run, report: JSON.parse(run.stdout) as Report };
  };

  it('after a revocation it says what the service says, not the cache, and writes nothing', async () => {
    const env = envFor(service, home());
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    expect((await cli(['activate', code, '--project', projectId], env)).code).toBe(0);
    const file = join(home(), 'data', 'licenses', `${projectId}.json`);
    const before = readFileSync(file, 'utf8');
    await service.control.revoke(code);
    const { run, report } = await doctor(env, '--project', projectId);
    expect(run.code).toBe(1);
    expect(report.licenses[0]).toMatchObject({ project_id: projectId, valid: false, reason: 'code_revoked', stored: { valid: true }, service: { valid: false, reason: 'code_revoked' } });
    const check = report.checks.find((c) => c.section === 'licenses' && c.name === projectId)!;
    expect(check).toMatchObject({ level: 'failed', detail: expect.stringContaining('the service says not valid: code_revoked'), fix: expect.stringContaining('revoked') });
    expect(readFileSync(file, 'utf8')).toBe(before);
    // status (the agent's view from the files) and doctor now agree that it is revoked once checked.
    expect((await cli(['validate', '--project', projectId], env)).code).toBe(3);
  });

  it('a broken config.json is one failed check; machine id, licenses and agent are still reported, each value its own field', async () => {
    const env = envFor(service, home());
    mkdirSync(join(home(), 'config'), { recursive: true });
    writeFileSync(join(home(), 'config', 'config.json'), '{ "base_url": ');
    const { run, report } = await doctor(env);
    expect(run.code).toBe(1);
    expect(report.checks.find((c) => c.section === 'configuration' && c.name === 'config file' && c.level === 'failed')?.detail).toMatch(/not valid JSON/);
    expect(report.versions).toMatchObject({ tool: 'plugin-license', version: '0.1.0', node: process.versions.node, os: process.platform, arch: process.arch });
    expect(report.machine).toMatchObject({ id: expect.stringMatching(/^m1_/), source: expect.any(String), stable: true });
    expect(report.configuration).toMatchObject({ config_problem: expect.stringContaining('not valid JSON'), base_url: { value: service.emulator.baseUrl, source: 'environment' } });
    expect(report.agent).toMatchObject({ socket: join(home(), 'agent.sock'), running: false });
    const sections = new Set(report.checks.map((c) => c.section));
    for (const s of ['versions', 'service', 'machine id', 'data folder', 'licenses', 'agent']) expect(sections.has(s), s).toBe(true);
  });

  it('a healthy air-gapped studio (offline activation, no base URL) is healthy', async () => {
    const projectId = service.emulator.projectId;
    const code = await service.code(1);
    const studio = join(home(), 'studio');
    const online = join(home(), 'online');
    const studioEnv = envFor(undefined, studio, { PLUGIN_LICENSE_SOCKET: join(studio, 'agent.sock') });
    mkdirSync(studio, { recursive: true });
    expect((await cli(['offline', 'request', '--project', projectId, '--code', code, '--out', join(studio, 'request.json')], studioEnv)).code).toBe(0);
    expect((await cli(['offline', 'activate', join(studio, 'request.json'), '--out', join(studio, 'response.json')], envFor(service, online))).code).toBe(0);
    expect((await cli(['offline', 'import', join(studio, 'response.json')], studioEnv)).code).toBe(0);
    const { run, report } = await doctor(studioEnv);
    expect(run.code, JSON.stringify(report.checks.filter((c) => c.level === 'failed'))).toBe(0);
    expect(report.checks.find((c) => c.name === 'base URL')).toMatchObject({ level: 'info', detail: expect.stringContaining('offline activation') });
    expect(report.licenses[0]).toMatchObject({ valid: true, service: null });
  });
});

describe('a base URL that answers but is not the service', () => {
  it('is a configuration problem (exit 2) everywhere, never "check the id" or a negative answer; doctor fails it', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'));
    await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/functions/v1`;
      const env = envFor(service, home(), { PLUGIN_LICENSE_BASE_URL: base });
      const code = await service.code(1);
      const status = await cli(['status', code], env);
      expect(status.code).toBe(2);
      expect(status.stderr).toMatch(/404 endpoint_not_found: no error body \(HTTP 404\); something answers at the base URL, but not the service; check the base URL/);
      expect(status.stderr).not.toContain('check the id');
      const act = await cli(['--json', 'activate', code, '--project', service.emulator.projectId], env);
      expect(act.code).toBe(2);
      expect((jsonOf(act) as { error: { message: string } }).error.message).toContain('not the service');
      const report = JSON.parse((await cli(['--json', 'doctor'], env)).stdout) as { checks: Array<{ section: string; name: string; level: string }> };
      expect(report.checks.find((c) => c.section === 'service' && c.name === 'is the service')?.level).toBe('failed');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('a broken config.json does not stop what only asks the agent', () => {
  it('agent check, agent status, agent list and machine-id still answer, saying once what is wrong with the file', async () => {
    const h = home();
    const env = envFor(service, h);
    const projectId = service.emulator.projectId;
    const { startAgent } = await import('@plugin-license/agent');
    const agent = await startAgent({ baseUrl: service.emulator.baseUrl, home: h, socketPath: join(h, 'agent.sock'), logger: false });
    try {
      expect((await cli(['activate', await service.code(1), '--project', projectId], env)).code).toBe(0);
      mkdirSync(join(h, 'config'), { recursive: true });
      writeFileSync(join(h, 'config', 'config.json'), '{"base_url": 42}');
      for (const args of [['agent', 'check', projectId], ['agent', 'status'], ['agent', 'list'], ['machine-id']]) {
        const run = await cli(args, env);
        expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
        expect(run.stderr.match(/"base_url" in .*config\.json must be a string/g), args.join(' ')).toHaveLength(1);
      }
      // A command that needs the file still refuses it.
      expect((await cli(['status', await service.code(1)], env)).code).toBe(2);
    } finally {
      await agent.close();
    }
  });
});

describe('advice fits the failure, once', () => {
  it('a wrong webhook secret is about the webhook secret; an unexplained 401 on the trigger too; never the access token', async () => {
    const env = envFor(service, home(), { PLUGIN_LICENSE_WEBHOOK_SECRET: 'whsec_wrong' });
    const run = await cli(['trigger', service.emulator.projectId], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/401 unauthorized/);
    expect(run.stderr).not.toMatch(/access token|PLUGIN_LICENSE_TOKEN/);
    const { createServer } = await import('node:http');
    const bare = createServer((_req, res) => res.writeHead(401).end());
    await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(bare.address() as { port: number }).port}/functions/v1`;
      const unexplained = await cli(['trigger', service.emulator.projectId], { ...env, PLUGIN_LICENSE_BASE_URL: base });
      expect(unexplained.stderr).toContain("check the project's webhook secret");
      expect(unexplained.stderr).not.toMatch(/access token/);
    } finally {
      await new Promise<void>((r) => bare.close(() => r()));
    }
  });

  it("a used-up build quota says so in the service's words, not that the account may not use the resource", async () => {
    const { startEmulator } = await import('@plugin-license/emulator');
    const { ServiceClient } = await import('@plugin-license/api');
    const emu = await startEmulator({ rateLimits: { builds: 100_000, activation: 100_000, general: 100_000 } });
    const admin = new ServiceClient({ baseUrl: emu.baseUrl, token: emu.token, retry: false });
    try {
      const env = envFor(undefined, home(), { PLUGIN_LICENSE_BASE_URL: emu.baseUrl, PLUGIN_LICENSE_TOKEN: emu.token });
      const usage = await admin.builds.usage();
      for (let i = usage.used; i < usage.limit + usage.extra_builds; i++) await admin.builds.create({ project_id: emu.projectId });
      const run = await cli(['builds', 'create', emu.projectId], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/403 forbidden: the build quota of .* is used up/);
      expect(run.stderr).not.toContain('may not use this resource');
    } finally {
      await admin.close();
      await emu.close();
    }
  });

  it('an unknown code gets its advice once', async () => {
    const env = envFor(service, home());
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const args of [['status', unknown], ['activate', unknown, '--project', service.emulator.projectId]]) {
      const run = await cli(args, env);
      expect(run.code).toBe(3);
      expect(run.stderr.match(/typo/g), run.stderr).toHaveLength(1);
    }
  });
});

describe('a rate limit is waited out, not failed at once', () => {
  it('builds get and keys past the limit wait for the window to reset (saying so once, off a terminal), then answer', async () => {
    const { startEmulator } = await import('@plugin-license/emulator');
    // The emulator's clock stands still (3 s before a window ends) and moves only when the test
    // moves it: however slow the commands start, the window cannot roll over under them.
    const minute = Math.ceil((Date.now() + 60_000) / 60_000) * 60_000;
    const emu = await startEmulator({ now: () => minute - 3_000, rateLimits: { builds: 2, activation: 2, general: 100_000 } });
    try {
      const env = envFor(undefined, home(), { PLUGIN_LICENSE_BASE_URL: emu.baseUrl, PLUGIN_LICENSE_TOKEN: emu.token });
      const { control } = await import('@plugin-license/test-utils');
      const ctl = control(emu.origin);
      /** Runs `then` once the command says it waits for the rate limit. */
      const onceWaiting = (then: (child: ChildProcess) => void) => (child: ChildProcess) => {
        let said = '';
        child.stderr!.on('data', (d: string) => {
          if (said.includes('trying again in')) return;
          said += d;
          if (said.includes('trying again in')) then(child);
        });
      };
      const id = '123e4567-e89b-42d3-a456-426614174000';
      for (let i = 0; i < 2; i++) await cli(['builds', 'get', id], env);
      // Waiting: the window ends as the service said (the clock moved on by those 3 s).
      const waited = await cli(['builds', 'get', id], env, onceWaiting(() => void ctl.clock({ advance_ms: 3_000 })));
      expect(waited.code).toBe(3); // the answer after the wait: no such build
      expect(waited.stderr.match(/the service is rate-limiting requests; trying again in \d+ s/g)).toHaveLength(1);
      expect(waited.stderr).not.toMatch(/rate_limited/);
      // Interrupted while waiting (50 s to go): exit 130, nothing more asked.
      await ctl.clock({ now: minute + 60_000 - 50_000 });
      for (let i = 0; i < 2; i++) await cli(['keys', emu.projectId], env);
      const stopped = await cli(['keys', emu.projectId], env, onceWaiting((child) => child.kill('SIGINT')));
      expect(stopped.code).toBe(130);
      expect(stopped.stderr).toMatch(/interrupted while waiting: the service is rate-limiting requests/);
    } finally {
      await emu.close();
    }
  });
});

describe('smaller rules', () => {
  it('a code is one path segment: status .. asks about the code "..", not another endpoint', async () => {
    for (const dots of ['..', '.']) {
      const run = await cli(['--json', 'status', dots], envFor(service, home()));
      expect(run.code).toBe(2);
      const error = (jsonOf(run) as { error: { code: string; message: string } }).error;
      expect(error.message).toBe(`code '${dots}' is not an activation code: a URL reads it as a step to another path`);
    }
  });

  it('a token with a line break is a configuration error that says so, not a network failure', async () => {
    const run = await cli(['keys', service.emulator.projectId], envFor(service, home(), { PLUGIN_LICENSE_TOKEN: `${service.emulator.token}\r\n` }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/the token contains a line break/);
    expect(run.stderr).not.toContain(service.emulator.token);
  });

  it('an offline response dated 2027-02-30 is refused as the date it is not; --valid-days past the cap is refused before a slot is taken', async () => {
    const code = await service.code(1);
    const studio = join(home(), 'studio');
    mkdirSync(studio);
    const studioEnv = envFor(undefined, studio);
    const request = join(studio, 'request.json');
    expect((await cli(['offline', 'request', '--project', service.emulator.projectId, '--code', code, '--out', request], studioEnv)).code).toBe(0);
    const tooLong = await cli(['offline', 'activate', request, '--valid-days', '400', '--out', join(studio, 'long.json')], envFor(service, home()));
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toMatch(/would be refused by the offline machine, which accepts at most 365 \(offline_max_days\)/);
    expect((await service.admin.activation.status(code)).activations).toBe(0);
    const response = join(studio, 'response.json');
    expect((await cli(['offline', 'activate', request, '--out', response], envFor(service, home()))).code).toBe(0);
    const doc = JSON.parse(readFileSync(response, 'utf8')) as { valid_until: string };
    writeFileSync(response, JSON.stringify({ ...doc, valid_until: `${String(new Date(doc.valid_until).getUTCFullYear() + 1)}-02-30T00:00:00Z` }));
    const imported = await cli(['offline', 'import', response], studioEnv);
    expect(imported.code).toBe(2);
    expect(imported.stderr).toMatch(/valid_until.*real date/);
  });

  it('an unbuilt checkout says to build, not a module-not-found stack trace', async () => {
    const { execFileSync } = await import('node:child_process');
    const { copyFileSync } = await import('node:fs');
    const runBundle = join(__dirname, '..', '..', '..', 'agent', 'bin', 'run-bundle.js');
    let out = '';
    try {
      execFileSync(process.execPath, ['-e', `require(${JSON.stringify(runBundle)}).runBundle('/nonexistent/dist/bin/cli.cjs', { name: 'cli' })`], { stdio: 'pipe' });
    } catch (error) {
      out = String((error as { stderr: Buffer }).stderr);
    }
    expect(out).toMatch(/^plugin-license: this copy is not built yet \(.*cli\.cjs is missing\): run pnpm install && pnpm build/);
    mkdirSync(join(home(), 'emu', 'bin'), { recursive: true });
    copyFileSync(join(__dirname, '..', '..', 'emulator', 'bin', 'plugin-license-emulator.js'), join(home(), 'emu', 'bin', 'plugin-license-emulator.js'));
    try {
      execFileSync(process.execPath, [join(home(), 'emu', 'bin', 'plugin-license-emulator.js')], { stdio: 'pipe' });
      out = '';
    } catch (error) {
      out = String((error as { stderr: Buffer }).stderr);
    }
    expect(out).toMatch(/^plugin-license-emulator: this copy is not built yet/);
    expect(out).not.toMatch(/\n\s+at /);
  });
});
