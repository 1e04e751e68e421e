import { defineConfig } from 'tsup';

// The handler for Deno (dist/deno/relay.js) and for workerd (dist/workerd/worker.js): one ES
// module each, everything inside (Hono, the api's pure subpaths), no Node built-in.
const runtime = (entry: Record<string, string>, outDir: string) => ({
  entry,
  outDir,
  format: ['esm' as const],
  platform: 'neutral' as const,
  target: 'es2022',
  noExternal: [/.*/],
  dts: false,
  sourcemap: false,
  clean: true,
  splitting: false,
  outExtension: () => ({ js: '.js' }),
});

export default defineConfig([runtime({ relay: 'src/deno.ts' }, 'dist/deno'), runtime({ worker: 'src/worker.ts' }, 'dist/workerd')]);
