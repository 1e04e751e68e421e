// The library through the vendor's license relay (docs/signed-ticket.md, "The client side"): the
// relay as a real process (`plugin-license relay serve`) in front of the emulator; the signed
// ticket read from disk after each step and verified here with node:crypto, independently of
// the library; a relay that signs with a key this side does not trust; the relay down.
import { createPublicKey, verify } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeVendorKey, readOnlyFolder, rejection, startRelayProcess, type RunningRelay, type VendorKey } from '@plugin-license/test-utils';
import {
  answerOfflineRequest,
  createOfflineRequest,
  importOfflineResponse,
  isLicenseError,
  judgeLicenseFiles,
  machineIdOf,
  offlineText,
  readCachedStatus,
  signedTicketPath,
  ticketPath,
  type LicenseOptions,
} from '../src/index.js';
import { RAW_A, useLicenses } from './helpers.js';

const DAY = 86_400_000;
const APP = 'plugin-license';

const { service, home, clock, license, cleanups } = useLicenses();
const key = makeVendorKey();
const stranger = makeVendorKey();

/**
 * A relay process for this test, signing with `signer`, started after the test's codes exist (a
 * relay lists a project's codes at most once every 10 s, and the service is reset after each
 * test); stopped after it.
 */
async function startRelay(signer: VendorKey = key): Promise<RunningRelay> {
  const r = await startRelayProcess({ serviceUrl: service.emulator.baseUrl, token: service.emulator.token, app: APP, projects: [service.emulator.projectId], keys: [signer], ticketDays: 2 });
  cleanups.push(async () => {
    await r.stop();
  });
  return r;
}

const projectId = (): string => service.emulator.projectId;
const signedFile = (): string => signedTicketPath({ home: home.dir }, projectId());
const through = (r: Pick<RunningRelay, 'baseUrl'>, keys: VendorKey[] = [key], extra: Partial<LicenseOptions> = {}) => license({ relayUrl: r.baseUrl, ticketKeys: keys.map((k) => k.publicKey), ...extra });

/** The signed ticket on disk, verified with node:crypto alone: its fields. */
function signedOnDisk(publicKey = key.publicKey): Record<string, unknown> {
  const text = readFileSync(signedFile(), 'utf8');
  const m = /^([^\n]+)\ned25519:([0-9a-f]{16}):([A-Za-z0-9_-]{86})\n$/.exec(text);
  if (m === null) throw new Error(`not a signed ticket: ${JSON.stringify(text)}`);
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
  expect(verify(null, Buffer.concat([Buffer.from('plugin-license/signed-ticket/v1\0'), Buffer.from(m[1]!)]), pub, Buffer.from(m[3]!, 'base64url'))).toBe(true);
  return JSON.parse(m[1]!) as Record<string, unknown>;
}

/** What a plugin built with `keys` decides from the files, as plc does. */
const plugin = (keys: VendorKey[] = [key]) =>
  judgeLicenseFiles(ticketPath({ home: home.dir }, projectId()), { keys: keys.map((k) => ({ kid: k.kid, publicKey: Buffer.from(k.publicKey, 'base64url'), text: k.publicKey })), app: APP, projectId: projectId(), rawMachineId: RAW_A, now: Math.floor(clock.now() / 1000) });

const slots = async (code: string): Promise<number> => (await service.admin.activation.status(code)).activations;

describe('activate, validate and deactivate through the relay', () => {
  it('a tickets folder that refuses the write: deactivate sends no release while the signed ticket cannot go, and loses nothing', async (ctx) => {
    const code = await service.code(2);
    const l = through(await startRelay());
    await l.activate(code);
    const before = readFileSync(signedFile(), 'utf8');
    const ro = readOnlyFolder(dirname(signedFile()));
    if (!ro.ok) return ctx.skip(ro.reason);
    try {
      const e = await rejection(l.deactivate(), isLicenseError);
      expect(e).toMatchObject({ code: 'cache_io', systemCode: 'EROFS' });
      expect(e.message).toMatch(/nothing was released/);
      expect(e.message).not.toContain(code);
      // The slot is still held, the signed ticket and the state as they were: a plugin still plays.
      expect(await slots(code)).toBe(1);
      expect(readFileSync(signedFile(), 'utf8')).toBe(before);
      expect(l.check()).toMatchObject({ valid: true });
      expect(plugin()).toMatchObject({ verdict: 'valid' });
    } finally {
      ro.undo();
    }
    // Once writable: the signed ticket goes first, then the slot.
    await l.deactivate();
    expect(existsSync(signedFile())).toBe(false);
    expect(await slots(code)).toBe(0);
    expect(plugin()).toMatchObject({ verdict: 'not_licensed' });
  });

  it('activate stores the relay\'s signed ticket beside the ticket (0600, verifies, this machine), and the status carries it', async () => {
    const code = await service.code(2);
    const l = through(await startRelay());
    const status = await l.activate(code);
    expect(status).toMatchObject({ valid: true, reason: null, source: 'online' });
    const fields = signedOnDisk();
    expect(fields).toMatchObject({ v: 1, kid: key.kid, app: APP, project_id: projectId(), machine_id: machineIdOf(RAW_A, APP), code_hint: `${code.slice(0, 4)}…${code.slice(-4)}`, source: 'online' });
    expect((fields.valid_until as number) - (fields.issued_at as number)).toBe(2 * 86_400);
    expect(statSync(signedFile()).mode & 0o777).toBe(0o600);
    expect(status.signedTicket).toBe(readFileSync(signedFile(), 'utf8'));
    expect(plugin()).toMatchObject({ verdict: 'valid', signed: { source: 'online' } });
    // A plugin with another key plays on nothing here.
    expect(plugin([stranger])).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid' });
    expect(await slots(code)).toBe(1);
  });

  it('validate brings a new signed ticket; check() follows its valid_until on the clock alone', async () => {
    const code = await service.code(2);
    const l = through(await startRelay());
    await l.activate(code);
    const first = signedOnDisk();
    clock.advance(DAY + 1000);
    expect(l.check()).toMatchObject({ valid: true });
    // Past the signed ticket's two days (the library's own grace is 30): not valid, by the reader's rule, without I/O.
    clock.advance(DAY + 1000);
    expect(l.check()).toMatchObject({ valid: false, reason: 'grace_expired' });
    expect(plugin()).toMatchObject({ verdict: 'expired', reason: 'grace_expired' });
    // The relay signs on its own clock (now); the test's clock is moved back to it for the new one.
    clock.set(Date.now());
    const renewed = await l.validate({ force: true });
    expect(renewed).toMatchObject({ valid: true, source: 'online' });
    expect(signedOnDisk().issued_at as number).toBeGreaterThanOrEqual(first.issued_at as number);
    expect(renewed.signedTicket).toBe(readFileSync(signedFile(), 'utf8'));
  });

  it('a revoked or otherwise refused answer removes the signed ticket before the state says so (anything may say no)', async () => {
    const code = await service.code(2);
    const l = through(await startRelay());
    await l.activate(code);
    expect(existsSync(signedFile())).toBe(true);
    await service.control.revoke(code);
    const status = await l.validate({ force: true });
    expect(status).toMatchObject({ valid: false, reason: 'code_revoked' });
    expect(existsSync(signedFile())).toBe(false);
    expect(plugin()).toMatchObject({ verdict: 'not_licensed', reason: 'code_revoked' });
  });

  it('deactivate: the signed ticket is gone, the ticket says not activated, the slot is free', async () => {
    const code = await service.code(2);
    const l = through(await startRelay());
    await l.activate(code);
    const status = await l.deactivate();
    expect(status).toMatchObject({ valid: false, reason: 'not_activated', signedTicket: null });
    expect(existsSync(signedFile())).toBe(false);
    expect(plugin()).toMatchObject({ verdict: 'not_licensed', reason: 'not_activated' });
    expect(await slots(code)).toBe(0);
  });
});

describe('what is not stored', () => {
  it('a relay that signs with a key this side does not trust: nothing stored, the slot recorded, signed_ticket_refused naming both ids', async () => {
    const code = await service.code(2);
    const l = through(await startRelay(stranger));
    const e = await rejection(l.activate(code), isLicenseError);
    expect(e.code).toBe('signed_ticket_refused');
    expect(e.kid).toBe(stranger.kid);
    expect(e.trustedKids).toEqual([key.kid]);
    expect(e.message).toContain(stranger.kid);
    expect(e.message).toContain(key.kid);
    expect(existsSync(signedFile())).toBe(false);
    // The slot the service took is recorded (so it can be given back); the license is unsigned here.
    expect(await slots(code)).toBe(1);
    expect(l.check()).toMatchObject({ valid: false, reason: 'unsigned', codeHint: `${code.slice(0, 4)}…${code.slice(-4)}` });
    expect(plugin()).toMatchObject({ verdict: 'not_licensed', reason: 'unsigned' });
    await l.deactivate();
    expect(await slots(code)).toBe(0);
  });

  it('a signed ticket edited on disk: the status says cache_invalid (the reader\'s rule), a plugin too', async () => {
    const code = await service.code(2);
    const r = await startRelay();
    await through(r).activate(code);
    const text = readFileSync(signedFile(), 'utf8');
    writeFileSync(signedFile(), text.replace(/"valid_until":(\d+)/, (_m, n: string) => `"valid_until":${Number(n) + 86_400}`));
    // A restart (or the agent's reload after the file changed) reads it again.
    expect(await through(r).reload()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(plugin()).toMatchObject({ verdict: 'tampered', reason: 'cache_invalid' });
  });

  it('keys but no relay (the service itself answers): the state is stored, no signed ticket, the status says unsigned', async () => {
    const code = await service.code(2);
    const l = license({ ticketKeys: [key.publicKey] });
    expect(await l.activate(code)).toMatchObject({ valid: false, reason: 'unsigned', signedTicket: null });
    expect(existsSync(signedFile())).toBe(false);
    // A plugin built without keys plays on the ticket as before; one with the keys does not.
    expect(plugin([])).toMatchObject({ verdict: 'valid' });
    expect(plugin()).toMatchObject({ verdict: 'not_licensed', reason: 'unsigned' });
  });

  it('the relay down: activation is unavailable, nothing stored, no slot taken', async () => {
    const code = await service.code(2);
    const down = await startRelayProcess({ serviceUrl: service.emulator.baseUrl, token: service.emulator.token, app: APP, projects: [projectId()], keys: [key] });
    await down.stop();
    const e = await rejection(through(down).activate(code), isLicenseError);
    expect(e.code).toBe('unavailable');
    expect(existsSync(signedFile())).toBe(false);
    expect(await slots(code)).toBe(0);
  });

  it('a relay without ticket keys is refused before anything is asked, naming the missing half', () => {
    expect(() => license({ relayUrl: 'http://127.0.0.1:9/functions/v1' })).toThrow(/relay is configured without the vendor's public keys \(ticket_keys\)/);
  });
});

describe('offline responses carry the vendor\'s signature', () => {
  it('offline activate with a key adds a signed ticket (offline, valid_until the response\'s); import verifies and stores it', async () => {
    const code = await service.code(2);
    const request = await createOfflineRequest({ projectId: projectId(), code, home: home.dir, rawMachineIdProvider: () => RAW_A, now: clock.now });
    const response = await answerOfflineRequest(offlineText(request), { baseUrl: service.emulator.baseUrl, dispatcher: service.dispatcher, validDays: 10, signingKeyPem: key.pem, now: clock.now });
    expect(typeof response.signed_ticket).toBe('string');
    const status = await importOfflineResponse(offlineText(response), { home: home.dir, rawMachineIdProvider: () => RAW_A, now: clock.now, ticketKeys: [key.publicKey] });
    expect(status).toMatchObject({ valid: true, source: 'offline', signedTicket: response.signed_ticket });
    const fields = signedOnDisk();
    expect(fields).toMatchObject({ kid: key.kid, source: 'offline', machine_id: request.machine_id, valid_until: Math.floor(Date.parse(response.valid_until) / 1000) });
    expect(plugin()).toMatchObject({ verdict: 'valid', signed: { source: 'offline' } });
    const [cached] = await readCachedStatus({ home: home.dir, rawMachineIdProvider: () => RAW_A, ticketKeys: [key.publicKey], now: clock.now });
    expect(cached?.signed).toMatchObject({ kid: key.kid, verifies: true, source: 'offline' });
  });

  it('with ticket keys: a response without a signed ticket, or signed by another key, is refused and nothing is stored', async () => {
    const code = await service.code(3);
    const at = { home: home.dir, rawMachineIdProvider: () => RAW_A, now: clock.now };
    const online = { baseUrl: service.emulator.baseUrl, dispatcher: service.dispatcher, now: clock.now };
    const unsigned = await answerOfflineRequest(offlineText(await createOfflineRequest({ projectId: projectId(), code, ...at })), online);
    const e1 = await rejection(importOfflineResponse(offlineText(unsigned), { ...at, ticketKeys: [key.publicKey] }), isLicenseError);
    expect(e1.code).toBe('offline_refused');
    expect(e1.message).toMatch(/no ticket signed by the vendor/);
    const foreign = await answerOfflineRequest(offlineText(await createOfflineRequest({ projectId: projectId(), code, ...at })), { ...online, signingKeyPem: stranger.pem });
    const e2 = await rejection(importOfflineResponse(offlineText(foreign), { ...at, ticketKeys: [key.publicKey] }), isLicenseError);
    expect(e2).toMatchObject({ code: 'signed_ticket_refused', kid: stranger.kid, trustedKids: [key.kid] });
    expect(existsSync(signedFile())).toBe(false);
    // The pending request is kept: the same request answered with the vendor's key imports.
    expect(await importOfflineResponse(offlineText(unsigned), at)).toMatchObject({ valid: true });
  });
});
