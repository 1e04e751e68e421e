import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import { pageAssets } from './packages/cli/page/plugin.mjs';
import { WAIT_MS } from './test/utils/src/wait-bound.js';

// Workspace packages export their TypeScript sources under the "plugin-license-source" condition
// (a name of our own, so a consumer whose tools set the common "source" condition never resolves
// to src/, which is not published), so tests run against src without a build; child processes
// (emulator, agent) run dist.
const conditions = ['plugin-license-source', 'node', 'import', 'module', 'default'];

/** How many test files run at once: PLUGIN_LICENSE_TEST_WORKERS, else the cores, at least 2. */
function testWorkers(): number {
  const given = process.env.PLUGIN_LICENSE_TEST_WORKERS;
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n) || n < 1) throw new Error(`PLUGIN_LICENSE_TEST_WORKERS=${JSON.stringify(given)} is not a whole number of 1 or more`);
    return n;
  }
  return Math.max(2, availableParallelism());
}

const ALL = ['packages/*/test/**/*.test.ts', 'agent/test/**/*.test.ts', 'packaging/test/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/docs/**/*.test.ts', 'examples/*/test/**/*.test.ts', 'plugin/plugin_license/plc/test/**/*.test.ts'];
const NATIVE = ['plugin/plugin_license/plc/test/**/*.test.ts', 'examples/juce-plugin/test/**/*.test.ts', 'packaging/test/**/*.test.ts', 'packages/cli/test/manager.test.ts', 'packages/cli/test/reason-words.test.ts', 'test/docs/**/*.test.ts'];

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
    projects: [
      // What Node runs: every package, the agent, the CLI, the emulator, end to end. CI runs it on
      // Node 20 and again on Node 24.
      { extends: true, test: { name: 'node', include: ALL, exclude: [...configDefaults.exclude, ...NATIVE] } },
      // What runs the same whatever the Node version: the C client and its fuzzers, the plugin in a
      // VST3 host, the page in Chromium, the packaged executables (their own pinned Node) and
      // installers, the documents. CI runs it once, on Node 20.
      { extends: true, test: { name: 'native', include: NATIVE } },
    ],
    pool: 'forks',
    // Most tests wait on real processes, sockets and servers rather than compute, so two files
    // run at once even on two cores (vitest's default there is one): CI's suite takes about half
    // as long. PLUGIN_LICENSE_TEST_WORKERS sets another number (1 to find an order dependence).
    maxWorkers: testWorkers(),
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
