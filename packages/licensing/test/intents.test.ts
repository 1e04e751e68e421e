import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fullDisk, readOnlyFolder, rejection } from '@plugin-license/test-utils';
import { describe, expect, it } from 'vitest';
import { cacheFilePath, getMachineId, isLicenseError, type License, type LicenseError } from '../src/index.js';
import { RAW_A, useLicenses } from './helpers.js';

// The local state and the service's slot count never disagree for long, whatever fails between
// them: the intent is written before the service is asked, and settled with the service later.

const { service, home, clock, license, cleanups } = useLicenses();

const cacheFile = (): string => cacheFilePath(service.emulator.projectId, { home: home.dir });
const licensesDir = (): string => dirname(cacheFile());
const intentFiles = (): string[] => (existsSync(join(licensesDir(), 'intents')) ? readdirSync(join(licensesDir(), 'intents')) : []);
const slots = async (code: string): Promise<number> => (await service.admin.activation.status(code)).activations;
const machineId = async (): Promise<string> =>
  (await getMachineId({ namespace: 'plugin-license', home: home.dir, rawMachineIdProvider: () => RAW_A })).id;

describe('when the disk refuses, nothing is asked of the service', () => {
  it('a read-only licenses folder: activate fails at once with cache_io, and no slot is taken', async (ctx) => {
    mkdirSync(licensesDir(), { recursive: true });
    const ro = readOnlyFolder(licensesDir());
    if (!ro.ok) return ctx.skip(ro.reason);
    cleanups.push(ro.undo);
    const code = await service.code();
    const e = await rejection(license().activate(code), isLicenseError);
    expect(e).toMatchObject({ code: 'cache_io', systemCode: 'EROFS' });
    expect(e.path).toContain(licensesDir());
    expect(e.message).toMatch(/nothing was asked of the service/);
    expect(e.message).not.toContain(code);
    expect(await slots(code)).toBe(0);
  }, 5_000); // proper-lockfile's retries made this wait 21.5 s

  it('a full disk: activate fails at once with cache_io (ENOSPC), no slot is taken, no empty temp file is left', async (ctx) => {
    const data = join(home.dir, 'data');
    const full = fullDisk(data);
    if (!full.ok) return ctx.skip(full.reason);
    cleanups.push(full.undo);
    const code = await service.code();
    const l = license({ machineId: 'studio-pc-7' }); // the generated-id file would need the disk too
    const e = await rejection(l.activate(code), isLicenseError);
    expect(e).toMatchObject({ code: 'cache_io', systemCode: 'ENOSPC' });
    expect(await slots(code)).toBe(0);
    const leftovers = (dir: string): string[] =>
      existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.tmp')) : [];
    expect(leftovers(data)).toEqual([]);
  }, 5_000);

  it('a folder where the cache file should be: activate fails with cache_io, no slot is taken', async () => {
    mkdirSync(join(cacheFile(), 'x'), { recursive: true });
    const code = await service.code();
    const l = license();
    expect(l.check()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    const e = await rejection(l.activate(code), isLicenseError);
    expect(e.code).toBe('cache_io');
    expect(await slots(code)).toBe(0);
  }, 5_000);
});

describe('when the state write fails after the service answered, the intent settles it', () => {
  it('activate: a state that cannot be stored after the service answered gives the slot back', async () => {
    const code = await service.code();
    const l = license();
    // The folder gets in the way while the service holds the request: after the intent, before the write.
    await service.control.faults({ mode: 'hold', count: 1 });
    const pending = rejection(l.activate(code), isLicenseError);
    await service.control.held(1);
    expect(intentFiles()).toHaveLength(1); // written before the service was asked
    mkdirSync(join(cacheFile(), 'in-the-way'), { recursive: true });
    await service.control.releaseHeld();
    const e = await pending;
    await service.control.faults({ mode: 'none' });
    expect(e.code).toBe('cache_io');
    expect(e.message).toMatch(/the service activated code .*, but the state could not be stored, so the slot was given back/);
    expect(l.check()).toMatchObject({ valid: false });
    expect(await slots(code)).toBe(0);
    expect(intentFiles()).toEqual([]);
  });

  /** Activates with the cache file's place taken by a folder after the intent, and the give-back answered with `status`. */
  async function activateUnstorable(status: number): Promise<{ code: string; l: License; e: LicenseError }> {
    const code = await service.code();
    const l = license();
    await service.control.faults({ mode: 'hold', count: 1 });
    const pending = rejection(l.activate(code), isLicenseError);
    await service.control.held(1);
    expect(intentFiles()).toHaveLength(1);
    mkdirSync(join(cacheFile(), 'in-the-way'), { recursive: true });
    // The activation held at the service completes; the give-back after it finds the service failing.
    await service.control.faults({ mode: 'error', status });
    await service.control.releaseHeld();
    const e = await pending;
    await service.control.faults({ mode: 'none' });
    return { code, l, e };
  }

  async function restartCompletes(code: string): Promise<void> {
    rmSync(cacheFile(), { recursive: true });
    const restarted = license();
    expect(await restarted.settle()).toMatchObject({ valid: true, source: 'online', activations: 1 });
    expect(intentFiles()).toEqual([]);
    expect(license().check()).toMatchObject({ valid: true, source: 'cache' });
    expect(await slots(code)).toBe(1);
  }

  it('activate: when the give-back is refused (429), memory follows the service (the slot is held), the caller hears cache_io, and the next start completes the cache', async () => {
    const { code, l, e } = await activateUnstorable(429);
    expect(e.code).toBe('cache_io');
    expect(e.message).toMatch(/the service activated code .*, but the state could not be stored.*completed at the next start/);
    expect(l.check()).toMatchObject({ valid: true });
    expect(await slots(code)).toBe(1);
    expect(intentFiles()).toHaveLength(1);
    await restartCompletes(code);
  });

  it('activate: when the give-back goes unanswered (503), the slot may be free: nothing uses it here, and the next start settles it with the service', async () => {
    const { code, l, e } = await activateUnstorable(503);
    expect(e.code).toBe('cache_io');
    expect(e.message).toMatch(/the service activated code .*, but the state could not be stored, and giving the slot back went unanswered: .*settled at the next start/);
    expect(l.check()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(await slots(code)).toBe(1);
    expect(intentFiles()).toHaveLength(1); // the activation's: it covers the give-back
    await restartCompletes(code);
  });

  it('deactivate: released at the service but not stored: not valid at once, and the next start removes the cache', async () => {
    const code = await service.code();
    const l = license();
    await l.activate(code);
    const stored = readFileSync(cacheFile(), 'utf8');
    rmSync(cacheFile());
    mkdirSync(join(cacheFile(), 'in-the-way'), { recursive: true });
    const e = await rejection(l.deactivate(), isLicenseError);
    expect(e.code).toBe('cache_io');
    expect(l.check()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(await slots(code)).toBe(0);

    // The old cache is back (as after a kill before the removal): the intent says what happened.
    rmSync(cacheFile(), { recursive: true });
    writeFileSync(cacheFile(), stored);
    // A reader that doesn't settle sees the release pending: not used here (the slot is free).
    expect(license().check()).toMatchObject({ valid: false, reason: 'deactivated' });
    const restarted = license();
    expect(await restarted.settle()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(existsSync(cacheFile())).toBe(false);
    expect(intentFiles()).toEqual([]);
  });
});

describe('settling what a killed process left', () => {
  async function leaveIntent(op: 'activate' | 'deactivate', code: string): Promise<void> {
    const dir = join(licensesDir(), 'intents');
    mkdirSync(dir, { recursive: true });
    const body = { format: 1, op, projectId: service.emulator.projectId, machineId: await machineId(), code, at: clock.now() };
    writeFileSync(join(dir, `${service.emulator.projectId}.${op}.0123456789ab.json`), JSON.stringify(body));
  }
  const activateAtService = async (code: string): Promise<void> => {
    await service.admin.activation.activate({ code, machine_id: await machineId(), plugin_id: service.emulator.projectId });
  };

  it('an activation the service took but the cache never heard of is completed', async () => {
    const code = await service.code();
    await leaveIntent('activate', code);
    await activateAtService(code); // the answer arrived; the process died before writing
    expect(await license().validate()).toMatchObject({ valid: true, source: 'online', codeHint: expect.any(String) });
    expect(intentFiles()).toEqual([]);
    expect(await slots(code)).toBe(1);
  });

  it('an activation the service never took is dropped, with nothing stored', async () => {
    const code = await service.code();
    await leaveIntent('activate', code);
    expect(await license().settle()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(intentFiles()).toEqual([]);
    expect(existsSync(cacheFile())).toBe(false);
  });

  it('a deactivation the service never did keeps the license', async () => {
    const code = await service.code();
    await license().activate(code);
    await leaveIntent('deactivate', code);
    expect(await license().settle()).toMatchObject({ valid: true, source: 'online' });
    expect(intentFiles()).toEqual([]);
    expect(await slots(code)).toBe(1);
  });

  it('offline, the intent waits for a later call; the service answering settles it', async () => {
    const code = await service.code();
    await leaveIntent('activate', code);
    await activateAtService(code);
    await service.control.faults({ mode: 'offline' });
    const l = license();
    expect(await l.settle()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(intentFiles()).toHaveLength(1);
    await service.control.faults({ mode: 'none' });
    expect(await l.settle()).toMatchObject({ valid: true });
    expect(intentFiles()).toEqual([]);
  });

  it('an intent recorded under another machine id (a copied folder) is not settled for this machine', async () => {
    const code = await service.code();
    const dir = join(licensesDir(), 'intents');
    mkdirSync(dir, { recursive: true });
    const body = { format: 1, op: 'activate', projectId: service.emulator.projectId, machineId: 'm1_someone-else', code, at: clock.now() };
    writeFileSync(join(dir, `${service.emulator.projectId}.activate.0123456789ab.json`), JSON.stringify(body));
    expect(await license().settle()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(intentFiles()).toEqual([]);
    expect(await slots(code)).toBe(0);
  });

  it('a garbled intent file is moved aside, not trusted', async () => {
    const dir = join(licensesDir(), 'intents');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${service.emulator.projectId}.activate.0123456789ab.json`), '{"format":1,"op":"acti');
    expect(await license().settle()).toMatchObject({ valid: false, reason: 'not_activated' });
    expect(intentFiles().every((n) => n.includes('.invalid-'))).toBe(true);
  });
});
