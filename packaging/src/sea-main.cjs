'use strict';
// The main script of a packaged executable (a Node single executable application). A SEA's own
// `require` loads only Node's built-in modules, so the program's files (the CLI's build:
// cli.cjs, commands.cjs, agent.cjs, relay.cjs, undici.cjs) are SEA assets, run by the same loader as the
// npm bins (agent/bin/run-bundle.js, bundled into this file by packaging/build.mjs), with the
// same code cache on the user's disk: a code cache embedded at build time would be rejected on
// every platform but the one that built it.
// First thing: Node's run-time variables (agent/src/node-environment.ts, the one list) leave this
// process's environment, so neither Node's later reads (TLS checks, the thread pool) nor the
// programs this one starts see them. NODE_OPTIONS is already ignored (execArgvExtension "none").
require('../../agent/src/node-environment.ts').dropNodeRuntimeVariables();
const { getAsset } = require('node:sea');
const { dirname, join, basename } = require('node:path');
const { runBundle } = require('../../agent/bin/run-bundle.js');

/** The asset build.mjs writes (licensing's EXECUTABLE_INFO_ASSET): here, each file's build hash. */
/** @type {{ files: Record<string, string> }} */
const info = JSON.parse(getAsset('executable.json', 'utf8'));

runBundle(join(dirname(process.execPath), 'cli.cjs'), {
  name: 'exe',
  writeAfterMs: 2000,
  files: {
    read: (file) => getAsset(basename(file), 'utf8'),
    // The build's hash, from build time: the same executable always finds its cache.
    key: (file) => `${process.version}-${process.arch}-${info.files[basename(file)]}`,
  },
});
