import os from 'node:os';
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { appArgument, resolveConfig, resolvePaths, userHome, versionLine, xdgDir, type ConfigValue } from '@plugin-license/licensing';
import { startAgent, type RunningAgent } from './agent.js';
import { LOG_LEVELS, parseIdleExitMinutes, resolveAgentConfig, type AgentConfig, type AgentFlags } from './config.js';
import { AgentError } from './errors.js';
import { PROTOCOL_VERSION } from './protocol.js';
import { selfCommand } from './self.js';
import { SERVICE_PLATFORMS, serviceFile, type ServicePlatform, type ServiceSpec } from './service-files.js';
import { installService, serviceProblemSentence, uninstallService } from './service-install.js';
import { agentStatus, formatStatus } from './status.js';
import { stopAgent } from './stop.js';
import { AGENT_VERSION } from './version.js';

/** The agent's subcommands, the same under `plugin-license-agent` and `plugin-license agent`. */
export const AGENT_COMMANDS = ['run', 'install', 'uninstall', 'socket-path', 'status', 'stop'] as const;

/** How the program that mounts the agent's commands calls them. */
export interface AgentCommandOptions {
  /** The commands' name in help and messages: `plugin-license-agent`, `plugin-license agent`, `acme-license agent`. */
  name: string;
  /**
   * The words between this program and a subcommand (`['agent']` under the CLI, `[]` for
   * `plugin-license-agent`): the service runs `<this program> ...prefix run --app NAME`.
   */
  prefix: string[];
  /** Options the mounting program parsed already (the CLI's global `--app`, `--home`, `--base-url`, `--token`, `--json`); the subcommand's own flags win. */
  flags?: Pick<AgentFlags, 'app' | 'home' | 'baseUrl' | 'token'> & { json?: boolean };
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

interface CommonOpts {
  app?: string;
  home?: string;
  socket?: string;
  json?: boolean;
}

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive whole number, got '${value}'`);
    return n;
  };
}

function idleMinutes(value: string): number {
  try {
    return parseIdleExitMinutes(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

function commonOptions(cmd: Command): Command {
  return cmd
    .option('--app <namespace>', 'namespace, one per vendor (env PLUGIN_LICENSE_APP, default plugin-license)')
    .option('--home <dir>', 'one root folder for config, data, cache and logs (env PLUGIN_LICENSE_HOME)')
    .option('--socket <path>', 'socket path or Windows pipe name (env PLUGIN_LICENSE_SOCKET)');
}

/**
 * Runs one of the agent's commands (`run`, `install`, `uninstall`, `socket-path`, `status`) and
 * returns its exit code: 0 done (for `status`: an agent answers), 1 failed at run time (for
 * `status`: no agent answers), 2 usage or configuration. `run` returns when the agent has
 * stopped (SIGINT, SIGTERM). Failures are thrown as `AgentError` (`usage` for the command line),
 * for the mounting program to print in its own way.
 *
 * @example
 * process.exitCode = await runAgentCommand(process.argv.slice(2), { name: 'plugin-license-agent', prefix: [] });
 */
export async function runAgentCommand(argv: string[], options: AgentCommandOptions): Promise<number> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const given = options.flags ?? {};
  let exit = 0;
  let usage = '';

  const flagsOf = (parsed: CommonOpts): AgentFlags => {
    const opts = parsed as CommonOpts & Record<string, unknown>;
    const f: AgentFlags = {};
    const app = opts.app ?? given.app;
    const home = opts.home ?? given.home;
    const baseUrl = (opts.baseUrl as string | undefined) ?? given.baseUrl;
    const token = (opts.token as string | undefined) ?? given.token;
    if (app !== undefined) f.app = app;
    if (home !== undefined) f.home = home;
    if (opts.socket !== undefined) f.socket = opts.socket;
    if (baseUrl !== undefined) f.baseUrl = baseUrl;
    if (token !== undefined) f.token = token;
    if (typeof opts.logLevel === 'string') f.logLevel = opts.logLevel;
    if (typeof opts.maxConnections === 'number') f.maxConnections = opts.maxConnections;
    if (typeof opts.idleTimeoutMs === 'number') f.idleTimeoutMs = opts.idleTimeoutMs;
    if (typeof opts.requestRate === 'number') f.requestRate = opts.requestRate;
    if (typeof opts.requestBurst === 'number') f.requestBurst = opts.requestBurst;
    if (typeof opts.idleExitMinutes === 'number') f.idleExitMinutes = opts.idleExitMinutes;
    return f;
  };

  const program = new Command(options.name)
    .description('The per-user license agent: keeps the activation state of a namespace and answers plugin hosts over a local socket (protocol 1).')
    .version(versionLine(AGENT_VERSION, appArgument(argv) ?? given.app), '-V, --version')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => stdout.write(s),
      writeErr: (s) => stderr.write(s),
      outputError: (s) => (usage = s.replace(/^error: /, '').trim()),
    });

  commonOptions(program.command('run').description('run the agent in the foreground (prints one JSON "ready" line on stdout, then logs to files)'))
    .option('--base-url <url>', 'service base URL ending in /functions/v1 (env PLUGIN_LICENSE_BASE_URL)')
    .option('--token <token>', 'bearer token (prefer env PLUGIN_LICENSE_TOKEN or config.json: flags show in ps)')
    .addOption(new Option('--log-level <level>', 'file log level (env PLUGIN_LICENSE_LOG_LEVEL)').choices(LOG_LEVELS))
    .option('--max-connections <n>', 'most simultaneous connections (default 512)', positiveInt('--max-connections'))
    .option('--idle-timeout-ms <ms>', 'close connections idle this long (default 300000)', positiveInt('--idle-timeout-ms'))
    .option('--request-rate <n>', 'requests per second per connection (default 200)', positiveInt('--request-rate'))
    .option('--request-burst <n>', 'request burst per connection (default 400)', positiveInt('--request-burst'))
    .option('--idle-exit-minutes <m>', 'exit after this many minutes with no client and nothing in flight; fractions allowed, 0 stays (config "idle_exit_minutes", default 10)', idleMinutes)
    .addHelpText('after', `\nExample:\n  ${options.name} run --app acme-audio\n\nThe per-user service (${options.name} install) runs exactly this. SIGHUP reloads config.json; SIGINT or SIGTERM stops.`)
    .action(async (opts: CommonOpts) => {
      exit = await run(flagsOf(opts), options.name, stdout, stderr);
    });

  commonOptions(program.command('socket-path').description('print the socket path (or Windows pipe name) in effect'))
    .addHelpText('after', `\nExample:\n  ${options.name} socket-path --app acme-audio`)
    .action((opts: CommonOpts) => {
      stdout.write(inspectionConfig(flagsOf(opts), options.name, stderr).socketPath + '\n');
    });

  commonOptions(program.command('status').description('whether an agent answers, and the licenses it holds (read from the cache files, unchanged, when none answers); exit 0 when one answers, 1 when not'))
    .option('--json', 'print JSON instead of text')
    .addHelpText('after', `\nExamples:\n  ${options.name} status\n  ${options.name} status --json --app acme-audio`)
    .action(async (opts: CommonOpts) => {
      const report = await agentStatus(inspectionConfig(flagsOf(opts), options.name, stderr));
      stdout.write((opts.json || given.json ? JSON.stringify({ ...report, ...(report.from === 'agent' ? { protocol: PROTOCOL_VERSION } : {}) }, null, 2) : formatStatus(report)) + '\n');
      exit = report.from === 'agent' ? 0 : 1;
    });

  commonOptions(program.command('stop').description('stop the agent of this namespace, however it was started (asked on its socket), and wait until it is gone; exit 0 stopped or none running, 1 not stopped'))
    .option('--json', 'print JSON instead of text')
    .option('--timeout-ms <ms>', 'how long it may take to finish in-flight requests and exit (default 15000)', positiveInt('--timeout-ms'))
    .addHelpText('after', `\nExamples:\n  ${options.name} stop\n  ${options.name} stop --app acme-audio --json\n\nInstallers run it on upgrade and uninstall. Only the agent answering on this user's socket for this namespace is stopped.`)
    .action(async (opts: CommonOpts & { timeoutMs?: number }) => {
      const report = await stopAgent(inspectionConfig(flagsOf(opts), options.name, stderr), opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs });
      const text = report.was_running ? `agent stopped (process ${report.pid}, namespace ${report.namespace})` : `no agent was running (socket ${report.socket_path})`;
      stdout.write((opts.json || given.json ? JSON.stringify(report, null, 2) : text) + '\n');
    });

  commonOptions(program.command('install').description('write (and enable, where the OS matches) a per-user service that runs this program: launchd LaunchAgent, systemd --user unit or Windows logon task'))
    .option('--dry-run', 'print what would be written and run, change nothing')
    .option('--no-enable', 'write the file but do not enable or start it')
    .option('--platform <platform>', `generate for another platform (${SERVICE_PLATFORMS.join(', ')}); enabling is skipped`)
    .option('--base-url <url>', 'service base URL the service runs with (else config.json / environment of the service)')
    .option('--json', 'print JSON instead of text: {ok, file, manager, steps, problem?, message?}')
    .addHelpText(
      'after',
      `\nExamples:\n  ${options.name} install --app acme-audio\n  ${options.name} install --dry-run\n\nExit 1 when the service manager cannot be reached (problem "no_service_manager": nothing is written) or one of its commands failed ("enable_failed": the file is written); the message says which and what to do.`,
    )
    .action((opts: CommonOpts & { dryRun?: boolean; enable: boolean; platform?: string; baseUrl?: string }) => {
      const platform = platformOf(opts.platform);
      const result = installService(serviceFile(platform, serviceSpec(flagsOf(opts), options.prefix)), { dryRun: opts.dryRun === true, manage: opts.enable });
      const message = serviceProblemSentence(result, options.name);
      if (opts.json || given.json) {
        const report = { ok: result.ok, file: result.file.path, manager: result.file.manager, steps: result.steps, ...(result.problem ? { problem: result.problem.code, message } : {}) };
        stdout.write(JSON.stringify(report, null, 2) + '\n');
      } else {
        stdout.write(result.steps.join('\n') + '\n');
        if (!result.ok) stderr.write(`${options.name}: ${message}\n`);
      }
      if (!result.ok) exit = 1;
    });

  commonOptions(program.command('uninstall').description('disable (where the OS matches) and remove the per-user service'))
    .option('--dry-run', 'print what would be removed and run, change nothing')
    .option('--no-enable', 'only remove the file, do not call the service manager')
    .option('--platform <platform>', `the platform the service was generated for (${SERVICE_PLATFORMS.join(', ')})`)
    .addHelpText('after', `\nExample:\n  ${options.name} uninstall`)
    .action((opts: CommonOpts & { dryRun?: boolean; enable: boolean; platform?: string }) => {
      const platform = platformOf(opts.platform);
      const result = uninstallService(serviceFile(platform, serviceSpec(flagsOf(opts), options.prefix)), { dryRun: opts.dryRun === true, manage: opts.enable });
      stdout.write(result.steps.join('\n') + '\n');
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exit;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return 0;
      const message = (usage || err.message.replace(/^error: /, '')).replace(/\s*\n\s*/g, ' ').trim();
      throw new AgentError('usage', /--help|Did you mean/.test(message) ? message : `${message} (see ${options.name} --help)`);
    }
    throw err;
  }
}

/**
 * The configuration of a command that only asks (status, socket-path): a config file it cannot
 * use is said once on stderr, and the running agent is still asked where it would listen
 * without that file. `run` stays strict: an agent must not start on half a configuration.
 */
function inspectionConfig(flags: AgentFlags, name: string, stderr: NodeJS.WritableStream): AgentConfig {
  const config = resolveAgentConfig(flags, process.env, { fileProblems: 'report' });
  if (config.configProblem !== undefined) stderr.write(`${name}: ${config.configProblem}; going on without it\n`);
  return config;
}

async function run(flags: AgentFlags, name: string, stdout: NodeJS.WritableStream, stderr: NodeJS.WritableStream): Promise<number> {
  // The agent's record is its log files. A service manager or an installer may start it with no
  // usable stdout or stderr (a closed pipe, a console without a window): a failed write there,
  // from the start on, must not stop it.
  for (const stream of [stdout, stderr]) {
    stream.removeAllListeners('error');
    stream.on('error', () => {});
  }
  const agent: RunningAgent = await startAgent({
    ...(flags.app ? { namespace: flags.app } : {}),
    ...(flags.home ? { home: flags.home } : {}),
    ...(flags.socket ? { socketPath: flags.socket } : {}),
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.token ? { token: flags.token } : {}),
    ...(flags.logLevel ? { logLevel: flags.logLevel as (typeof LOG_LEVELS)[number] } : {}),
    ...(flags.idleExitMinutes === undefined ? {} : { idleExitMinutes: flags.idleExitMinutes }),
    // undici carries requests only through a proxy; its WebAssembly parser is then compiled by
    // V8's baseline compiler alone (the optimizing tier's 35 MB native peak at the first request
    // stayed resident). Set only then: any V8 flag set at run time makes V8 refuse Node's
    // built-in code cache for every module compiled after it (start 121 -> 146 ms here).
    beforeProxy: () => process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only'),
    limits: {
      ...(flags.maxConnections ? { maxConnections: flags.maxConnections } : {}),
      ...(flags.idleTimeoutMs ? { idleTimeoutMs: flags.idleTimeoutMs } : {}),
      ...(flags.requestRate ? { requestRate: flags.requestRate } : {}),
      ...(flags.requestBurst ? { requestBurst: flags.requestBurst } : {}),
    },
  });
  stdout.write(JSON.stringify({ ready: true, socket: agent.socketPath, namespace: agent.namespace, pid: process.pid, protocol: PROTOCOL_VERSION }) + '\n');
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    agent.close().then(
      () => process.exit(0),
      (err: unknown) => {
        stderr.write(`${name}: error while stopping: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', () => {
    agent.reload().catch((err: unknown) => stderr.write(`${name}: reload failed, keeping the previous configuration: ${(err as Error).message}\n`));
  });
  await agent.closed;
  // Asked on the socket (`shutdown`): closed as SIGTERM closes it, and gone as promptly.
  if (!stopping) process.exit(0);
  return 0;
}

function serviceSpec(flags: AgentFlags, prefix: string[]): ServiceSpec {
  const config = resolveAgentConfig(flags);
  const paths = resolvePaths({ namespace: config.namespace, ...(config.home ? { home: config.home } : {}) });
  // A service manager does not pass on this shell's environment: what the flags or the
  // environment chose now is written into the service. config.json is not: the service reads it
  // itself at each start and SIGHUP, so later edits still apply. The token is never written.
  const sources = resolveConfig(flags);
  const chosenNow = (v: ConfigValue<string | undefined>): string | undefined => (v.source === 'flag' || v.source === 'environment' ? v.value : undefined);
  const runArgs: string[] = [];
  const home = chosenNow(sources.home);
  // An app group chosen now (macOS) is written as the socket path it gives.
  const socket = chosenNow(sources.socket) ?? (chosenNow(sources.appGroup) ? config.socketPath : undefined);
  const baseUrl = chosenNow(sources.baseUrl);
  if (home) runArgs.push('--home', resolve(home));
  if (socket) runArgs.push('--socket', socket);
  if (baseUrl) runArgs.push('--base-url', baseUrl);
  // An agent at login is asked for to stay resident: it never exits when idle.
  runArgs.push('--idle-exit-minutes', '0');
  let username = process.env.USERNAME ?? '';
  let uid = -1;
  try {
    const info = os.userInfo();
    username ||= info.username;
    uid = info.uid;
  } catch {
    // No passwd entry (some containers): the name is only needed for the Windows task.
  }
  if (process.platform === 'win32' && process.env.USERDOMAIN) username = `${process.env.USERDOMAIN}\\${username}`;
  return {
    namespace: config.namespace,
    command: [...selfCommand(), ...prefix],
    runArgs,
    homedir: userHome(),
    ...(xdgDir(process.env, 'XDG_CONFIG_HOME') === undefined ? {} : { xdgConfigHome: xdgDir(process.env, 'XDG_CONFIG_HOME') }),
    dataDir: paths.data,
    logDir: paths.log,
    uid,
    username,
  };
}

function platformOf(value: string | undefined): ServicePlatform {
  const p = value ?? process.platform;
  if (!(SERVICE_PLATFORMS as readonly string[]).includes(p)) {
    throw new AgentError('config_invalid', `platform '${p}' has no per-user service; use one of ${SERVICE_PLATFORMS.join(', ')}`);
  }
  // A service file holds that machine's own paths, user and program: made here for another
  // platform it would be wrong there, so it is not offered.
  if (p !== process.platform) {
    throw new AgentError('usage', `a service file for ${p} can only be made on ${p} (it holds that computer's paths, user and program); run install there, or --dry-run there to preview it`);
  }
  return p as ServicePlatform;
}
