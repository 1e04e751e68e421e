import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The page that hands the start URL to the browser: the browser is given this file's path, not
 * the URL, because other local users can read command lines (the token is in the URL's fragment).
 * A meta refresh, no script: the file needs no Content-Security-Policy exception.
 */
export function redirectPage(url: string): string {
  const u = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${u}"><title>License manager</title></head>
<body><p><a href="${u}">Open the license manager</a></p></body></html>
`;
}

/**
 * Writes the redirect file, readable by this user only (0600, in a 0700 folder), created new
 * (never through a file or link that was there). Returns its path.
 */
export function writeRedirectFile(dir: string, url: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `manager-${process.pid}.html`);
  // A file of an earlier process with this pid is stale: replaced, never written through.
  rmSync(file, { force: true });
  writeFileSync(file, redirectPage(url), { mode: 0o600, flag: 'wx' });
  return file;
}

/**
 * The program that opens a file in the default browser: `BROWSER` when set (as Jupyter and
 * Python's webbrowser honour it), else the system's opener.
 */
export function browserCommand(file: string, env: Readonly<Record<string, string | undefined>>, platform: NodeJS.Platform = process.platform): { command: string; args: string[] } {
  const chosen = env.BROWSER?.trim();
  if (chosen) return { command: chosen, args: [file] };
  if (platform === 'darwin') return { command: 'open', args: [file] };
  if (platform === 'win32') return { command: 'explorer.exe', args: [file] };
  return { command: 'xdg-open', args: [file] };
}

/**
 * How long the opener is given to say that it failed. A desktop's opener (`xdg-open`, `gio`,
 * `open`) hands the file to the browser and exits at once, with a status that says whether it
 * could; one still running after this is a browser that stays in the foreground (`BROWSER=firefox`
 * on its first window): it opened.
 */
export const OPENER_SETTLE_MS = 5_000;

/** Why an opener that exited did not open the file, in words (xdg-open's documented statuses). */
function openerFailure(command: string, code: number | null, signal: NodeJS.Signals | null): string {
  if (signal !== null) return `${command} was stopped by ${signal}`;
  const xdg = /(^|\/)xdg-open$/.test(command) ? { 3: ': no program to open a web page was found', 4: ': the browser could not be started' }[code ?? 0] : undefined;
  return `${command} exited with status ${code}${xdg ?? ''}`;
}

/**
 * Starts the browser on `file`, detached; resolves with why it could not, or undefined once it
 * opened: the opener exited with status 0, or still runs after `settleMs`. `explorer.exe` (the
 * Windows opener) exits 1 when it opened the file, so only its start counts.
 */
export function openInBrowser(file: string, env: Readonly<Record<string, string | undefined>>, settleMs: number = OPENER_SETTLE_MS, platform: NodeJS.Platform = process.platform): Promise<string | undefined> {
  const { command, args } = browserCommand(file, env, platform);
  const statusSays = !(platform === 'win32' && command === 'explorer.exe');
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, args, { detached: true, stdio: 'ignore', env: env as NodeJS.ProcessEnv, windowsHide: true });
    } catch (err) {
      resolve(`${command}: ${(err as Error).message}`);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const done = (why: string | undefined): void => {
      clearTimeout(timer);
      child.removeAllListeners();
      child.on('error', () => undefined);
      child.unref();
      resolve(why);
    };
    child.once('error', (err: NodeJS.ErrnoException) => done(`${command}: ${err.code === 'ENOENT' ? 'not found' : err.message}`));
    child.once('exit', (code, signal) => done(code === 0 ? undefined : openerFailure(command, code, signal)));
    child.once('spawn', () => {
      if (!statusSays) done(undefined);
      else timer = setTimeout(() => done(undefined), settleMs);
    });
  });
}
