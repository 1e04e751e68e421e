// The relay under Deno (`pnpm relay:deno`; dist/deno/relay.js is this file bundled): the same
// handler, environment, flags and start line as `plugin-license relay serve`. On Supabase Edge
// Functions the README's three-line entry is used instead (the platform owns the port).
import { loadRelayConfig } from './config.js';
import { isRelayConfigError } from './errors.js';
import { createRelay } from './relay.js';
import { parseServeFlags } from './serve-flags.js';
import { originOf, startLine } from './start-line.js';

interface DenoServer {
  shutdown(): Promise<void>;
}
declare const Deno: {
  args: string[];
  env: { toObject(): Record<string, string> };
  exit(code: number): never;
  addSignalListener(signal: 'SIGTERM' | 'SIGINT', handler: () => void): void;
  serve(options: { hostname: string; port: number; onListen(addr: { hostname: string; port: number }): void }, handler: (request: Request) => Promise<Response>): DenoServer;
};

const NAME = 'plugin-license relay';
const flags = parseServeFlags(Deno.args);
if ('problem' in flags) {
  console.error(`${NAME}: ${flags.problem}`);
  Deno.exit(2);
}
let config;
try {
  config = await loadRelayConfig(Deno.env.toObject());
} catch (e) {
  if (!isRelayConfigError(e)) throw e;
  console.error(`${NAME}: ${e.message}; the relay did not start`);
  Deno.exit(2);
}
const relay = createRelay(config, { log: (line) => console.error(line) });
const server = Deno.serve({ hostname: flags.host, port: flags.port, onListen: ({ hostname, port }) => console.log(startLine(originOf(hostname, port), relay.keys)) }, (request) => relay.fetch(request));
// SIGTERM: the requests in flight are answered, then exit 0; Ctrl-C likewise, with 130 as the CLI.
const stop = (code: number) => () => void server.shutdown().then(() => Deno.exit(code));
Deno.addSignalListener('SIGTERM', stop(0));
Deno.addSignalListener('SIGINT', stop(130));
