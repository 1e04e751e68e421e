// Bad input: one line saying what is wrong and what to do, the documented exit code, no stack
// trace unless --debug, nothing written; --json gives the error as the one document.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, envFor, useCliService, type Run } from './helpers.js';

const { service, home } = useCliService();

function oneLine(run: Run, exit: number, message: RegExp): void {
  expect(run.code, run.stderr).toBe(exit);
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stdout).toBe('');
}

describe('bad input', () => {
  it('usage errors exit 2 with one line, suggesting the nearest name', async () => {
    const env = envFor(service, home());
    const p = service.emulator.projectId;
    oneLine(await cli(['stauts', 'x'], env), 2, /unknown command 'stauts'.*Did you mean status\?/);
    oneLine(await cli(['keys', p, '--all-code'], env), 2, /unknown option '--all-code'.*Did you mean --all-codes\?/);
    for (const count of ['0', '-1', 'abc', '1.5']) oneLine(await cli(['generate', p, '--count', count], env), 2, /--count must be a whole number of at least 1/);
    oneLine(await cli(['keys', 'my-plugin'], env), 2, /project id 'my-plugin' is not a UUID/);
    oneLine(await cli(['activate', '   ', '--project', p], env), 2, /code/);
    oneLine(await cli(['activate', 'AB\u0007CD', '--project', p], env), 2, /control characters/);
    oneLine(await cli(['activate', 'ABCD'], env), 2, /required option '--project <id>' not specified/);
    oneLine(await cli(['offline', 'request'], env), 2, /required option '--project <id>' not specified/);
    oneLine(await cli(['offline', 'improt', 'x'], env), 2, /unknown command 'improt'.*Did you mean import\?/);
    oneLine(await cli(['offline', 'activate', 'request.json', '--valid-days', '4000', '--text'], env), 2, /--valid-days must be a whole number from 1 to 3650, got '4000'/);
  });

  it('configuration: no token, a remote http:// URL, no /functions/v1, no base URL at all', async () => {
    const p = service.emulator.projectId;
    oneLine(await cli(['keys', p], envFor(service, home(), { PLUGIN_LICENSE_TOKEN: undefined })), 2, /needs the bearer token: set PLUGIN_LICENSE_TOKEN \(safer than --token/);
    oneLine(await cli(['status', 'ABCD-EFGH'], envFor(service, home(), { PLUGIN_LICENSE_BASE_URL: 'http://licenses.example.com/functions/v1' })), 2, /https.*\(from PLUGIN_LICENSE_BASE_URL\)/);
    oneLine(await cli(['--base-url', service.emulator.origin, 'status', 'ABCD-EFGH'], envFor(service, home())), 2, /does not end in \/functions\/v1/);
    oneLine(await cli(['status', 'ABCD-EFGH'], envFor(service, home(), { PLUGIN_LICENSE_BASE_URL: undefined })), 2, /no service base URL: pass --base-url, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in .*config\.json/);
    mkdirSync(join(home(), 'config'), { recursive: true });
    writeFileSync(join(home(), 'config', 'config.json'), '{"baseUrl": "x"}');
    oneLine(await cli(['status', 'ABCD-EFGH'], envFor(service, home())), 2, /"baseUrl" in .* is not a setting; did you mean "base_url"\?/);
  });

  it('the service: unreachable and a garbage or expired token exit 1, without the token in the output', async () => {
    const p = service.emulator.projectId;
    const down = await cli(['status', '00000000-0000-4000-8000-000000000000'], envFor(service, home(), { PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:9/functions/v1' }));
    oneLine(down, 1, /unreachable|refused|could not be reached/i);
    const garbage = 'garbage-token-0123456789';
    const refused = await cli(['keys', p], envFor(service, home(), { PLUGIN_LICENSE_TOKEN: garbage }));
    oneLine(refused, 1, /401|unauthorized|token/i);
    expect(refused.stderr).not.toContain(garbage);
    const expired = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify({ exp: 1_600_000_000 })).toString('base64url')}.c2ln`;
    const json = await cli(['--json', 'usage'], envFor(service, home(), { PLUGIN_LICENSE_TOKEN: expired }));
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: expect.stringMatching(/unauthorized|forbidden/), message: expect.any(String) } });
    expect(json.stdout).not.toContain(expired);
  });

  it('--out: not writable or already there (without --append) is refused before any code is made', async () => {
    const env = envFor(service, home());
    const p = service.emulator.projectId;
    const before = (await service.admin.activation.keys(p)).keys.length;
    oneLine(await cli(['generate', p, '--count', '3', '--out', join(home(), 'missing', 'codes.csv')], env), 2, /cannot write .*codes\.csv \(ENOENT\); choose a writable --out file/);
    const existing = join(home(), 'codes.csv');
    writeFileSync(existing, 'code,max_activations,notes,created_at\nOLD,1,,2026-01-01T00:00:00Z\n');
    oneLine(await cli(['generate', p, '--count', '3', '--out', existing], env), 2, /exists; pass --append to add to it/);
    expect((await service.admin.activation.keys(p)).keys.length).toBe(before);
    expect(readdirSync(home()).filter((f) => f.endsWith('.csv'))).toEqual(['codes.csv']);
    expect(existsSync(join(home(), 'missing'))).toBe(false);
    const appended = await cli(['--json', 'generate', p, '--count', '2', '--out', existing, '--append'], env);
    expect(appended.code).toBe(0);
    expect(JSON.parse(appended.stdout)).toMatchObject({ generated: 2, file_codes: 3 });
  });

  it('--debug adds the stack trace; without it there is none', async () => {
    const env = envFor(service, home(), { PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:9/functions/v1' });
    const debug = await cli(['--debug', 'status', '00000000-0000-4000-8000-000000000000'], env);
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/\n\s+at /);
  });
});
