// pnpm build:plugin: configures and builds the example plugin (Release) with CMake and the JUCE
// module plugin_license, and leaves the VST3 bundle and the Standalone under dist/plugin/.
//
//   pnpm build:plugin [--tests | --host-only] [--project-id UUID] [--app NAME] [--ticket-key KEY]... [--juce DIR] [--build-dir DIR] [--if-available] [--quiet]
//
// The root script runs it with --with-packages: the TypeScript packages are built first (pnpm
// build), after the arguments were read, so --help answers at once. pnpm check builds them itself.
// --tests also builds the test apps (the console VST3 host, the activation panel's driver);
// --host-only builds the console VST3 host alone (to check the audio of one's own plugin);
// --quiet shows the tools' output only when they fail; --if-available skips the build, saying why, where CMake, a compiler or JUCE is missing (pnpm
// check uses it; PLUGIN_LICENSE_REQUIRE_JUCE=1 makes a missing one an error).
// --project-id and --app set what is compiled in (PLUGIN_LICENSE_PROJECT_ID and
// PLUGIN_LICENSE_APP override them at run time). --ticket-key (repeatable) compiles in the vendor's
// public keys (Settings::ticketKeys: then only a ticket the vendor signed makes it play); nothing
// overrides them at run time, and a build without it compiles in none. --juce names a JUCE source tree instead of an
// installed JUCE. Uses ccache when it is on PATH.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// @plugin-license/licensing is loaded when the arguments are checked, after the packages are built.

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
export const PRODUCT = 'plugin-license example';

export const USAGE = `Usage: pnpm build:plugin [--tests | --host-only] [--project-id UUID] [--app NAME] [--ticket-key KEY]... [--juce DIR] [--build-dir DIR] [--if-available] [--quiet]

Builds the example plugin (Release): dist/plugin/${PRODUCT}.vst3 and the Standalone
dist/plugin/${PRODUCT}. Needs CMake 3.22+, a C++17 compiler and JUCE 7.0.5 or later
(Debian/Ubuntu: apt-get install cmake g++ juce-modules-source juce-tools; or --juce DIR).

  --tests          also the test apps: the console VST3 host and the activation panel's driver
  --host-only      only the console VST3 host, to check the audio of your own plugin:
                   plugin-license-test-host "path/to/Your Plugin.vst3" [INSTANCES] [SECONDS]
                   (its path is printed at the end; --help on it says what it prints)
  --project-id ID  the project id compiled into the example plugin
  --app NAME       the namespace (vendor) compiled into the example plugin
  --ticket-key KEY a public key of the vendor's (as plugin-license offline keygen prints it),
                   compiled in; repeatable. The plugin then plays only on a ticket signed by one
                   of them (the license relay's). Without it: none, the ticket's own rules
  --juce DIR       a JUCE source tree instead of an installed JUCE
  --build-dir DIR  the CMake build folder (default dist/plugin/build, kept between builds)
  --if-available   skip, saying why, when CMake, a compiler or JUCE is missing
  --quiet          show the tools' output only when they fail
  -h, --help       show this help`;

class BuildError extends Error {}

/** Where things go; the build folder persists, so a second build only compiles what changed. */
export function paths(buildDir) {
  const out = join(root, 'dist', 'plugin');
  const build = buildDir ? resolve(buildDir) : join(out, 'build');
  const artefacts = join(build, 'PluginLicenseExample_artefacts', 'Release');
  return {
    out,
    build,
    vst3: join(out, `${PRODUCT}.vst3`),
    standalone: join(out, process.platform === 'win32' ? `${PRODUCT}.exe` : PRODUCT),
    builtVst3: join(artefacts, 'VST3', `${PRODUCT}.vst3`),
    builtStandalone: join(artefacts, 'Standalone', process.platform === 'win32' ? `${PRODUCT}.exe` : PRODUCT),
    testHost: join(build, 'plugin-license-test-host_artefacts', 'Release', process.platform === 'win32' ? 'plugin-license-test-host.exe' : 'plugin-license-test-host'),
    uiDriver: join(build, 'plugin-license-ui-driver_artefacts', 'Release', 'plugin-license-ui-driver'),
  };
}

function has(tool) {
  return spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** An installed JUCE's CMake package (JUCEConfig.cmake), as find_package looks for it. */
function installedJuce() {
  const prefixes = ['/usr/lib', '/usr/local/lib', '/usr/lib64', ...(process.env.CMAKE_PREFIX_PATH ?? '').split(':').filter(Boolean).map((p) => join(p, 'lib'))];
  if (process.env.JUCE_DIR && existsSync(join(process.env.JUCE_DIR, 'JUCEConfig.cmake'))) return process.env.JUCE_DIR;
  for (const prefix of prefixes) {
    for (const dir of [join(prefix, 'cmake'), ...listDirs(prefix).map((d) => join(prefix, d, 'cmake'))]) {
      const found = listDirs(dir).find((d) => d.startsWith('JUCE-') && existsSync(join(dir, d, 'JUCEConfig.cmake')));
      if (found) return join(dir, found);
    }
  }
  return undefined;
}

function listDirs(dir) {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

/** What building needs and lacks here, in words; empty when it can build (JUCE given, or installed). */
export function missingForBuild(juceDir = undefined) {
  const missing = [];
  if (!has('cmake')) missing.push('cmake');
  if (!has('c++')) missing.push('a C++ compiler (g++)');
  if (juceDir === undefined && installedJuce() === undefined) missing.push('JUCE (juce-modules-source, juce-tools)');
  return missing;
}

/**
 * The tools' environment: ccache (when used) sees paths inside the checkout as relative to it
 * (CCACHE_BASEDIR), so a second clone or worktree, a CI run's fresh clone among them, hits the
 * cache the first one filled instead of compiling JUCE again; a value the caller set wins.
 */
function toolEnvironment() {
  return { CCACHE_BASEDIR: root, ...process.env };
}

/** Runs a tool: its output streams (unless quiet) and its end is kept, for the message if it fails. */
function run(tool, args, { quiet, cwd }) {
  return new Promise((done, fail) => {
    const child = spawn(tool, args, { stdio: ['ignore', 'pipe', 'pipe'], env: toolEnvironment(), ...(cwd ? { cwd } : {}) });
    let kept = '';
    const keep = (stream) => (d) => {
      kept = (kept + d).slice(-20_000);
      if (!quiet) stream.write(d);
    };
    child.stdout.on('data', keep(process.stdout));
    child.stderr.on('data', keep(process.stderr));
    child.once('error', (e) => fail(new BuildError(`cannot run ${tool}: ${e.message}`)));
    child.once('close', (code) => (code === 0 ? done(kept) : fail(Object.assign(new BuildError(`${tool} failed (exit ${code})`), { output: kept }))));
  });
}

/**
 * Configures and builds; resolves to the paths. `quiet` keeps the tools' output unless they fail
 * (tests); otherwise it streams.
 */
export async function buildPlugin(options = {}) {
  const p = paths(options.buildDir);
  const missing = missingForBuild(options.juce);
  if (missing.length > 0) throw new BuildError(`${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed: install ${missing.length === 1 ? 'it' : 'them'} (Debian/Ubuntu: apt-get install cmake g++ juce-modules-source juce-tools), or pass --juce /path/to/JUCE`);
  const { assertProjectId, resolveNamespace, parseTicketKeys } = await import('@plugin-license/licensing');
  if (options.projectId !== undefined) assertProjectId(options.projectId);
  if (options.app !== undefined) resolveNamespace(options.app, {});
  // Canonical texts, checked as every tool checks them; always passed, so a build without keys
  // never keeps those of an earlier build in CMake's cache.
  const ticketKeys = parseTicketKeys(options.ticketKeys ?? [], '--ticket-key').map((k) => `ed25519:${k.text}`);
  mkdirSync(p.build, { recursive: true });
  const launcher = has('ccache') ? ['-DCMAKE_C_COMPILER_LAUNCHER=ccache', '-DCMAKE_CXX_COMPILER_LAUNCHER=ccache'] : [];
  const configure = [
    '-S', here, '-B', p.build, '-DCMAKE_BUILD_TYPE=Release', ...launcher,
    `-DPLUGIN_LICENSE_TESTS=${options.tests || options.hostOnly ? 'ON' : 'OFF'}`,
    ...(options.projectId ? [`-DPLUGIN_LICENSE_PROJECT_ID=${options.projectId.toLowerCase()}`] : []),
    ...(options.app ? [`-DPLUGIN_LICENSE_APP=${options.app}`] : []),
    `-DPLUGIN_LICENSE_TICKET_KEYS=${ticketKeys.join(',')}`,
    ...(options.juce ? [`-DJUCE_SOURCE_DIR=${resolve(options.juce)}`] : []),
  ];
  try {
    await run('cmake', configure, { quiet: options.quiet });
  } catch (e) {
    const output = e.output ?? '';
    if (/JUCEConfig\.cmake|package configuration file provided by "JUCE"/.test(output)) {
      throw new BuildError('JUCE is not installed: install it (Debian/Ubuntu: apt-get install juce-modules-source juce-tools) or pass --juce /path/to/JUCE');
    }
    throw new BuildError(`CMake could not configure the plugin${options.quiet ? `:\n${output}` : ' (its messages are above)'}`);
  }
  const jobs = String(Math.max(1, availableParallelism()));
  // The host alone is its own target: it needs JUCE's hosting modules, not the example plugin.
  const target = options.hostOnly ? ['--target', 'plugin-license-test-host'] : [];
  await run('cmake', ['--build', p.build, '--config', 'Release', '--parallel', jobs, ...target], { quiet: options.quiet }).catch((e) => {
    throw new BuildError(`the ${options.hostOnly ? 'console host' : 'plugin'} did not build${options.quiet ? `:\n${e.output ?? ''}` : ' (the compiler\'s messages are above)'}`);
  });
  if (options.hostOnly) return p;
  // A test's build of its own (another key compiled in) stays in its build folder: dist/plugin is the default build's.
  if (options.keepInBuildDir) return { ...p, vst3: p.builtVst3, standalone: p.builtStandalone };
  rmSync(p.vst3, { recursive: true, force: true });
  cpSync(p.builtVst3, p.vst3, { recursive: true, verbatimSymlinks: true });
  if (existsSync(p.builtStandalone)) cpSync(p.builtStandalone, p.standalone);
  return p;
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        tests: { type: 'boolean' },
        'host-only': { type: 'boolean' },
        'with-packages': { type: 'boolean' },
        'project-id': { type: 'string' },
        app: { type: 'string' },
        'ticket-key': { type: 'string', multiple: true },
        juce: { type: 'string' },
        'build-dir': { type: 'string' },
        'if-available': { type: 'boolean' },
        quiet: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    process.stderr.write(`pnpm build:plugin: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.tests && values['host-only']) {
    process.stderr.write('pnpm build:plugin: --tests already builds the console host with the plugin; give --host-only alone for the host without the plugin\n');
    return 2;
  }
  if (values['with-packages']) {
    // What the root script adds: the TypeScript packages (this script's argument checks, the CLI
    // and the agent the plugin starts) are built first.
    try {
      await run('pnpm', ['build'], { quiet: values.quiet, cwd: root });
    } catch (e) {
      process.stderr.write(`pnpm build:plugin: pnpm build failed${values.quiet ? `:\n${e.output ?? ''}` : ' (its messages are above)'}\n`);
      return 1;
    }
  }
  const { assertProjectId, resolveNamespace, parseTicketKeys } = await import('@plugin-license/licensing');
  // The same rules as every tool's: the project id a UUID, the namespace a folder name, a key one
  // a signature can be trusted under.
  for (const [flag, check] of [
    ['--project-id', () => values['project-id'] !== undefined && assertProjectId(values['project-id'])],
    ['--app', () => values.app !== undefined && resolveNamespace(values.app, {})],
    ['--ticket-key', () => parseTicketKeys(values['ticket-key'] ?? [], '--ticket-key')],
  ]) {
    try {
      check();
    } catch (e) {
      process.stderr.write(`pnpm build:plugin: ${flag}: ${e.message}\n`);
      return 2;
    }
  }
  const missing = missingForBuild(values.juce);
  if (values['if-available'] && missing.length > 0 && process.env.PLUGIN_LICENSE_REQUIRE_JUCE !== '1') {
    process.stderr.write(`pnpm build:plugin: skipped, ${missing.join(', ')} missing (Debian/Ubuntu: apt-get install cmake g++ juce-modules-source juce-tools)\n`);
    return 0;
  }
  try {
    const hostOnly = values['host-only'] === true;
    const p = await buildPlugin({ tests: values.tests, hostOnly, projectId: values['project-id'], app: values.app, ticketKeys: values['ticket-key'], juce: values.juce, buildDir: values['build-dir'], quiet: values.quiet });
    const shown = (f) => relative(process.cwd(), f) || f;
    if (!hostOnly) process.stderr.write(`pnpm build:plugin: wrote ${shown(p.vst3)} and ${shown(p.standalone)}\n`);
    if (hostOnly || values.tests) {
      process.stderr.write(`pnpm build:plugin: the console VST3 host is ${shown(p.testHost)}; check a plugin's audio with:\n  ${JSON.stringify(shown(p.testHost))} "path/to/Your Plugin.vst3" 1 5\n`);
    }
    return 0;
  } catch (e) {
    if (!(e instanceof BuildError)) throw e;
    process.stderr.write(`pnpm build:plugin: ${e.message}\n`);
    return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main();
