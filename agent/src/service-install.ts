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
  /** False when the service manager could not be reached or one of its commands failed. */
  ok: boolean;
  /** Why it is not ok (see {@link serviceProblemSentence}). */
  problem?: ServiceProblem;
}

/**
 * Why a service could not be registered: this user has no service manager to reach (nothing
 * was written), or one of its commands failed (the file is written).
 */
export type ServiceProblem = { code: 'no_service_manager'; detail: string } | { code: 'enable_failed'; command: string; detail: string };

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
  const unreachable = options.manage ? probeManager(file, options) : undefined;
  if (unreachable !== undefined) {
    steps.push(`not written: ${unreachable.detail}`);
    return { file, steps, ok: false, problem: unreachable };
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

/**
 * The one sentence a person reads when `install` is not ok, naming what is missing or failed
 * and what to do; `name` is how the agent's commands are called (`acme-license agent`).
 *
 * @example
 * serviceProblemSentence(result, 'acme-license agent');
 * // "the agent cannot start at login: the systemd user service manager (systemd --user) does not answer for this user on this computer (…); nothing was registered: …"
 */
export function serviceProblemSentence(result: ServiceActionResult, name: string): string {
  const p = result.problem;
  if (p === undefined) return '';
  if (p.code === 'no_service_manager') {
    return `the agent cannot start at login: ${result.file.manager} does not answer for this user on this computer (${p.detail}); nothing was registered: plugins start the agent when they need it, or start it now with '${name} run'`;
  }
  return `the service file ${result.file.path} was written, but ${p.command} failed (${p.detail}); fix what it says and run that command again, or remove the file with '${name} uninstall'`;
}

/** Asks the file's probe whether this user's service manager answers; a problem when it does not. */
function probeManager(file: ServiceFile, options: ServiceActionOptions): ServiceProblem | undefined {
  if (file.probe === undefined || (options.platform ?? process.platform) !== file.platform) return undefined;
  const [command, ...args] = file.probe as [string, ...string[]];
  const r = (options.run ?? spawnRunner)(command, args);
  return r.ok ? undefined : { code: 'no_service_manager', detail: `${commandText(file.probe)}: ${oneLine(r.output) || 'no answer'}` };
}

/** A command's output as one line for a sentence: its first non-empty line, no control characters, at most 200 characters. */
export function oneLine(output: string): string {
  const first = output.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const clean = first.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
  return clean.length > 200 ? `${clean.slice(0, 199)}…` : clean;
}

function manage(file: ServiceFile, commands: string[][], options: ServiceActionOptions, steps: string[], tolerant = false): { steps: string[]; ok: boolean; problem?: ServiceProblem } {
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
  for (const [command, ...args] of commands) {
    const r = run(command as string, args);
    const text = commandText([command as string, ...args]);
    if (r.ok) {
      steps.push(`ran: ${text}`);
    } else {
      const detail = oneLine(r.output);
      steps.push(`failed: ${text}${detail ? ` (${detail})` : ''}`);
      if (!tolerant) return { steps, ok: false, problem: { code: 'enable_failed', command: text, detail: detail || 'no output' } };
    }
  }
  return { steps, ok: true };
}

/** A command as a person would type it in that platform's shell: arguments with spaces or quotes are quoted. */
export function commandText(args: readonly string[]): string {
  return args.map((a) => (/^[\w@%+=:,./\\-]+$/.test(a) ? a : `"${a.replace(/"/g, '\\"')}"`)).join(' ');
}
