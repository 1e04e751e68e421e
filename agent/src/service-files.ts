import { posix, win32 } from 'node:path';

/** The platforms a per-user service can be generated for. */
export type ServicePlatform = 'linux' | 'darwin' | 'win32';
export const SERVICE_PLATFORMS: readonly ServicePlatform[] = ['linux', 'darwin', 'win32'];

/** What the service runs and where its files go. */
export interface ServiceSpec {
  namespace: string;
  /**
   * What runs the agent's commands, before `run`: the packaged executable and `agent`
   * (`[/…/acme-license, 'agent']`), or Node and a script (`[/usr/bin/node, /…/plugin-license-agent.js]`).
   * Absolute paths: a service manager has no PATH of the user's.
   */
  command: string[];
  /** Extra `run` arguments (e.g. `--home`, `--base-url`); never the token. */
  runArgs: string[];
  /** The user's home folder. */
  homedir: string;
  /** `$XDG_CONFIG_HOME` when set (Linux). */
  xdgConfigHome?: string;
  /** The namespace's data folder (Windows keeps the task XML there). */
  dataDir: string;
  /** The namespace's log folder (launchd's stdout/stderr files). */
  logDir: string;
  /** Numeric user id (launchd's `gui/UID` domain). */
  uid: number;
  /** Windows account name for the logon trigger, e.g. `DOMAIN\\user`. */
  username: string;
}

/** A generated service definition and the commands that enable and disable it. */
export interface ServiceFile {
  platform: ServicePlatform;
  /** Label (launchd), unit name (systemd) or task name (Windows). */
  name: string;
  path: string;
  contents: string;
  /** schtasks wants UTF-16; the others are UTF-8. */
  encoding: 'utf8' | 'utf16le';
  enable: string[][];
  disable: string[][];
}

/**
 * The per-user service definition for a platform: a launchd LaunchAgent plist, a systemd
 * `--user` unit or a Task Scheduler logon task. Pure: same input, same file.
 *
 * @example
 * const file = serviceFile('linux', spec);
 * console.log(file.path); // ~/.config/systemd/user/plugin-license-agent.service
 */
export function serviceFile(platform: ServicePlatform, spec: ServiceSpec): ServiceFile {
  switch (platform) {
    case 'linux':
      return systemdUnit(spec);
    case 'darwin':
      return launchdPlist(spec);
    case 'win32':
      return windowsTask(spec);
  }
}

function argv(spec: ServiceSpec): string[] {
  return [...spec.command, 'run', '--app', spec.namespace, ...spec.runArgs];
}

export function systemdUnit(spec: ServiceSpec): ServiceFile {
  const name = `${spec.namespace}-agent.service`;
  const configHome = spec.xdgConfigHome ?? posix.join(spec.homedir, '.config');
  const path = posix.join(configHome, 'systemd', 'user', name);
  const contents = [
    '[Unit]',
    `Description=License agent for ${spec.namespace} plugins (plugin-license-agent)`,
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${argv(spec).map(systemdQuote).join(' ')}`,
    'Restart=on-failure',
    'RestartSec=5',
    'KillSignal=SIGTERM',
    'TimeoutStopSec=20',
    'ExecReload=/bin/kill -HUP $MAINPID',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
  return {
    platform: 'linux',
    name,
    path,
    contents,
    encoding: 'utf8',
    enable: [
      ['systemctl', '--user', 'daemon-reload'],
      ['systemctl', '--user', 'enable', '--now', name],
    ],
    disable: [['systemctl', '--user', 'disable', '--now', name]],
  };
}

export function launchdPlist(spec: ServiceSpec): ServiceFile {
  const name = `dev.plugin-license.${spec.namespace}.agent`;
  const path = posix.join(spec.homedir, 'Library', 'LaunchAgents', `${name}.plist`);
  const args = argv(spec)
    .map((a) => `    <string>${xml(a)}</string>`)
    .join('\n');
  const contents = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${xml(name)}</string>
  <key>ProgramArguments</key>
  <array>
${args}
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ProcessType</key>
  <string>Background</string>
  <key>StandardOutPath</key>
  <string>${xml(posix.join(spec.logDir, 'launchd.out.log'))}</string>
  <key>StandardErrorPath</key>
  <string>${xml(posix.join(spec.logDir, 'launchd.err.log'))}</string>
</dict>
</plist>
`;
  return {
    platform: 'darwin',
    name,
    path,
    contents,
    encoding: 'utf8',
    enable: [['launchctl', 'bootstrap', `gui/${spec.uid}`, path]],
    disable: [['launchctl', 'bootout', `gui/${spec.uid}/${name}`]],
  };
}

export function windowsTask(spec: ServiceSpec): ServiceFile {
  const name = `${spec.namespace} agent`;
  const path = win32.join(spec.dataDir, 'agent-task.xml');
  const [command, ...rest] = argv(spec);
  const contents = `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>${xml(`License agent for ${spec.namespace} plugins (plugin-license-agent)`)}</Description>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>${xml(spec.username)}</UserId>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>${xml(spec.username)}</UserId>
      <LogonType>InteractiveToken</LogonType>
      <RunLevel>LeastPrivilege</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <Hidden>true</Hidden>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>5</Count>
    </RestartOnFailure>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>${xml(command as string)}</Command>
      <Arguments>${xml(rest.map(windowsQuote).join(' '))}</Arguments>
    </Exec>
  </Actions>
</Task>
`.replace(/\n/g, '\r\n');
  return {
    platform: 'win32',
    name,
    path,
    contents,
    encoding: 'utf16le',
    enable: [
      ['schtasks', '/Create', '/TN', name, '/XML', path, '/F'],
      ['schtasks', '/Run', '/TN', name],
    ],
    disable: [
      ['schtasks', '/End', '/TN', name],
      ['schtasks', '/Delete', '/TN', name, '/F'],
    ],
  };
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** systemd's quoting: double quotes, backslash escapes, `%` and `$` doubled (specifier and variable expansion). */
function systemdQuote(s: string): string {
  const escaped = s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$');
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? escaped : `"${escaped}"`;
}

/** Quoting for a Windows command line (CommandLineToArgvW rules). */
function windowsQuote(s: string): string {
  if (s.length > 0 && !/[\s"]/.test(s)) return s;
  return `"${s.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}
