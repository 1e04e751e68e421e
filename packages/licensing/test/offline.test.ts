// The offline exchange in the library: two homes stand for two machines (the studio, never
// online, and the online computer), the real emulator answers the online step, and the import
// rules run against an injected clock.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rejection } from '@plugin-license/test-utils';
import {
  answerOfflineRequest,
  cacheFilePath,
  confirmOfflineRelease,
  createOfflineRequest,
  generateOfflineKeyPair,
  importOfflineResponse,
  isLicenseError,
  judgeTicket,
  License,
  offlineDir,
  offlineJson,
  offlineText,
  parseOfflineDocument,
  readCachedStatus,
  releaseOffline,
  ticketPath,
  type OfflineResponse,
} from '../src/index.js';
import { canonicalResponseBytes } from '../src/offline-format.js';
import { RAW_A, tempHome, useLicenses } from './helpers.js';

const DAY = 86_400_000;

// The studio's clock starts at the real time (the emulator stamps its answers with it); tests move it.
const { service, home: studio, clock } = useLicenses();

const projectId = (): string => service.emulator.projectId;
/** The offline machine: its home, its OS id, its clock; no service anywhere. */
const at = () => ({ home: studio.dir, rawMachineIdProvider: () => RAW_A, now: clock.now });
/** The online computer: the emulator. */
const online = () => ({ baseUrl: service.emulator.baseUrl, dispatcher: service.dispatcher });

async function slots(code: string): Promise<number> {
  return (await service.admin.activation.status(code)).activations;
}

async function activatedOffline(code: string, extra: { validDays?: number; signingKeyPem?: string } = {}): Promise<OfflineResponse> {
  const request = await createOfflineRequest({ projectId: projectId(), code, ...at() });
  return answerOfflineRequest(offlineText(request), { ...online(), ...extra });
}

describe('offline activation in the library', () => {
  it('request -> activate -> import: valid with source offline until valid_until; a License and readCachedStatus see it', async () => {
    const code = await service.code(2);
    const request = await createOfflineRequest({ projectId: projectId(), code, ...at() });
    expect(request).toMatchObject({ type: 'offline_request', version: 1, project_id: projectId(), code, renew: false });
    expect(readdirSync(offlineDir({ home: studio.dir }))).toEqual([`${projectId()}.pending.json`]);

    const response = await answerOfflineRequest(offlineJson(request), { ...online(), validDays: 30 });
    expect(response).toMatchObject({ type: 'offline_response', machine_id: request.machine_id, nonce: request.nonce, valid: true, activations: 1, max_activations: 2 });
    expect(await slots(code)).toBe(1);

    const status = await importOfflineResponse(offlineText(response), at());
    expect(status).toMatchObject({ valid: true, reason: null, source: 'offline', activations: 1, maxActivations: 2 });
    expect(status.graceUntil?.toISOString()).toBe(response.valid_until);
    expect(existsSync(join(offlineDir({ home: studio.dir }), `${projectId()}.pending.json`))).toBe(false);

    // The plugin's License, pointed at a service that is not there, agrees.
    const license = new License({ projectId: projectId(), baseUrl: 'http://127.0.0.1:9/functions/v1', ...at() });
    expect(license.check()).toMatchObject({ valid: true, source: 'offline' });
    clock.advance(31 * DAY);
    expect(license.check()).toMatchObject({ valid: false, reason: 'grace_expired', source: 'offline' });
    await license.close();

    const [cached] = await readCachedStatus({ home: studio.dir, rawMachineIdProvider: () => RAW_A, now: clock.now });
    expect(cached?.offline).toMatchObject({ keyId: null, machineName: request.machine_name });
  });

  it('renew validates (no slot taken) and moves valid_until; online validation later takes over, and a revoked code stops being valid', async () => {
    const code = await service.code(1);
    await importOfflineResponse(await activatedOffline(code, { validDays: 10 }), at());
    clock.advance(5 * DAY);
    const renewal = await createOfflineRequest({ projectId: projectId(), renew: true, ...at() });
    expect(renewal.code).toBe(code); // the held code, without typing it again
    const answered = await answerOfflineRequest(renewal, { ...online(), validDays: 60 });
    expect(await slots(code)).toBe(1); // a one-slot code renewed: no second slot
    const renewed = await importOfflineResponse(answered, at());
    expect(renewed.graceUntil?.toISOString()).toBe(answered.valid_until);

    // The machine reaches the service: the offline activation is replaced by an online answer.
    const license = new License({ projectId: projectId(), baseUrl: service.emulator.baseUrl, dispatcher: service.dispatcher, home: studio.dir, rawMachineIdProvider: () => RAW_A });
    expect((await license.validate({ force: true })).source).toBe('online');
    await service.control.revoke(code);
    expect(await license.validate({ force: true })).toMatchObject({ valid: false, reason: 'code_revoked' });
    await license.close();
  });

  it('release forgets first and gives a proof; confirm frees the slot; confirmed twice it says already released', async () => {
    const code = await service.code(1);
    await importOfflineResponse(await activatedOffline(code), at());
    const proof = await releaseOffline({ projectId: projectId(), ...at() });
    expect(existsSync(cacheFilePath(projectId(), { home: studio.dir }))).toBe(false);
    // A lost proof can be made again: the same one.
    expect(await releaseOffline({ projectId: projectId(), ...at() })).toEqual(proof);
    const first = await confirmOfflineRelease(offlineText(proof), online());
    expect(first).toMatchObject({ released: true, alreadyReleased: false, activations: 0, maxActivations: 1 });
    expect(await slots(code)).toBe(0);
    expect(await confirmOfflineRelease(proof, online())).toMatchObject({ released: false, alreadyReleased: true });
    // A proof for a machine id that never held the slot is not a release.
    const stranger = { ...proof, machine_id: 'm1_' + '0'.repeat(64) };
    expect((await rejection(confirmOfflineRelease(stranger, online()), isLicenseError)).code).toBe('not_activated');
  });

  it('signed: with keys configured, unsigned, unknown-key and altered responses are refused; a signed one is kept and re-verified at load', async () => {
    const vendor = generateOfflineKeyPair();
    const other = generateOfflineKeyPair();
    const code = await service.code(2);
    const keys = { offlinePublicKeys: [other.publicKey, vendor.publicKey] };

    const unsigned = await activatedOffline(code);
    expect((await rejection(importOfflineResponse(unsigned, { ...at(), ...keys }), isLicenseError)).message).toMatch(/not signed/);
    const wrongKey = await activatedOffline(code, { signingKeyPem: generateOfflineKeyPair().privateKeyPem });
    expect((await rejection(importOfflineResponse(wrongKey, { ...at(), ...keys }), isLicenseError)).message).toMatch(/does not know/);
    const signed = await activatedOffline(code, { signingKeyPem: vendor.privateKeyPem });
    const flipped = { ...signed, valid_until: new Date(Date.parse(signed.valid_until) + DAY).toISOString() };
    expect((await rejection(importOfflineResponse(flipped, { ...at(), ...keys }), isLicenseError)).message).toMatch(/does not verify/);
    // Nothing was stored by any refusal, and each kept its pending request.
    expect(existsSync(cacheFilePath(projectId(), { home: studio.dir }))).toBe(false);

    expect(await importOfflineResponse(signed, { ...at(), ...keys })).toMatchObject({ valid: true, source: 'offline' });
    const [cached] = await readCachedStatus({ home: studio.dir, rawMachineIdProvider: () => RAW_A, now: clock.now, ...keys });
    expect(cached?.offline?.keyId).toBe(vendor.keyId);

    // The canonical bytes are what the README says.
    const { signature: _s, ...rest } = signed;
    const sorted = Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(canonicalResponseBytes(signed).toString('utf8')).toBe(`plugin-license offline response v1\n${JSON.stringify(sorted)}`);

    // An unsigned activation imported by a tool without keys is not valid where keys are configured.
    const plain = tempHome('plo-plain-');
    try {
      const where = { home: plain.dir, rawMachineIdProvider: () => RAW_A, now: clock.now };
      const req = await createOfflineRequest({ projectId: projectId(), code, ...where });
      await importOfflineResponse(await answerOfflineRequest(req, online()), where);
      const strict = new License({ projectId: projectId(), baseUrl: 'http://127.0.0.1:9/functions/v1', ...where, ...keys });
      expect(strict.check()).toMatchObject({ valid: false, reason: 'cache_invalid' });
      const lax = new License({ projectId: projectId(), baseUrl: 'http://127.0.0.1:9/functions/v1', ...where });
      expect(lax.check()).toMatchObject({ valid: true, source: 'offline' });
      await Promise.all([strict.close(), lax.close()]);
    } finally {
      plain.cleanup();
    }
  });

  it('import rules: each refusal says why, stores nothing and keeps the pending request', async () => {
    const code = await service.code(3);
    const request = await createOfflineRequest({ projectId: projectId(), code, ...at() });
    const good = await answerOfflineRequest(request, { ...online(), validDays: 30 });
    const pendingFile = join(offlineDir({ home: studio.dir }), `${projectId()}.pending.json`);
    const pendingBefore = readFileSync(pendingFile, 'utf8');
    const refusedWith = async (input: OfflineResponse | string, pattern: RegExp, code = 'offline_refused', options = {}): Promise<void> => {
      const e = await rejection(importOfflineResponse(input, { ...at(), ...options }), isLicenseError);
      expect(e.code, e.message).toBe(code);
      expect(e.message).toMatch(pattern);
      expect(e.message).not.toContain(good.code);
      expect(existsSync(cacheFilePath(projectId(), { home: studio.dir }))).toBe(false);
      expect(readFileSync(pendingFile, 'utf8')).toBe(pendingBefore);
    };
    await refusedWith({ ...good, machine_id: 'm1_' + 'f'.repeat(64) }, /made for machine m1_f+.*not this one/);
    await refusedWith(good, /is for project .* not 00000000-0000-4000-8000-000000000000/, 'offline_refused', { projectId: '00000000-0000-4000-8000-000000000000' });
    await refusedWith({ ...good, nonce: 'A'.repeat(22) }, /answers no pending request/);
    await refusedWith({ ...good, valid: false }, /negative answer/);
    await refusedWith({ ...good, valid_until: new Date(clock.now() - 1000).toISOString() }, /expired on/);
    await refusedWith({ ...good, valid_until: new Date(clock.now() + 400 * DAY).toISOString() }, /longer than the 365 days/);
    await refusedWith({ ...good, valid_until: new Date(clock.now() + 40 * DAY).toISOString() }, /longer than the 20 days/, 'offline_refused', { offlineMaxDays: 20 });
    await refusedWith(JSON.stringify({ ...good, type: 'offline_answer' }), /not a plugin-license offline file/, 'invalid_offline_file');
    await refusedWith(JSON.stringify({ ...good, version: 2 }), /version 2; this version reads version 1/, 'invalid_offline_file');
    await refusedWith(offlineJson(good).slice(0, 120), /not complete JSON/, 'invalid_offline_file');
    const line = offlineText(good);
    await refusedWith(line.slice(0, 60), /incomplete/, 'invalid_offline_file');
    await refusedWith(line.slice(0, -1) + (line.endsWith('A') ? 'B' : 'A'), /damaged or incomplete/, 'invalid_offline_file');
    await refusedWith(line.slice(0, 30) + (line[30] === 'x' ? 'y' : 'x') + line.slice(31), /damaged or incomplete/, 'invalid_offline_file');
    await refusedWith(offlineText(request), /an offline request, not an offline response/, 'invalid_offline_file');

    // The good one still imports, once: replayed, it answers no pending request.
    expect((await importOfflineResponse(good, at())).valid).toBe(true);
    const replay = await rejection(importOfflineResponse(good, at()), isLicenseError);
    expect(replay.message).toMatch(/imported already/);
  });

  it('the online step refuses revoked, unknown and full codes and returns nothing; a request without a code needs one', async () => {
    const full = await service.code(1);
    await service.admin.activation.activate({ code: full, machine_id: 'someone-else' });
    const revoked = await service.code(1);
    await service.control.revoke(revoked);
    for (const [code, expected] of [
      [full, 'max_activations_reached'],
      [revoked, 'code_revoked'],
      ['00000000-0000-4000-8000-000000000000', 'code_not_found'],
    ] as const) {
      const request = await createOfflineRequest({ projectId: projectId(), code, ...at() });
      const e = await rejection(answerOfflineRequest(request, online()), isLicenseError);
      expect(e.code).toBe(expected);
    }
    const noCode = await createOfflineRequest({ projectId: projectId(), ...at() });
    expect((await rejection(answerOfflineRequest(noCode, online()), isLicenseError)).message).toMatch(/carries no code/);
    const renewNothing = await rejection(createOfflineRequest({ projectId: projectId(), renew: true, ...at() }), isLicenseError);
    expect(renewNothing.code).toBe('not_activated');
  });

  it('a tampered cache under the lock: renew and release answer not_activated at once (the file is set aside), no deadlock', async () => {
    await importOfflineResponse(await activatedOffline(await service.code(1)), at());
    const file = cacheFilePath(projectId(), { home: studio.dir });
    writeFileSync(file, readFileSync(file, 'utf8').replace('"failures":0', '"failures":5'));
    // A re-entered lock would wait out its stale time (over 20 s) and fail this test by its time-out.
    expect((await rejection(createOfflineRequest({ projectId: projectId(), renew: true, ...at() }), isLicenseError)).code).toBe('not_activated');
    expect((await rejection(releaseOffline({ projectId: projectId(), ...at() }), isLicenseError)).code).toBe('not_activated');
    expect(readdirSync(join(studio.dir, 'data', 'licenses')).some((f) => f.includes('.invalid-'))).toBe(true);
  }, 15_000);

  it('a process dying after each side effect, and a disk that refuses: nothing lost, the next try finishes the job', async () => {
    const code = await service.code(1);
    const request = await createOfflineRequest({ projectId: projectId(), code, ...at() });
    // Killed after the service took the slot, before the response was written: answering the same request again takes no second slot.
    await answerOfflineRequest(request, online());
    const response = await answerOfflineRequest(request, online());
    expect(await slots(code)).toBe(1);
    // A signing key that is not one is refused before the service is asked.
    const other = await createOfflineRequest({ projectId: projectId(), code: await service.code(1), ...at() });
    expect((await rejection(answerOfflineRequest(other, { ...online(), signingKeyPem: 'not a key' }), isLicenseError)).message).toMatch(/not a private key in PEM form/);
    expect(await slots(other.code!)).toBe(0);

    // The disk refuses the import (a file where the licenses folder goes): cache_io, nothing stored, the request still pending.
    const licenses = join(studio.dir, 'data', 'licenses');
    rmSync(licenses, { recursive: true, force: true });
    writeFileSync(licenses, 'in the way');
    expect((await rejection(importOfflineResponse(response, at()), isLicenseError)).code).toBe('cache_io');
    rmSync(licenses);
    const pendingFile = join(offlineDir({ home: studio.dir }), `${projectId()}.pending.json`);
    const pendingBefore = readFileSync(pendingFile, 'utf8');
    expect((await importOfflineResponse(response, at())).valid).toBe(true);
    // Killed after the state was written, before the nonce was forgotten: importing again stores the same state.
    writeFileSync(pendingFile, pendingBefore);
    expect(await importOfflineResponse(response, at())).toMatchObject({ valid: true, source: 'offline' });

    // The disk refuses the release proof: the license is kept (nothing was forgotten without a proof).
    const offline = offlineDir({ home: studio.dir });
    rmSync(offline, { recursive: true, force: true });
    writeFileSync(offline, 'in the way');
    expect((await rejection(releaseOffline({ projectId: projectId(), ...at() }), isLicenseError)).code).toBe('cache_io');
    const license = new License({ projectId: projectId(), baseUrl: 'http://127.0.0.1:9/functions/v1', ...at() });
    expect(license.check()).toMatchObject({ valid: true, source: 'offline' });
    await license.close();
    // The ticket said "not licensed" before the proof was tried; with no proof, it grants again.
    const ticket = judgeTicket(ticketPath({ home: studio.dir }, projectId()), { app: 'plugin-license', projectId: projectId(), now: Math.floor(clock.now() / 1000), rawMachineId: RAW_A });
    expect(ticket).toMatchObject({ verdict: 'valid', ticket: { source: 'offline' } });
    rmSync(offline);
    // Killed after the proof was recorded, before the state was removed: the next release gives a proof that confirms.
    const proof = await releaseOffline({ projectId: projectId(), ...at() });
    expect((await confirmOfflineRelease(proof, online())).released).toBe(true);
  });

  it('a damaged pending-requests file is set aside for support, and an import then finds no pending request', async () => {
    const response = await activatedOffline(await service.code(1));
    const pendingFile = join(offlineDir({ home: studio.dir }), `${projectId()}.pending.json`);
    writeFileSync(pendingFile, '{"format":1,"requests":[{"nonce":');
    expect((await rejection(importOfflineResponse(response, at()), isLicenseError)).message).toMatch(/answers no pending request/);
    expect(readdirSync(offlineDir({ home: studio.dir })).some((f) => f.startsWith(`${projectId()}.pending.json.invalid-`))).toBe(true);
  });

  it('a License in another process of the machine hears an import through reload()', async () => {
    const license = new License({ projectId: projectId(), baseUrl: 'http://127.0.0.1:9/functions/v1', ...at() });
    expect(license.check().reason).toBe('not_activated');
    const changes: string[] = [];
    license.on('change', (s) => changes.push(`${s.valid}:${s.source}`));
    await importOfflineResponse(await activatedOffline(await service.code(1)), at());
    expect((await license.reload()).source).toBe('offline');
    expect(changes).toEqual(['true:offline']);
    await releaseOffline({ projectId: projectId(), ...at() });
    expect((await license.reload()).reason).toBe('not_activated');
    await license.close();
  });

  it('parseOfflineDocument takes JSON with a BOM, a line with line breaks in it, and refuses a file over 64 KiB', async () => {
    const request = await createOfflineRequest({ projectId: projectId(), ...at() });
    expect(parseOfflineDocument(`\uFEFF${offlineJson(request)}`, 'offline_request')).toEqual(request);
    const line = offlineText(request);
    expect(parseOfflineDocument(`${line.slice(0, 40)}\n${line.slice(40)}\n`)).toEqual(request);
    expect(() => parseOfflineDocument('x'.repeat(70_000))).toThrow(/far larger than an offline file/);
  });
});
