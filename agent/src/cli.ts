#!/usr/bin/env node
import { isAgentError } from './errors.js';
import { runAgentCommand } from './commands.js';

// plugin-license-agent: the agent's commands for npm users, the same as `plugin-license agent`.
const NAME = 'plugin-license-agent';

runAgentCommand(process.argv.slice(2), { name: NAME, prefix: [] }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${NAME}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = isAgentError(err) && (err.code === 'usage' || err.code === 'config_invalid' || err.code === 'socket_path_too_long' || err.code === 'socket_dir_unsafe') ? 2 : 1;
  },
);
