// Runs a one-file CommonJS build through a V8 code cache: the executables of plugin-license
// (plugin-license-agent, plugin-license) use it, so a start does not compile the same megabytes
// again. It exists before any build (package managers link bins at install time).
//
// The cache is one file per build and Node version in the user's own cache folder
// (PLUGIN_LICENSE_HOME/cache/compile or --home, else ~/.cache/plugin-license-compile and the
// macOS and Windows equivalents), written once (after `writeAfterMs`, or at exit for short
// commands), checked against its own SHA-256 before use, and ignored when unreadable, stale,
// not the user's own or writable by others, or when NODE_DISABLE_COMPILE_CACHE is set. Without
// it the program runs all the same.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/**
 * Runs `bundleUrl` (a CommonJS file) as the main program through the code cache named `name`.
 * The cache is written `writeAfterMs` after start (a daemon), or at exit when undefined (a
 * command), so the functions compiled while running are in it too.
 *
 * @param {URL} bundleUrl
 * @param {{ name: string, writeAfterMs?: number }} options
 */
export function runBundle(bundleUrl, { name, writeAfterMs }) {
  const bundle = fileURLToPath(bundleUrl);
  const source = readFileSync(bundle, 'utf8').replace(/^#!.*/, '');
  const cacheFile = compileCacheFile(bundle, source, name);
  const cached = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new vm.Script(Module.wrap(source), {
    filename: bundle,
    ...(cached === undefined ? {} : { cachedData: cached }),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cacheFile !== undefined && (cached === undefined || script.cachedDataRejected === true)) {
    const write = () => writeCache(cacheFile, script.createCachedData(), name);
    if (writeAfterMs === undefined) process.once('exit', write);
    else setTimeout(write, writeAfterMs).unref();
  }
  const module = new Module(bundle);
  module.filename = bundle;
  module.paths = Module._nodeModulePaths(dirname(bundle));
  const require = createRequire(bundle);
  script.runInThisContext()(module.exports, require, module, bundle, dirname(bundle));
}

// One file per build of the bundle (its size, time and inode) and Node version: V8 itself
// rejects data of another V8 version or flags, but checks only the length of the source.
function compileCacheFile(bundle, text, name) {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const st = statSync(bundle);
  const key = createHash('sha256').update(`${process.version} ${process.arch} ${text.length} ${st.size} ${st.mtimeMs} ${st.ino}`).digest('hex').slice(0, 32);
  return join(cacheRoot(), `${name}-${key}.v8cache`);
}

function cacheRoot() {
  const argv = process.argv.slice(2);
  const i = argv.findIndex((a) => a === '--home' || a.startsWith('--home='));
  const home = i < 0 ? process.env.PLUGIN_LICENSE_HOME?.trim() || undefined : argv[i].startsWith('--home=') ? argv[i].slice(7) : argv[i + 1];
  if (home) return join(home, 'cache', 'compile');
  const env = process.env;
  if (process.platform === 'win32') return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'plugin-license-compile', 'Cache');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'plugin-license-compile');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'plugin-license-compile');
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
    return createHash('sha256').update(data).digest().equals(bytes.subarray(0, 32)) ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function writeCache(file, data, name) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, Buffer.concat([createHash('sha256').update(data).digest(), data]), { mode: 0o600 });
    renameSync(tmp, file);
    // Caches of earlier builds or Node versions are never read again.
    for (const entry of readdirSync(dirname(file))) {
      if (entry.startsWith(`${name}-`) && /-[0-9a-f]{32}\.v8cache$/.test(entry) && entry !== basename(file)) rmSync(join(dirname(file), entry), { force: true });
    }
  } catch {
    // A read-only or full cache folder: the agent runs without a cache, as it did this time.
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was written
    }
  }
}
