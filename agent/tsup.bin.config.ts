import { createRequire } from 'node:module';
import { defineConfig } from 'tsup';
import { baseConfig } from '../tsup.base.js';

// The executable: one CommonJS file with the agent and its dependencies inside, so a start
// reads and compiles one file instead of resolving some 150 modules; bin/plugin-license-agent.js
// runs it with a V8 code cache. undici is its own file beside it, required on the first request
// through a proxy (the api package loads it lazily; a direct connection uses node:http), so a
// start neither reads nor compiles it.
// Built after the library (`tsup && tsup --config tsup.bin.config.ts`), into dist/bin only.
const undiciEntry = createRequire(createRequire(import.meta.url).resolve('@plugin-license/api')).resolve('undici');

export default defineConfig(
  baseConfig({
    entry: { agent: 'src/cli.ts', undici: undiciEntry },
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
