import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { appArgument, programName, versionLine } from '@plugin-license/licensing/executable';
import type { Context, GlobalOptions } from './context.js';
import { CLI_VERSION, EXIT, usageError, type ExitCode } from './exit.js';
import type { Output, Streams } from './output.js';

// Commands load what they need when they run (load.ts): `--version` and `--help` load commander
// alone, and `status` does not load the agent's client or doctor's probes.
const parts = async () => (await import('./load.js')).load;
const commands = {
  agent: async () => (await parts()).agent(),
  doctor: async () => (await parts()).doctor(),
  license: async () => (await parts()).license(),
  vendor: async () => (await parts()).vendor(),
  offline: async () => (await parts()).offline(),
  builds: async () => (await parts()).builds(),
  config: async () => (await parts()).config(),
  manager: async () => (await parts()).manager(),
  plugins: async () => (await parts()).plugins(),
  relay: async () => (await parts()).relay(),
};

export { CLI_VERSION } from './exit.js';

/** What support must know before releasing a slot: the service counts slots but does not list them. */
const MACHINES_NOTE = `The service counts a code's slots but cannot say which machines hold them. A machine's id is in
its doctor report (the "machine id" line) or printed by machine-id on that computer; the customer
sends it to support.`;

const EXIT_HELP = `
Exit codes:
  0    done; for validate, check and status: the license is valid
  1    the service or network failed (unreachable, time-out, 5xx, unauthorized, rate-limited after waiting)
  2    usage: bad argument, unknown command or flag, missing token, bad configuration
  3    a negative licensing answer: not valid, not activated, code not found, revoked, no slots left
  130  interrupted (Ctrl-C); what was done is kept and reported

Configuration: flag > environment (PLUGIN_LICENSE_BASE_URL, PLUGIN_LICENSE_TOKEN, PLUGIN_LICENSE_APP,
PLUGIN_LICENSE_HOME) > config.json in the config folder > default. Prefer the environment for the
token: a --token flag shows in the process list.

PLUGIN_LICENSE_TIMEOUT (seconds, 1 to 300, default 10) is the deadline of the whole command's waiting
for the service, retries included; a batch, a watch, a download and the manager give it to each step.`;

function wholeNumber(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
      throw new InvalidArgumentError(`${name} must be a whole number ${range}, got '${value}'`);
    }
    return n;
  };
}

/** A decimal number of seconds or minutes within bounds (`--interval`, `--idle-minutes`). */
function decimal(name: string, unit: 'seconds' | 'minutes', min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\s*\d+(\.\d+)?\s*$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number of ${unit} from ${min} to ${max}, got '${value}'`);
    return n;
  };
}

// The parser's choices. They repeat the api's enums because this module must not load zod
// (`--version` loads commander alone); a test holds them equal to the api's.
export const PLATFORMS = ['macos', 'windows'];
export const FORMATS = ['vst3', 'au', 'standalone'];
export const RELEASE_TYPES = ['major', 'minor', 'patch', 'dev', 'release'];
export const STATUSES = ['pending', 'queued', 'running', 'success', 'failed', 'cancelled'];
const UUID_EXAMPLE = '123e4567-e89b-12d3-a456-426614174000';

/** --platform, --format and --release-type, shared by `builds create` and `trigger`. */
function buildSpec(c: Command): Command {
  return c
    .addOption(new Option('--platform <platforms...>', 'platforms to build (default: the service\'s, macos and windows)').choices(PLATFORMS))
    .addOption(new Option('--format <formats...>', 'plugin formats (au is built for macos only)').choices(FORMATS))
    .addOption(new Option('--release-type <type>', 'major, minor or patch bump the version; dev and release keep it').choices(RELEASE_TYPES));
}

/**
 * Runs `task` as a step whose result must be recorded (a request that creates something, and its
 * record): an interrupt that would stop the process at once waits for it to end.
 */
export type Hold = <T>(task: () => Promise<T>) => Promise<T>;

/** Runs one invocation: parses `argv` (without node and script), prints, and returns the exit code. */
export async function run(argv: string[], streams: Streams, signal: AbortSignal = new AbortController().signal, hold: Hold = (task) => task()): Promise<ExitCode> {
  let exit: ExitCode = EXIT.ok;
  let ctx: Context | undefined;
  // Global options are known before the command runs, so even a usage error honours --json.
  const early = { json: argv.includes('--json'), color: !argv.includes('--no-color'), debug: argv.includes('--debug') };
  let out: Output | undefined;
  const makeContext = async (cmd: Command): Promise<Context> => {
    const g = cmd.optsWithGlobals() as GlobalOptions;
    const load = await parts();
    const [{ Context }, { Output }] = await Promise.all([load.context(), load.output()]);
    out = new Output(streams, { json: g.json === true, color: g.color !== false, debug: g.debug === true });
    ctx = new Context(out, g, streams.env, signal, hold);
    return ctx;
  };
  const action =
    <A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<ExitCode>) =>
    async (...args: unknown[]): Promise<void> => {
      const cmd = args[args.length - 1] as Command;
      exit = await fn(await makeContext(cmd), ...(args.slice(0, -1) as A));
    };

  let usageMessage = '';
  // A packaged executable is called by the file name its vendor chose (acme-license).
  const name = programName();
  const program = new Command(name)
    .description('License codes, machines and the local agent of plugin-license: for support staff, vendors, offline machines and scripts.')
    .version(versionLine(CLI_VERSION, appArgument(argv), streams.env), '-V, --version')
    .addOption(new Option('--base-url <url>', 'service base URL, ending in /functions/v1 (env PLUGIN_LICENSE_BASE_URL)'))
    .addOption(new Option('--token <token>', 'bearer token (env PLUGIN_LICENSE_TOKEN is safer: flags show in the process list)'))
    .addOption(new Option('--app <namespace>', 'namespace, one per vendor (env PLUGIN_LICENSE_APP)'))
    .addOption(new Option('--home <dir>', 'one root folder for config, data and logs (env PLUGIN_LICENSE_HOME)'))
    .option('--json', 'exactly one JSON document on stdout, success or failure')
    .option('--no-color', 'plain text (also with NO_COLOR, or when stdout is not a terminal)')
    .option('--debug', 'stack traces and request timings on stderr')
    .showSuggestionAfterError(true)
    .showHelpAfterError(false)
    .addHelpText('after', EXIT_HELP)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => streams.stdout.write(s),
      writeErr: (s) => streams.stderr.write(s),
      outputError: (s) => (usageMessage = s.replace(/^error: /, '').trim()),
    });

  program
    .command('status')
    .description('the public status of a code: activations, max, available, revoked')
    .argument('<code>', 'the activation code')
    .addHelpText('after', `\nExample:\n  ${name} status 3F2A9C1E-0B7D-4E55-9A10-77C2D4E8B601\n\n${MACHINES_NOTE}`)
    .action(action(async (ctx, code: string) => (await commands.license()).statusCommand(ctx, code)));

  program
    .command('keys')
    .description("a project's codes (token): hint, type, activations/max, revoked, notes, created")
    .argument('<project_id>', 'the project id (a UUID)')
    .option('--all-codes', 'print full codes instead of hints')
    .option('--csv', 'CSV for spreadsheets')
    .addHelpText('after', `\nExamples:\n  ${name} keys 123e4567-e89b-12d3-a456-426614174000\n  ${name} keys 123e4567-e89b-12d3-a456-426614174000 --csv --all-codes > codes.csv`)
    .action(action(async (ctx, project: string, o: { allCodes?: boolean; csv?: boolean }) => (await commands.vendor()).keysCommand(ctx, project, o)));

  program
    .command('generate')
    .description('new codes (token), printed in full; --count K --out FILE for a batch')
    .argument('<project_id>', 'the project id (a UUID)')
    .option('--max-activations <n>', 'machines per code', wholeNumber('--max-activations', 1), 1)
    .option('--notes <text>', 'a note stored with each code (a reseller, an order number)')
    .option('--count <k>', 'how many codes', wholeNumber('--count', 1), 1)
    .option('--out <file>', 'append each code to this CSV file, flushed before the next request')
    .option('--append', 'add to an existing --out file (never overwritten)')
    .option('--recover <file>', "add to FILE every code its batch created that it lacks (after a kill or a full disk), from the service's list")
    .option('--batch <tag>', 'with --recover: the batch tag printed when the batch started (for a FILE that holds no code yet)')
    .addHelpText(
      'after',
      `\nExamples:\n  ${name} generate 123e4567-e89b-12d3-a456-426614174000 --max-activations 2\n  ${name} generate 123e4567-e89b-12d3-a456-426614174000 --count 500 --notes "reseller A" --out batch.csv\n  ${name} generate 123e4567-e89b-12d3-a456-426614174000 --recover batch.csv\n\nA batch is paced by the rate-limit headers; Ctrl-C or SIGTERM stops after the request in flight,\nand every code the service created is in the file. Each code of a batch written to --out carries\nthe batch's tag in its notes ([batch 1a2b3c4d]), so even a batch that was killed is completed\nfrom the service with --recover.`,
    )
    .action(
      action(async (ctx, project: string, o: { maxActivations: number; notes?: string; count: number; out?: string; append?: boolean; recover?: string; batch?: string }) => {
        const vendor = await commands.vendor();
        if (o.recover !== undefined) {
          if (o.out !== undefined || o.append || o.count !== 1) throw usageError('--recover completes an existing batch file: give it alone (with --batch TAG when the file holds no code yet)');
          return vendor.recoverCommand(ctx, project, { file: o.recover, ...(o.batch === undefined ? {} : { batch: o.batch }) });
        }
        if (o.batch !== undefined) throw usageError('--batch goes with --recover FILE');
        if (o.append && o.out === undefined) throw usageError('--append adds to the --out file: give --out FILE too');
        return vendor.generateCommand(ctx, project, o, signal);
      }),
    );

  program
    .command('activate')
    .description("activate this machine and store its license (through the agent when one runs), or with --machine-id take a slot for another machine, storing nothing here")
    .argument('<code>', 'the activation code')
    .requiredOption('--project <id>', 'the project id (a UUID)')
    .option('--machine-id <id>', "another machine's id: the service is asked for that machine and nothing is stored here")
    .addHelpText('after', `\nExample:\n  ${name} activate 3F2A9C1E-0B7D-4E55-9A10-77C2D4E8B601 --project 123e4567-e89b-12d3-a456-426614174000\n\nGoes through the running agent when one answers (plugins hear of it at once), else the library.`)
    .action(action(async (ctx, code: string, o: { project: string; machineId?: string }) => (await commands.license()).activateCommand(ctx, code, o)));

  program
    .command('validate')
    .description("this machine's stored license online, or any --code with --machine-id")
    .requiredOption('--project <id>', 'the project id (a UUID)')
    .option('--code <code>', 'a code to validate (with --machine-id)')
    .option('--machine-id <id>', 'the machine id to validate it for (with --code)')
    .addHelpText('after', `\nExamples:\n  ${name} validate --project 123e4567-e89b-12d3-a456-426614174000\n  ${name} validate --project 123e4567-e89b-12d3-a456-426614174000 --code 3F2A… --machine-id m1_…`)
    .action(action(async (ctx, o: { project: string; code?: string; machineId?: string }) => (await commands.license()).validateCommand(ctx, o)));

  program
    .command('deactivate')
    .description("release this machine's slot (--project, or --all for every license), or with --code and --machine-id another machine's")
    .option('--project <id>', 'the project id (a UUID)')
    .option('--all', "every license this computer holds in the namespace (what an uninstaller runs)")
    .option('--product-id <id>', "with --all, as a product's uninstaller: while other products of the vendor are installed here, only this product's own plugins")
    .option('--code <code>', "the code whose slot to release (with --machine-id)")
    .option('--machine-id <id>', 'the machine holding the slot, as its doctor report shows (with --code)')
    .addHelpText('after', `\nExamples:\n  ${name} deactivate --project 123e4567-e89b-12d3-a456-426614174000\n  ${name} deactivate --all\n  ${name} deactivate --all --product-id acme-gain   # a product's uninstaller\n  ${name} deactivate --project 123e4567-e89b-12d3-a456-426614174000 --code 3F2A… --machine-id m1_…   # a dead computer's slot\n\n${MACHINES_NOTE}`)
    .action(
      action(async (ctx, o: { project?: string; all?: boolean; code?: string; machineId?: string; productId?: string }) => {
        if (o.all === true) {
          if (o.project !== undefined || o.code !== undefined || o.machineId !== undefined) throw usageError('--all releases every license of this computer: give it alone, or --project ID for one');
          return (await commands.license()).deactivateAllCommand(ctx, o.productId === undefined ? {} : { productId: o.productId });
        }
        if (o.productId !== undefined) throw usageError('--product-id goes with --all (a product\'s uninstaller)');
        if (o.project === undefined) throw usageError("give --project ID (or --all for every license of this computer)");
        return (await commands.license()).deactivateCommand(ctx, { ...o, project: o.project });
      }),
    );

  program
    .command('machine-id')
    .description("this machine's id as the service sees it, and its source (os, generated, caller)")
    .option('--project <id>', 'accepted for symmetry; the id is per namespace')
    .addHelpText('after', `\nExample:\n  ${name} machine-id --json`)
    .action(action(async (ctx) => (await commands.license()).machineIdCommand(ctx)));

  const agent = program
    .command('agent')
    .description('the agent: run it, install it as a service, or ask the running one')
    .addHelpText('after', `\nExamples:\n  ${name} agent status\n  ${name} agent check ${UUID_EXAMPLE}\n  ${name} agent install`);
  // run, install, uninstall, socket-path, status and stop are the agent's own commands
  // (@plugin-license/agent/commands, the same as plugin-license-agent's): their arguments pass
  // through to it, with the global options given here; it parses, helps and answers.
  const AGENT_OWN: Array<[string, string]> = [
    ['run', 'run the agent in the foreground (the per-user service runs this)'],
    ['install', 'register the per-user service that runs this program (--dry-run shows it)'],
    ['uninstall', 'remove the per-user service'],
    ['socket-path', 'print the socket path (or Windows pipe name) in effect'],
    ['status', 'whether an agent answers, and the licenses it holds (exit 0 when one answers, 1 when not)'],
    ['stop', 'stop the running agent of this namespace, however it was started, and wait until it is gone'],
  ];
  for (const [sub, description] of AGENT_OWN) {
    agent
      .command(sub)
      .description(description)
      .helpOption(false)
      .allowUnknownOption(true)
      .allowExcessArguments(true)
      .argument('[arguments...]', `see ${name} agent ${sub} --help`)
      .action(async (_args: string[], _o: unknown, cmd: Command) => {
        const g = cmd.optsWithGlobals() as GlobalOptions;
        const { runAgentCommand } = await import('@plugin-license/agent/commands');
        try {
          exit = (await runAgentCommand([sub, ...cmd.args], {
            name: `${name} agent`,
            prefix: ['agent'],
            flags: { app: g.app, home: g.home, baseUrl: g.baseUrl, token: g.token, json: g.json === true },
            stdout: streams.stdout,
            stderr: streams.stderr,
          })) as ExitCode;
        } catch (err) {
          // The agent's usage errors are this command line's (its AgentError, told by name: this
          // module loads no more than the parser).
          const e = err as { name?: unknown; code?: unknown; message?: unknown };
          if (e.name === 'AgentError' && e.code === 'usage') throw usageError(String(e.message));
          throw err;
        }
      });
  }
  agent
    .command('check')
    .description("the agent's answer for a project, from memory (what a plugin gets); exit 0 valid, 3 not valid, 1 no agent")
    .argument('<project_id>')
    .addHelpText('after', `\nExamples:\n  ${name} agent check 123e4567-e89b-12d3-a456-426614174000\n  ${name} --app acme-audio --json agent check 123e4567-e89b-12d3-a456-426614174000`)
    .action(action(async (ctx, p: string) => (await commands.agent()).agentStateCommand(ctx, 'check', p)));
  agent
    .command('refresh')
    .description('ask the service now, through the agent (plugins hear the answer at once)')
    .argument('<project_id>')
    .addHelpText('after', `\nExample:\n  ${name} agent refresh 123e4567-e89b-12d3-a456-426614174000`)
    .action(action(async (ctx, p: string) => (await commands.agent()).agentStateCommand(ctx, 'refresh', p)));
  agent
    .command('list')
    .description('every license the agent holds')
    .addHelpText('after', `\nExample:\n  ${name} --app acme-audio agent list --json`)
    .action(action(async (ctx) => (await commands.agent()).agentListCommand(ctx)));

  const builds = program
    .command('builds')
    .description('builds of your projects (token): list, get, create, cancel, artifacts, download, watch')
    .addHelpText('after', `\nExamples:\n  ${name} builds list --project ${UUID_EXAMPLE}\n  ${name} builds watch <build_id>\n  ${name} builds download <build_id> --out dist/`);
  builds
    .command('list')
    .description('builds, newest first')
    .option('--project <id>', 'only this project (default: every project of the account)')
    .addOption(new Option('--status <status>', 'only builds in this status').choices(STATUSES))
    .option('--limit <n>', 'builds per page (default 20)', wholeNumber('--limit', 1, 100))
    .option('--offset <n>', 'skip this many', wholeNumber('--offset', 0))
    .addHelpText('after', `\nExample:\n  ${name} builds list --project ${UUID_EXAMPLE} --status failed`)
    .action(action(async (ctx, o: { project?: string; status?: string; limit?: number; offset?: number }) => (await commands.builds()).listCommand(ctx, o)));
  builds
    .command('get')
    .description('one build: status, current step, version, times, run link')
    .argument('<build_id>', 'the build id (a UUID)')
    .addHelpText('after', `\nExample:\n  ${name} builds get <build_id> --json`)
    .action(action(async (ctx, id: string) => (await commands.builds()).getCommand(ctx, id)));
  buildSpec(
    builds
      .command('create')
      .description('start a build of a project; prints its id')
      .argument('<project_id>', 'the project id (a UUID)'),
  )
    .option('--flag <names...>', 'build flags to turn on: enableActivationKeys, enableCreatorMode, enableDebugMode')
    .option('--clean', 'build without cache')
    .addHelpText('after', `\nExamples:\n  ${name} builds create ${UUID_EXAMPLE}\n  ${name} builds create ${UUID_EXAMPLE} --platform macos --format au vst3 --release-type patch --flag enableActivationKeys`)
    .action(action(async (ctx, project: string, o: Record<string, unknown>) => (await commands.builds()).createCommand(ctx, project, o)));
  builds
    .command('cancel')
    .description('cancel a build that has not finished')
    .argument('<build_id>', 'the build id (a UUID)')
    .addHelpText('after', `\nExample:\n  ${name} builds cancel <build_id>`)
    .action(action(async (ctx, id: string) => (await commands.builds()).cancelCommand(ctx, id)));
  builds
    .command('artifacts')
    .description("a finished build's files: platform, format, size, signed, downloads")
    .argument('<build_id>', 'the build id (a UUID)')
    .addHelpText('after', `\nExample:\n  ${name} builds artifacts <build_id>`)
    .action(action(async (ctx, id: string) => (await commands.builds()).artifactsCommand(ctx, id)));
  builds
    .command('download')
    .description('download artifacts, checking each SHA-256; a mismatch deletes the file and exits 1')
    .argument('<build_id>', 'the build id (a UUID)')
    .argument('[artifact_id]', 'one artifact (default: every artifact, or those --platform and --format select)')
    .option('--out <path>', 'a folder (created if missing), or a file name for one artifact (default: the current folder)')
    .addOption(new Option('--platform <platform>', 'only artifacts of this platform').choices(PLATFORMS))
    .addOption(new Option('--format <format>', 'only artifacts of this format').choices(FORMATS))
    .addHelpText('after', `\nExamples:\n  ${name} builds download <build_id> --out dist/\n  ${name} builds download <build_id> --platform windows --format vst3\n\nExisting files are never overwritten; a file arrives whole (NAME.part until its checksum matched).`)
    .action(action(async (ctx, id: string, artifact: string | undefined, o: { out?: string; platform?: string; format?: string }) => (await commands.builds()).downloadCommand(ctx, id, artifact, o, signal)));
  builds
    .command('watch')
    .description('follow a build until it finishes: exit 0 on success, 3 on failed or cancelled')
    .argument('<build_id>', 'the build id (a UUID)')
    .option('--interval <seconds>', 'time between looks (default 6: the builds endpoints allow 10 requests a minute)', decimal('--interval', 'seconds', 0.1, 3600), 6)
    .addHelpText('after', `\nExample:\n  ${name} builds watch <build_id> && ${name} builds download <build_id>`)
    .action(action(async (ctx, id: string, o: { interval: number }) => (await commands.builds()).watchCommand(ctx, id, o, signal)));

  buildSpec(
    program
      .command('trigger')
      .description("start a build as external CI does, with the project's webhook secret (env PLUGIN_LICENSE_WEBHOOK_SECRET)")
      .argument('<project_id>', 'the project id (a UUID)'),
  )
    .option('--ref <ref>', 'git reference, e.g. refs/heads/main or refs/tags/v1.2.0 (a tag vX.Y.Z sets the version)')
    .option('--commit <sha>', 'the commit SHA')
    .option('--send-secret', 'send the secret as X-Webhook-Secret instead of signing the body with it (X-Signature)')
    .addHelpText('after', `\nExample:\n  PLUGIN_LICENSE_WEBHOOK_SECRET=... ${name} trigger ${UUID_EXAMPLE} --ref refs/tags/v1.2.0 --commit $GITHUB_SHA\n\nNeeds no token. By default the secret only signs the request and never travels.`)
    .action(action(async (ctx, project: string, o: Record<string, unknown>) => (await commands.builds()).triggerCommand(ctx, project, o)));

  program
    .command('usage')
    .description('the build quota of the period (token)')
    .addHelpText('after', `\nExample:\n  ${name} usage --json`)
    .action(action(async (ctx) => (await commands.vendor()).usageCommand(ctx)));

  program
    .command('doctor')
    .description('one report for a support ticket: configuration, service, token, clock, machine id, data, licenses, agent')
    .option('--project <id>', 'the project to look at closely')
    .addHelpText('after', `\nExample:\n  ${name} doctor --project 123e4567-e89b-12d3-a456-426614174000 > report.txt\n\nEvery secret is masked. Exit 0 when nothing failed, 1 otherwise.`)
    .action(action(async (ctx, o: { project?: string }) => (await commands.doctor()).doctorCommand(ctx, o)));

  const config = program
    .command('config')
    .description("this namespace's config.json: where it is, and one setting at a time (installers use it too)")
    .addHelpText('after', `\nExamples:\n  ${name} config path\n  ${name} config set base_url https://licenses.example.com/functions/v1\n  ${name} config unset proxy`);
  config
    .command('path')
    .description('print the path of config.json in effect (it may not exist yet), or of one of the namespace\'s folders')
    .addOption(new Option('--folder <name>', 'a folder instead: config, data, cache or log').choices(['config', 'data', 'cache', 'log']))
    .addHelpText('after', `\nExamples:\n  ${name} config path\n  ${name} config path --folder data\n  ${name} --json config path`)
    .action(action(async (ctx, o: { folder?: string }) => (await commands.config()).pathCommand(ctx, o)));
  config
    .command('set')
    .description('write one setting into config.json, checked as every tool will read it: base_url, proxy, socket, token, log_level, offline_max_days')
    .argument('<key>', 'the setting')
    .argument('<value>', 'its value')
    .addHelpText('after', `\nExample:\n  ${name} config set base_url https://licenses.example.com/functions/v1\n\nThe file is replaced whole (mode 0600) or not at all; other keys are kept.`)
    .action(action(async (ctx, key: string, value: string) => (await commands.config()).setCommand(ctx, key, value)));
  config
    .command('unset')
    .description('remove one setting from config.json')
    .argument('<key>', 'the setting')
    .addHelpText('after', `\nExample:\n  ${name} config unset proxy`)
    .action(action(async (ctx, key: string) => (await commands.config()).setCommand(ctx, key, undefined)));

  const manager = program
    .command('manager')
    .description("the license manager: a page in the web browser where this computer's licenses are seen, activated, moved and checked (online or offline)")
    .option('--port <n>', 'the port on 127.0.0.1 (default 0: any free port)', wholeNumber('--port', 0, 65535), 0)
    .option('--no-open', 'do not open the browser; only print the url')
    .option('--idle-minutes <m>', 'stop after this many minutes with no page open (default 15)', decimal('--idle-minutes', 'minutes', 0.01, 1440), 15)
    .option('--project <id[=name]>', "a plugin to offer for activation (repeat for several), with its name as the page shows it", (v: string, all: string[]) => [...all, v], [] as string[])
    .addHelpText(
      'after',
      `\nExamples:\n  ${name} manager\n  ${name} manager --project "${UUID_EXAMPLE}=Acme Reverb"\n  ${name} manager --no-open --port 0   # for an app that shows the page itself\n\nPrints one line, {"url": ..., "pid": ...}, then serves the page on 127.0.0.1 until no page has been\nopen for --idle-minutes, or Ctrl-C. The url holds a one-time key (after #): give it to one page only.\nThe agent must be running; the page says how to start it when it is not.`,
    )
    .action(action(async (ctx, o: { port: number; open: boolean; idleMinutes: number; project: string[] }) => (await commands.manager()).managerCommand(ctx, o)));
  manager
    .command('stop')
    .description("stop every license manager of this namespace this user runs (what an uninstaller runs before the program goes)")
    .addHelpText('after', `\nExample:\n  ${name} manager stop\n\nEach running manager is asked on its own port, with the secret it left in its registration\nfile (only its user can read it), and waited for; none is found by its process id alone.`)
    .action(action(async (ctx) => (await commands.manager()).managerStopCommand(ctx)));

  const plugins = program
    .command('plugins')
    .description("the vendor's plugins in this user's plug-in folders: what each product's installer calls to place, upgrade and remove its own")
    .addHelpText(
      'after',
      `\nExamples:\n  ${name} plugins install --product-id acme-gain --product "Acme Gain" --from staged-plugins\n  ${name} plugins list\n  ${name} plugins uninstall --product-id acme-gain\n  ${name} plugins products\n\nEach product of a vendor owns only its own plugins; the program, shared by all of them, stays\nwhile one is installed. Exit codes: 0 done; 1 a step failed (what was done is said, and the rest\nis as it was); 2 bad input.`,
    );
  const folderOption = (c: Command): Command => c.option('--folder <dir>', "the program's folder, where the records of installed plugins are and a Standalone goes (default: the executable's; needed when run by node)");
  const logOption = (c: Command): Command => c.option('--log <file>', 'also write the lines it prints to FILE, replacing it (an installer run silently keeps them there)');
  const productIdOption = (c: Command, what: string): Command => c.option('--product-id <id>', what);
  logOption(folderOption(productIdOption(
    plugins
      .command('install')
      .description("place a product's plugins from a staged folder (vst3/, clap/, au/, standalone/) in their per-user folders, each replaced whole; remove those its earlier install put there that this one no longer ships; record the product as installed")
      .option('--from <dir>', 'the staged plugin folder (none: the product has no plugins, and is recorded as installed)')
      .option('--product <name>', "the product's name, as its installer shows it (default: the id)")
      .option('--project <id=name>', "a plugin name the product brings (repeatable; default: this executable's own)", (v: string, all: string[]) => [...all, v], [] as string[]),
    "the product these plugins belong to (pnpm package's --product-id), e.g. acme-gain",
  )))
    .addHelpText(
      'after',
      `\nExamples:\n  ${name} plugins install --product-id acme-gain --product "Acme Gain" --from "/tmp/Acme Audio/plugins"\n  ${name} plugins install --product-id acme-gain --from plugins --folder "$HOME/.local/share/acme" --json\n\nPrints where each plugin went, then which music software may need a rescan. A same-named plugin\nthis installer did not put there is kept under NAME.kept-TIME (music software does not load it);\none another product of the vendor installed is the vendor's, replaced and then listed by both.`,
    )
    .action(action(async (ctx, o: { from?: string; productId?: string; product?: string; project?: string[]; folder?: string; log?: string }) => (await commands.plugins()).installCommand(ctx, o)));
  logOption(folderOption(productIdOption(plugins.command('uninstall').description("remove exactly what a product's record lists, where it is still exactly what was installed and no other product has it; then the record"), "the product to remove (none: the plugins an earlier release's installer recorded)")))
    .addHelpText('after', `\nExample:\n  ${name} plugins uninstall --product-id acme-gain --json\n\nA same-named plugin it did not put there, one changed since, or one another product also\ninstalled, is left in place and said. The last line names the products still installed.`)
    .action(action(async (ctx, o: { productId?: string; folder?: string; log?: string }) => (await commands.plugins()).uninstallCommand(ctx, o)));
  folderOption(plugins.command('list').description("every product's recorded plugins, and whether each is still in place (reads only)"))
    .addHelpText('after', `\nExample:\n  ${name} plugins list --json`)
    .action(action(async (ctx, o: { folder?: string }) => (await commands.plugins()).listCommand(ctx, o)));
  folderOption(plugins.command('products').description("the vendor's products installed here, one a line; nothing when none is (reads only)"))
    .addHelpText('after', `\nExample:\n  ${name} plugins products --json\n\nAn uninstaller removes the program, its agent and its settings only once this prints nothing.`)
    .action(action(async (ctx, o: { folder?: string }) => (await commands.plugins()).productsCommand(ctx, o)));

  const offline = program
    .command('offline')
    .description('activation of a machine that never goes online: request, activate, import, renew, deactivate, confirm, keygen')
    .addHelpText(
      'after',
      `
The exchange (files, or one line of text each with --text):
  offline machine:  ${name} offline request --project ID --code CODE --out request.json
  online computer:  ${name} offline activate request.json --out response.json
  offline machine:  ${name} offline import response.json
Renew: offline renew (then activate and import again). Release: offline deactivate, then offline confirm online.`,
    );
  const where = (c: Command): Command => c.option('--out <file>', 'write a new file (never overwritten)').option('--text', 'print one line of text instead, to copy and paste');
  where(
    offline
      .command('request')
      .description('on the offline machine: a request for an online computer to answer (its nonce is remembered)')
      .requiredOption('--project <id>', 'the project id (a UUID)')
      .option('--code <code>', 'the activation code (or give it at the online step)')
      .option('--renew', 'extend the license this machine holds; no slot is taken'),
  )
    .addHelpText('after', `\nExamples:\n  ${name} offline request --project 123e4567-e89b-12d3-a456-426614174000 --code 3F2A9C1E-0B7D-4E55-9A10-77C2D4E8B601 --out request.json\n  ${name} offline request --project 123e4567-e89b-12d3-a456-426614174000 --code 3F2A… --text`)
    .action(action(async (ctx, o: { project: string; code?: string; renew?: boolean; out?: string; text?: boolean }) => (await commands.offline()).requestCommand(ctx, o)));
  where(offline.command('renew').description('on the offline machine: a renewal request (offline request --renew)').requiredOption('--project <id>', 'the project id (a UUID)'))
    .addHelpText('after', `\nExample:\n  ${name} offline renew --project 123e4567-e89b-12d3-a456-426614174000 --out renew.json`)
    .action(action(async (ctx, o: { project: string; out?: string; text?: boolean }) => (await commands.offline()).requestCommand(ctx, { ...o, renew: true })));
  where(
    offline
      .command('activate')
      .description('on a computer that is online: answer a request (activate, or validate for a renewal) and write the response')
      .argument('<request>', 'the request: a file, the line itself, or - for standard input')
      .option('--code <code>', 'the activation code, when the request has none')
      .option('--valid-days <n>', "days the offline machine stays licensed (default 90; at most its offline_max_days, 365 unless configured)", wholeNumber('--valid-days', 1, 3650))
      .option('--sign-key <keyfile>', 'sign the response with this Ed25519 private key (offline keygen)'),
  )
    .addHelpText('after', `\nExamples:\n  ${name} offline activate request.json --out response.json\n  ${name} offline activate request.json --valid-days 365 --sign-key vendor-offline.key --out response.json\n\nNeeds no token. Answering the same request again takes no second slot.`)
    .action(action(async (ctx, input: string, o: { code?: string; validDays?: number; signKey?: string; out?: string; text?: boolean }) => (await commands.offline()).answerCommand(ctx, input, o)));
  offline
    .command('import')
    .description('on the offline machine: check a response and store it as this machine\'s license (valid until its date)')
    .argument('<response>', 'the response: a file, the line itself, or - for standard input')
    .option('--project <id>', 'the project the response must be for')
    .addHelpText('after', `\nExample:\n  ${name} offline import response.json\n\nA running agent sees the license within a second.`)
    .action(action(async (ctx, input: string, o: { project?: string }) => (await commands.offline()).importCommand(ctx, input, o)));
  where(offline.command('deactivate').description('on the offline machine: forget the license and write a release proof').requiredOption('--project <id>', 'the project id (a UUID)'))
    .addHelpText('after', `\nExample:\n  ${name} offline deactivate --project 123e4567-e89b-12d3-a456-426614174000 --out release.json\n\nAsked again, it gives the same proof (a lost file can be made again).`)
    .action(action(async (ctx, o: { project: string; out?: string; text?: boolean }) => (await commands.offline()).releaseCommand(ctx, o)));
  offline
    .command('confirm')
    .description('on a computer that is online: free the slot a release proof names')
    .argument('<proof>', 'the release proof: a file, the line itself, or - for standard input')
    .addHelpText('after', `\nExample:\n  ${name} offline confirm release.json\n\nConfirmed again, it says already released (exit 0).`)
    .action(action(async (ctx, input: string) => (await commands.offline()).confirmCommand(ctx, input)));
  /** `offline keygen` and `relay keygen`: one key pair, told what it is for. */
  const keygen = (parent: Command, use: 'offline' | 'relay', description: string, file: string): void => {
    parent
      .command('keygen')
      .description(description)
      .requiredOption('--out <file>', 'the private key file to create (mode 0600)')
      .addHelpText('after', `\nExample:\n  ${name} ${use} keygen --out ${file}`)
      .action(action(async (ctx, o: { out: string }) => (await commands.offline()).keygenCommand(ctx, o, use)));
  };
  keygen(offline, 'offline', "the vendor's Ed25519 key pair for signed responses: writes the private key, prints the public key", 'vendor-offline.key');

  const relay = program
    .command('relay')
    .description("the vendor's license relay: signs a ticket whenever the service says a code is valid for a machine (RELAY_* in the environment)")
    .addHelpText('after', `\nExamples:\n  ${name} relay keygen --out relay-signing.key\n  RELAY_SIGNING_KEY="$(cat relay-signing.key)" RELAY_SERVICE_URL=https://service.example/functions/v1 \\\n    RELAY_SERVICE_TOKEN=… RELAY_APP=acme-audio RELAY_PROJECTS=${UUID_EXAMPLE} ${name} relay serve --port 8788`);
  relay
    .command('serve')
    .description('serve the relay on Node: prints {"base_url", "keys"} once it listens, one line per request on stderr; SIGTERM stops it after the requests in flight')
    .option('--host <address>', 'the address to listen on', '127.0.0.1')
    .option('--port <n>', 'the port (0: any free port)', wholeNumber('--port', 0, 65535), 0)
    .addHelpText('after', `\nEnvironment: RELAY_SIGNING_KEY (PKCS#8 PEM or base64url seeds, comma-separated; the first signs), RELAY_SERVICE_URL,\nRELAY_SERVICE_TOKEN, RELAY_APP, RELAY_PROJECTS (comma-separated), RELAY_TICKET_DAYS (default 30, at most 30),\nRELAY_VALIDATE_CACHE_S (default 300). A missing or malformed one: exit 2, and nothing is served.`)
    .action(action(async (ctx, o: { host: string; port: number }) => (await commands.relay()).relayServeCommand(ctx, o)));
  keygen(relay, 'relay', "the relay's Ed25519 key pair (the same as offline keygen): writes the private key, prints the public key and its id", 'relay-signing.key');

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exit;
  } catch (err) {
    if (err instanceof CommanderError && (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version')) return EXIT.ok;
    const output = out ?? new (await (await parts()).output()).Output(streams, early);
    if (err instanceof CommanderError) {
      const message = (usageMessage || err.message.replace(/^error: /, '')).replace(/\s*\n\s*/g, ' ').trim();
      output.failure({ exit: EXIT.usage, code: 'usage', message: /--help|suggest|Did you mean/.test(message) ? message : `${message} (see ${name} --help)` });
      return EXIT.usage;
    }
    const f = (await (await parts()).errors()).classify(err);
    output.failure(f, err instanceof Error ? err.stack : undefined);
    // A reader that closed the pipe early (`| head -1`) had what it wanted: not a failure.
    if (f.code === 'output_failed' && f.details?.system_code === 'EPIPE') return exit;
    return f.exit;
  } finally {
    await ctx?.close();
  }
}
