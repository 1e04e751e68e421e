// The user's folders by the one rule of every part (paths.ts userHome and xdgDir; plc's
// home_folder and data_folder say the same): HOME set must be an absolute path (empty or relative
// is refused with words, before anything is written), HOME unset is the password database's, and
// a relative XDG_* variable is ignored as the XDG Base Directory specification says.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { isLicenseError, resolvePaths, userHome, xdgDir } from '../src/index.js';

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (isLicenseError(e) && e.code === 'invalid_argument') return e.message;
    throw e;
  }
  throw new Error('not refused');
};

describe('userHome', () => {
  it.each([
    ['', /^HOME is set but empty, so this user's folders .* are unknown and nothing was written; set HOME to the home folder as an absolute path/],
    ['relative/path', /^HOME is 'relative\/path', not an absolute path/],
    ['.', /^HOME is '\.', not an absolute path/],
    ['./me', /not an absolute path/],
    ['..', /not an absolute path/],
    ['~', /^HOME is '~', not an absolute path/],
    ['~/me', /not an absolute path/],
    [' /home/me', /^HOME is ' \/home\/me', not an absolute path/],
    ['home/me/', /not an absolute path/],
    ['$HOME', /not an absolute path/],
  ])('HOME=%j is refused, with words', (home, words) => {
    expect(refusal(() => userHome({ HOME: home }, 'linux'))).toMatch(words);
    expect(refusal(() => userHome({ HOME: home }, 'darwin'))).toMatch(words);
  });

  it('an absolute HOME is taken as it is (spaces, quotes and all); an unset one is the password database\'s', () => {
    for (const home of ['/home/me', '/', '/home/a b/"c"/$d', '/home/me/']) expect(userHome({ HOME: home }, 'linux')).toBe(home);
    expect(userHome({}, 'linux')).toBe(os.userInfo().homedir);
  });
});

describe('xdgDir', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['data', undefined],
    ['./data', undefined],
    ['~/.local/share', undefined],
    [' /x', undefined],
    ['/x/y', '/x/y'],
  ])('XDG_DATA_HOME=%j gives %j', (value, expected) => {
    expect(xdgDir({ XDG_DATA_HOME: value }, 'XDG_DATA_HOME')).toBe(expected);
  });
});

describe('resolvePaths without PLUGIN_LICENSE_HOME', () => {
  const linux = (env: Record<string, string | undefined>) => resolvePaths({ namespace: 'acme', platform: 'linux', env });

  it('Linux: the XDG folders when absolute, else under HOME', () => {
    expect(linux({ HOME: '/home/me' })).toEqual({
      config: '/home/me/.config/acme',
      data: '/home/me/.local/share/acme',
      cache: '/home/me/.cache/acme',
      log: '/home/me/.local/state/acme',
    });
    const all = { XDG_CONFIG_HOME: '/c', XDG_DATA_HOME: '/d', XDG_CACHE_HOME: '/k', XDG_STATE_HOME: '/s' };
    expect(linux({ HOME: '/home/me', ...all })).toEqual({ config: '/c/acme', data: '/d/acme', cache: '/k/acme', log: '/s/acme' });
    // Relative ones are ignored, one by one.
    expect(linux({ HOME: '/home/me', XDG_DATA_HOME: 'd', XDG_STATE_HOME: '.', XDG_CONFIG_HOME: '/c' })).toEqual({
      config: '/c/acme',
      data: '/home/me/.local/share/acme',
      cache: '/home/me/.cache/acme',
      log: '/home/me/.local/state/acme',
    });
    // A HOME set but empty is refused even when every folder is given absolutely (as plc does).
    expect(refusal(() => linux({ HOME: '', ...all }))).toMatch(/^HOME is set but empty/);
  });

  it.each(['', 'relative/path', '.'])('HOME=%j: refused on Linux and macOS (an unset one is not)', (home) => {
    expect(refusal(() => linux({ HOME: home }))).toMatch(/^HOME is /);
    expect(refusal(() => linux({ HOME: home, XDG_DATA_HOME: 'data' }))).toMatch(/^HOME is /);
    expect(refusal(() => resolvePaths({ namespace: 'acme', platform: 'darwin', env: { HOME: home } }))).toMatch(/^HOME is /);
    expect(linux({}).data).toBe(`${os.userInfo().homedir}/.local/share/acme`);
  });

  it('PLUGIN_LICENSE_HOME wins over any HOME', () => {
    expect(resolvePaths({ namespace: 'acme', platform: 'linux', env: { HOME: '', PLUGIN_LICENSE_HOME: '/opt/lic' } }).data).toBe('/opt/lic/data');
  });
});
