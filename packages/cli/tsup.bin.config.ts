import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { defineConfig } from 'tsup';
import { baseConfig } from '../../tsup.base.js';
import { managerPage } from './page/plugin.mjs';

// The executable, as the agent's: CommonJS files with every dependency inside, run by
// bin/plugin-license.js through the agent's run-bundle (a V8 code cache). cli.cjs is the parser
// (commander and program.ts). load.ts, which program.ts imports when a command runs, is
// commands.cjs, required then; each command in it is initialized when it is asked for. The
// agent's own commands (`agent run|install|uninstall|socket-path|status`) are agent.cjs, so the
// agent a service starts loads the parser and the agent, not every other command. undici
// is undici.cjs, required when a command needs it (a request through a proxy, doctor, downloads). So `--version` reads and runs a small file.
// Built after the library, into dist/bin only.
// From source, as the agent's own bin is built: its dist is CommonJS, whose require('zod') would bring all of zod.
const agentCommandsEntry = fileURLToPath(new URL('../../agent/src/commands.ts', import.meta.url));
const undiciEntry = createRequire(createRequire(import.meta.url).resolve('@plugin-license/api')).resolve('undici');

export default defineConfig(
  baseConfig({
    entry: { cli: 'src/cli.ts', commands: 'src/load.ts', agent: agentCommandsEntry, undici: undiciEntry },
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
      // The license manager's page, as strings inside commands.cjs (so inside the executable too).
      managerPage(),
      {
        name: 'undici-beside',
        setup(build) {
          build.onResolve({ filter: /^undici$/ }, () => ({ path: './undici.cjs', external: true }));
        },
      },
      {
        name: 'agent-beside',
        setup(build) {
          // `agent run|install|uninstall|socket-path|status`: the agent's own commands, agent.cjs.
          build.onResolve({ filter: /^@plugin-license\/agent\/commands$/ }, (args) => (/program\.ts$/.test(args.importer) ? { path: './agent.cjs', external: true } : undefined));
        },
      },
      {
        name: 'commands-beside',
        setup(build) {
          // program.ts's `import('./load.js')` becomes a require of commands.cjs, built from load.ts.
          build.onResolve({ filter: /^\.\/load\.js$/ }, (args) => (/program\.ts$/.test(args.importer) ? { path: './commands.cjs', external: true } : undefined));
        },
      },
    ],
  }),
);
