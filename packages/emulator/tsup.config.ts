import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// jose 6 ships ESM only; bundling it keeps the CommonJS build loadable on Node 20 before require(esm).
export default defineConfig(baseConfig({ entry: ['src/index.ts', 'src/cli.ts'], noExternal: ['jose'] }));
