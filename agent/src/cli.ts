#!/usr/bin/env node
import os from 'node:os';
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { resolveConfig, resolvePaths, type ConfigValue } from '@plugin-license/licensing';
import { startAgent, type RunningAgent } from './agent.js';
import { LOG_LEVELS, resolveAgentConfig, type AgentFlags } from './config.js';
import { AgentError, isAgentError } from './errors.js';
import { PROTOCOL_VERSION } from './protocol.js';
import { SERVICE_PLATFORMS, serviceFile, type ServicePlatform, type ServiceSpec } from './service-files.js';
import { installService, uninstallService } from './service-install.js';
import { agentStatus, formatStatus } from './status.js';
import { AGENT_VERSION } from './version.js';

/** Exit codes: 0 fine, 1 failed at run time, 2 bad arguments or configuration. */
const EXIT_USAGE = 2;

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive whole number, got '${value}'`);
    return n;
  };
}

interface CommonOpts {
  app?: string;
  home?: string;
  socket?: string;
}

function commonOptions(cmd: Command): Command {
  return cmd
    .option('--app <namespace>', 'namespace, one per vendor (env PLUGIN_LICENSE_APP, default plugin-license)')
    .option('--home <dir>', 'one root folder for config, data, cache and logs (env PLUGIN_LICENSE_HOME)')
    .option('--socket <path>', 'socket path or Windows pipe name (env PLUGIN_LICENSE_SOCKET)');
}

function flagsOf(opts: CommonOpts): AgentFlags {
  const o = opts as CommonOpts & Record<string, unknown>;
  const f: AgentFlags = {};
  if (o.app !== undefined) f.app = o.app;
  if (o.home !== undefined) f.home = o.home;
  if (o.socket !== undefined) f.socket = o.socket;
  if (typeof o.baseUrl === 'string') f.baseUrl = o.baseUrl;
  if (typeof o.token === 'string') f.token = o.token;
  if (typeof o.logLevel === 'string') f.logLevel = o.logLevel;
  if (typeof o.maxConnections === 'number') f.maxConnections = o.maxConnections;
  if (typeof o.idleTimeoutMs === 'number') f.idleTimeoutMs = o.idleTimeoutMs;
  if (typeof o.requestRate === 'number') f.requestRate = o.requestRate;
  if (typeof o.requestBurst === 'number') f.requestBurst = o.requestBurst;
  return f;
}

async function run(opts: CommonOpts): Promise<void> {
  const flags = flagsOf(opts);
  const agent: RunningAgent = await startAgent({
    ...(flags.app ? { namespace: flags.app } : {}),
    ...(flags.home ? { home: flags.home } : {}),
    ...(flags.socket ? { socketPath: flags.socket } : {}),
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    ...(flags.token ? { token: flags.token } : {}),
    ...(flags.logLevel ? { logLevel: flags.logLevel as (typeof LOG_LEVELS)[number] } : {}),
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
  process.stdout.write(JSON.stringify({ ready: true, socket: agent.socketPath, namespace: agent.namespace, pid: process.pid, protocol: PROTOCOL_VERSION }) + '\n');
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    agent.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`plugin-license-agent: error while stopping: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', () => {
    agent.reload().catch((err: unknown) => process.stderr.write(`plugin-license-agent: reload failed, keeping the previous configuration: ${(err as Error).message}\n`));
  });
  await agent.closed;
}

function serviceSpec(opts: CommonOpts & { baseUrl?: string }): { spec: ServiceSpec; namespace: string } {
  const config = resolveAgentConfig(flagsOf(opts));
  const paths = resolvePaths({ namespace: config.namespace, ...(config.home ? { home: config.home } : {}) });
  // A service manager does not pass on this shell's environment: what the flags or the
  // environment chose now is written into the service. config.json is not: the service reads it
  // itself at each start and SIGHUP, so later edits still apply. The token is never written.
  const sources = resolveConfig(flagsOf(opts));
  const chosenNow = (v: ConfigValue<string | undefined>): string | undefined => (v.source === 'flag' || v.source === 'environment' ? v.value : undefined);
  const runArgs: string[] = [];
  const home = chosenNow(sources.home);
  const socket = chosenNow(sources.socket);
  const baseUrl = chosenNow(sources.baseUrl);
  if (home) runArgs.push('--home', resolve(home));
  if (socket) runArgs.push('--socket', socket);
  if (baseUrl) runArgs.push('--base-url', baseUrl);
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
  const spec: ServiceSpec = {
    namespace: config.namespace,
    nodePath: process.execPath,
    // The script this process was started with (bin/plugin-license-agent.js for an installed agent).
    cliPath: realpathSync(process.argv[1] ?? ''),
    runArgs,
    homedir: os.homedir(),
    ...(process.env.XDG_CONFIG_HOME ? { xdgConfigHome: process.env.XDG_CONFIG_HOME } : {}),
    dataDir: paths.data,
    logDir: paths.log,
    uid,
    username,
  };
  return { spec, namespace: config.namespace };
}

function platformOf(value: string | undefined): ServicePlatform {
  const p = value ?? process.platform;
  if (!(SERVICE_PLATFORMS as readonly string[]).includes(p)) {
    throw new AgentError('config_invalid', `platform '${p}' has no per-user service; use one of ${SERVICE_PLATFORMS.join(', ')}`);
  }
  return p as ServicePlatform;
}

export function buildProgram(): Command {
  const program = new Command('plugin-license-agent')
    .description('Per-user license agent: keeps the activation state of a namespace and answers plugin hosts over a local socket (protocol 1).')
    .version(AGENT_VERSION)
    .showHelpAfterError('(run plugin-license-agent --help for usage)')
    .exitOverride();

  commonOptions(program.command('run').description('run the agent in the foreground (prints one JSON "ready" line on stdout, then logs to files)'))
    .option('--base-url <url>', 'service base URL ending in /functions/v1 (env PLUGIN_LICENSE_BASE_URL)')
    .option('--token <token>', 'bearer token (prefer env PLUGIN_LICENSE_TOKEN or config.json: flags show in ps)')
    .addOption(new Option('--log-level <level>', 'file log level (env PLUGIN_LICENSE_LOG_LEVEL)').choices(LOG_LEVELS))
    .option('--max-connections <n>', 'most simultaneous connections (default 512)', positiveInt('--max-connections'))
    .option('--idle-timeout-ms <ms>', 'close connections idle this long (default 300000)', positiveInt('--idle-timeout-ms'))
    .option('--request-rate <n>', 'requests per second per connection (default 200)', positiveInt('--request-rate'))
    .option('--request-burst <n>', 'request burst per connection (default 400)', positiveInt('--request-burst'))
    .action(run);

  commonOptions(program.command('socket-path').description('print the socket path (or Windows pipe name) in effect')).action((opts: CommonOpts) => {
    process.stdout.write(resolveAgentConfig(flagsOf(opts)).socketPath + '\n');
  });

  commonOptions(program.command('status').description('say whether the agent runs and what it holds (from the cache when it does not run)'))
    .option('--json', 'print JSON instead of text')
    .action(async (opts: CommonOpts & { json?: boolean }) => {
      const report = await agentStatus(resolveAgentConfig(flagsOf(opts)));
      process.stdout.write((opts.json ? JSON.stringify(report, null, 2) : formatStatus(report)) + '\n');
    });

  commonOptions(program.command('install').description('write (and enable, where the OS matches) a per-user service: launchd LaunchAgent, systemd --user unit or Windows logon task'))
    .option('--dry-run', 'print what would be written and run, change nothing')
    .option('--no-enable', 'write the file but do not enable or start it')
    .option('--platform <platform>', `generate for another platform (${SERVICE_PLATFORMS.join(', ')}); enabling is skipped`)
    .option('--base-url <url>', 'service base URL the service runs with (else config.json / environment of the service)')
    .action((opts: CommonOpts & { dryRun?: boolean; enable: boolean; platform?: string; baseUrl?: string }) => {
      const platform = platformOf(opts.platform);
      const { spec } = serviceSpec(opts);
      const result = installService(serviceFile(platform, spec), { dryRun: opts.dryRun === true, manage: opts.enable });
      process.stdout.write(result.steps.join('\n') + '\n');
      if (!result.ok) {
        process.stderr.write('plugin-license-agent: the service file was written but could not be enabled; run the failed command yourself or see its output above\n');
        process.exitCode = 1;
      }
    });

  commonOptions(program.command('uninstall').description('disable (where the OS matches) and remove the per-user service'))
    .option('--dry-run', 'print what would be removed and run, change nothing')
    .option('--no-enable', 'only remove the file, do not call the service manager')
    .option('--platform <platform>', `the platform the service was generated for (${SERVICE_PLATFORMS.join(', ')})`)
    .action((opts: CommonOpts & { dryRun?: boolean; enable: boolean; platform?: string }) => {
      const platform = platformOf(opts.platform);
      const { spec } = serviceSpec(opts);
      const result = uninstallService(serviceFile(platform, spec), { dryRun: opts.dryRun === true, manage: opts.enable });
      process.stdout.write(result.steps.join('\n') + '\n');
    });

  return program;
}

async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander already printed the message; help and version are not errors.
      process.exitCode = err.exitCode === 0 ? 0 : EXIT_USAGE;
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`plugin-license-agent: ${message}\n`);
    process.exitCode = isAgentError(err) && (err.code === 'config_invalid' || err.code === 'socket_path_too_long') ? EXIT_USAGE : 1;
  }
}

void main(process.argv);
