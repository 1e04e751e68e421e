import { createHmac } from 'node:crypto';
import { readFileSync, statSync, writeFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getMachineId, isLicenseError } from '../src/index.js';
import { plausibleRawId } from '../src/machine-id.js';
import { RAW_A, tempHome } from './helpers.js';

let home: { dir: string; cleanup: () => void };
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

describe('getMachineId', () => {
  it('derives m1_ + HMAC-SHA256(namespace, raw id) and never exposes the raw id', async () => {
    const id = await getMachineId({ home: home.dir, namespace: 'acme-audio', rawMachineIdProvider: () => RAW_A });
    expect(id).toEqual({ id: 'm1_' + createHmac('sha256', 'acme-audio').update(RAW_A).digest('hex'), source: 'os' });
    expect(id.id).not.toContain(RAW_A);
    const other = await getMachineId({ home: home.dir, namespace: 'other-vendor', rawMachineIdProvider: () => RAW_A });
    expect(other.id).toMatch(/^m1_[0-9a-f]{64}$/);
    expect(other.id).not.toBe(id.id);
  });

  it('normalises OS id spellings (Windows GUID braces, dashes, case) to the same id', async () => {
    const a = await getMachineId({ home: home.dir, rawMachineIdProvider: () => '{0123ABCD-4567-89AB-CDEF-0123456789AB}' });
    const b = await getMachineId({ home: home.dir, rawMachineIdProvider: () => '0123abcd456789abcdef0123456789ab\n' });
    expect(a.id).toBe(b.id);
  });

  it('asks the provider once per process and options (memoized)', async () => {
    let calls = 0;
    const provider = () => {
      calls++;
      return RAW_A;
    };
    const first = await getMachineId({ home: home.dir, rawMachineIdProvider: provider });
    const second = await getMachineId({ home: home.dir, rawMachineIdProvider: provider });
    expect(second).toEqual(first);
    expect(calls).toBe(1);
  });

  it.each([
    ['a container without /etc/machine-id (no id)', () => null],
    ['Windows refusing REG.exe (the lookup throws)', () => {
      throw new Error('ERROR: Access is denied.');
    }],
    ["Linux falling back to a container's host name", () => '3f4e5d6c7b8a'],
    ['an all-zero firmware UUID', () => '00000000-0000-0000-0000-000000000000'],
  ])('falls back to a generated, persisted id: %s', async (_name, provider) => {
    const first = await getMachineId({ home: home.dir, rawMachineIdProvider: provider });
    expect(first.source).toBe('generated');
    expect(first.id).toMatch(/^m1_[0-9a-f]{64}$/);
    const secretFile = join(home.dir, 'data', 'machine-secret');
    expect(readFileSync(secretFile, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    if (process.platform !== 'win32') expect(statSync(secretFile).mode & 0o077).toBe(0);
    // A new provider function (as in a new process): the same persisted id.
    const again = await getMachineId({ home: home.dir, rawMachineIdProvider: () => null });
    expect(again).toEqual(first);
  });

  it('a corrupted generated secret is set aside and replaced', async () => {
    mkdirSync(join(home.dir, 'data'), { recursive: true });
    writeFileSync(join(home.dir, 'data', 'machine-secret'), 'garbage');
    const id = await getMachineId({ home: home.dir, rawMachineIdProvider: () => null });
    expect(id.source).toBe('generated');
    expect(readdirSync(join(home.dir, 'data')).some((n) => n.startsWith('machine-secret.invalid-'))).toBe(true);
  });

  it('returns a caller-supplied id as is (trimmed), with source caller', async () => {
    expect(await getMachineId({ home: home.dir, machineId: '  studio-pc-7 ', rawMachineIdProvider: () => RAW_A })).toEqual({ id: 'studio-pc-7', source: 'caller' });
    for (const bad of ['', '   ', 'a\nb', 'x'.repeat(257)]) {
      const error = await getMachineId({ home: home.dir, machineId: bad }).catch((e: unknown) => e);
      expect(isLicenseError(error) && error.code).toBe('invalid_argument');
    }
  });

  it('uses the OS id of this machine by default (or the generated one where the OS has none)', async () => {
    const id = await getMachineId({ home: home.dir });
    expect(id.id).toMatch(/^m1_[0-9a-f]{64}$/);
    expect(['os', 'generated']).toContain(id.source);
    expect(await getMachineId({ home: home.dir })).toEqual(id);
  });
});

describe('plausibleRawId', () => {
  it('accepts real ids and rejects host names and placeholders', () => {
    expect(plausibleRawId('3d1219c7c4c5404aaa1f6d2a48adfda4')).toBe('3d1219c7c4c5404aaa1f6d2a48adfda4');
    expect(plausibleRawId('4C4C4544-0047-3510-8052-B4C04F4E3632')).toBe('4c4c4544004735108052b4c04f4e3632');
    expect(plausibleRawId('my-laptop')).toBeNull();
    expect(plausibleRawId('ffffffffffffffffffffffffffffffff')).toBeNull();
    expect(plausibleRawId(undefined)).toBeNull();
  });
});
