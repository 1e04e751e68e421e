import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// `./signed-ticket` is its own entry: pure web-platform code the relay bundles for Deno and workerd.
export default defineConfig(baseConfig({ entry: { index: 'src/index.ts', 'signed-ticket': 'src/signed-ticket-format.ts' } }));
