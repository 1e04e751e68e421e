// The relay as a Cloudflare Worker: `pnpm relay:workerd` (packages/relay/scripts/workerd.mjs) as a
// process, workerd running the bundled handler with the environment as its bindings.
import { describe } from 'vitest';
import { hasWorkerd } from './helpers.js';
import { refusalSuite, relaySuite } from './suite.js';

describe.skipIf(!hasWorkerd)('workerd (Linux x64)', () => {
  relaySuite('workerd');

  refusalSuite('workerd', [
    ['RELAY_SIGNING_KEY missing', { RELAY_SIGNING_KEY: undefined }, /RELAY_SIGNING_KEY is missing/],
    ['RELAY_PROJECTS with a name', { RELAY_PROJECTS: 'Acme Gain' }, /RELAY_PROJECTS entry 1 \('Acme Gain'\) is not a project id/],
    ['RELAY_VALIDATE_CACHE_S two days', { RELAY_VALIDATE_CACHE_S: '172800' }, /RELAY_VALIDATE_CACHE_S must be a whole number from 0 to 86400/],
  ]);
});
