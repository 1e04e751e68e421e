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
