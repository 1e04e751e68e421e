import { isAgentError } from '@plugin-license/agent';
import { isConfigError, isNetworkError, isSchemaError, isServiceError, isTimeoutError } from '@plugin-license/api';
import { isLicenseError } from '@plugin-license/licensing';
import { CliError, EXIT, type Classified } from './exit.js';

export { CliError, EXIT, usageError } from './exit.js';
export type { Classified, ExitCode } from './exit.js';

/** An offline response refused by the import rules does not license this machine: a negative answer. */
const NEGATIVE_LICENSE = new Set(['code_not_found', 'code_revoked', 'max_activations_reached', 'not_activated', 'offline_refused']);
/** A code of the wrong form, or an offline file that can't be read (or is the wrong kind), is bad input, like any other. */
const USAGE_LICENSE = new Set(['invalid_argument', 'invalid_code', 'invalid_offline_file']);
/** Answers that show the configuration is wrong, whatever layer carries them: a base URL that answers but is not the service. */
const CONFIGURATION = new Set(['endpoint_not_found']);

/**
 * The one table from the libraries' errors to exit codes. Messages are the libraries' own (they
 * already say what to do); this layer adds nothing to them.
 */
export function classify(err: unknown): Classified {
  // By name too: the parser (cli.cjs) and the commands (commands.cjs) each carry their own copy of the class.
  if (err instanceof CliError || (err instanceof Error && err.name === 'CliError' && typeof (err as CliError).exit === 'number')) {
    const e = err as CliError;
    return { exit: e.exit, code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
  }
  if (isLicenseError(err)) {
    const exit = err.serviceCode !== undefined && CONFIGURATION.has(err.serviceCode) ? EXIT.usage : NEGATIVE_LICENSE.has(err.code) ? EXIT.negative : USAGE_LICENSE.has(err.code) ? EXIT.usage : EXIT.failed;
    const details: Record<string, unknown> = {};
    if (err.serviceCode) details.service_code = err.serviceCode;
    if (err.status) details.status = err.status;
    if (err.path) details.path = err.path;
    if (err.systemCode) details.system_code = err.systemCode;
    if (err.kid) details.kid = err.kid;
    if (err.trustedKids) details.trusted = err.trustedKids;
    return { exit, code: err.code, message: err.message, ...(Object.keys(details).length ? { details } : {}) };
  }
  if (isAgentError(err)) {
    const negative = err.serviceCode !== undefined && NEGATIVE_LICENSE.has(err.serviceCode);
    // A socket path another user holds is the configuration to fix (remove it, or choose another path), not a failure that passes.
    const usage = err.code === 'usage' || err.code === 'config_invalid' || err.code === 'invalid_params' || err.code === 'socket_path_too_long' || err.code === 'socket_dir_unsafe' || err.serviceCode === 'invalid_code' || (err.serviceCode !== undefined && CONFIGURATION.has(err.serviceCode));
    const exit = usage ? EXIT.usage : negative ? EXIT.negative : EXIT.failed;
    const details: Record<string, unknown> = {};
    if (err.path) details.path = err.path;
    if (err.holder) details.holder = err.holder;
    return { exit, code: err.serviceCode ?? err.code, message: err.message, ...(Object.keys(details).length ? { details } : {}) };
  }
  // Ctrl-C ended a wait for the service (the deadline's signal): only calls safe to repeat are cut off.
  if (err instanceof Error && err.name === 'AbortError') {
    return { exit: EXIT.interrupted, code: 'interrupted', message: 'interrupted while waiting for the service; nothing more was asked of it' };
  }
  if (isConfigError(err)) return { exit: EXIT.usage, code: 'invalid_config', message: err.message };
  if (isServiceError(err)) {
    const code = err.code;
    const exit = CONFIGURATION.has(code) ? EXIT.usage : NEGATIVE_LICENSE.has(code) || code === 'not_found' ? EXIT.negative : USAGE_LICENSE.has(code) || code === 'bad_request' ? EXIT.usage : EXIT.failed;
    return { exit, code, message: err.message, details: { status: err.status } };
  }
  if (isNetworkError(err) || isTimeoutError(err) || isSchemaError(err)) return { exit: EXIT.failed, code: (err as { code?: string }).code ?? 'network', message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { exit: EXIT.failed, code: 'internal', message: `unexpected failure: ${message} (run again with --debug for details)` };
}
