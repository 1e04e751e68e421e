import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// env-paths (and its is-safe-filename) are ESM-only: bundle them so require() works.
// `./executable` is its own entry: the CLI's parser reads it (`--version`) without the library.
export default defineConfig(baseConfig({ entry: ['src/index.ts', 'src/executable.ts'], noExternal: ['env-paths', 'is-safe-filename'] }));
