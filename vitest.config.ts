import { defineConfig } from 'vitest/config';
import { pageAssets } from './packages/cli/page/plugin.mjs';
import { WAIT_MS } from './test/utils/src/wait-bound.js';

// Workspace packages export their TypeScript sources under the "plugin-license-source" condition
// (a name of our own, so a consumer whose tools set the common "source" condition never resolves
// to src/, which is not published), so tests run against src without a build; child processes
// (emulator, agent) run dist.
const conditions = ['plugin-license-source', 'node', 'import', 'module', 'default'];

export default defineConfig({
  // The license manager's page, for tests that import its server from source (as the build does: page/plugin.mjs).
  plugins: [
    {
      name: 'manager-page',
      resolveId: (id) => (id === 'manager-page:assets' ? '\0manager-page' : undefined),
      load: async (id) => (id === '\0manager-page' ? `export default ${JSON.stringify(await pageAssets())};` : undefined),
    },
  ],
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['plugin-license-source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'agent/test/**/*.test.ts', 'packaging/test/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/docs/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'plugin/plugin_license/plc/test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
    // expect.poll waits for an outcome with no event to await (a page's text, a file), as long as
    // test-utils' `eventually` does: WAIT_MS, generous, because it only bounds how long a missing
    // outcome takes to fail the test (vitest's default of 1 s fails on a loaded machine).
    expect: { poll: { timeout: WAIT_MS } },
    reporters: ['default'],
  },
});
