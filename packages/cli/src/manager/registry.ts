import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { processGone } from '@plugin-license/agent';
import { readSmallFile } from '@plugin-license/licensing';

/**
 * Where a running license manager says how to stop it: `CACHE/manager-PID.json` (the namespace's
 * cache folder, 0700; the file 0600), `{pid, port, stop}`. `stop` is a secret of its own, asked
 * for by `POST /api/stop` on the manager's port: only the user who can read the file can stop it,
 * and what answers on the port proves it is that manager (its pid) before anything waits on it. A
 * pid alone is never signalled: a file left by a manager that died names a port and a pid that
 * may be anyone's by now.
 */
const FILE = /^manager-([1-9][0-9]*)\.json$/;

export interface ManagerRegistration {
  file: string;
  remove(): void;
}

/** A new secret for `POST /api/stop`: 256 bits, per start. */
export const newStopSecret = (): string => randomBytes(32).toString('base64url');

/**
 * Registers this manager (listening on `port`, stopped by `stop`: {@link newStopSecret}) in
 * `dir`, created new (never through a file or link that was there); `remove()` at exit.
 */
export function registerManager(dir: string, port: number, stop: string): ManagerRegistration {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `manager-${process.pid}.json`);
  // A file of an earlier process with this pid is stale: replaced, never written through.
  rmSync(file, { force: true });
  writeFileSync(file, `${JSON.stringify({ pid: process.pid, port, stop })}\n`, { mode: 0o600, flag: 'wx' });
  return { file, remove: () => rmSync(file, { force: true }) };
}

/** What `manager stop` did. */
export interface ManagersStopped {
  /** The managers that answered and stopped, by pid. */
  stopped: number[];
  /** Registrations nothing answered for (a manager killed, or one whose port another program has now): removed. */
  stale: number;
  /** Managers that answered but still ran at the deadline. */
  running: number[];
}

/** Asks the manager on `port` to stop with `secret`; its pid when it answered as the manager, else undefined. */
function askToStop(port: number, secret: string, timeoutMs: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const body = JSON.stringify({ token: secret });
    const origin = `http://127.0.0.1:${port}`;
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/api/stop', timeout: timeoutMs, headers: { host: `127.0.0.1:${port}`, origin, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d.slice(0, 1024)));
        res.on('end', () => {
          try {
            const pid = (JSON.parse(text) as { pid?: unknown }).pid;
            resolve(res.statusCode === 200 && Number.isSafeInteger(pid) ? (pid as number) : undefined);
          } catch {
            resolve(undefined);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

/**
 * Stops every license manager registered in `dir` (this namespace's, for this user), as an
 * uninstaller needs before the program goes: each is asked on its port with its secret, and
 * waited for until its process is gone (bounded by `timeoutMs` in all). A registration nothing
 * answers for is removed; nothing is ever signalled.
 *
 * @example
 * const { stopped } = await stopManagers(paths.cache);
 */
export async function stopManagers(dir: string, timeoutMs = 10_000): Promise<ManagersStopped> {
  const done: ManagersStopped = { stopped: [], stale: 0, running: [] };
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return done;
  }
  const deadline = Date.now() + timeoutMs;
  const asked: Array<{ pid: number; file: string }> = [];
  for (const name of names) {
    const match = FILE.exec(name);
    if (match === null) continue;
    const file = join(dir, name);
    const read = readSmallFile(file, 4096, { followLinks: false });
    let entry: { pid?: unknown; port?: unknown; stop?: unknown } = {};
    if (read.kind === 'bytes') {
      try {
        entry = JSON.parse(read.bytes.toString('utf8')) as typeof entry;
      } catch {
        entry = {};
      }
    }
    const pid = Number(match[1]);
    const { port, stop } = entry;
    const answered = entry.pid === pid && Number.isInteger(port) && (port as number) > 0 && (port as number) < 65536 && typeof stop === 'string' ? await askToStop(port as number, stop, Math.max(500, Math.min(3000, deadline - Date.now()))) : undefined;
    if (answered === pid) asked.push({ pid, file });
    else {
      rmSync(file, { force: true });
      done.stale++;
    }
  }
  for (const { pid, file } of asked) {
    while (!processGone(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!processGone(pid)) done.running.push(pid);
    else {
      rmSync(file, { force: true });
      done.stopped.push(pid);
    }
  }
  return done;
}
