/** The flags of a relay started from a command line: `[--host 127.0.0.1] [--port 0]`, on every runtime. */
export interface ServeFlags {
  host: string;
  port: number;
}

/**
 * Reads `--host ADDRESS` and `--port N` (also `--host=ADDRESS`), the flags of `plugin-license
 * relay serve`, for the Deno entry and the workerd script (the Node command reads them with the
 * CLI's parser). Anything else is a problem in words.
 *
 * @example
 * parseServeFlags(['--port', '8788']); // { host: '127.0.0.1', port: 8788 }
 */
export function parseServeFlags(args: readonly string[]): ServeFlags | { problem: string } {
  const flags: ServeFlags = { host: '127.0.0.1', port: 0 };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (name !== '--host' && name !== '--port') return { problem: `unknown flag ${arg.slice(0, 40)}; the relay takes --host ADDRESS and --port N` };
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === '') return { problem: `${name} needs a value` };
    if (name === '--host') flags.host = value;
    else {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n > 65535) return { problem: `--port must be a whole number from 0 to 65535, got '${value.slice(0, 20)}'` };
      flags.port = n;
    }
  }
  return flags;
}
