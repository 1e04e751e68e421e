#!/usr/bin/env node
// The agent's executable: runs the one-file build (dist/bin/agent.cjs) through a V8 code cache
// (run-bundle.js), so a start does not compile the same megabytes again: the agent starts at
// every login. The cache is written two seconds after the first start of a build.
import { runBundle } from './run-bundle.js';

runBundle(new URL('../dist/bin/agent.cjs', import.meta.url), { name: 'agent', writeAfterMs: 2000 });
