// The relay as a Cloudflare Worker (`pnpm relay:workerd`, and `wrangler deploy`; dist/workerd/
// worker.js is this file bundled): the environment is the Worker's secrets and variables.
import { loadRelayConfig } from './config.js';
import { isRelayConfigError } from './errors.js';
import { createRelay, type Relay } from './relay.js';

let relay: Promise<Relay> | undefined;

function misconfigured(message: string): Response {
  return new Response(JSON.stringify({ error: 'relay_misconfigured', message: `the relay is not configured: ${message}`, details: {} }), { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' } });
}

export default {
  /** One relay per isolate, made from the bindings at the first request. */
  async fetch(request: Request, env: Record<string, unknown>): Promise<Response> {
    relay ??= loadRelayConfig(env).then((config) => createRelay(config, { log: (line) => console.log(line) }));
    let r: Relay;
    try {
      r = await relay;
    } catch (e) {
      // A bad secret never serves unsigned: every request says so (and the log), until it is fixed and redeployed.
      if (isRelayConfigError(e)) {
        console.log(JSON.stringify({ level: 'error', error: 'relay_config', message: e.message }));
        return misconfigured(e.message);
      }
      relay = undefined;
      throw e;
    }
    return r.fetch(request);
  },
};
