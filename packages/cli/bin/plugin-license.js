#!/usr/bin/env node
'use strict';
// The executable: runs the build in dist/bin (cli.cjs: the parser; commands.cjs: the commands,
// loaded when one runs; undici.cjs: on the first request) through a V8 code cache (the agent's
// run-bundle), written by the first run of a build. It exists before any build, so
// package managers can link the bin at install time.
const { join } = require('node:path');
const { runBundle } = require('@plugin-license/agent/run-bundle');

// Written 2 s after start, or at exit if that comes first: `agent run` runs for days.
runBundle(join(__dirname, '..', 'dist', 'bin', 'cli.cjs'), { name: 'cli', writeAfterMs: 2000 });
