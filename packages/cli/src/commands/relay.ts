import { createRelay, isRelayConfigError, loadRelayConfig, startLine } from '@plugin-license/relay';
import { nodeCarrier, serveRelay, withNodeSigning } from '@plugin-license/relay/node';
import type { Context } from '../context.js';
import { CliError, EXIT, type ExitCode } from '../exit.js';

/**
 * `relay serve [--host 127.0.0.1] [--port 0]`: the vendor's license relay on Node
 * (@plugin-license/relay). Reads RELAY_* from the environment (a missing or malformed variable
 * ends it with exit 2 and words, before it listens: it never serves unsigned), prints one JSON
 * line `{"base_url", "keys"}` once it listens, then one line per request on stderr. SIGTERM ends
 * it with exit 0 once the requests in flight are answered; Ctrl-C likewise, with exit 130.
 */
export async function relayServeCommand(ctx: Context, o: { host: string; port: number }): Promise<ExitCode> {
  let config;
  try {
    config = await loadRelayConfig(ctx.env);
  } catch (e) {
    if (isRelayConfigError(e)) throw new CliError(EXIT.usage, 'relay_config', `${e.message}; the relay did not start`, { variable: e.variable });
    throw e;
  }
  const stderr = ctx.out.streams.stderr;
  const carrier = await nodeCarrier(ctx.env);
  const relay = createRelay(withNodeSigning(config), { carrier, log: (line) => stderr.write(`${line}\n`) });
  let server;
  try {
    server = await serveRelay(relay, { host: o.host, port: o.port, ownProcess: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(EXIT.failed, 'port_in_use', `port ${o.port} on ${o.host} is in use; choose another with --port, or --port 0 for any free port`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new CliError(EXIT.usage, 'usage', `--host ${o.host} is not an address of this computer; give one it has (127.0.0.1, 0.0.0.0 for every interface)`);
    throw e;
  }
  // SIGTERM (a process manager, a platform stopping the instance) is not an interruption: the
  // relay answers what it holds and exits 0. The CLI's own handler also ends the wait below.
  let terminated = false;
  const onTerm = (): void => {
    terminated = true;
  };
  process.on('SIGTERM', onTerm);
  try {
    ctx.out.streams.stdout.write(`${startLine(server.origin, relay.keys)}\n`);
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await server.close();
  } finally {
    process.off('SIGTERM', onTerm);
    await carrier.close();
  }
  if (terminated) process.exit(0);
  return EXIT.ok;
}
