'use strict';
// Runs a one-file CommonJS build through a V8 code cache: the executables of plugin-license
// (plugin-license-agent, plugin-license) use it, so a start does not compile the same megabytes
// again. It exists before any build (package managers link bins at install time), and it is
// CommonJS (bin/package.json) because Node starts a CommonJS main faster than an ES module.
//
// A build may be several files in one folder: the main one, and the ones it requires as
// `./NAME.cjs` when it first needs them (undici; the CLI's commands). Each goes through the
// cache when it is loaded, so what a short command never runs is neither read nor compiled.
//
// A packaged executable (a Node single executable application, packaging/) keeps its files as
// assets, not on disk: it passes `files`, which reads them and names each build by its hash.
//
// The cache is one file per build file and Node version in the user's own cache folder
// (PLUGIN_LICENSE_HOME/cache/compile or --home, else ~/.cache/plugin-license-compile and the
// macOS and Windows equivalents), written once (`writeAfterMs` after the file is loaded, or at
// exit if that comes first, so the functions compiled while running are in it too), checked
// against its own SHA-256 before use, and ignored when unreadable, stale, not the user's own or
// writable by others, or when NODE_DISABLE_COMPILE_CACHE is set. Without it the program runs
// all the same.
const { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } = require('node:fs');
const { createRequire, Module } = require('node:module');
const { homedir } = require('node:os');
const { basename, dirname, isAbsolute, join } = require('node:path');
const vm = require('node:vm');

/**
 * Where a build's files come from: the disk by default; a packaged executable's assets.
 * `key` names one build of a file (it must start with `v`, as Node's version does).
 *
 * @typedef {{ read(file: string): string, key(file: string): string }} BundleFiles
 */

/** @type {BundleFiles} */
const diskFiles = {
  read: (file) => readFileSync(file, 'utf8'),
  key: buildKey,
};

/**
 * Runs `bundle` (the path of a CommonJS file) as the main program through the code cache
 * named `name`. Files beside it required as `./NAME.cjs` go through the cache too.
 *
 * @param {string} bundle
 * @param {{ name: string, writeAfterMs?: number, files?: BundleFiles }} options
 */
function runBundle(bundle, { name, writeAfterMs, files = diskFiles }) {
  // A checkout that was never built has the launchers but not what they run.
  if (files === diskFiles && !existsSync(bundle)) {
    process.stderr.write(`${name === 'cli' ? 'plugin-license' : `plugin-license-${name}`}: this copy is not built yet (${bundle} is missing): run pnpm install && pnpm build in the repository first\n`);
    process.exit(1);
  }
  const root = process.env.NODE_DISABLE_COMPILE_CACHE ? undefined : cacheRoot();
  const loaded = new Map();
  const load = (file) => {
    let module = loaded.get(file);
    if (module === undefined) {
      module = new Module(file);
      loaded.set(file, module);
      const base = createRequire(file);
      const require = (id) => (id.startsWith('./') && id.endsWith('.cjs') && !id.includes('/', 2) ? load(join(dirname(file), id)) : base(id));
      Object.assign(require, { resolve: base.resolve, cache: base.cache, main: base.main });
      runCached(file, files, module, require, root, `${name}-${basename(file, '.cjs')}`, writeAfterMs);
    }
    return module.exports;
  };
  load(bundle);
}

function runCached(file, files, module, require, root, prefix, writeAfterMs) {
  const source = files.read(file).replace(/^#!.*/, '');
  const cacheFile = root === undefined ? undefined : join(root, `${prefix}-${files.key(file)}.v8cache`);
  const cached = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    ...(cached === undefined ? {} : { cachedData: cached }),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cacheFile !== undefined && (cached === undefined || script.cachedDataRejected === true)) {
    let written = false;
    const write = () => {
      if (written) return;
      written = true;
      writeCache(cacheFile, script.createCachedData(), prefix);
    };
    process.once('exit', write);
    if (writeAfterMs !== undefined) setTimeout(write, writeAfterMs).unref();
  }
  module.filename = file;
  module.paths = Module._nodeModulePaths(dirname(file));
  script.runInThisContext()(module.exports, require, module, file, dirname(file));
  module.loaded = true;
}

// On disk, one cache file per build of a file (its size, time and inode) and Node version: V8 itself
// rejects data of another V8 version or flags, but checks only the length of the source.
function buildKey(file) {
  const st = statSync(file, { bigint: true });
  return `${process.version}-${process.arch}-${st.size}-${st.mtimeNs}-${st.ino}`;
}

function cacheRoot() {
  const argv = process.argv.slice(2);
  const i = argv.findIndex((a) => a === '--home' || a.startsWith('--home='));
  const home = i < 0 ? process.env.PLUGIN_LICENSE_HOME?.trim() || undefined : argv[i].startsWith('--home=') ? argv[i].slice(7) : argv[i + 1];
  if (home) return join(home, 'cache', 'compile');
  const env = process.env;
  if (process.platform === 'win32') return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'plugin-license-compile', 'Cache');
  // The library's rule (licensing's userHome and xdgDir, which this loader cannot load before
  // itself): an empty or relative HOME is no home, so no cache (the program runs without one and
  // says why once it resolves its folders); a relative XDG_CACHE_HOME is ignored.
  if (env.HOME !== undefined && !isAbsolute(env.HOME)) return undefined;
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'plugin-license-compile');
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'plugin-license-compile');
}

function sha256(data) {
  return require('node:crypto').createHash('sha256').update(data).digest();
}

// The file is the SHA-256 of the V8 data, then the data: V8 checks versions and flags, not
// whether the bytes are whole. Only a file of this user's, writable by nobody else, is used.
function readCache(file) {
  let fd;
  try {
    fd = openSync(file, 'r');
    const st = fstatSync(fd);
    if (process.platform !== 'win32' && (st.uid !== process.getuid() || (st.mode & 0o022) !== 0)) return undefined;
    const bytes = readFileSync(fd);
    const data = bytes.subarray(32);
    return sha256(data).equals(bytes.subarray(0, 32)) ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function writeCache(file, data, prefix) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, Buffer.concat([sha256(data), data]), { mode: 0o600 });
    renameSync(tmp, file);
    // Caches of earlier builds or Node versions (and of 0.1.0's naming) are never read again.
    for (const entry of readdirSync(dirname(file))) {
      const stale = (entry.startsWith(`${prefix}-v`) && entry.endsWith('.v8cache')) || /^[a-z]+-[0-9a-f]{32}\.v8cache$/.test(entry);
      if (stale && entry !== basename(file)) rmSync(join(dirname(file), entry), { force: true });
    }
  } catch {
    // A read-only or full cache folder: the program runs without a cache, as it did this time.
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was written
    }
  }
}

module.exports = { runBundle };
