// pnpm package: one standalone executable per target, the installers, and the release folder.
// Contract: docs/shipping.md; what a vendor runs and why: packaging/README.md.
import { run, stopTools } from './run.mjs';
import { createHash } from 'node:crypto';
import { accessSync, chmodSync, constants, copyFileSync, createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build as esbuild } from 'esbuild';
import { unsign } from 'macho-unsign';
import { inject } from 'postject';
import { assertProjectId, checkAppGroup, EXECUTABLE_INFO_ASSET, normalizeBaseUrl, parseTicketKeys, productIdOf, productIdProblem, programFile, projectNameError, relayKeysProblem, reservedNameConflict } from '@plugin-license/licensing';
import { PackageError } from './errors.mjs';
import { FORMATS, inspectPlugins } from './plugins.mjs';
import { ROOT } from './root.mjs';
import { NODE_VERSION, TARGETS, nodeBinary } from './node-binaries.mjs';
import { brandWindowsExecutable, signWindowsFile } from './windows.mjs';
import { ignoreReplModuleVariable } from './node-startup.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLI_BUILD = join(ROOT, 'packages', 'cli', 'dist', 'bin');
/** The CLI's build: the parser, the commands, the agent's own commands, undici. */
const FILES = ['cli.cjs', 'commands.cjs', 'agent.cjs', 'relay.cjs', 'undici.cjs'];
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The folder being built, removed if the run is interrupted (`abandonRelease`). */
let inProgress;

/** Removes the folder a run was building: for a signal, which ends the process without a catch. */
export function abandonRelease() {
  // All of it synchronously, in the signal handler: the tools first, until they are dead (one
  // still running would write into the folder again), and no turn for the build's own code
  // (which would go on creating folders) before the process exits.
  stopTools();
  if (inProgress === undefined) return;
  // Never throw: the handler's exit code must stay 130.
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(inProgress, { recursive: true, force: true });
      return;
    } catch (err) {
      if (attempt >= 20) {
        process.stderr.write(`pnpm package: could not remove ${inProgress} (${err.code ?? err.message}); remove it by hand\n`);
        return;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
}

export const USAGE = `Usage: pnpm package [options]

Builds one standalone executable per target (a Node ${NODE_VERSION} single executable
application: the plugin-license CLI, whose "agent run" is the agent), the installers, and
dist/release/ with SHA256SUMS and manifest.json.

Options:
  --app NAME          namespace baked in as the default (one per vendor), e.g. acme-audio
  --base-url URL      service base URL baked in as the default (ends in /functions/v1)
  --relay URL         the vendor's license relay baked in as the default (relay_url; ends in
                      /functions/v1): activation, validation and release go there, and its
                      answers carry tickets the vendor signed (docs/signed-ticket.md)
  --ticket-key KEY    a public key the signed tickets must verify with (repeatable, for key
                      rotation), as plugin-license relay keygen prints it; needs --relay, or
                      --offline-signed when the vendor signs only offline responses
  --offline-signed    the vendor answers offline requests with offline activate --sign-key:
                      --ticket-key without --relay is then allowed
  --app-group GROUP   macOS: the vendor's app group, e.g. ABCDE12345.com.acme.audio; the agent's
                      socket then lives in its Group Container, where sandboxed plugins connect
  --agent-at-login    the installers register the agent to run from login (a systemd --user
                      unit, a LaunchAgent, a logon task); by default they register none, and
                      plugins and the program start the agent when they need it
  --name FILE_NAME    the executable's file name (default plugin-license), e.g. acme-license
  --targets LIST      comma-separated: linux-x64, win-x64, darwin-x64, darwin-arm64 (default: all)
  --product TEXT      the installer's product (default: the name): its name in the Windows version
                      resource, Settings > Apps and the installers; each product of a vendor has its
                      own installer, which owns only its own plugins (needed with --plugin)
  --product-id ID     what identifies the product across releases (default: from --product,
                      "Acme Gain" gives acme-gain): its uninstaller, its record of plugins
  --company TEXT      company in the Windows version resource and the installer (default: the product)
  --plugin PATH       a plugin the installers place for the musician (repeatable): a .vst3 bundle
                      folder, a .clap, a macOS .component, or a Standalone (a Linux executable, a
                      Windows .exe, a macOS .app); each goes into the installers of the platforms
                      it is built for, e.g. --plugin "build/AcmeGain_artefacts/Release/VST3/Acme Gain.vst3"
                      (JUCE names the folder after the CMake target, AcmeGain, and the bundle after
                      its PRODUCT_NAME)
  --project ID=NAME   a product's name, baked in (repeatable): the license manager and the CLI
                      show NAME for project ID, e.g. --project 123e4567-e89b-12d3-a456-426614174000="Acme Gain"
  --sign-cert FILE    sign the Windows executable and installer with this .pfx
                      (password from PLUGIN_LICENSE_SIGN_PASSWORD; a timestamp server from
                      PLUGIN_LICENSE_SIGN_TIMESTAMP_URL when set)
  --out DIR           the release folder (default dist/release), replaced whole on success
  --build             run "pnpm build" first, once the options are known to be good
                      (pnpm package passes it; --help and a bad option answer at once)
  -h, --help          this text

Flag > environment > config.json > baked default > built-in default, on the customer's computer.
A failed run leaves the previous release folder as it was.`;

/** @param {string[]} argv */
/**
 * How the Windows installer is compressed: `small` (the default: solid LZMA, what a vendor ships)
 * or `fast` (zlib: about five times faster to build and half again as large, for development
 * builds and the tests), from PLUGIN_LICENSE_INSTALLER_COMPRESSION.
 */
export function installerCompression(env = process.env) {
  const given = env.PLUGIN_LICENSE_INSTALLER_COMPRESSION;
  if (given === undefined || given === '' || given === 'small') return 'small';
  if (given === 'fast') return 'fast';
  throw new PackageError(`PLUGIN_LICENSE_INSTALLER_COMPRESSION=${JSON.stringify(given)} is not a compression: use small (the default, for releases) or fast (development builds)`, { usage: true });
}

export function parseOptions(argv, env = process.env) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        app: { type: 'string' },
        'base-url': { type: 'string' },
        relay: { type: 'string' },
        'ticket-key': { type: 'string', multiple: true },
        'offline-signed': { type: 'boolean' },
        'app-group': { type: 'string' },
        'agent-at-login': { type: 'boolean' },
        name: { type: 'string' },
        targets: { type: 'string' },
        product: { type: 'string' },
        'product-id': { type: 'string' },
        company: { type: 'string' },
        plugin: { type: 'string', multiple: true },
        project: { type: 'string', multiple: true },
        'sign-cert': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        build: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new PackageError(`${err.message.replace(/\. To specify a positional.*$/s, '')} (see pnpm package --help)`, { usage: true });
  }
  if (values.help) return { help: true, build: false };
  const name = values.name ?? 'plugin-license';
  if (!NAME_PATTERN.test(name)) throw new PackageError(`--name '${name}' is not usable as a file name; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`, { usage: true });
  if (values.app !== undefined && !NAME_PATTERN.test(values.app)) {
    throw new PackageError(`--app '${values.app}' is not usable as a namespace; use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`, { usage: true });
  }
  let baseUrl;
  if (values['base-url'] !== undefined) {
    try {
      baseUrl = normalizeBaseUrl(values['base-url']);
    } catch (err) {
      throw new PackageError(`--base-url: ${err.message}`, { usage: true });
    }
  }
  const { relayUrl, ticketKeys } = signedTicketOptions(values);
  if (values['app-group'] !== undefined) {
    try {
      checkAppGroup(values['app-group'], '--app-group');
    } catch (err) {
      throw new PackageError(err.message, { usage: true });
    }
  }
  const targets = values.targets === undefined ? Object.keys(TARGETS) : values.targets.split(',').map((t) => t.trim()).filter(Boolean);
  if (targets.length === 0) throw new PackageError('--targets is empty; give one or more of ' + Object.keys(TARGETS).join(', '), { usage: true });
  for (const t of targets) {
    if (!(t in TARGETS)) throw new PackageError(`--targets: '${t}' is not a target; use ${Object.keys(TARGETS).join(', ')}`, { usage: true });
  }
  let sign;
  if (values['sign-cert'] !== undefined) {
    const cert = resolve(values['sign-cert']);
    try {
      accessSync(cert, constants.R_OK);
    } catch {
      throw new PackageError(`--sign-cert ${cert} cannot be read`, { usage: true });
    }
    if (env.PLUGIN_LICENSE_SIGN_PASSWORD === undefined) throw new PackageError('--sign-cert needs the certificate password in PLUGIN_LICENSE_SIGN_PASSWORD (empty for none)', { usage: true });
    sign = { cert, password: env.PLUGIN_LICENSE_SIGN_PASSWORD, ...(env.PLUGIN_LICENSE_SIGN_TIMESTAMP_URL ? { timestampUrl: env.PLUGIN_LICENSE_SIGN_TIMESTAMP_URL } : {}) };
  }
  for (const flag of ['product', 'company']) {
     
    if (values[flag] !== undefined && (values[flag].trim() === '' || /[\u0000-\u001f\u007f]/.test(values[flag]))) {
      throw new PackageError(`--${flag} ${JSON.stringify(values[flag])} is not usable: give one line of text (no line breaks or control characters)`, { usage: true });
    }
  }
  const projects = parseProjects(values.project ?? []);
  for (const platform of new Set(targets.map((t) => TARGETS[t].os))) {
    const conflict = reservedNameConflict(platform, programFile(platform, name), programFile(platform, name), { asProgram: true });
    if (conflict !== undefined) throw new PackageError(`--name '${name}' is taken in the ${OS_WORDS[platform]} installer by ${conflict}; choose another name`, { usage: true });
  }
  // Each plugin is checked against the targets (a bundle for none of them is refused), then whose product they are.
  const plugins = inspectPlugins(values.plugin ?? [], [...new Set(targets)], name);
  const product = values.product ?? name;
  const productId = chooseProductId(values, product);
  return {
    help: false,
    build: values.build === true,
    name,
    app: values.app,
    baseUrl,
    relayUrl,
    ticketKeys,
    appGroup: values['app-group'],
    agentAtLogin: values['agent-at-login'] === true,
    targets: [...new Set(targets)],
    product,
    productId,
    company: values.company ?? product,
    projects,
    plugins,
    sign,
    installerCompression: installerCompression(env),
    out: resolve(values.out ?? join(ROOT, 'dist', 'release')),
  };
}

/**
 * `--relay`, `--ticket-key` and `--offline-signed`: the relay by the base URL's rule, each key by
 * the library's (`parseTicketKeys`, canonical text out), and both halves by the one rule of them
 * (`relayKeysProblem`): a relay without keys is refused, and keys without a relay unless the
 * vendor signs offline responses (`--offline-signed`); each refusal names the missing half.
 */
function signedTicketOptions(values) {
  let relayUrl;
  if (values.relay !== undefined) {
    try {
      relayUrl = normalizeBaseUrl(values.relay);
    } catch (err) {
      throw new PackageError(`--relay: ${err.message.replace(/^baseUrl\b/, 'the relay URL')}`, { usage: true });
    }
  }
  let ticketKeys = [];
  try {
    ticketKeys = parseTicketKeys(values['ticket-key'] ?? [], '--ticket-key').map((k) => k.text);
  } catch (err) {
    throw new PackageError(err.message, { usage: true });
  }
  if (values['offline-signed'] === true && ticketKeys.length === 0) {
    throw new PackageError('--offline-signed needs the public key the offline responses are signed with: add --ticket-key KEY (offline keygen prints it)', { usage: true });
  }
  const problem = relayKeysProblem({ relay: relayUrl !== undefined, keys: ticketKeys.length > 0, offlineSigned: values['offline-signed'] === true });
  if (problem !== undefined) {
    const fix = relayUrl !== undefined ? 'add --ticket-key KEY (the public key relay keygen printed; repeat it for each key during a rotation)' : "add --relay URL (the vendor's relay, ending in /functions/v1), or --offline-signed when the vendor signs only offline responses";
    throw new PackageError(`${problem}: ${fix}`, { usage: true });
  }
  return { relayUrl, ticketKeys };
}

const OS_WORDS = { linux: 'Linux', win32: 'Windows', darwin: 'macOS' };

/**
 * The product's id (what its installer, uninstaller and record of plugins are known by across
 * releases): `--product-id`, else the one derived from `--product` by `productIdOf`. Ambiguity is
 * refused: plugins with no product named (the default product, the program's file name, would
 * make every product of the vendor one, each installer removing the others' plugins), a product
 * name that gives no id, an id the rule refuses.
 */
function chooseProductId(values, product) {
  if (values['product-id'] !== undefined) {
    const problem = productIdProblem(values['product-id']);
    if (problem !== undefined) throw new PackageError(`--product-id '${values['product-id']}' is not usable: ${problem}`, { usage: true });
    return values['product-id'];
  }
  if ((values.plugin ?? []).length > 0 && values.product === undefined) {
    throw new PackageError('--plugin needs --product NAME (or --product-id ID): the product whose installer this is. Each product of a vendor has its own installer, which installs, upgrades and removes only its own plugins; e.g. --product "Acme Gain"', { usage: true });
  }
  const id = productIdOf(product);
  if (id === undefined) throw new PackageError(`--product ${JSON.stringify(product)} gives no product id (it has no ASCII letters or digits); give --product-id ID, e.g. --product-id acme-gain`, { usage: true });
  return id;
}

/**
 * `--project PROJECT_ID=NAME`, each: the id as every tool checks it, the name by the rule the
 * license manager's `--project` uses; an id given twice with two names is refused.
 *
 * @param {string[]} values
 * @returns {Array<{ project_id: string, name: string }>}
 */
function parseProjects(values) {
  const names = new Map();
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq < 0) throw new PackageError(`--project ${JSON.stringify(value)} has no name: give PROJECT_ID=NAME, e.g. --project 123e4567-e89b-12d3-a456-426614174000="Acme Gain"`, { usage: true });
    try {
      assertProjectId(value.slice(0, eq));
    } catch (err) {
      throw new PackageError(`--project: ${err.message}`, { usage: true });
    }
    const id = value.slice(0, eq).toLowerCase();
    const problem = projectNameError(id, value.slice(eq + 1));
    if (problem !== undefined) throw new PackageError(problem, { usage: true });
    const name = value.slice(eq + 1).trim();
    if (names.has(id) && names.get(id) !== name) {
      throw new PackageError(`--project ${id} is given twice, as ${JSON.stringify(names.get(id))} and ${JSON.stringify(name)}; give each project one name`, { usage: true });
    }
    names.set(id, name);
  }
  return [...names].map(([project_id, name]) => ({ project_id, name }));
}

function sha256File(file) {
  return new Promise((ok, fail) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => hash.update(d))
      .on('end', () => ok(hash.digest('hex')))
      .on('error', fail);
  });
}

/** The project's version: the CLI's, which the executable is. */
export function projectVersion() {
  return JSON.parse(readFileSync(join(ROOT, 'packages', 'cli', 'package.json'), 'utf8')).version;
}

/** The file name of a target's executable in the release folder. */
export function executableFile(name, version, target) {
  return `${name}-${version}-${target}${TARGETS[target].os === 'win32' ? '.exe' : ''}`;
}

/**
 * Builds the release into a folder beside `out`, then puts it in place of `out` in one rename:
 * a run that fails leaves the previous release as it was, and nothing half-built.
 *
 * @param {ReturnType<typeof parseOptions>} options
 * @param {{ log?: (line: string) => void, cache?: string }} [io]
 */
export async function packageRelease(options, io = {}) {
  const log = io.log ?? ((line) => process.stderr.write(`${line}\n`));
  const version = projectVersion();
  for (const f of FILES) {
    if (!existsSync(join(CLI_BUILD, f))) throw new PackageError(`${join(CLI_BUILD, f)} is missing: run "pnpm build" first (pnpm package does)`);
  }
  const parent = dirname(options.out);
  try {
    mkdirSync(parent, { recursive: true });
    accessSync(parent, constants.W_OK);
  } catch (err) {
    throw new PackageError(`cannot write the release into ${parent} (${err.code ?? err.message}); make it writable or pass --out DIR`);
  }
  const work = `${options.out}.partial-${process.pid}`;
  inProgress = work;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  const scratch = join(work, '.build');
  try {
    mkdirSync(scratch);
    const blob = await makeBlob(scratch, { name: options.name, app: options.app, baseUrl: options.baseUrl, relayUrl: options.relayUrl, ticketKeys: options.ticketKeys ?? [], appGroup: options.appGroup, projects: options.projects ?? [], product: options.product, productId: options.productId }, io.cache, log);
    const targets = [];
    for (const target of options.targets) {
      const file = executableFile(options.name, version, target);
      log(`${target}: ${file}`);
      const out = join(work, file);
      copyFileSync(await nodeBinary(target, join(scratch, 'node', target), { ...(io.cache ? { cache: io.cache } : {}), log }), out);
      chmodSync(out, 0o755);
      await makeExecutable(target, out, blob, { ...options, version, fileName: TARGETS[target].os === 'win32' ? `${options.name}.exe` : options.name });
      targets.push({ target, file, bytes: statSync(out).size, sha256: await sha256File(out) });
    }
    const installers = [];
    const { buildInstallers } = await import('./installers.mjs');
    const plugins = (options.plugins ?? []).map((p) => ({ format: p.format, name: p.name, platforms: [...p.platforms].sort(), installers: [] }));
    for (const { file, staged } of await buildInstallers({ work, scratch, options, version, targets, log })) {
      installers.push({ file, bytes: statSync(join(work, file)).size, sha256: await sha256File(join(work, file)) });
      for (const p of staged) plugins[options.plugins.indexOf(p)].installers.push(file);
    }
    for (const p of plugins) if (p.installers.length === 0) log(`${FORMATS[p.format]} ${p.name}: in no installer (none was built for ${p.platforms.join(', ')})`);
    rmSync(scratch, { recursive: true, force: true });
    const manifest = { version, node: NODE_VERSION, product: options.product, product_id: options.productId, app: options.app ?? null, base_url: options.baseUrl ?? null, relay_url: options.relayUrl ?? null, ticket_keys: options.ticketKeys ?? [], app_group: options.appGroup ?? null, agent_at_login: options.agentAtLogin === true, name: options.name, projects: options.projects ?? [], plugins, targets, installers };
    writeFileSync(join(work, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    const sums = [...targets, ...installers].map((t) => `${t.sha256}  ${t.file}`).join('\n') + '\n';
    writeFileSync(join(work, 'SHA256SUMS'), sums);
    // In place: the old release moves aside, the new one in, the old one goes.
    const old = `${options.out}.old-${process.pid}`;
    if (existsSync(options.out)) renameSync(options.out, old);
    renameSync(work, options.out);
    rmSync(old, { recursive: true, force: true });
    const shown = relative(process.cwd(), options.out);
    log(`wrote ${shown === '' || shown.startsWith('..') ? options.out : shown}: ${[...targets, ...installers].map((t) => t.file).join(', ')}`);
    return manifest;
  } catch (err) {
    rmSync(work, { recursive: true, force: true });
    throw err;
  } finally {
    inProgress = undefined;
  }
}

/** The SEA blob, made once for every target by the Linux binary of the pinned version. */
async function makeBlob(scratch, info, cache, log) {
  const sea = join(scratch, 'sea');
  mkdirSync(sea);
  // In memory, written here: esbuild's own process would write the file (and make its folder)
  // whenever it finished, even into a partial folder an interrupted build has just removed.
  const bundled = await esbuild({
    entryPoints: [join(here, 'sea-main.cjs')],
    outfile: join(sea, 'main.cjs'),
    write: false,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    logLevel: 'silent',
  });
  for (const file of bundled.outputFiles) writeFileSync(file.path, file.contents);
  const files = {};
  const assets = {};
  for (const f of FILES) {
    files[f] = createHash('sha256').update(readFileSync(join(CLI_BUILD, f))).digest('hex').slice(0, 32);
    assets[f] = join(CLI_BUILD, f);
  }
  // projects: the product names (`--project ID=NAME`, as [{project_id, name}]) the CLI and the license manager show;
  // product, product_id: the installer's product, which this executable's `plugins install` records its plugins under.
  const executableJson = { name: info.name, ...(info.app ? { app: info.app } : {}), ...(info.baseUrl ? { base_url: info.baseUrl } : {}), ...(info.relayUrl ? { relay_url: info.relayUrl } : {}), ...(info.ticketKeys.length > 0 ? { ticket_keys: info.ticketKeys } : {}), ...(info.appGroup ? { app_group: info.appGroup } : {}), ...(info.projects.length > 0 ? { projects: info.projects } : {}), ...(info.productId ? { product: info.product, product_id: info.productId } : {}), files };
  // Read by licensing's executableInfo() (name and defaults) and by sea-main.cjs (the files' hashes).
  writeFileSync(join(sea, EXECUTABLE_INFO_ASSET), JSON.stringify(executableJson));
  assets[EXECUTABLE_INFO_ASSET] = join(sea, EXECUTABLE_INFO_ASSET);
  const config = {
    main: join(sea, 'main.cjs'),
    output: join(sea, 'sea.blob'),
    disableExperimentalSEAWarning: true,
    // A snapshot or a code cache made here would be for this platform only.
    useSnapshot: false,
    useCodeCache: false,
    // NODE_OPTIONS in a customer's environment must not change what the agent runs.
    execArgvExtension: 'none',
    assets,
  };
  writeFileSync(join(sea, 'sea-config.json'), JSON.stringify(config, null, 2));
  const node = await nodeBinary('linux-x64', join(scratch, 'node', 'linux-x64'), { ...(cache ? { cache } : {}), log });
  try {
    await run(node, ['--experimental-sea-config', join(sea, 'sea-config.json')], { cwd: sea, env: { PATH: process.env.PATH ?? '' }, timeout: 120_000 });
  } catch (err) {
    throw new PackageError(`Node ${NODE_VERSION} could not make the executable's blob: ${String(err.stderr || err.message).trim()}`);
  }
  return readFileSync(join(sea, 'sea.blob'));
}

async function makeExecutable(target, file, blob, o) {
  const os = TARGETS[target].os;
  const binary = readFileSync(file);
  try {
    ignoreReplModuleVariable(binary, target);
  } catch (err) {
    throw new PackageError(err.message);
  }
  writeFileSync(file, binary);
  if (os === 'win32') {
    brandWindowsExecutable(file, { product: o.product, company: o.company, description: `${o.product} license agent and tool`, version: o.version, fileName: o.fileName });
  } else if (os === 'darwin') {
    // Node's signature would no longer match once the blob is in: the vendor signs on a Mac.
    const unsigned = unsign(readFileSync(file));
    if (unsigned !== null) writeFileSync(file, Buffer.from(unsigned));
  }
  // postject's WebAssembly prints progress and harmless ELF warnings; kept for an error only.
  const said = [];
  const { log: saveLog, error: saveError, warn: saveWarn } = console;
  console.log = console.error = console.warn = (...args) => said.push(args.join(' '));
  try {
    await inject(file, 'NODE_SEA_BLOB', blob, { sentinelFuse: SEA_FUSE, ...(os === 'darwin' ? { machoSegmentName: 'NODE_SEA' } : {}) });
  } catch (err) {
    throw new PackageError(`could not put the program into the ${target} Node binary: ${err.message} ${said.slice(-3).join(' ')}`.trim());
  } finally {
    Object.assign(console, { log: saveLog, error: saveError, warn: saveWarn });
  }
  if (os === 'win32' && o.sign) await signWindowsFile(file, { ...o.sign, description: o.product });
}
