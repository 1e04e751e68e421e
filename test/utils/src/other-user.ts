import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

/** The other user of the tests: `nobody` on Debian, no account needed. */
export const OTHER_UID = 65534;

/**
 * Why tests of another user cannot run here, or undefined when they can: they need root (to
 * become another user) and util-linux's `setpriv`.
 */
export function otherUserUnavailable(): string | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return `needs root, to run a step as another user (uid ${OTHER_UID}) with setpriv`;
  if (spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).status !== 0) return 'needs util-linux setpriv, to run a step as another user';
  return undefined;
}

/**
 * The command line that runs `argv` as another user: `setpriv --reuid=UID --regid=UID
 * --clear-groups …`, as [file, args] for spawn or execFile. That user reads only what every user
 * may read: give it a copy of what it needs ({@link shareWithOtherUser}), since a checkout in a
 * private home (root's, mode 0700) is closed to it.
 *
 * @example
 * const [file, args] = asOtherUser([process.execPath, cli.path('cli.cjs'), '--version']);
 */
export function asOtherUser(argv: readonly string[], uid = OTHER_UID): [string, string[]] {
  return ['setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', ...argv]];
}

/** True when the other user can read `path` (every folder above it searchable, it readable), asked as that user. */
export function readableByOtherUser(path: string, uid = OTHER_UID): boolean {
  const [file, args] = asOtherUser(['test', '-r', path], uid);
  return spawnSync(file, args, { stdio: 'ignore', cwd: '/' }).status === 0;
}

export interface SharedCopy {
  /** The folder every user can read (mode 0755), holding one copy per source, by its base name. */
  dir: string;
  /** The copy of a source, by the source's base name (and below it). */
  path(...names: string[]): string;
  cleanup(): void;
}

/**
 * Copies files or folders into a fresh folder every user can read (a 0755 `mkdtemp` under the
 * system's temporary folder, each copy made readable, and executable where it was), for a step
 * run as another user: a checkout in a private home is closed to that user ("Cannot find module
 * …", "no VST3 plugin in …"). Links inside are copied as links. Remove it with `cleanup()`.
 *
 * @example
 * const shared = shareWithOtherUser([join(repo, 'packages/cli/dist/bin')]);
 * const [file, args] = asOtherUser([process.execPath, shared.path('bin', 'cli.cjs'), '--version']);
 */
export function shareWithOtherUser(sources: readonly string[]): SharedCopy {
  const dir = mkdtempSync(join(tmpdir(), 'plshared-'));
  try {
    chmodSync(dir, 0o755);
    for (const source of sources) {
      const target = join(dir, basename(source));
      cpSync(source, target, { recursive: true, verbatimSymlinks: true });
      // Readable by all (a+rX), whatever the checkout's umask made of the originals.
      spawnSync('chmod', ['-R', 'a+rX', target], { stdio: 'ignore' });
    }
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { dir, path: (...names) => join(dir, ...names), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
