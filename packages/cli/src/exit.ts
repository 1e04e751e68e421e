// Exit codes and the CLI's own error: no dependencies, so `--version` and `--help` load nothing else.
/** Exit codes of `plugin-license` (cli.md). */
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
