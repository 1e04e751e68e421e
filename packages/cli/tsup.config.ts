import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// yocto-spinner is ESM-only: bundled, so the CommonJS build loads too. Split (ESM): each command
// is a chunk loaded when it runs, so `--version` and `status` load only what they use.
export default defineConfig(baseConfig({ entry: ['src/index.ts', 'src/cli.ts'], noExternal: ['yocto-spinner', 'yoctocolors'], splitting: true }));
