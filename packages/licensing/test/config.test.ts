// The one configuration resolver of every tool: flag > environment > config.json > default, with
// where each value came from, and a clear error for a bad value naming its source.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLicenseClient, isLicenseError, License, resolveConfig, type LicenseError } from '../src/index.js';
import { tempHome } from './helpers.js';

let home: { dir: string; cleanup: () => void };
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

const PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const writeConfig = (text: string): string => {
  mkdirSync(join(home.dir, 'config'), { recursive: true });
  const path = join(home.dir, 'config', 'config.json');
  writeFileSync(path, text);
  return path;
};
const failure = (fn: () => unknown): LicenseError => {
  try {
    fn();
  } catch (e) {
    if (isLicenseError(e)) return e;
    throw e;
  }
  throw new Error('expected a LicenseError');
};

describe('resolveConfig', () => {
  it('takes flag over environment over config.json over default, and says which gave each value', () => {
    writeConfig(JSON.stringify({ base_url: 'https://file.example/functions/v1', token: 'file-token', socket: '/tmp/file.sock', proxy: 'http://proxy.lan:3128' }));
    const env = { PLUGIN_LICENSE_HOME: home.dir, PLUGIN_LICENSE_TOKEN: 'env-token' };
    const c = resolveConfig({ baseUrl: 'http://127.0.0.1:5/functions/v1/' }, env);
    expect(c.baseUrl).toEqual({ value: 'http://127.0.0.1:5/functions/v1', source: 'flag' });
    expect(c.token).toEqual({ value: 'env-token', source: 'environment' });
    expect(c.socket).toEqual({ value: '/tmp/file.sock', source: 'config file' });
    expect(c.proxy).toEqual({ value: 'http://proxy.lan:3128/', source: 'config file' });
    expect(c.namespace).toEqual({ value: 'plugin-license', source: 'default' });
    expect(c.home).toEqual({ value: home.dir, source: 'environment' });
    expect(c.configFileFound).toBe(true);
    expect(c.configFile).toBe(join(home.dir, 'config', 'config.json'));

    const fromFile = resolveConfig({ app: 'acme' }, { PLUGIN_LICENSE_HOME: home.dir });
    expect(fromFile.baseUrl).toEqual({ value: 'https://file.example/functions/v1', source: 'config file' });
    expect(fromFile.namespace).toEqual({ value: 'acme', source: 'flag' });
    // An empty variable counts as unset; "proxy": "" means no proxy at all.
    writeConfig('\uFEFF{"proxy": ""}');
    const empty = resolveConfig({}, { PLUGIN_LICENSE_HOME: home.dir, PLUGIN_LICENSE_BASE_URL: ' ' });
    expect(empty.baseUrl).toEqual({ value: undefined, source: 'default' });
    expect(empty.proxy).toEqual({ value: false, source: 'config file' });
  });

  it('refuses bad values once, naming where they came from', () => {
    const env = { PLUGIN_LICENSE_HOME: home.dir };
    expect(failure(() => resolveConfig({}, { ...env, PLUGIN_LICENSE_BASE_URL: 'http://127.0.0.1:5' })).message).toMatch(/does not end in \/functions\/v1.*\(from PLUGIN_LICENSE_BASE_URL\)$/);
    const path = writeConfig('{"baseUrl": "https://x.example/functions/v1"}');
    expect(failure(() => resolveConfig({}, env)).message).toBe(`"baseUrl" in ${path} is not a setting; did you mean "base_url"?`);
    writeConfig('{"base_url": "http://licenses.example.com/functions/v1"}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/\(from "base_url" in .*config\.json\)$/);
    writeConfig('{"base_url": 5}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/"base_url" in .*config\.json must be a string/);
    writeConfig('{"base_url": ');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/is not valid JSON .*; fix or remove it$/);
    writeConfig('["x"]');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/must hold one JSON object/);
    writeConfig('{"proxy": "socks5://p:1080"}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/proxy/);
    // The offline keys: a list of keygen's public keys; the longest validity: whole days, 1-3650.
    writeConfig('{"offlinePublicKeys": []}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/"offlinePublicKeys" .* did you mean "offline_public_keys"\?/);
    writeConfig('{"offline_public_keys": "abc"}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/"offline_public_keys" in .*config\.json must be a list of public keys/);
    writeConfig('{"offline_public_keys": ["not-a-key"]}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/"offline_public_keys" in .*config\.json\[0\] is not an Ed25519 public key/);
    for (const days of ['0', '1.5', '"30"', '4000']) {
      writeConfig(`{"offline_max_days": ${days}}`);
      expect(failure(() => resolveConfig({}, env)).message).toMatch(/"offline_max_days" in .*config\.json must be a whole number of days from 1 to 3650/);
    }
    writeConfig('{"offline_max_days": 30, "offline_public_keys": []}');
    expect(resolveConfig({}, env)).toMatchObject({ offlineMaxDays: { value: 30, source: 'config file' }, offlinePublicKeys: { value: [], source: 'config file' } });
    // macOS app group (sandboxed plugins): a folder name of Group Containers; the environment wins.
    writeConfig('{"app_group": "ABCDE12345.com.acme.audio"}');
    expect(resolveConfig({}, env).appGroup).toEqual({ value: 'ABCDE12345.com.acme.audio', source: 'config file' });
    expect(resolveConfig({}, { ...env, PLUGIN_LICENSE_APP_GROUP: 'group.acme' }).appGroup).toEqual({ value: 'group.acme', source: 'environment' });
    expect(failure(() => resolveConfig({}, { ...env, PLUGIN_LICENSE_APP_GROUP: '../escape' })).message).toBe(
      'PLUGIN_LICENSE_APP_GROUP must be an app group id such as ABCDE12345.com.acme.audio (letters, digits, . and -), got "../escape"',
    );
    writeConfig('{"appGroup": "x"}');
    expect(failure(() => resolveConfig({}, env)).message).toMatch(/"appGroup" .* did you mean "app_group"\?/);
    // The file is read whole, so a broken one is reported whatever the flags say.
    writeConfig('{');
    expect(failure(() => resolveConfig({ baseUrl: 'http://127.0.0.1:5/functions/v1' }, env)).path).toBe(join(home.dir, 'config', 'config.json'));
  });
});

describe('License takes its configuration from the resolver', () => {
  it('honours PLUGIN_LICENSE_BASE_URL and base_url in config.json when baseUrl is not given', async () => {
    const saved = process.env.PLUGIN_LICENSE_BASE_URL;
    process.env.PLUGIN_LICENSE_BASE_URL = 'http://127.0.0.1:9/functions/v1';
    try {
      const fromEnv = new License({ projectId: PROJECT, home: home.dir });
      await fromEnv.close();
    } finally {
      if (saved === undefined) delete process.env.PLUGIN_LICENSE_BASE_URL;
      else process.env.PLUGIN_LICENSE_BASE_URL = saved;
    }
    writeConfig('{"base_url": "http://127.0.0.1:9/functions/v1"}');
    const fromFile = new License({ projectId: PROJECT, home: home.dir });
    await fromFile.close();
    writeConfig('{}');
    expect(failure(() => new License({ projectId: PROJECT, home: home.dir })).message).toBe(
      `no service base URL: pass baseUrl, set PLUGIN_LICENSE_BASE_URL, or put "base_url" in ${join(home.dir, 'config', 'config.json')}`,
    );
  });

  it('reads nothing from config.json when the caller gives the base URL and its own client (the agent, per project)', async () => {
    writeConfig('{ broken');
    // Making its own client, it needs the file (for "proxy"), and a broken one is reported.
    expect(failure(() => new License({ projectId: PROJECT, home: home.dir, baseUrl: 'http://127.0.0.1:9/functions/v1' })).message).toMatch(/is not valid JSON/);
    const client = createLicenseClient({ baseUrl: 'http://127.0.0.1:9/functions/v1' });
    const embedded = new License({ projectId: PROJECT, home: home.dir, baseUrl: 'http://127.0.0.1:9/functions/v1', client });
    expect(embedded.check().reason).toBe('not_activated');
    await embedded.close();
    await client.close();
  });
});
