import { createRequire } from 'node:module';
import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';

// The executable, as the agent's: one CommonJS file with the CLI and its dependencies inside
// (commands stay lazily initialized within it), run by bin/plugin-license.js through the
// agent's run-bundle (a V8 code cache); undici is its own file beside it, required on the
// first request. Built after the library, into dist/bin only.
const undiciEntry = createRequire(createRequire(import.meta.url).resolve('@plugin-license/api')).resolve('undici');

export default defineConfig(
  baseConfig({
    entry: { cli: 'src/cli.ts', undici: undiciEntry },
    outDir: 'dist/bin',
    format: ['cjs'],
    dts: false,
    clean: true,
    noExternal: [/.*/],
    minifyWhitespace: true,
    minifySyntax: true,
    outExtension: () => ({ js: '.cjs' }),
    esbuildOptions(options) {
      // `import('undici')` becomes a require of the file beside the bundle.
      options.supported = { ...options.supported, 'dynamic-import': false };
    },
    esbuildPlugins: [
      {
        name: 'undici-beside',
        setup(build) {
          build.onResolve({ filter: /^undici$/ }, () => ({ path: './undici.cjs', external: true }));
        },
      },
    ],
  }),
);
