import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { stopProcess } from '@plugin-license/test-utils';
import { CLI } from './helpers.js';

/** Debian's chromium (or PLUGIN_LICENSE_CHROMIUM): playwright-core drives it; no browser is downloaded. */
export function chromiumPath(): string | undefined {
  const chosen = process.env.PLUGIN_LICENSE_CHROMIUM;
  if (chosen) return chosen;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/** axe-core's browser script, evaluated in the page (through the debugger, so the page's CSP does not apply to it). */
export function axeSource(): string {
  return readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
}

/** A running `plugin-license manager`, its first line read. */
export interface Manager {
  child: ChildProcess;
  url: string;
  origin: string;
  port: number;
  token: string;
  pid: number;
  /** The first line as printed: `url`, `pid`, `opened` and, when not opened, `reason`. */
  line: { url: string; pid: number; opened: boolean; reason?: string };
  stderr: () => string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startManager(env: Record<string, string>, args: string[] = ['--no-open']): Promise<Manager> {
  const child = spawn(process.execPath, [CLI, 'manager', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const first = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const nl = stdout.indexOf('\n');
      if (nl >= 0) resolve(stdout.slice(0, nl));
    });
    void exited.then((code) => reject(new Error(`the manager exited (${code}) before its first line; stderr:\n${stderr}`)));
  });
  const line = JSON.parse(first) as Manager['line'];
  const u = new URL(line.url);
  return {
    child,
    url: line.url,
    origin: u.origin,
    port: Number(u.port),
    token: u.hash.replace(/^#token=/, ''),
    pid: line.pid,
    line,
    stderr: () => stderr,
    exited,
    stop: (signal: NodeJS.Signals = 'SIGTERM') => stopProcess(child, exited, signal),
  };
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request with exactly these headers (a Host of our choosing too, which fetch cannot send). */
export function raw(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers }, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      // An event stream that was accepted is read for its first event only.
      res.on('data', (d: string) => {
        text += d;
        if (res.headers['content-type']?.startsWith('text/event-stream') && text.includes('\n\n')) res.destroy();
      });
      const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A session, got as the page gets it: the start token, once, from the page's own origin. */
export async function session(m: Pick<Manager, 'port' | 'origin' | 'token'>): Promise<string> {
  const r = await raw(m.port, 'POST', '/api/session', { origin: m.origin, 'content-type': 'application/json' }, JSON.stringify({ token: m.token }));
  if (r.status !== 200) throw new Error(`the session was refused: ${r.status} ${r.body}`);
  if (r.headers['set-cookie'] !== undefined) throw new Error(`the session came with a cookie: ${String(r.headers['set-cookie'])}`);
  return (JSON.parse(r.body) as { session: string }).session;
}

/** The header the page sends its session in. */
export const bearer = (value: string): Record<string, string> => ({ authorization: `Bearer ${value}` });

/**
 * Ways a request can carry something that is not the page's session header, for a session and
 * the start token: none, a cookie (the old scheme, and what another port's server could get), the
 * query, another header, another scheme, forged and altered values, hostile characters.
 */
export function notTheSession(value: string, token: string): Array<[label: string, headers: Record<string, string>, query: string]> {
  const forged = 'A'.repeat(value.length);
  return [
    ['no header', {}, ''],
    ['the session in a cookie', { cookie: `plm=${value}; session=${value}` }, ''],
    ['the session in the query', {}, `?session=${value}&token=${value}`],
    ['the session in another header', { 'x-plugin-license-session': value, 'x-api-key': value }, ''],
    ['the session without a scheme', { authorization: value }, ''],
    ['the session as Basic', { authorization: `Basic ${Buffer.from(`user:${value}`).toString('base64')}` }, ''],
    ['the session as token (Jupyter)', { authorization: `token ${value}` }, ''],
    ['Bearer and nothing', { authorization: 'Bearer ' }, ''],
    ['the start token instead', bearer(token), ''],
    ['a forged session of the same length', bearer(forged), ''],
    ['the session less its last character', bearer(value.slice(0, -1)), ''],
    ['the session and one more', bearer(`${value}A`), ''],
    ['the session twice', { authorization: `Bearer ${value} ${value}` }, ''],
    ['the session quoted', { authorization: `Bearer "${value}"` }, ''],
    ['two spaces', { authorization: `Bearer  ${value}` }, ''],
    ['a glob', bearer('*'), ''],
    ['a dollar and a backslash', bearer(`$${value.slice(1, -1)}\\`), ''],
    ['non-ASCII', bearer(`${value.slice(0, -1)}é`), ''],
  ];
}
