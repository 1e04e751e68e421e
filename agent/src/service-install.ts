import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ServiceFile } from './service-files.js';

/** Runs one command; injectable so tests never touch the real service manager. */
export type CommandRunner = (command: string, args: string[]) => { ok: boolean; output: string };

export const spawnRunner: CommandRunner = (command, args) => {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 });
  if (r.error) return { ok: false, output: r.error.message };
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() };
};

export interface ServiceActionResult {
  file: ServiceFile;
  /** What was done, one line each, for the CLI to print. */
  steps: string[];
  /** False when a service-manager command failed. */
  ok: boolean;
}

export interface ServiceActionOptions {
  dryRun: boolean;
  /** Run the enable/disable commands (only ever when the file's platform is this OS). */
  manage: boolean;
  platform?: NodeJS.Platform;
  run?: CommandRunner;
}

/** Writes the service file and, where the OS matches, enables and starts it. */
export function installService(file: ServiceFile, options: ServiceActionOptions): ServiceActionResult {
  const steps: string[] = [];
  if (options.dryRun) {
    steps.push(`would write ${file.path}:`, file.contents.replace(/\r\n/g, '\n'));
    for (const c of file.enable) steps.push(`would run: ${commandText(c)}`);
    return { file, steps, ok: true };
  }
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.encoding === 'utf16le' ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(file.contents, 'utf16le')]) : file.contents, { mode: 0o644 });
  steps.push(`wrote ${file.path}`);
  return { file, ...manage(file, file.enable, options, steps) };
}

/** Disables the service where the OS matches, then removes its file. */
export function uninstallService(file: ServiceFile, options: ServiceActionOptions): ServiceActionResult {
  const steps: string[] = [];
  if (options.dryRun) {
    for (const c of file.disable) steps.push(`would run: ${commandText(c)}`);
    steps.push(`would remove ${file.path}`);
    return { file, steps, ok: true };
  }
  const result = manage(file, file.disable, { ...options }, steps, true);
  rmSync(file.path, { force: true });
  steps.push(`removed ${file.path}`);
  if (file.platform === 'linux' && options.manage && (options.platform ?? process.platform) === 'linux') {
    const r = (options.run ?? spawnRunner)('systemctl', ['--user', 'daemon-reload']);
    steps.push(r.ok ? 'ran: systemctl --user daemon-reload' : `could not run systemctl --user daemon-reload: ${r.output}`);
  }
  return { file, steps, ok: result.ok };
}

function manage(file: ServiceFile, commands: string[][], options: ServiceActionOptions, steps: string[], tolerant = false): { steps: string[]; ok: boolean } {
  const here = options.platform ?? process.platform;
  if (!options.manage) {
    steps.push(`not enabling/disabling (--no-enable); commands: ${commands.map(commandText).join(' && ')}`);
    return { steps, ok: true };
  }
  if (here !== file.platform) {
    steps.push(`skipped the service manager: this is ${here}, the file is for ${file.platform}`);
    return { steps, ok: true };
  }
  const run = options.run ?? spawnRunner;
  let ok = true;
  for (const [command, ...args] of commands) {
    const r = run(command as string, args);
    if (r.ok) {
      steps.push(`ran: ${commandText([command as string, ...args])}`);
    } else {
      steps.push(`failed: ${commandText([command as string, ...args])}${r.output ? ` (${r.output.split('\n')[0]})` : ''}`);
      if (!tolerant) {
        ok = false;
        break;
      }
    }
  }
  return { steps, ok };
}

/** A command as a person would type it in that platform's shell: arguments with spaces or quotes are quoted. */
export function commandText(args: readonly string[]): string {
  return args.map((a) => (/^[\w@%+=:,./\\-]+$/.test(a) ? a : `"${a.replace(/"/g, '\\"')}"`)).join(' ');
}
