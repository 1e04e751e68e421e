import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeCache, encodeCache, MAX_STATE_FILE_BYTES, readCache, readCacheSync, type StoredLicense } from '../src/cache-file.js';
import { License } from '../src/index.js';
import { RAW_A, tempHome } from './helpers.js';

const identity = { projectId: '123e4567-e89b-12d3-a456-426614174000', machineId: 'm1_abc', cacheKey: randomBytes(32) };
const state: StoredLicense = {
  code: '3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601',
  status: 'active',
  reason: null,
  activations: 1,
  maxActivations: 2,
  activatedAt: 1_700_000_000_000,
  validatedAt: 1_700_000_000_000,
  answeredAt: 1_700_000_000_000,
  attemptedAt: 1_700_000_000_000,
  failures: 0,
  retryAt: null,
  nextCheckAt: 1_700_086_400_000,
  maxSeenAt: 1_700_000_000_000,
  revision: 3,
};

describe('cache encoding', () => {
  it('round-trips and authenticates', () => {
    const text = encodeCache(identity, state);
    expect(JSON.parse(text).mac).toMatch(/^[0-9a-f]{64}$/);
    expect(decodeCache(identity, text)).toEqual({ kind: 'ok', license: state });
  });

  it('rejects any change, another key, another project or machine id, and unknown fields', () => {
    const text = encodeCache(identity, state);
    const bad = (t: string, id = identity) => decodeCache(id, t).kind;
    expect(bad(text.replace('"failures":0', '"failures":1'))).toBe('invalid');
    expect(bad(text, { ...identity, cacheKey: randomBytes(32) })).toBe('invalid');
    expect(bad(text, { ...identity, machineId: 'm1_other' })).toBe('invalid');
    expect(bad(text, { ...identity, projectId: '00000000-0000-4000-8000-000000000000' })).toBe('invalid');
    expect(bad(encodeCache(identity, { ...state, extra: 1 } as StoredLicense))).toBe('ok'); // the encoder writes known fields only
    expect(bad(text.replace('"format":1', '"format":1,"x":1'))).toBe('invalid');
    expect(bad(text.slice(0, -10))).toBe('invalid');
  });

  it('leaves a file of a newer format in place', () => {
    expect(decodeCache(identity, JSON.stringify({ format: 3, anything: true }))).toEqual({ kind: 'newer', format: 3 });
  });
});

describe('a cache file of a newer format', () => {
  let home: { dir: string; cleanup: () => void };
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => home.cleanup());

  it('reads as cache_invalid without being moved aside', () => {
    const projectId = identity.projectId;
    const dir = join(home.dir, 'data', 'licenses');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${projectId}.json`);
    writeFileSync(file, JSON.stringify({ format: 3 }));
    const l = new License({ projectId, baseUrl: 'http://127.0.0.1:9/functions/v1', home: home.dir, rawMachineIdProvider: () => RAW_A });
    expect(l.check()).toMatchObject({ valid: false, reason: 'cache_invalid' });
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(JSON.stringify({ format: 3 }));
    return l.close();
  });
});

describe('size cap', () => {
  it('a file larger than any license file is cache_invalid without being read whole, sync and async', async () => {
    const h = tempHome();
    try {
      const file = join(h.dir, 'big.json');
      writeFileSync(file, Buffer.alloc(MAX_STATE_FILE_BYTES * 40, 0x20));
      expect(readCacheSync(file, identity)).toMatchObject({ kind: 'invalid', problem: expect.stringMatching(/far larger than a license file/) });
      expect(await readCache(file, identity)).toMatchObject({ kind: 'invalid', problem: expect.stringMatching(/far larger/) });
      // A valid file still reads.
      writeFileSync(file, encodeCache(identity, state));
      expect(readCacheSync(file, identity)).toMatchObject({ kind: 'ok' });
    } finally {
      h.cleanup();
    }
  });
});
