import { defineConfig } from 'vitest/config';

// Workspace packages export their TypeScript sources under the "plugin-license-source" condition
// (a name of our own, so a consumer whose tools set the common "source" condition never resolves
// to src/, which is not published), so tests run against src without a build; child processes
// (emulator, agent) run dist.
const conditions = ['plugin-license-source', 'node', 'import', 'module', 'default'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ['plugin-license-source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'agent/test/**/*.test.ts', 'packaging/test/**/*.test.ts', 'test/e2e/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    teardownTimeout: 10_000,
    reporters: ['default'],
  },
});
