import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';
import { binConfig } from '../../tsup.base.js';
import { managerPage } from './page/plugin.mjs';

// The executable, as the agent's (tsup.base.ts's binConfig): CommonJS files run by
// bin/plugin-license.js. cli.cjs is the parser (commander and program.ts). load.ts, which
// program.ts imports when a command runs, is commands.cjs, required then; each command in it is
// initialized when it is asked for. The agent's own commands (`agent run|install|uninstall|
// socket-path|status`) are agent.cjs, so the agent a service starts loads the parser and the
// agent, not every other command. `relay serve` is relay.cjs (the relay, its router and its Node
// adapter: about 100 KB no other command needs). undici is undici.cjs, required when a command
// needs it (a request through a proxy, doctor, downloads). So `--version` reads and runs a small file.
// From source, as the agent's own bin is built: its dist is CommonJS, whose require('zod') would bring all of zod.
const agentCommandsEntry = fileURLToPath(new URL('../../agent/src/commands.ts', import.meta.url));

export default defineConfig(
  binConfig(import.meta.url, {
    entry: { cli: 'src/cli.ts', commands: 'src/load.ts', agent: agentCommandsEntry, relay: 'src/commands/relay.ts' },
    esbuildPlugins: [
      // The license manager's page, as strings inside commands.cjs (so inside the executable too).
      managerPage(),
      {
        name: 'agent-beside',
        setup(build) {
          // `agent run|install|uninstall|socket-path|status`: the agent's own commands, agent.cjs.
          build.onResolve({ filter: /^@plugin-license\/agent\/commands$/ }, (args) => (/program\.ts$/.test(args.importer) ? { path: './agent.cjs', external: true } : undefined));
        },
      },
      {
        name: 'relay-beside',
        setup(build) {
          // load.ts's `import('./commands/relay.js')` becomes a require of relay.cjs.
          build.onResolve({ filter: /^\.\/commands\/relay\.js$/ }, (args) => (/load\.ts$/.test(args.importer) ? { path: './relay.cjs', external: true } : undefined));
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
