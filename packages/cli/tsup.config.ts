import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// yocto-spinner is ESM-only: bundled, so the CommonJS build loads too.
export default defineConfig(baseConfig({ entry: ['src/index.ts', 'src/cli.ts'], noExternal: ['yocto-spinner', 'yoctocolors'] }));
