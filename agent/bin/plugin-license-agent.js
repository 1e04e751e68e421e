#!/usr/bin/env node
// The agent's executable. It exists before any build, so package managers can link the bin at
// install time, and it runs the one-file build (dist/bin/agent.cjs) through a V8 code cache, so
// a start does not compile the same two megabytes again: the agent starts at every login.
//
// The cache is one file per build and Node version in the user's own cache folder (under
// PLUGIN_LICENSE_HOME or --home when given), written once the agent has run for two seconds,
// checked against its own SHA-256 before use, and ignored when it is unreadable, stale, not
// the user's own, or NODE_DISABLE_COMPILE_CACHE is set. Without it the agent starts all the same.
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, Module } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const bundle = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin', 'agent.cjs');
const source = readFileSync(bundle, 'utf8').replace(/^#!.*/, '');
const cacheFile = compileCacheFile(source);
const cached = cacheFile === undefined ? undefined : readCache(cacheFile);

const script = new vm.Script(Module.wrap(source), {
  filename: bundle,
  ...(cached === undefined ? {} : { cachedData: cached }),
  importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
if (cacheFile !== undefined && (cached === undefined || script.cachedDataRejected === true)) {
  // After start-up, so the functions compiled while starting are in the cache too.
  setTimeout(() => writeCache(cacheFile, script.createCachedData()), 2000).unref();
}
const module = new Module(bundle);
module.filename = bundle;
module.paths = Module._nodeModulePaths(dirname(bundle));
const require = createRequire(bundle);
script.runInThisContext()(module.exports, require, module, bundle, dirname(bundle));

// One file per build of the bundle (its size, time and inode) and Node version: V8 itself
// rejects data of another V8 version or flags, but checks only the length of the source.
function compileCacheFile(text) {
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const st = statSync(bundle);
  const key = createHash('sha256').update(`${process.version} ${process.arch} ${text.length} ${st.size} ${st.mtimeMs} ${st.ino}`).digest('hex').slice(0, 32);
  return join(cacheRoot(), `agent-${key}.v8cache`);
}

function cacheRoot() {
  const argv = process.argv.slice(2);
  const i = argv.findIndex((a) => a === '--home' || a.startsWith('--home='));
  const home = i < 0 ? process.env.PLUGIN_LICENSE_HOME?.trim() || undefined : argv[i].startsWith('--home=') ? argv[i].slice(7) : argv[i + 1];
  if (home) return join(home, 'cache', 'compile');
  const env = process.env;
  if (process.platform === 'win32') return join(env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local'), 'plugin-license-agent', 'Cache');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'plugin-license-agent');
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'plugin-license-agent');
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

function writeCache(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, Buffer.concat([createHash('sha256').update(data).digest(), data]), { mode: 0o600 });
    renameSync(tmp, file);
    // Caches of earlier builds or Node versions are never read again.
    for (const name of readdirSync(dirname(file))) {
      if (/^agent-[0-9a-f]{32}\.v8cache$/.test(name) && name !== basename(file)) rmSync(join(dirname(file), name), { force: true });
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
