import { defineConfig } from 'tsup';
import { baseConfig } from '../tsup.base.js';

// `./commands` (the agent's run/install/uninstall/socket-path/status) is its own entry: the
// CLI mounts it as `plugin-license agent …` and loads it only for those.
export default defineConfig(baseConfig({ entry: ['src/index.ts', 'src/commands.ts'], noExternal: ['env-paths'] }));
