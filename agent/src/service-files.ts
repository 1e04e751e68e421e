import { posix, win32 } from 'node:path';
import { resolveNamespace } from '@plugin-license/licensing';
import { AgentError } from './errors.js';
import { NODE_RUNTIME_VARIABLES } from './node-environment.js';

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
  /** The service manager that runs it, as a sentence names it: `the systemd user service manager (systemd --user)`, `launchd`, `Task Scheduler`. */
  manager: string;
  /**
   * A command that succeeds only when this user's service manager can be reached, asked before
   * anything is written (Linux: a computer or session without `systemd --user`).
   */
  probe?: string[];
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

/** One word of the service's command line and what it is, for a refusal's words. */
interface Word {
  value: string;
  /** `the program`, `the script`, `the --home value`, … */
  role: string;
}

function argv(spec: ServiceSpec): Word[] {
  // The namespace names the file, the unit, the label and the task: only names the one namespace rule allows.
  resolveNamespace(spec.namespace, {});
  const words: Word[] = spec.command.map((value, i) => ({ value, role: i === 0 ? 'the program' : posix.isAbsolute(value) || win32.isAbsolute(value) ? 'the script' : `the argument ${JSON.stringify(value)}` }));
  words.push({ value: 'run', role: 'the argument "run"' }, { value: '--app', role: 'the argument "--app"' }, { value: spec.namespace, role: 'the namespace' });
  spec.runArgs.forEach((value, i) => {
    const flag = i > 0 && spec.runArgs[i - 1]!.startsWith('--') ? spec.runArgs[i - 1] : undefined;
    words.push({ value, role: flag !== undefined && !value.startsWith('--') ? `the ${flag} value` : `the argument ${JSON.stringify(value)}` });
  });
  return words;
}

export function systemdUnit(spec: ServiceSpec): ServiceFile {
  const name = `${spec.namespace}-agent.service`;
  const configHome = spec.xdgConfigHome ?? posix.join(spec.homedir, '.config');
  const path = posix.join(configHome, 'systemd', 'user', name);
  const words = argv(spec);
  const contents = [
    '[Unit]',
    `Description=${systemdSetting({ value: `License agent for ${spec.namespace} plugins (plugin-license-agent)`, role: 'the description' })}`,
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${systemdCommandLine(words)}`,
    // The user manager's environment (environment.d, import-environment) must not change what runs.
    `UnsetEnvironment=${NODE_RUNTIME_VARIABLES.join(' ')}`,
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
    manager: 'the systemd user service manager (systemd --user)',
    probe: ['systemctl', '--user', 'show', '--property=Version'],
  };
}

export function launchdPlist(spec: ServiceSpec): ServiceFile {
  const name = `dev.plugin-license.${spec.namespace}.agent`;
  const path = posix.join(spec.homedir, 'Library', 'LaunchAgents', `${name}.plist`);
  const words = argv(spec);
  const args = words
    .map((a) => `    <string>${xmlText(a, 'launchd property list')}</string>`)
    .join('\n');
  const contents = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${xmlText({ value: name, role: 'the label' }, 'launchd property list')}</string>
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
  <string>${xmlText({ value: posix.join(spec.logDir, 'launchd.out.log'), role: 'the log folder' }, 'launchd property list')}</string>
  <key>StandardErrorPath</key>
  <string>${xmlText({ value: posix.join(spec.logDir, 'launchd.err.log'), role: 'the log folder' }, 'launchd property list')}</string>
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
    manager: 'launchd',
  };
}

export function windowsTask(spec: ServiceSpec): ServiceFile {
  const name = `${spec.namespace} agent`;
  const path = win32.join(spec.dataDir, 'agent-task.xml');
  const [command, ...rest] = argv(spec) as [Word, ...Word[]];
  const task = (word: Word): string => xmlText(word, 'Task Scheduler task');
  const contents = `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Description>${task({ value: `License agent for ${spec.namespace} plugins (plugin-license-agent)`, role: 'the description' })}</Description>
  </RegistrationInfo>
  <Triggers>
    <LogonTrigger>
      <Enabled>true</Enabled>
      <UserId>${task({ value: spec.username, role: 'the user name' })}</UserId>
    </LogonTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>${task({ value: spec.username, role: 'the user name' })}</UserId>
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
      <Command>${task(windowsProgram(command))}</Command>
      <Arguments>${task({ value: rest.map(windowsArgument).join(' '), role: 'the arguments' })}</Arguments>
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
    manager: 'Task Scheduler',
  };
}

/**
 * A value a service file cannot carry: refused with words naming it, why, and what to do,
 * never written half-escaped (thrown as `config_invalid`).
 */
function refuse(word: Word, format: string, why: string, fix: string = defaultFix(word)): never {
  throw new AgentError('config_invalid', `cannot write the ${format}: ${word.role} ${JSON.stringify(word.value)} ${why}; ${fix}`, { path: word.value });
}

function defaultFix(word: Word): string {
  return word.role === 'the program' || word.role === 'the script'
      ? `install the program to a folder whose path does not have it and run install from there`
      : word.role.startsWith('the --')
        ? `choose a ${word.role.slice(4)} without it`
        : 'use a value without it';
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const ASCII_CONTROL = /[\x00-\x1f\x7f]/;

function checkText(word: Word, format: string): void {
  if (word.value.includes('\0')) refuse(word, format, 'contains a NUL character, which no path or argument can hold');
  if (LONE_SURROGATE.test(word.value)) refuse(word, format, 'is not valid Unicode (a lone UTF-16 surrogate)');
}

/** systemd reads a unit as UTF-8 and refuses a line with a Unicode non-character (U+FDD0-U+FDEF, U+FFFE, U+FFFF, U+1FFFE, …) as "not UTF-8 clean". */
function checkSystemdText(word: Word): void {
  checkText(word, SYSTEMD);
  for (const c of word.value) {
    const cp = c.codePointAt(0)!;
    if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe) refuse(word, SYSTEMD, `contains the Unicode non-character U+${cp.toString(16).toUpperCase()}, which systemd refuses in a unit file`);
  }
}

const SYSTEMD = 'systemd unit';

/**
 * systemd's command line (systemd.service(5) "Command lines", systemd.syntax(7) "Quoting"), as
 * measured with systemd 252: every word is double-quoted (a bare `;` would separate commands),
 * with `\\` and `\"` escaped, control characters as C escapes, `%` doubled (specifiers) and, in
 * arguments only, `$` doubled: variables are expanded in arguments at each start, never in the
 * program path, where `$$` would stay two characters. The path is the first word, prefixed `@`,
 * and given again as argv[0] (a second word, an argument) so that a `$` in it reaches the
 * program as it is. systemd refuses a program path holding a quote, a backslash or a control
 * character ("Executable name contains special characters"): refused here, with words.
 */
function systemdCommandLine(words: readonly Word[]): string {
  const [program, ...rest] = words as [Word, ...Word[]];
  checkSystemdText(program);
  if (!program.value.startsWith('/')) refuse(program, SYSTEMD, 'is not an absolute path, and a service has no PATH of yours to find it by', 'give its absolute path');
  if (/["'\\]/.test(program.value) || ASCII_CONTROL.test(program.value)) {
    refuse(program, SYSTEMD, 'contains a quote, a backslash or a control character, which systemd refuses in the path of the program a service runs');
  }
  if (program.value.endsWith('/')) refuse(program, SYSTEMD, 'names a folder, not a program', 'give the path of the program file');
  const argument = (word: Word): string => {
    checkSystemdText(word);
    const escaped = word.value.replace(/[\\"%$\x00-\x1f\x7f]/g, (c) => SYSTEMD_ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    return `"${escaped}"`;
  };
  return [`"@${program.value.replace(/%/g, '%%')}"`, argument(program), ...rest.map(argument)].join(' ');
}

const SYSTEMD_ESCAPES: Record<string, string> = { '\\': '\\\\', '"': '\\"', '%': '%%', $: '$$', '\n': '\\n', '\t': '\\t', '\r': '\\r' };

/**
 * A plain systemd setting (`Description=`): no quoting and no escapes there, only specifiers
 * (`%` doubled); a control character would end the line or be shown as is, and a trailing
 * backslash would join the next line: refused.
 */
function systemdSetting(word: Word): string {
  checkSystemdText(word);
  if (ASCII_CONTROL.test(word.value)) refuse(word, SYSTEMD, 'contains a control character, which a systemd setting cannot hold');
  if (/^\s|\s$|\\$/.test(word.value)) refuse(word, SYSTEMD, 'starts or ends with white space or ends with a backslash, which a systemd setting cannot keep');
  return word.value.replace(/%/g, '%%');
}

/**
 * Text in an XML 1.0 document (a launchd property list, a Task Scheduler task): markup
 * characters as entities; tab, newline, carriage return, NEL and the line separator as
 * character references, which no reader turns into another line end; the characters XML 1.0
 * cannot carry at all (other control characters, U+FFFE, U+FFFF) refused.
 */
function xmlText(word: Word, format: string): string {
  checkXml(word, format);
  return word.value.replace(/[&<>"'\t\n\r\u0085\u2028]/g, (c) => XML_ESCAPES[c] ?? `&#${c.charCodeAt(0)};`);
}

function checkXml(word: Word, format: string): void {
  checkText(word, format);
  if (/[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]/.test(word.value)) refuse(word, format, 'contains a character that an XML document cannot hold (a control character, U+FFFE or U+FFFF)');
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * Task Scheduler expands `%NAME%` in a task's program and arguments, with no escape for it: a
 * value with two `%` could turn into another value on another day, so it is refused.
 */
function checkTaskPercent(word: Word): void {
  if ((word.value.match(/%/g) ?? []).length >= 2) {
    refuse(word, 'Task Scheduler task', 'contains two "%" signs, and Task Scheduler replaces %NAME% in a task\'s command line by an environment variable, with no way to escape it');
  }
}

/** The program of a Windows task: an absolute path, which no Windows file name can give a quote or a control character. */
function windowsProgram(word: Word): Word {
  const format = 'Task Scheduler task';
  checkText(word, format);
  if (!win32.isAbsolute(word.value) || !/^([A-Za-z]:\\|\\\\)/.test(word.value)) refuse(word, format, 'is not an absolute path with a drive or a share', 'give its absolute path');
  if (/["\x00-\x1f]/.test(word.value)) refuse(word, format, 'contains a quote or a control character, which no Windows path can hold');
  checkTaskPercent(word);
  return word;
}

/** One argument of a Windows command line, quoted by the rules of CommandLineToArgvW and the C runtime. */
function windowsArgument(word: Word): string {
  checkXml(word, 'Task Scheduler task');
  checkTaskPercent(word);
  const s = word.value;
  if (s.length > 0 && !/[\s"]/.test(s)) return s;
  return `"${s.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}
