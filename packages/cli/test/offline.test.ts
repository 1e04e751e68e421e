// Offline activation end to end through the built CLI: two homes stand for two machines, the
// studio (pointed at a service that is not there) and an online computer (the emulator). A
// running agent in the studio sees imports and releases within a second and pushes them.
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentClient, startAgent, type LicenseState } from '@plugin-license/agent';
import { eventually, tempHome } from '@plugin-license/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, envFor, useCliService, type Run } from './helpers.js';

const { service, home } = useCliService();
const UNREACHABLE = 'http://127.0.0.1:9/functions/v1';
const DAY = 86_400_000;

let extra: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const f of extra.reverse()) await f();
  extra = [];
});

/** Two machines: the studio (no service) and the online computer, each its own home. */
function machines() {
  const studioHome = home();
  const onlineHome = tempHome('plc-online-');
  extra.push(onlineHome.cleanup);
  const files = join(onlineHome.dir, 'carry');
  mkdirSync(files);
  const studio = envFor(service, studioHome, { PLUGIN_LICENSE_BASE_URL: UNREACHABLE });
  const online = envFor(service, onlineHome.dir);
  return { studio, online, studioHome, file: (name: string) => join(files, name) };
}

function ok(run: Run): Run {
  expect(run.code, run.stderr).toBe(0);
  return run;
}

function oneDocument(run: Run): Record<string, unknown> {
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

function refused(run: Run, exit: number, message: RegExp): void {
  expect(run.code, run.stderr).toBe(exit);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

async function slots(code: string): Promise<number> {
  return (await service.admin.activation.status(code)).activations;
}

/**
 * The first state the subscription pushed that matches. The agent hears a change within a second
 * (its folder watch); the wait's bound (WAIT_MS) only limits how long one that never comes takes
 * to fail the test.
 */
function pushed(states: LicenseState[], pred: (s: LicenseState) => boolean): Promise<LicenseState> {
  return eventually(() => states.find(pred), 'the state pushed', { seen: () => JSON.stringify(states) });
}

describe('plugin-license offline', () => {
  it('request -> activate -> import with an agent running in the studio: check valid, source offline, within a second; renew takes no slot; release and confirm free it', async () => {
    const { studio, online, studioHome, file } = machines();
    const projectId = service.emulator.projectId;
    const code = await service.code(1);
    const agent = await startAgent({ baseUrl: UNREACHABLE, home: studioHome, socketPath: join(studioHome, 'agent.sock'), logger: false });
    extra.push(() => agent.close());
    const client = await AgentClient.connect({ socketPath: agent.socketPath, reconnect: false });
    extra.push(() => client.close());
    const states: LicenseState[] = [];
    (await client.subscribe()).on('changed', (s) => states.push(s));
    expect((await client.check(projectId)).reason).toBe('not_activated');

    const req = ok(await cli(['offline', 'request', '--project', projectId, '--code', code, '--out', file('request.json')], studio));
    expect(req.stdout).toBe('');
    expect(req.stderr).toContain('plugin-license offline activate');
    expect(req.stderr).not.toContain(code);
    expect(JSON.parse(readFileSync(file('request.json'), 'utf8'))).toMatchObject({ type: 'offline_request', version: 1, project_id: projectId, code });

    const act = ok(await cli(['--json', 'offline', 'activate', file('request.json'), '--out', file('response.json'), '--valid-days', '30'], online));
    const answered = oneDocument(act);
    expect(answered).toMatchObject({ type: 'offline_response', project_id: projectId, activations: 1, max_activations: 1, signed_by: null, file: file('response.json') });
    expect(JSON.stringify(answered)).not.toContain(code);
    expect(await slots(code)).toBe(1);

    const imp = ok(await cli(['offline', 'import', file('response.json')], studio));
    expect(imp.stdout).toMatch(/source\s+offline/);
    // The command asked the agent before it ended: the agent had the license by then.
    expect(imp.stderr).toContain('The running agent answers plugins with it now');
    const state = await pushed(states, (s) => s.valid && s.source === 'offline');
    expect(await client.check(projectId)).toMatchObject({ valid: true, reason: null, source: 'offline' });
    const validUntil = state.graceUntil!.getTime();
    expect(Math.abs(validUntil - (Date.now() + 30 * DAY))).toBeLessThan(60_000);

    // The studio's own commands show it as such.
    expect(oneDocument(await cli(['--json', 'agent', 'check', projectId], studio))).toMatchObject({ license: { valid: true, source: 'offline' } });
    const doctor = await cli(['doctor', '--project', projectId], studio);
    expect(doctor.stdout).toMatch(/source offline.*valid until.*activated offline for .+, unsigned/);

    // Renew: validated online, no slot taken (a one-slot code), valid_until moved.
    ok(await cli(['offline', 'renew', '--project', projectId, '--out', file('renew.json')], studio));
    ok(await cli(['offline', 'activate', file('renew.json'), '--out', file('renewed.json'), '--valid-days', '200'], online));
    expect(await slots(code)).toBe(1);
    states.length = 0;
    ok(await cli(['offline', 'import', file('renewed.json')], studio));
    // A later valid_until alone is not a `changed` (subscribers act on validity), but check has it soon.
    await expect.poll(async () => (await client.check(projectId)).graceUntil!.getTime(), { message: 'the renewal reached the agent' }).toBeGreaterThanOrEqual(validUntil + 100 * DAY);

    // Release: the studio forgets first (the agent hears it), then the online step frees the slot.
    states.length = 0;
    const rel = ok(await cli(['offline', 'deactivate', '--project', projectId, '--text'], studio));
    const line = rel.stdout.trim();
    expect(line).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}$/);
    await pushed(states, (s) => !s.valid && s.reason === 'not_activated');
    expect(await slots(code)).toBe(1);
    const confirmed = ok(await cli(['offline', 'confirm', line], online));
    expect(confirmed.stdout).toMatch(/Released the slot .* 0 of 1 slots now in use/);
    expect(await slots(code)).toBe(0);
    const again = await cli(['--json', 'offline', 'confirm', line], online);
    expect(again.code).toBe(0);
    expect(oneDocument(again)).toMatchObject({ released: false, already_released: true });
  }, 60_000);

  it('signed responses: keygen, --sign-key, offline_public_keys in the studio; unsigned, altered and unknown-key responses refused', async () => {
    const { studio, online, studioHome, file } = machines();
    const projectId = service.emulator.projectId;
    const code = await service.code(3);
    const keygen = oneDocument(ok(await cli(['--json', 'offline', 'keygen', '--out', file('vendor.key')], online)));
    expect(statSync(file('vendor.key')).mode & 0o777).toBe(0o600);
    expect(keygen).toMatchObject({ public_key: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), key_id: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(readFileSync(file('vendor.key'), 'utf8')).toContain('BEGIN PRIVATE KEY');
    refused(await cli(['offline', 'keygen', '--out', file('vendor.key')], online), 2, /exists; choose another --out file/);
    mkdirSync(join(studioHome, 'config'), { recursive: true });
    writeFileSync(join(studioHome, 'config', 'config.json'), JSON.stringify({ offline_public_keys: [keygen.public_key] }));

    // Unsigned: refused, nothing stored, the request still pending (the signed answer to it imports).
    ok(await cli(['offline', 'request', '--project', projectId, '--code', code, '--out', file('request.json')], studio));
    ok(await cli(['offline', 'activate', file('request.json'), '--out', file('unsigned.json')], online));
    refused(await cli(['offline', 'import', file('unsigned.json')], studio), 3, /not signed, and this application accepts only responses signed by its vendor/);
    expect(existsSync(join(studioHome, 'data', 'licenses', `${projectId}.json`))).toBe(false);

    // A key others can read is refused before the service is asked.
    chmodSync(file('vendor.key'), 0o644);
    refused(await cli(['offline', 'activate', file('request.json'), '--sign-key', file('vendor.key'), '--out', file('x.json')], online), 2, /can be read by other users.*chmod 600/);
    expect(existsSync(file('x.json'))).toBe(false);
    chmodSync(file('vendor.key'), 0o600);

    const signed = oneDocument(ok(await cli(['--json', 'offline', 'activate', file('request.json'), '--sign-key', file('vendor.key'), '--out', file('signed.json')], online)));
    expect(signed.signed_by).toBe(keygen.key_id);
    const doc = JSON.parse(readFileSync(file('signed.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(file('altered.json'), JSON.stringify({ ...doc, max_activations: 99 }));
    refused(await cli(['offline', 'import', file('altered.json')], studio), 3, /signature does not verify/);
    // The same pair from either command; each says where its halves go, with the path quoted for the shell.
    const other = await cli(['offline', 'keygen', '--out', file('other.key')], online);
    expect(other.code).toBe(0);
    expect(other.stderr).toMatch(/"offline_public_keys": \[".{43}"\].*--sign-key \S*other\.key/);
    const relayKey = await cli(['relay', 'keygen', '--out', file('relay signing.key')], online);
    expect(relayKey.code).toBe(0);
    expect(relayKey.stderr).toMatch(/RELAY_SIGNING_KEY="\$\(cat '[^']*relay signing\.key'\)".*--ticket-key [A-Za-z0-9_-]{43}\)/);
    expect(relayKey.stderr).not.toContain('offline_public_keys');
    ok(await cli(['offline', 'request', '--project', projectId, '--code', code, '--out', file('request2.json')], studio));
    ok(await cli(['offline', 'activate', file('request2.json'), '--sign-key', file('other.key'), '--out', file('other.json')], online));
    refused(await cli(['offline', 'import', file('other.json')], studio), 3, /signed by key [0-9a-f]{16}, which this application does not know/);

    const imported = oneDocument(ok(await cli(['--json', 'offline', 'import', file('signed.json')], studio)));
    expect(imported).toMatchObject({ license: { valid: true, source: 'offline' } });
    expect((await cli(['doctor', '--project', projectId], studio)).stdout).toContain(`signed by key ${String(keygen.key_id)}`);
  }, 60_000);

  it('refusals: the wrong kind of file, truncated lines, another machine, a replay, and codes the service refuses (no response written)', async () => {
    const { studio, online, file } = machines();
    const projectId = service.emulator.projectId;
    const code = await service.code(2);
    ok(await cli(['offline', 'request', '--project', projectId, '--code', code, '--out', file('request.json')], studio));
    refused(await cli(['offline', 'import', file('request.json')], studio), 2, /this is an offline request, not an offline response; a request is answered on a computer that is online/);
    refused(await cli(['offline', 'request', '--project', projectId, '--out', file('request.json')], studio), 2, /exists; choose another --out file/);
    refused(await cli(['offline', 'request', '--project', projectId], studio), 2, /say where the request goes: --out FILE .* or --text/);

    // A destination that can't be written is refused before the service is asked: no slot taken.
    refused(await cli(['offline', 'activate', file('request.json'), '--out', file('missing/response.json')], online), 2, /cannot write .*response\.json \(ENOENT\); choose a writable --out file/);
    expect(await slots(code)).toBe(0);
    const line = ok(await cli(['offline', 'activate', file('request.json'), '--text'], online)).stdout.trim();
    expect(line).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}$/);
    refused(await cli(['offline', 'activate', line, '--out', file('r.json')], online), 2, /this is an offline response, not an offline request; a response is imported on the offline machine/);
    refused(await cli(['offline', 'import', line.slice(0, line.length - 12)], studio), 2, /incomplete|damaged/);
    refused(await cli(['offline', 'import', `${line.slice(0, 50)}${line[50] === 'Q' ? 'R' : 'Q'}${line.slice(51)}`], studio), 2, /damaged or incomplete/);
    refused(await cli(['offline', 'import', file('missing.json')], studio), 2, /no such file .*missing\.json; give the response file, the line itself, or - /);
    refused(await cli(['offline', 'confirm', line], online), 2, /this is an offline response, not a release proof/);

    const doc = JSON.parse(Buffer.from(line.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    writeFileSync(file('foreign.json'), JSON.stringify({ ...doc, machine_id: 'm1_' + 'a'.repeat(64) }));
    refused(await cli(['offline', 'import', file('foreign.json')], studio), 3, /made for machine m1_a+.*not this one/);
    refused(await cli(['offline', 'import', line, '--project', '00000000-0000-4000-8000-000000000000'], studio), 3, /is for project/);
    writeFileSync(file('v2.json'), JSON.stringify({ ...doc, version: 2 }));
    refused(await cli(['offline', 'import', file('v2.json')], studio), 2, /version 2/);
    const json = await cli(['--json', 'offline', 'import', file('foreign.json')], studio);
    expect(json.code).toBe(3);
    expect(oneDocument(json)).toMatchObject({ error: { code: 'offline_refused' } });

    ok(await cli(['offline', 'import', line], studio));
    refused(await cli(['offline', 'import', line], studio), 3, /imported already/);

    // The online step with a code the service refuses writes nothing and exits 3.
    const revoked = await service.code(1);
    await service.control.revoke(revoked);
    const full = await service.code(1);
    await service.admin.activation.activate({ code: full, machine_id: 'another-computer' });
    for (const [c, message] of [
      [revoked, /revoked/],
      [full, /already active on as many machines/],
      ['00000000-0000-4000-8000-000000000000', /does not exist/],
    ] as const) {
      const name = file(`req-${c.slice(0, 8)}.json`);
      ok(await cli(['offline', 'request', '--project', projectId, '--out', name], studio));
      refused(await cli(['offline', 'activate', name, '--code', c, '--out', file('refused.json')], online), 3, message);
      expect(existsSync(file('refused.json'))).toBe(false);
    }
    const noCode = file('req-00000000.json');
    refused(await cli(['offline', 'activate', noCode, '--out', file('refused.json')], online), 2, /carries no code; give the code/);
  }, 60_000);
});
