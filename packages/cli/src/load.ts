// What a command needs beyond the parser, loaded when it runs: program.ts imports this module
// itself lazily, so `--version` and `--help` load commander alone. In the
// executable this module is the second file, dist/bin/commands.cjs (tsup.bin.config.ts), and
// each part below stays uncompiled and unrun until it is asked for.
export const load = {
  agent: () => import('./commands/agent.js'),
  doctor: () => import('./commands/doctor/index.js'),
  license: () => import('./commands/license.js'),
  vendor: () => import('./commands/vendor.js'),
  offline: () => import('./commands/offline.js'),
  builds: () => import('./commands/builds.js'),
  config: () => import('./commands/config.js'),
  manager: () => import('./commands/manager.js'),
  plugins: () => import('./commands/plugins.js'),
  relay: () => import('./commands/relay.js'),
  context: () => import('./context.js'),
  output: () => import('./output.js'),
  errors: () => import('./errors.js'),
};
