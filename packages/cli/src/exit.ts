// Exit codes and the CLI's own error: no dependencies, so `--version` and `--help` load nothing else.
/** The version of `plugin-license` (the CLI, and a packaged executable built from it). */
export const CLI_VERSION = '0.1.0';

/** Exit codes of `plugin-license` (docs/cli.md). */
export const EXIT = Object.freeze({
  /** Done; for validate/check/status: the license is valid. */
  ok: 0,
  /** The service or network failed (unreachable, time-out, 5xx, unauthorized, rate-limited after waiting). */
  failed: 1,
  /** Usage: bad argument, unknown command or flag, missing token, bad configuration. */
  usage: 2,
  /** A negative licensing answer: not valid, not activated, code not found, revoked, no slots left. */
  negative: 3,
  /** Interrupted (Ctrl-C); what was done is kept and reported. */
  interrupted: 130,
});
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports as it is: its message is one line saying what and what to do. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    readonly exit: ExitCode,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Marks a stream error the command itself reports (see Output): the process-wide handler leaves it. */
export const OUTPUT_REPORTED = Symbol.for('plugin-license.cli.output-reported');

/**
 * Output that could not be written (a full disk behind `> file`, a closed pipe): the command
 * ends there, with this one line on stderr; a closed pipe (EPIPE: a reader like `head` that had
 * enough) ends it quietly.
 */
export function outputFailed(err: unknown): CliError {
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? 'error';
  return new CliError(EXIT.failed, 'output_failed', `could not write the output (${code}${code === 'ENOSPC' ? ': the disk is full' : ''}); what came before it was written, nothing after`, { system_code: code });
}

export function usageError(message: string, details?: Record<string, unknown>): CliError {
  return new CliError(EXIT.usage, 'usage', message, details);
}

/** What a failure becomes on the way out: an exit code, a stable code and one line. */
export interface Classified {
  exit: ExitCode;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}
