// loadRelayConfig, the one reader of the relay's environment: keys in every form a platform's
// secret field leaves them, and the words of a refusal never holding the secret.
import { describe, expect, it } from 'vitest';
import { isRelayConfigError, loadRelayConfig } from '../src/index.js';
import { makeKey, publicKeyOfSeed } from './helpers.js';

const key = makeKey();
const other = makeKey();
const base = { RELAY_SERVICE_URL: 'https://service.example/functions/v1', RELAY_SERVICE_TOKEN: 'tok.en-1', RELAY_APP: 'acme-audio', RELAY_PROJECTS: '123E4567-E89B-12D3-A456-426614174000, 123e4567-e89b-12d3-a456-426614174000,' };

async function refusal(env: Record<string, string>): Promise<string> {
  try {
    await loadRelayConfig(env);
  } catch (e) {
    if (isRelayConfigError(e)) return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('loadRelayConfig', () => {
  it.each([
    ['the PEM as keygen writes it', key.pem],
    ['the PEM with its line breaks as spaces', key.pem.replace(/\n/g, ' ')],
    ['the PEM with its line breaks as \\n', key.pem.replace(/\n/g, '\\n')],
    ['the base64url seed', key.seed],
    ['the seed with spaces around', `  ${key.seed}\n`],
  ])('%s: one key, its id and public key as keygen gives them', async (_, text) => {
    const config = await loadRelayConfig({ ...base, RELAY_SIGNING_KEY: text });
    expect(config.keys.map((k) => [k.kid, k.publicKey])).toEqual([[key.kid, key.publicKey]]);
  });

  it('several keys in order (the first signs); defaults; projects lower-cased once each', async () => {
    const config = await loadRelayConfig({ ...base, RELAY_SIGNING_KEY: `${other.seed},${key.pem}` });
    expect(config.keys.map((k) => k.kid)).toEqual([other.kid, key.kid]);
    expect(publicKeyOfSeed(other.seed)).toBe(other.publicKey);
    expect([config.projects, config.ticketDays, config.validateCacheS, config.serviceUrl]).toEqual([['123e4567-e89b-12d3-a456-426614174000'], 30, 300, 'https://service.example/functions/v1']);
    const signature = await config.keys[0]!.sign(new TextEncoder().encode('m'));
    expect(signature).toHaveLength(64);
  });

  it('the same key as PEM and as seed is the same key twice', async () => {
    expect(await refusal({ ...base, RELAY_SIGNING_KEY: `${key.pem},${key.seed}` })).toMatch(/entries 1 and 2 are the same key/);
  });

  it('no refusal holds the secret it refuses', async () => {
    const messages = [
      await refusal({ ...base, RELAY_SIGNING_KEY: key.seed.slice(1) }),
      await refusal({ ...base, RELAY_SIGNING_KEY: key.pem.replace('PRIVATE KEY-----\n', 'PRIVATE KEY-----\n!') }),
      await refusal({ ...base, RELAY_SIGNING_KEY: key.seed, RELAY_SERVICE_TOKEN: 'secret token' }),
      await refusal({ ...base, RELAY_SIGNING_KEY: key.seed, RELAY_SERVICE_URL: 'https://user:hunter2@service.example/functions/v1' }),
    ];
    for (const m of messages) for (const secret of [key.seed, key.seed.slice(1), 'secret token', 'hunter2']) expect(m).not.toContain(secret);
  });
});

describe('the Worker with a bad secret', () => {
  it('answers every request 500 relay_misconfigured, saying which variable, never its value, and signs nothing', async () => {
    const worker = (await import('../src/worker.js')).default;
    const env = { ...base, RELAY_SIGNING_KEY: key.seed.slice(2), RELAY_SERVICE_TOKEN: 'tok.en-1' };
    for (const path of ['/healthz', '/functions/v1/plugin-activation/validate']) {
      const res = await worker.fetch(new Request(`http://relay${path}`, { method: path === '/healthz' ? 'GET' : 'POST', body: path === '/healthz' ? undefined : '{}' }), env);
      const text = await res.text();
      expect([res.status, JSON.parse(text).error]).toEqual([500, 'relay_misconfigured']);
      expect(text).toMatch(/RELAY_SIGNING_KEY is neither a PEM private key/);
      expect(text).not.toContain(key.seed.slice(2));
    }
  });
});
