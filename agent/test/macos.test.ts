// What can be checked of macOS without a Mac: the launchd plist as a property list, the socket
// path against the 104-byte sun_path for long user names, and the folders env-paths gives there.
import { afterEach, describe, expect, it } from 'vitest';
import { parse as parsePlist } from 'plist';
import { resolvePaths } from '@plugin-license/licensing';
import { resolveSocketPath, serviceFile } from '../src/index.js';

const spec = {
  namespace: 'acme',
  command: ['/opt/homebrew/bin/node', '/Applications/Acme Audio.app/Contents/Resources/agent/bin/plugin-license-agent.js'],
  runArgs: ['--home', '/Users/ann/Music/Acme "Studio" & more'],
  homedir: '/Users/ann',
  dataDir: '/Users/ann/Library/Application Support/acme',
  logDir: '/Users/ann/Library/Logs/acme',
  uid: 501,
  username: 'ann',
};

describe('macOS', () => {
  it('the LaunchAgent is a property list launchd can read: label, arguments, run at load, restart on failure, logs', () => {
    const file = serviceFile('darwin', spec);
    const parsed = parsePlist(file.contents) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      Label: 'dev.plugin-license.acme.agent',
      ProgramArguments: [...spec.command, 'run', '--app', 'acme', ...spec.runArgs],
      RunAtLoad: true,
    });
    expect(JSON.stringify(parsed.KeepAlive ?? null)).toMatch(/SuccessfulExit|true/);
    expect(String(parsed.StandardErrorPath ?? parsed.StandardOutPath ?? '')).toMatch(/^\/Users\/ann\/Library\/Logs\/acme/);
  });

  it('with an app group, the socket lives in its Group Container, where sandboxed plugins (AUv3, a sandboxing host) may connect', () => {
    const env = { PLUGIN_LICENSE_APP_GROUP: 'ABCDE12345.com.acme.audio' };
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env, homedir: '/Users/ann' })).toBe('/Users/ann/Library/Group Containers/ABCDE12345.com.acme.audio/acme/agent.sock');
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: {}, appGroup: 'ABCDE12345.com.acme.audio', homedir: '/Users/ann' })).toBe(
      '/Users/ann/Library/Group Containers/ABCDE12345.com.acme.audio/acme/agent.sock',
    );
    // PLUGIN_LICENSE_SOCKET still wins; other systems have no app groups.
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: { ...env, PLUGIN_LICENSE_SOCKET: '/tmp/a.sock' }, homedir: '/Users/ann' })).toBe('/tmp/a.sock');
    expect(resolveSocketPath({ namespace: 'acme', platform: 'linux', env: { ...env, XDG_RUNTIME_DIR: '/run/user/1000' } })).toBe('/run/user/1000/acme/agent.sock');
  });

  it('the socket lives in Application Support; a user name long enough to pass 104 bytes is a clear error naming the way out', () => {
    const fits = '/Users/' + 'n'.repeat(50);
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: {}, homedir: fits })).toBe(`${fits}/Library/Application Support/acme/agent.sock`);
    // sun_path on macOS is 104 bytes with the terminating NUL: 103 usable.
    const home = (n: number) => '/Users/' + 'n'.repeat(n);
    const base = `${home(0)}/Library/Application Support/acme/agent.sock`.length;
    const longest = 103 - base;
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: {}, homedir: home(longest) })).toHaveLength(103);
    expect(() => resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: {}, homedir: home(longest + 1) })).toThrow(
      expect.objectContaining({ code: 'socket_path_too_long', message: expect.stringMatching(/104 bytes, over the 103-byte limit.*PLUGIN_LICENSE_SOCKET/s) }),
    );
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: { PLUGIN_LICENSE_SOCKET: '/tmp/acme.sock' }, homedir: home(200) })).toBe('/tmp/acme.sock');
  });
});

describe('per-OS folders from env-paths, with the platform injected', () => {
  const real = Object.getOwnPropertyDescriptor(process, 'platform')!;
  const saved = { APPDATA: process.env.APPDATA, LOCALAPPDATA: process.env.LOCALAPPDATA };
  afterEach(() => {
    Object.defineProperty(process, 'platform', real);
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  const as = (platform: NodeJS.Platform) => Object.defineProperty(process, 'platform', { ...real, value: platform });

  it('macOS: ~/Library/Application Support, Preferences, Caches and Logs', () => {
    as('darwin');
    const p = resolvePaths({ namespace: 'acme' });
    const home = (process.env.HOME ?? '').replace(/\/$/, '');
    expect(p.data).toMatch(/\/Library\/Application Support\/acme$/);
    expect(p.config).toMatch(/\/Library\/Preferences\/acme$/);
    expect(p.log).toMatch(/\/Library\/Logs\/acme$/);
    expect(p.data.startsWith(home) || home === '').toBe(true);
  });

  it('Windows: %LOCALAPPDATA%\\APP\\Data and Log, %APPDATA%\\APP\\Config', () => {
    as('win32');
    process.env.LOCALAPPDATA = 'C:\\Users\\ann\\AppData\\Local';
    process.env.APPDATA = 'C:\\Users\\ann\\AppData\\Roaming';
    const p = resolvePaths({ namespace: 'acme' });
    expect(p.data).toMatch(/AppData.Local.acme.Data$/);
    expect(p.log).toMatch(/AppData.Local.acme.Log$/);
    expect(p.config).toMatch(/AppData.Roaming.acme.Config$/);
  });
});
