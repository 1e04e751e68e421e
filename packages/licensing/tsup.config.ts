import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// env-paths (and its is-safe-filename) are ESM-only: bundle them so require() works.
export default defineConfig(baseConfig({ noExternal: ['env-paths', 'is-safe-filename'] }));
