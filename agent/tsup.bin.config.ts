import { defineConfig } from 'tsup';
import { binConfig } from '../tsup.base.js';

// The executable: agent.cjs with the agent and its dependencies inside, run by
// bin/plugin-license-agent.js (tsup.base.ts's binConfig says how).
export default defineConfig(binConfig(import.meta.url, { entry: { agent: 'src/cli.ts' } }));
