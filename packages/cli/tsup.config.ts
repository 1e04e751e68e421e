import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// yocto-spinner is ESM-only: bundled, so the CommonJS build loads too. Split (ESM): each command
// is a chunk loaded when it runs (for run() embedded; the bin is the one-file build of tsup.bin.config.ts).
export default defineConfig(baseConfig({ entry: ['src/index.ts'], noExternal: ['yocto-spinner', 'yoctocolors'], splitting: true }));
