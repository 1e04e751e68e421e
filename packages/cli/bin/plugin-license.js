#!/usr/bin/env node
// The executable: runs the one-file build (dist/bin/cli.cjs) through a V8 code cache (the
// agent's run-bundle), written at the exit of the first run of a build. It exists before any
// build, so package managers can link the bin at install time.
import { runBundle } from '@plugin-license/agent/run-bundle';

runBundle(new URL('../dist/bin/cli.cjs', import.meta.url), { name: 'cli' });
