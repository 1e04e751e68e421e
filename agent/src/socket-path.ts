import { posix, win32 } from 'node:path';
import os from 'node:os';
import { userHome, xdgDir, type ResolvedConfig } from '@plugin-license/licensing';
import { AgentError } from './errors.js';

/** Default namespace when `PLUGIN_LICENSE_APP` is not set. */
export { DEFAULT_NAMESPACE } from '@plugin-license/licensing';

/** `sun_path` capacity minus the terminating NUL, per platform. */
export const SUN_PATH_LIMITS: Readonly<Record<string, number>> = { linux: 107, darwin: 103 };

export interface SocketPathInput {
  namespace: string;
  platform?: NodeJS.Platform;
  env?: Record<string, string | undefined>;
  uid?: number;
  username?: string;
  homedir?: string;
  /** macOS: the vendor's app group; default `PLUGIN_LICENSE_APP_GROUP` in `env`. */
  appGroup?: string;
}

/**
 * The agent socket path (or Windows pipe name) per protocol 1: `PLUGIN_LICENSE_SOCKET` when set,
 * else `$XDG_RUNTIME_DIR/APP/agent.sock` (an absolute one) or `/tmp/APP-UID/agent.sock` on Linux,
 * `~/Library/Application Support/APP/agent.sock` on macOS (with an app group, for sandboxed
 * plugins: `~/Library/Group Containers/GROUP/APP/agent.sock`), `\\.\pipe\APP-agent-USERNAME` on Windows.
 * Pure: every input can be given, so every OS's answer is testable anywhere.
 *
 * @example
 * resolveSocketPath({ namespace: 'acme', platform: 'linux', env: {}, uid: 1000 })
 * // '/tmp/acme-1000/agent.sock'
 */
export function resolveSocketPath(input: SocketPathInput): string {
  const platform = input.platform ?? process.platform;
  const env = input.env ?? process.env;
  const explicit = env.PLUGIN_LICENSE_SOCKET;
  const path = explicit && explicit.length > 0 ? explicit : defaultPath(input, platform, env);
  assertSocketPathFits(path, platform);
  return path;
}

/**
 * The socket a resolved configuration names (`socket` when set, else the namespace's default,
 * in the app group's container when one is set): the one way the agent, `AgentClient` and the
 * CLI find it.
 */
export function socketPathOf(config: Pick<ResolvedConfig, 'namespace' | 'socket' | 'appGroup'>, env: Record<string, string | undefined> = process.env): string {
  return resolveSocketPath({ namespace: config.namespace.value, env: { ...env, PLUGIN_LICENSE_SOCKET: config.socket.value, PLUGIN_LICENSE_APP_GROUP: config.appGroup.value } });
}

function defaultPath(input: SocketPathInput, platform: NodeJS.Platform, env: Record<string, string | undefined>): string {
  const app = input.namespace;
  if (platform === 'win32') {
    const user = input.username ?? env.USERNAME ?? safeUserInfo().username;
    return `\\\\.\\pipe\\${app}-agent-${user}`;
  }
  if (platform === 'darwin') {
    const home = input.homedir ?? userHome(env, platform);
    const group = input.appGroup ?? env.PLUGIN_LICENSE_APP_GROUP;
    // A sandboxed plugin may reach a socket only inside an app group container of its team.
    if (group) return posix.join(home, 'Library', 'Group Containers', group, app, 'agent.sock');
    return posix.join(home, 'Library', 'Application Support', app, 'agent.sock');
  }
  // A relative XDG_RUNTIME_DIR is ignored, as the XDG Base Directory specification says (and plc does).
  const runtime = xdgDir(env, 'XDG_RUNTIME_DIR');
  if (runtime !== undefined) return posix.join(runtime, app, 'agent.sock');
  const uid = input.uid ?? (typeof process.getuid === 'function' ? process.getuid() : safeUserInfo().uid);
  return posix.join('/tmp', `${app}-${uid}`, 'agent.sock');
}

/**
 * Throws `socket_path_too_long` when a Unix socket path does not fit `sun_path`
 * (107 bytes on Linux, 103 on macOS); never truncates. Windows pipe names are not limited here.
 */
export function assertSocketPathFits(path: string, platform: NodeJS.Platform = process.platform): void {
  if (platform === 'win32') {
    if (!path.startsWith('\\\\.\\pipe\\') && !path.startsWith('\\\\?\\pipe\\')) {
      throw new AgentError('config_invalid', `socket path ${JSON.stringify(path)} is not a named pipe; on Windows use a name like \\\\.\\pipe\\APP-agent-USER`, { path });
    }
    return;
  }
  const limit = SUN_PATH_LIMITS[platform] ?? 103;
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > limit) {
    throw new AgentError(
      'socket_path_too_long',
      `socket path is ${bytes} bytes, over the ${limit}-byte limit of Unix sockets on ${platform}: ${path}; set PLUGIN_LICENSE_SOCKET (or --socket) to a shorter path, e.g. /tmp/APP-UID/agent.sock`,
      { path },
    );
  }
}

/** True when the path names a Windows pipe rather than a file. */
export function isPipePath(path: string): boolean {
  return win32.isAbsolute(path) && (path.startsWith('\\\\.\\pipe\\') || path.startsWith('\\\\?\\pipe\\'));
}

function safeUserInfo(): { username: string; uid: number } {
  try {
    const info = os.userInfo();
    return { username: info.username, uid: info.uid };
  } catch {
    return { username: 'user', uid: -1 };
  }
}
