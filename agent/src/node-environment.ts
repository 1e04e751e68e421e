/**
 * The environment variables through which Node (22, the packaged executable's) changes what a
 * program does at run time: loads other code (`NODE_OPTIONS`, `NODE_PATH`,
 * `NODE_REPL_EXTERNAL_MODULE`), stops checking TLS certificates (`NODE_TLS_REJECT_UNAUTHORIZED`),
 * writes files or output of its own (`NODE_V8_COVERAGE`, `NODE_COMPILE_CACHE`,
 * `NODE_REDIRECT_WARNINGS`, `NODE_DEBUG`), or changes its thread pool, data or IPC. A customer's
 * or a studio's environment must not change what the agent runs, so the packaged executable
 * removes them from its own environment first thing (the children it starts never see them) and
 * the per-user service unsets them. `NODE_EXTRA_CA_CERTS` is not listed: a studio behind a private
 * CA or a TLS-inspecting proxy needs it, and it only adds trust the studio chose.
 *
 * Node 22 refuses to start a single executable application that ignores `NODE_OPTIONS` when
 * `NODE_REPL_EXTERNAL_MODULE` is set at all (exit 9, "can't be used with
 * kDisableNodeOptionsEnv"), before any code of ours runs; packaging empties the name that check
 * reads in the executable's Node (packaging/src/node-startup.mjs), and starters are given this
 * list too, for any Node they run.
 *
 * @example
 * spawn(command, args, { env: withoutNodeRuntimeVariables(process.env) });
 */
export const NODE_RUNTIME_VARIABLES: readonly string[] = [
  'NODE_OPTIONS',
  'NODE_REPL_EXTERNAL_MODULE',
  'NODE_PATH',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'NODE_DEBUG',
  'NODE_DEBUG_NATIVE',
  'NODE_V8_COVERAGE',
  'NODE_COMPILE_CACHE',
  'NODE_DISABLE_COMPILE_CACHE',
  'NODE_PENDING_DEPRECATION',
  'NODE_NO_WARNINGS',
  'NODE_REDIRECT_WARNINGS',
  'NODE_PRESERVE_SYMLINKS',
  'NODE_ICU_DATA',
  'NODE_USE_ENV_PROXY',
  'NODE_DISABLE_COLORS',
  'NODE_REPL_HISTORY',
  'NODE_CHANNEL_FD',
  'NODE_CHANNEL_SERIALIZATION_MODE',
  'NODE_UNIQUE_ID',
  'NODE_TEST_CONTEXT',
  'NODE_SKIP_PLATFORM_CHECK',
  'UV_THREADPOOL_SIZE',
  'UV_USE_IO_URING',
];

/**
 * A copy of `env` without Node's run-time variables, for starting the agent or this program again.
 *
 * @example
 * execFile(process.execPath, ['--version'], { env: withoutNodeRuntimeVariables(process.env) });
 */
export function withoutNodeRuntimeVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of NODE_RUNTIME_VARIABLES) delete copy[name];
  return copy;
}

/**
 * Removes Node's run-time variables from this process's own environment (what Node reads later,
 * such as `NODE_TLS_REJECT_UNAUTHORIZED` at each TLS connection, and what children inherit).
 *
 * @example
 * dropNodeRuntimeVariables(); // first thing in the packaged executable's main script
 */
export function dropNodeRuntimeVariables(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of NODE_RUNTIME_VARIABLES) delete env[name];
}
