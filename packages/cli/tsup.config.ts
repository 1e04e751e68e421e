import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';
import { managerPage } from './page/plugin.mjs';

// The license manager's page (page/) is built into the manager's chunk by page/plugin.mjs.
// yocto-spinner is ESM-only: bundled, so the CommonJS build loads too. Split (ESM): each command
// is a chunk loaded when it runs (for run() embedded; the bin is the one-file build of tsup.bin.config.ts).
export default defineConfig(baseConfig({ entry: ['src/index.ts'], noExternal: ['yocto-spinner', 'yoctocolors'], splitting: true, esbuildPlugins: [managerPage()] }));
