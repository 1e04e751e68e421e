import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// `./signed-ticket` and `./code-hint` are entries of their own: pure web-platform code the relay
// bundles for Deno and workerd.
export default defineConfig(baseConfig({ entry: { index: 'src/index.ts', 'signed-ticket': 'src/signed-ticket-format.ts', 'code-hint': 'src/code-hint.ts' } }));
