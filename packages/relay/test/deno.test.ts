// The relay under Deno: `pnpm relay:deno` (packages/relay/scripts/deno.mjs) as a process, the
// npm package deno running the bundled handler.
import { refusalSuite, relaySuite } from './suite.js';

relaySuite('deno');

refusalSuite('deno', [
  ['RELAY_SIGNING_KEY missing', { RELAY_SIGNING_KEY: undefined }, /RELAY_SIGNING_KEY is missing/],
  ['RELAY_SIGNING_KEY not a key', { RELAY_SIGNING_KEY: 'A'.repeat(42) }, /RELAY_SIGNING_KEY is neither a PEM private key/],
  ['RELAY_SERVICE_URL plain http to another host', { RELAY_SERVICE_URL: 'http://service.example/functions/v1' }, /RELAY_SERVICE_URL uses http:\/\//],
  ['RELAY_TICKET_DAYS 31', { RELAY_TICKET_DAYS: '31' }, /RELAY_TICKET_DAYS must be a whole number from 1 to 30/],
]);
