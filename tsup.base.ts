import { createRequire } from 'node:module';
import type { Options } from 'tsup';

/** One build for every package: ESM + CommonJS + types, Node 20 target. */
export function baseConfig(overrides: Options = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'node20',
    platform: 'node',
    shims: true,
    splitting: false,
    ...overrides,
  };
}

/**
 * The build of an executable (the agent's, the CLI's): CommonJS files with every dependency
 * inside, into dist/bin only, which bin/*.js runs through the agent's run-bundle with a V8 code
 * cache, so a start reads and compiles a few files instead of resolving some 150 modules.
 * undici is undici.cjs beside them, required on the first request that needs it (the api package
 * loads it lazily; a direct connection uses node:http), so a start neither reads nor compiles it.
 * `from` is the calling config's `import.meta.url`: undici is the one the api package resolves.
 * Built after the library (`tsup && tsup --config tsup.bin.config.ts`).
 */
export function binConfig(from: string, options: { entry: Record<string, string>; esbuildPlugins?: NonNullable<Options['esbuildPlugins']> }): Options {
  const undici = createRequire(createRequire(from).resolve('@plugin-license/api')).resolve('undici');
  return baseConfig({
    entry: { ...options.entry, undici },
    outDir: 'dist/bin',
    format: ['cjs'],
    dts: false,
    clean: true,
    noExternal: [/.*/],
    minifyWhitespace: true,
    minifySyntax: true,
    outExtension: () => ({ js: '.cjs' }),
    esbuildOptions(esbuild) {
      // `import('undici')` becomes a require of the file beside the bundle.
      esbuild.supported = { ...esbuild.supported, 'dynamic-import': false };
    },
    esbuildPlugins: [
      ...(options.esbuildPlugins ?? []),
      {
        name: 'undici-beside',
        setup(build) {
          build.onResolve({ filter: /^undici$/ }, () => ({ path: './undici.cjs', external: true }));
        },
      },
    ],
  });
}
