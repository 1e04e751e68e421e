#!/usr/bin/env node
'use strict';
// The agent's executable: runs the one-file build (dist/bin/agent.cjs) through a V8 code cache
// (run-bundle.js), so a start does not compile the same megabytes again: the agent starts at
// every login. The cache is written two seconds after the first start of a build.
const { join } = require('node:path');
const { runBundle } = require('./run-bundle.js');

// The agent stays resident on every customer's machine. A direct connection to the service uses
// Node's own http; through a proxy, undici carries the requests, and it parses HTTP with a
// WebAssembly module: V8's optimizing tier for it allocates about 35 MB of native memory at the
// first request, which the C allocator keeps, for a parser the agent uses a few times a day. The
// baseline compiler alone (Liftoff) keeps that peak near 7 MB. Wasm flags are read when a module
// is compiled, so setting it here, before anything is compiled, takes effect.
require('node:v8').setFlagsFromString('--liftoff-only');

runBundle(join(__dirname, '..', 'dist', 'bin', 'agent.cjs'), { name: 'agent', writeAfterMs: 2000 });
