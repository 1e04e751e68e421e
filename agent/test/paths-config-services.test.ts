import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveAgentConfig, resolveSocketPath, serviceFile, SERVICE_PLATFORMS, type ServicePlatform, type ServiceSpec } from '../src/index.js';
import { commandText, installService, uninstallService, type CommandRunner } from '../src/service-install.js';
import { shortDir } from './helpers.js';

describe('socket path per protocol 1', () => {
  it('uses PLUGIN_LICENSE_SOCKET when set', () => {
    expect(resolveSocketPath({ namespace: 'acme', platform: 'linux', env: { PLUGIN_LICENSE_SOCKET: '/tmp/x/a.sock' } })).toBe('/tmp/x/a.sock');
  });
  it('Linux: XDG_RUNTIME_DIR/APP/agent.sock, else /tmp/APP-UID/agent.sock', () => {
    expect(resolveSocketPath({ namespace: 'acme', platform: 'linux', env: { XDG_RUNTIME_DIR: '/run/user/1000' }, uid: 1000 })).toBe('/run/user/1000/acme/agent.sock');
    expect(resolveSocketPath({ namespace: 'acme', platform: 'linux', env: {}, uid: 1000 })).toBe('/tmp/acme-1000/agent.sock');
    // A relative XDG_RUNTIME_DIR is ignored, as the XDG Base Directory specification says (plc too).
    for (const relative of ['run/user/1000', '.', './r', ' /run/user/1000', '']) {
      expect(resolveSocketPath({ namespace: 'acme', platform: 'linux', env: { XDG_RUNTIME_DIR: relative }, uid: 1000 })).toBe('/tmp/acme-1000/agent.sock');
    }
  });
  it('macOS: an empty or relative HOME is refused, as for every folder of the user (licensing userHome)', () => {
    for (const home of ['', 'Users/ann', '.']) {
      expect(() => resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: { HOME: home } })).toThrow(/^HOME is .*nothing was written/);
    }
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: { HOME: '/Users/ann' } })).toBe('/Users/ann/Library/Application Support/acme/agent.sock');
  });
  it('macOS: ~/Library/Application Support/APP/agent.sock', () => {
    expect(resolveSocketPath({ namespace: 'acme', platform: 'darwin', env: {}, homedir: '/Users/ann' })).toBe('/Users/ann/Library/Application Support/acme/agent.sock');
  });
  it('Windows: \\\\.\\pipe\\APP-agent-USERNAME', () => {
    expect(resolveSocketPath({ namespace: 'acme', platform: 'win32', env: {}, username: 'ann' })).toBe('\\\\.\\pipe\\acme-agent-ann');
  });
  it('refuses a path over sun_path (107 bytes Linux, 103 macOS), never truncating', () => {
    const linux107 = '/tmp/' + 'a'.repeat(102);
    expect(resolveSocketPath({ namespace: 'x', platform: 'linux', env: { PLUGIN_LICENSE_SOCKET: linux107 } })).toBe(linux107);
    expect(() => resolveSocketPath({ namespace: 'x', platform: 'linux', env: { PLUGIN_LICENSE_SOCKET: linux107 + 'b' } })).toThrow(/108 bytes, over the 107-byte limit/);
    expect(() => resolveSocketPath({ namespace: 'x', platform: 'darwin', env: {}, homedir: '/Users/' + 'n'.repeat(70) })).toThrow(
      expect.objectContaining({ code: 'socket_path_too_long' }),
    );
  });
});

describe('configuration: flag > environment > config.json > default', () => {
  const dirs: Array<() => void> = [];
  afterEach(() => dirs.splice(0).forEach((c) => c()));

  function home(config?: unknown): string {
    const d = shortDir();
    dirs.push(d.cleanup);
    if (config !== undefined) {
      mkdirSync(join(d.dir, 'config'), { recursive: true });
      writeFileSync(join(d.dir, 'config', 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
    }
    return d.dir;
  }

  it('layers the sources', () => {
    const h = home({ base_url: 'https://file.example/functions/v1', token: 'file-token', log_level: 'warn', agent: { max_connections: 7 } });
    const fromFile = resolveAgentConfig({ home: h }, { PLUGIN_LICENSE_SOCKET: '/tmp/s.sock' });
    expect(fromFile).toMatchObject({ baseUrl: 'https://file.example/functions/v1', token: 'file-token', logLevel: 'warn', socketPath: '/tmp/s.sock', namespace: 'plugin-license' });
    expect(fromFile.limits.maxConnections).toBe(7);
    const fromEnv = resolveAgentConfig({ home: h }, { PLUGIN_LICENSE_BASE_URL: 'https://env.example/functions/v1', PLUGIN_LICENSE_LOG_LEVEL: 'debug', PLUGIN_LICENSE_APP: 'acme', PLUGIN_LICENSE_SOCKET: '/tmp/s.sock' });
    expect(fromEnv).toMatchObject({ baseUrl: 'https://env.example/functions/v1', logLevel: 'debug', namespace: 'acme' });
    const fromFlags = resolveAgentConfig({ home: h, baseUrl: 'http://127.0.0.1:1/functions/v1', maxConnections: 3 }, { PLUGIN_LICENSE_BASE_URL: 'https://env.example/functions/v1' });
    expect(fromFlags.baseUrl).toBe('http://127.0.0.1:1/functions/v1');
    expect(fromFlags.limits.maxConnections).toBe(3);
  });

  it('gives clear errors for bad settings', () => {
    expect(() => resolveAgentConfig({ home: home('{not json') }, {})).toThrow(/is not valid JSON/);
    expect(() => resolveAgentConfig({ home: home({ agent: { max_connections: -1 } }) }, {})).toThrow(/agent.max_connections/);
    expect(() => resolveAgentConfig({ home: home(), baseUrl: 'http://service.example/functions/v1' }, {})).toThrow(/^baseUrl uses http:\/\/ to service\.example.*use https:\/\//);
    expect(() => resolveAgentConfig({ home: home(), logLevel: 'loud' }, {})).toThrow(/log level 'loud' is unknown/);
    expect(() => resolveAgentConfig({ home: home(), app: '../evil' }, {})).toThrow(/namespace/);
  });
});

const spec: ServiceSpec = {
  namespace: 'acme',
  command: ['/opt/node dir/bin/node', '/opt/agent/bin/plugin-license-agent.js'],
  runArgs: ['--home', '/data/50% "off"'],
  homedir: '/home/ann',
  dataDir: 'C:\\Users\\ann\\AppData\\Local\\acme\\Data',
  logDir: '/home/ann/.local/state/acme',
  uid: 1000,
  username: 'PC\\ann',
};
/** The same service as a Windows computer has it: its own program path and folders. */
const winSpec: ServiceSpec = {
  ...spec,
  command: ['C:\\Program Files\\nodejs\\node.exe', 'C:\\Users\\ann\\agent\\bin\\plugin-license-agent.js'],
  runArgs: ['--home', 'C:\\data\\50% "off"\\'],
};
const specFor = (p: ServicePlatform): ServiceSpec => (p === 'win32' ? winSpec : spec);

describe('per-user service files (every OS)', () => {
  it('systemd --user unit', () => {
    const f = serviceFile('linux', spec);
    expect(f.path).toBe('/home/ann/.config/systemd/user/acme-agent.service');
    expect(f.contents).toContain('ExecStart="@/opt/node dir/bin/node" "/opt/node dir/bin/node" "/opt/agent/bin/plugin-license-agent.js" "run" "--app" "acme" "--home" "/data/50%% \\"off\\""\n');
    expect(f.contents).toContain('Restart=on-failure');
    expect(f.contents).toContain('WantedBy=default.target');
    expect(f.enable).toEqual([
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', 'acme-agent.service'],
    ]);
    expect(serviceFile('linux', { ...spec, xdgConfigHome: '/cfg' }).path).toBe('/cfg/systemd/user/acme-agent.service');
  });

  it('launchd LaunchAgent plist', () => {
    const f = serviceFile('darwin', spec);
    expect(f.path).toBe('/home/ann/Library/LaunchAgents/dev.plugin-license.acme.agent.plist');
    expect(f.contents).toContain('<string>/data/50% &quot;off&quot;</string>');
    expect(f.contents).toMatch(/<key>RunAtLoad<\/key>\s*<true\/>/);
    expect(f.enable).toEqual([['launchctl', 'bootstrap', 'gui/1000', f.path]]);
    expect(f.disable).toEqual([['launchctl', 'bootout', 'gui/1000/dev.plugin-license.acme.agent']]);
  });

  it('Windows logon task (schtasks XML, UTF-16)', () => {
    const f = serviceFile('win32', winSpec);
    expect(f.path).toBe('C:\\Users\\ann\\AppData\\Local\\acme\\Data\\agent-task.xml');
    expect(f.encoding).toBe('utf16le');
    expect(f.contents).toContain('<LogonTrigger>\r\n      <Enabled>true</Enabled>\r\n      <UserId>PC\\ann</UserId>');
    expect(f.contents).toContain('<Command>C:\\Program Files\\nodejs\\node.exe</Command>');
    expect(f.contents).toContain('<Arguments>C:\\Users\\ann\\agent\\bin\\plugin-license-agent.js run --app acme --home &quot;C:\\data\\50% \\&quot;off\\&quot;\\\\&quot;</Arguments>');
    expect(f.enable[0]).toEqual(['schtasks', '/Create', '/TN', 'acme agent', '/XML', f.path, '/F']);
  });

  it('is a pure function of its input and never carries the token', () => {
    for (const p of SERVICE_PLATFORMS) {
      expect(serviceFile(p, specFor(p))).toEqual(serviceFile(p, specFor(p)));
      expect(serviceFile(p, specFor(p)).contents).not.toMatch(/--token|PLUGIN_LICENSE_TOKEN/);
    }
  });

  it('install and uninstall --dry-run print every OS\'s file and commands and change nothing', () => {
    const d = shortDir();
    try {
      for (const platform of SERVICE_PLATFORMS) {
        const calls: string[][] = [];
        const run: CommandRunner = (c, a) => {
          calls.push([c, ...a]);
          return { ok: true, output: '' };
        };
        const file = serviceFile(platform, { ...specFor(platform), homedir: d.dir, xdgConfigHome: join(d.dir, 'cfg'), dataDir: join(d.dir, 'data') });
        const install = installService(file, { dryRun: true, manage: true, platform, run });
        expect(install.steps[0]).toBe(`would write ${file.path}:`);
        expect(install.steps[1]).toBe(file.contents.replace(/\r\n/g, '\n'));
        expect(install.steps.slice(2)).toEqual(file.enable.map((c) => `would run: ${commandText(c)}`));
        if (platform === 'win32') expect(install.steps[2]).toMatch(/^would run: schtasks \/Create \/TN "acme agent" \/XML /);
        const uninstall = uninstallService(file, { dryRun: true, manage: true, platform, run });
        expect(uninstall.steps).toEqual([...file.disable.map((c) => `would run: ${commandText(c)}`), `would remove ${file.path}`]);
        expect(calls).toEqual([]);
        expect(existsSync(file.path)).toBe(false);
      }
    } finally {
      d.cleanup();
    }
  });

  it('install writes the file and runs the service manager only where the OS matches', () => {
    const d = shortDir();
    try {
      const calls: string[][] = [];
      const run: CommandRunner = (c, a) => {
        calls.push([c, ...a]);
        return { ok: true, output: '' };
      };
      const file = serviceFile('linux', { ...spec, xdgConfigHome: d.dir });
      const dry = installService(file, { dryRun: true, manage: true, platform: 'linux', run });
      expect(dry.steps.join('\n')).toContain('would run: systemctl --user enable --now acme-agent.service');
      expect(calls).toEqual([]);
      const foreign = installService(file, { dryRun: false, manage: true, platform: 'darwin', run });
      expect(foreign.steps.at(-1)).toBe('skipped the service manager: this is darwin, the file is for linux');
      expect(calls).toEqual([]);
      const here = installService(file, { dryRun: false, manage: true, platform: 'linux', run });
      expect(here.ok).toBe(true);
      // First the probe (does this user's systemd answer?), then the unit's own commands.
      expect(calls).toEqual([file.probe, ...file.enable]);
      // No user manager: nothing written, the problem named.
      rmSync(file.path, { force: true });
      const unreachable = installService(file, { dryRun: false, manage: true, platform: 'linux', run: () => ({ ok: false, output: 'Failed to connect to bus' }) });
      expect(unreachable).toMatchObject({ ok: false, problem: { code: 'no_service_manager' } });
      expect(unreachable.steps).toEqual(['not written: systemctl --user show --property=Version: Failed to connect to bus']);
      expect(existsSync(file.path)).toBe(false);
      // A manager that answers, then fails a command: written, the failing command named.
      const failing = installService(file, { dryRun: false, manage: true, platform: 'linux', run: (c, a) => (a.includes('show') ? { ok: true, output: 'Version=252' } : { ok: false, output: 'Unit not found' }) });
      expect(failing.ok).toBe(false);
      expect(failing.steps.join('\n')).toContain('failed: systemctl --user daemon-reload (Unit not found)');
      calls.length = 0;
      const removed = uninstallService(file, { dryRun: false, manage: true, platform: 'linux', run });
      expect(removed.steps).toContain(`removed ${file.path}`);
      expect(calls).toEqual([...file.disable, ['systemctl', '--user', 'daemon-reload']]);
    } finally {
      d.cleanup();
    }
  });
});
