// The CLI and the agent through the vendor's license relay (docs/signed-ticket.md, "The client
// side"): the relay as a real process (`plugin-license relay serve` of the built CLI) in front of
// the emulator (a real HTTP server on loopback), the CLI as the built binary, the agent as its own
// process. After each step the files a plugin reads (`.ticket`, `.signed`) are judged as a plugin
// built with the vendor's key judges them (the library's judgeLicenseFiles, plc's rule), and a
// SIGKILL at every durable step of an activation and a deactivation through the relay never leaves
// a signed ticket that verifies beside a slot the service has given back.
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { judgeLicenseFiles, machineIdOf, parseTicketKeys, signedTicketPath, ticketPath } from '@plugin-license/licensing';
import { AGENT_CLI, agentRpc, makeVendorKey, spawnLines, startRelayProcess, tempHome, type RunningRelay, type VendorKey } from '@plugin-license/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { cli, envFor, useCliService, type Run } from './helpers.js';

const { service, home } = useCliService();
const APP = 'plugin-license';
const key = makeVendorKey();
const stranger = makeVendorKey();

let stops: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const stop of stops.reverse()) await stop();
  stops = [];
});

/** The relay for this test (started after its codes exist: the relay lists a project's codes at most every 10 s). */
async function relay(signer: VendorKey = key): Promise<RunningRelay> {
  const r = await startRelayProcess({ serviceUrl: service.emulator.baseUrl, token: service.emulator.token, app: APP, projects: [service.emulator.projectId], keys: [signer] });
  stops.push(() => r.stop());
  return r;
}

/** A musician's shell: this home, the service, the relay and the vendor's key; no agent started on demand. */
function envThrough(r: RunningRelay, dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return envFor(service, dir, { PLUGIN_LICENSE_RELAY_URL: r.baseUrl, PLUGIN_LICENSE_TICKET_KEYS: `ed25519:${key.publicKey}`, PLUGIN_LICENSE_NO_AUTOSTART: '1', ...extra });
}

/** This computer's raw machine id, as node-machine-id reads it on Linux (checked against the CLI's own derivation). */
function rawMachineId(): string {
  for (const file of ['/var/lib/dbus/machine-id', '/etc/machine-id']) {
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  }
  throw new Error('no machine id on this computer');
}

/** What a plugin built with `keys` decides from the files in `dir`. */
function plugin(dir: string, keys: VendorKey[] = [key]) {
  const projectId = service.emulator.projectId;
  return judgeLicenseFiles(ticketPath({ home: dir }, projectId), { keys: parseTicketKeys(keys.map((k) => k.publicKey)), app: APP, projectId, rawMachineId: rawMachineId(), now: Math.floor(Date.now() / 1000) });
}

const signedFile = (dir: string): string => signedTicketPath({ home: dir }, service.emulator.projectId);
const slots = async (code: string): Promise<number> => (await service.admin.activation.status(code)).activations;
const project = (): string[] => ['--project', service.emulator.projectId];

function ok(run: Run): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe('the CLI through the relay', () => {
  it('activate, validate, deactivate: the signed ticket is stored, renewed and removed; a plugin with the key plays only in between', async () => {
    const code = await service.code(2);
    const r = await relay();
    const dir = home();
    const env = envThrough(r, dir);
    const id = ok(await cli(['machine-id', '--json'], env));
    expect(id.machine_id).toBe(machineIdOf(rawMachineId(), APP));

    const activated = ok(await cli(['activate', code, ...project(), '--json'], env));
    const text = readFileSync(signedFile(dir), 'utf8');
    expect(activated).toMatchObject({ via: 'library', license: { valid: true, reason: null, signed_ticket: text } });
    expect(JSON.parse(text.split('\n')[0]!)).toMatchObject({ kid: key.kid, app: APP, machine_id: id.machine_id, source: 'online' });
    expect(plugin(dir)).toMatchObject({ verdict: 'valid', signed: { kid: key.kid } });
    expect(plugin(dir, [stranger])).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid' });

    const human = await cli(['validate', ...project()], env);
    expect(human.stdout).toMatch(new RegExp(`signed\\s+by the vendor until .* \\(key ${key.kid}\\)`));
    const validated = ok(await cli(['validate', ...project(), '--json'], env));
    expect(validated).toMatchObject({ license: { valid: true, signed_ticket: readFileSync(signedFile(dir), 'utf8') } });
    expect(plugin(dir)).toMatchObject({ verdict: 'valid' });

    const deactivated = ok(await cli(['deactivate', ...project(), '--json'], env));
    expect(deactivated).toMatchObject({ license: { valid: false, reason: 'not_activated' } });
    expect((deactivated.license as Record<string, unknown>).signed_ticket).toBeUndefined();
    expect(existsSync(signedFile(dir))).toBe(false);
    expect(plugin(dir)).toMatchObject({ verdict: 'not_licensed', reason: 'not_activated' });
    expect(await slots(code)).toBe(0);
  });

  it('a relay signing with a key this program does not trust: exit 1 naming both key ids; nothing stored; the slot recorded and given back', async () => {
    const code = await service.code(2);
    const r = await relay(stranger);
    const dir = home();
    const run = await cli(['activate', code, ...project()], envThrough(r, dir));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(stranger.kid);
    expect(run.stderr).toContain(key.kid);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(signedFile(dir))).toBe(false);
    expect(await slots(code)).toBe(1);
    expect(plugin(dir)).toMatchObject({ verdict: 'not_licensed', reason: 'unsigned' });
    const json = await cli(['activate', code, ...project(), '--json'], envThrough(r, dir));
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout || json.stderr)).toMatchObject({ error: { code: 'signed_ticket_refused', details: { kid: stranger.kid, trusted: [key.kid] } } });
    ok(await cli(['deactivate', ...project(), '--json'], envThrough(r, dir)));
    expect(await slots(code)).toBe(0);
  });

  it('a relay without ticket keys is refused before anything is asked, naming the missing half', async () => {
    const dir = home();
    const run = await cli(['validate', ...project()], envFor(service, dir, { PLUGIN_LICENSE_RELAY_URL: 'http://127.0.0.1:9/functions/v1', PLUGIN_LICENSE_NO_AUTOSTART: '1' }));
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/relay is configured without the vendor's public keys \(ticket_keys\).*PLUGIN_LICENSE_RELAY_URL/);
  });
});

describe('config set: the relay and its keys together', () => {
  it('a relay_url without ticket_keys is refused before config.json is written; with them, every tool reads both', async () => {
    const dir = home();
    const env = envFor(service, dir, { PLUGIN_LICENSE_NO_AUTOSTART: '1' });
    const relayRun = await cli(['config', 'set', 'relay_url', 'https://relay.acme.example/functions/v1'], env);
    expect(relayRun.code).toBe(2);
    expect(relayRun.stderr).toMatch(/without the vendor's public keys \(ticket_keys\).*set ticket_keys first/);
    expect(existsSync(join(dir, 'config', 'config.json'))).toBe(false);
    expect((await cli(['config', 'set', 'ticket_keys', `ed25519:${key.publicKey}, ${stranger.publicKey}`], env)).code).toBe(0);
    expect((await cli(['config', 'set', 'relay_url', 'https://relay.acme.example/functions/v1'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'config', 'config.json'), 'utf8'))).toMatchObject({ ticket_keys: [key.publicKey, stranger.publicKey], relay_url: 'https://relay.acme.example/functions/v1' });
    const unset = await cli(['config', 'unset', 'ticket_keys'], env);
    expect(unset.code).toBe(2);
    expect(unset.stderr).toMatch(/ticket_keys/);
    expect((await cli(['config', 'set', 'ticket_keys', 'not-a-key'], env)).stderr).toMatch(/ticket_keys \(key 1\) is not an Ed25519 public key/);
  });
});

describe('the agent through the relay', () => {
  it("activate, validate and deactivate through the running agent: its answers carry the signed ticket's text, exactly the file's", async () => {
    const code = await service.code(2);
    const r = await relay();
    const dir = home();
    const env = envThrough(r, dir);
    const agent = spawnLines(process.execPath, [AGENT_CLI, 'run'], env);
    stops.push(() => agent.stop());
    await agent.waitFor(/"ready"\s*:\s*true/, 'its ready line');

    const activated = ok(await cli(['activate', code, ...project(), '--json'], env));
    expect(activated).toMatchObject({ via: 'agent', license: { valid: true, signed_ticket: readFileSync(signedFile(dir), 'utf8') } });
    expect(plugin(dir)).toMatchObject({ verdict: 'valid' });

    const status = (await agentRpc(env.PLUGIN_LICENSE_SOCKET!, 'check', { project_id: service.emulator.projectId })).result as Record<string, unknown>;
    expect(status).toMatchObject({ valid: true, signed_ticket: readFileSync(signedFile(dir), 'utf8') });

    const validated = (await agentRpc(env.PLUGIN_LICENSE_SOCKET!, 'refresh', { project_id: service.emulator.projectId })).result as Record<string, unknown>;
    expect(validated).toMatchObject({ valid: true, signed_ticket: readFileSync(signedFile(dir), 'utf8') });

    const deactivated = ok(await cli(['deactivate', ...project(), '--json'], env));
    expect(deactivated).toMatchObject({ via: 'agent', license: { valid: false, reason: 'not_activated' } });
    expect((deactivated.license as Record<string, unknown>).signed_ticket).toBeUndefined();
    expect(existsSync(signedFile(dir))).toBe(false);
    expect(plugin(dir)).toMatchObject({ verdict: 'not_licensed' });
    expect(await slots(code)).toBe(0);
  });
});

describe('killed at every durable step through the relay (SIGKILL), then the next run settles', () => {
  const killedAt = async (args: string[], env: Record<string, string>, step: string): Promise<void> => {
    const run = await cli(args, { ...env, PLUGIN_LICENSE_TEST_KILL_AT: step });
    expect(run.code, `${step} was not reached: ${run.stderr}`).toBeNull();
    ageLocks(env.PLUGIN_LICENSE_HOME!);
  };

  /**
   * The killed run's lock is stale once it is older than the library's lockStaleMs (10 s): its
   * time is moved back a minute rather than waited for.
   */
  const ageLocks = (dir: string): void => {
    const old = new Date(Date.now() - 60_000);
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const path = join(d, e.name);
        if (e.name.endsWith('.lock')) utimesSync(path, old, old);
        else if (e.isDirectory()) walk(path);
      }
    };
    walk(dir);
  };

  /**
   * After the next run settled: either the service holds the slot and a plugin with the key plays
   * on a ticket the vendor signed, or the slot is free and nothing signed is left.
   */
  const settledAsOne = async (dir: string, code: string): Promise<void> => {
    const held = await slots(code);
    expect(plugin(dir).verdict === 'valid', `slots ${held}, plugin ${JSON.stringify(plugin(dir))}`).toBe(held === 1);
    if (held === 1) expect(JSON.parse(readFileSync(signedFile(dir), 'utf8').split('\n')[0]!)).toMatchObject({ kid: key.kid });
    else expect(existsSync(signedFile(dir))).toBe(false);
    expect(existsSync(join(dir, 'data', 'licenses', 'intents')) ? readdirSync(join(dir, 'data', 'licenses', 'intents')) : []).toEqual([]);
  };

  /** The invariant after any kill: a plugin with the key plays only while the service holds the slot. */
  const neverSignedForAFreeSlot = async (dir: string, code: string): Promise<void> => {
    const v = plugin(dir);
    if (v.verdict === 'valid') expect(await slots(code)).toBe(1);
  };

  const ACTIVATION = ['intent-recorded', 'state-written', 'ticket-written', 'signed-written', 'intent-cleared'];
  it.each(ACTIVATION)('activation killed after %s', async (step) => {
    const code = await service.code(2);
    const r = await relay();
    const dir = home();
    const env = envThrough(r, dir);
    await killedAt(['activate', code, ...project()], env, step);
    await neverSignedForAFreeSlot(dir, code);
    // The next run settles the unfinished activation with the relay: held and signed, or neither.
    const settled = await cli(['validate', ...project(), '--json'], env);
    expect([0, 3], settled.stderr).toContain(settled.code);
    await settledAsOne(dir, code);
  });

  it('an activation killed after the relay answered is settled by the agent at its start: held, signed, and in its answers', async () => {
    const code = await service.code(2);
    const r = await relay();
    const dir = home();
    const env = envThrough(r, dir);
    await killedAt(['activate', code, ...project()], env, 'state-written');
    expect(existsSync(signedFile(dir))).toBe(false);
    const agent = spawnLines(process.execPath, [AGENT_CLI, 'run'], env);
    stops.push(() => agent.stop());
    await agent.waitFor(/"ready"\s*:\s*true/, 'its ready line');
    const state = (await agentRpc(env.PLUGIN_LICENSE_SOCKET!, 'check', { project_id: service.emulator.projectId })).result as Record<string, unknown>;
    expect(state).toMatchObject({ valid: true, signed_ticket: readFileSync(signedFile(dir), 'utf8') });
    await settledAsOne(dir, code);
    expect(await slots(code)).toBe(1);
  });

  const DEACTIVATION = ['intent-recorded', 'signed-removed', 'ticket-written', 'release-answered', 'ticket-written#2', 'state-removed', 'intent-cleared'];
  it.each(DEACTIVATION)('deactivation killed after %s', async (step) => {
    const code = await service.code(2);
    const r = await relay();
    const dir = home();
    const env = envThrough(r, dir);
    ok(await cli(['activate', code, ...project(), '--json'], env));
    expect(plugin(dir)).toMatchObject({ verdict: 'valid' });
    await killedAt(['deactivate', ...project()], env, step);
    await neverSignedForAFreeSlot(dir, code);
    // Past the intent, nothing signed is left, whatever the service has done yet.
    if (step !== 'intent-recorded') expect(existsSync(signedFile(dir))).toBe(false);
    // The next run settles with the relay: a release that never went out gives the license back
    // (held, signed anew), one that did leaves nothing (free, nothing signed).
    const settled = await cli(['validate', ...project(), '--json'], env);
    expect([0, 3], settled.stderr).toContain(settled.code);
    await settledAsOne(dir, code);
    if (['release-answered', 'ticket-written#2', 'state-removed', 'intent-cleared'].includes(step)) expect(await slots(code)).toBe(0);
  });
});


describe('doctor and the signed tickets', () => {
  interface Check {
    section: string;
    name: string;
    level: string;
    detail: string;
    fix?: string;
  }
  const doctor = async (env: Record<string, string>) => {
    const run = await cli(['--json', 'doctor', ...project()], env);
    const doc = JSON.parse(run.stdout) as { checks: Check[]; relay: Record<string, unknown>; licenses: Array<Record<string, unknown>> };
    return { run, doc, find: (section: string, name: string) => doc.checks.find((c) => c.section === section && c.name === name) };
  };

  it('reports the keys expected, the relay and its signer, and who signed the stored ticket until when', async () => {
    const code = await service.code(2);
    const r = await relay();
    const dir = home();
    const env = envThrough(r, dir);
    ok(await cli(['activate', code, ...project(), '--json'], env));
    const stored = readFileSync(signedFile(dir), 'utf8');
    const until = new Date((JSON.parse(stored.split('\n')[0]!) as { valid_until: number }).valid_until * 1000);
    const { run, doc, find } = await doctor(env);
    expect(run.code, run.stdout).toBe(0);
    expect(find('relay', 'ticket keys')).toMatchObject({ level: 'ok', detail: expect.stringContaining(key.kid) });
    expect(find('relay', 'signer')).toMatchObject({ level: 'ok', detail: expect.stringContaining(`signs with key ${key.kid}`) });
    expect(find('licenses', service.emulator.projectId)).toMatchObject({ level: 'ok', detail: expect.stringContaining(`signed by key ${key.kid} (online) until`) });
    expect(doc.relay).toMatchObject({ ticket_keys: [key.kid], relay_url: r.baseUrl, reachable: true, signer: key.kid });
    expect(doc.licenses[0]).toMatchObject({ signed: { kid: key.kid, verifies: true, valid_until: until.toISOString() } });
    // Doctor writes nothing: the signed ticket is still the one activate stored.
    expect(readFileSync(signedFile(dir), 'utf8')).toBe(stored);
  });

  it('names a relay that signs with an unknown key, and a license it left unsigned', async () => {
    const code = await service.code(2);
    const r = await relay(stranger);
    const dir = home();
    const env = envThrough(r, dir);
    expect((await cli(['activate', code, ...project()], env)).code).toBe(1);
    const { run, find } = await doctor(env);
    expect(run.code).toBe(1);
    expect(find('relay', 'signer')).toMatchObject({ level: 'failed', detail: expect.stringContaining(`signs with key ${stranger.kid}, which this program does not trust (trusted: ${key.kid})`) });
    expect(find('licenses', service.emulator.projectId)).toMatchObject({ level: 'failed', detail: expect.stringContaining("no signed ticket: plugins built with the vendor's keys do not play"), fix: expect.stringContaining('validate') });
  });

  it('names a relay that does not answer', async () => {
    const r = await relay();
    await r.stop();
    const { run, find } = await doctor(envThrough(r, home()));
    expect(run.code).toBe(1);
    expect(find('relay', 'signer')).toMatchObject({ level: 'failed', detail: expect.stringMatching(/^the relay at 127\.0\.0\.1:\d+ does not answer/) });
  });
});

describe('signed offline responses carry a signed ticket', () => {
  it('offline activate --sign-key adds one for the studio (offline, until the response ends); import stores it; a plugin with the key plays', async () => {
    const code = await service.code(2);
    const studioHome = home();
    const online = tempHome('plc-online-');
    stops.push(async () => online.cleanup());
    const file = (name: string): string => join(online.dir, name);
    writeFileSync(file('vendor.key'), key.pem, { mode: 0o600 });
    const studio = envFor(service, studioHome, { PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:9/functions/v1', PLUGIN_LICENSE_TICKET_KEYS: key.publicKey, PLUGIN_LICENSE_NO_AUTOSTART: '1' });
    const onlineEnv = envFor(service, online.dir);

    expect((await cli(['offline', 'request', ...project(), '--code', code, '--out', file('request.json')], studio)).code).toBe(0);
    // Unsigned: refused where ticket keys are configured, the request kept for a signed answer.
    expect((await cli(['offline', 'activate', file('request.json'), '--out', file('unsigned.json')], onlineEnv)).code).toBe(0);
    const unsigned = await cli(['offline', 'import', file('unsigned.json')], studio);
    expect(unsigned.code).toBe(3);
    expect(unsigned.stderr).toMatch(/no ticket signed by the vendor/);

    const answered = ok(await cli(['--json', 'offline', 'activate', file('request.json'), '--sign-key', file('vendor.key'), '--out', file('signed.json')], onlineEnv));
    expect(answered).toMatchObject({ signed_by: key.kid, signed_ticket: true });
    const response = JSON.parse(readFileSync(file('signed.json'), 'utf8')) as { signed_ticket: string; valid_until: string };
    const imported = ok(await cli(['--json', 'offline', 'import', file('signed.json')], studio));
    expect(imported).toMatchObject({ license: { valid: true, source: 'offline', signed_ticket: response.signed_ticket } });
    expect(readFileSync(signedFile(studioHome), 'utf8')).toBe(response.signed_ticket);
    expect(plugin(studioHome)).toMatchObject({ verdict: 'valid', signed: { source: 'offline', kid: key.kid, valid_until: Math.floor(Date.parse(response.valid_until) / 1000) } });
  });
});
