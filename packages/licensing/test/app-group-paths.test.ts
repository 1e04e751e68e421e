// macOS with an app group (docs/license-ticket.md): the data folder is the group container's, so a
// sandboxed plugin reads its ticket there; an earlier install's data moves there, nothing lost.
// There is no macOS here: the rule takes the platform and home folder as inputs, and the move is
// run on real files of this machine.
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkAppGroup, isLicenseError, resolveConfig, resolvePaths, ticketPath } from '../src/index.js';

const GROUP = 'ABCDE12345.com.acme.audio';
const PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function macHome(): string {
  const dir = mkdtempSync('/tmp/plg-');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const mac = (homedir: string, env: Record<string, string | undefined> = {}, namespace = 'acme-audio') => resolvePaths({ namespace, platform: 'darwin', homedir, env });

describe('the data folder on macOS', () => {
  it('without an app group: Application Support, as before', () => {
    const h = macHome();
    expect(mac(h)).toEqual({
      config: `${h}/Library/Preferences/acme-audio`,
      data: `${h}/Library/Application Support/acme-audio`,
      cache: `${h}/Library/Caches/acme-audio`,
      log: `${h}/Library/Logs/acme-audio`,
    });
  });

  it('with PLUGIN_LICENSE_APP_GROUP: the whole data folder is the group container (config, cache, log stay)', () => {
    const h = macHome();
    const p = mac(h, { PLUGIN_LICENSE_APP_GROUP: GROUP });
    expect(p.data).toBe(`${h}/Library/Group Containers/${GROUP}/acme-audio`);
    expect(p.config).toBe(`${h}/Library/Preferences/acme-audio`);
    expect(p.cache).toBe(`${h}/Library/Caches/acme-audio`);
    expect(p.log).toBe(`${h}/Library/Logs/acme-audio`);
  });

  it('with "app_group" in config.json; the variable wins; a blank variable falls back to the file', () => {
    const h = macHome();
    mkdirSync(`${h}/Library/Preferences/acme-audio`, { recursive: true });
    writeFileSync(`${h}/Library/Preferences/acme-audio/config.json`, JSON.stringify({ app_group: GROUP }));
    expect(mac(h).data).toBe(`${h}/Library/Group Containers/${GROUP}/acme-audio`);
    expect(mac(h, { PLUGIN_LICENSE_APP_GROUP: 'FGHIJ67890.other' }).data).toBe(`${h}/Library/Group Containers/FGHIJ67890.other/acme-audio`);
    expect(mac(h, { PLUGIN_LICENSE_APP_GROUP: ' ' }).data).toBe(`${h}/Library/Group Containers/${GROUP}/acme-audio`);
  });

  it('PLUGIN_LICENSE_HOME wins over the group; other systems ignore the group', () => {
    const h = macHome();
    expect(resolvePaths({ namespace: 'acme-audio', platform: 'darwin', homedir: h, env: { PLUGIN_LICENSE_HOME: `${h}/root`, PLUGIN_LICENSE_APP_GROUP: GROUP } }).data).toBe(`${h}/root/data`);
    expect(resolvePaths({ namespace: 'acme-audio', platform: 'linux', env: { PLUGIN_LICENSE_APP_GROUP: GROUP } }).data).not.toContain('Group Containers');
  });

  it.each(['a b', '*', 'ABCDE12345.*', "it's", '"q"', '$HOME', 'a\\b', 'a/b', '../x', 'a\nb', 'grüppe', '', 'ab'])('a group %j that cannot be a folder name is refused with words, naming where it came from', (bad) => {
    const h = macHome();
    if (bad.trim() === '') {
      expect(mac(h, { PLUGIN_LICENSE_APP_GROUP: bad }).data).toContain('Application Support'); // blank: none
      return;
    }
    let err: unknown;
    try {
      mac(h, { PLUGIN_LICENSE_APP_GROUP: bad });
    } catch (e) {
      err = e;
    }
    expect(isLicenseError(err)).toBe(true);
    expect((err as Error).message).toMatch(/^PLUGIN_LICENSE_APP_GROUP must be an app group id such as ABCDE12345\.com\.acme\.audio/);
    expect(() => checkAppGroup(bad, 'x')).toThrow(/must be an app group id/);
    expect(existsSync(`${h}/Library`)).toBe(false); // nothing made for it
  });

  it('the ticket and resolveConfig follow the same rule', () => {
    const h = macHome();
    const env = { PLUGIN_LICENSE_APP_GROUP: GROUP };
    expect(ticketPath({ namespace: 'acme-audio', platform: 'darwin', homedir: h, env }, PROJECT)).toBe(`${h}/Library/Group Containers/${GROUP}/acme-audio/tickets/${PROJECT}.ticket`);
    if (process.platform === 'darwin') expect(resolveConfig({ app: 'acme-audio' }, env).paths.data).toContain(`Group Containers/${GROUP}/acme-audio`);
  });
});

describe("an earlier install's data moves into the group container", () => {
  async function listen(path: string): Promise<Server> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path, resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return server;
  }

  it('each entry is moved whole; sockets and locks stay; an entry already in the container is kept, the old one left; nothing is lost', async () => {
    const h = macHome();
    const old = `${h}/Library/Application Support/acme-audio`;
    mkdirSync(join(old, 'licenses'), { recursive: true });
    writeFileSync(join(old, 'licenses', `${PROJECT}.json`), 'state');
    mkdirSync(join(old, 'tickets'));
    writeFileSync(join(old, 'tickets', `${PROJECT}.ticket`), 'ticket');
    mkdirSync(join(old, 'offline'));
    writeFileSync(join(old, 'offline', 'pending.json'), 'pending');
    writeFileSync(join(old, 'machine-secret'), 'old secret');
    mkdirSync(join(old, 'agent.sock.lock'));
    await listen(join(old, 'agent.sock'));
    const container = `${h}/Library/Group Containers/${GROUP}/acme-audio`;
    mkdirSync(container, { recursive: true, mode: 0o700 });
    writeFileSync(join(container, 'machine-secret'), 'new secret'); // already there: kept
    const p = mac(h, { PLUGIN_LICENSE_APP_GROUP: GROUP });
    expect(p.data).toBe(container);
    expect(readFileSync(join(container, 'licenses', `${PROJECT}.json`), 'utf8')).toBe('state');
    expect(readFileSync(join(container, 'tickets', `${PROJECT}.ticket`), 'utf8')).toBe('ticket');
    expect(readFileSync(join(container, 'offline', 'pending.json'), 'utf8')).toBe('pending');
    expect(readFileSync(join(container, 'machine-secret'), 'utf8')).toBe('new secret');
    expect(readFileSync(join(old, 'machine-secret'), 'utf8')).toBe('old secret'); // left, not lost
    expect(existsSync(join(old, 'licenses'))).toBe(false);
    expect(lstatSync(join(old, 'agent.sock')).isSocket()).toBe(true);
    expect(existsSync(join(old, 'agent.sock.lock'))).toBe(true);
    expect(existsSync(join(container, 'agent.sock'))).toBe(false);
  });

  it('a fresh install (no old folder) moves nothing; an old folder under a home with spaces, a glob, quotes, $ and non-ASCII is moved as data, into a private container', () => {
    const h = join(macHome(), `home *'"$é`);
    mkdirSync(h);
    expect(mac(h, { PLUGIN_LICENSE_APP_GROUP: GROUP }).data).toBe(`${h}/Library/Group Containers/${GROUP}/acme-audio`);
    expect(existsSync(`${h}/Library`)).toBe(false);
    const old = `${h}/Library/Application Support/other-ns`;
    mkdirSync(join(old, 'licenses'), { recursive: true });
    writeFileSync(join(old, 'licenses', `${PROJECT}.json`), 'x');
    expect(mac(h, { PLUGIN_LICENSE_APP_GROUP: GROUP }, 'other-ns').data).toBe(`${h}/Library/Group Containers/${GROUP}/other-ns`);
    expect(readFileSync(`${h}/Library/Group Containers/${GROUP}/other-ns/licenses/${PROJECT}.json`, 'utf8')).toBe('x');
    expect(lstatSync(`${h}/Library/Group Containers/${GROUP}/other-ns`).mode & 0o777).toBe(0o700); // made private
  });
});
