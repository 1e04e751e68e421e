#!/usr/bin/env node
'use strict';
// The agent's executable: runs the one-file build (dist/bin/agent.cjs) through a V8 code cache
// (run-bundle.js), so a start does not compile the same megabytes again: the agent starts at
// every login. The cache is written two seconds after the first start of a build.
const { join } = require('node:path');
const { runBundle } = require('./run-bundle.js');

runBundle(join(__dirname, '..', 'dist', 'bin', 'agent.cjs'), { name: 'agent', writeAfterMs: 2000 });
