import { agentCommandHint } from '@plugin-license/licensing';
import type { Context } from '../../../context.js';
import { classify } from '../../../errors.js';
import type { Add, Facts } from '../report.js';

export async function agent(ctx: Context, projectId: string | undefined, facts: Facts, add: Add): Promise<void> {
  const section = 'agent';
  const socket = await ctx.socketPath();
  const seen: NonNullable<Facts['agent']> = { socket, running: false, agent: null, protocol: null, check_ms: null };
  facts.agent = seen;
  add({ section, name: 'socket', level: 'info', detail: socket });
  let client;
  try {
    client = await ctx.agent(1500);
  } catch (err) {
    add({ section, name: 'running', level: 'failed', detail: classify(err).message });
    return;
  }
  if (!client) {
    add({ section, name: 'running', level: 'warning', detail: 'no agent answers', fix: `plugins ask the agent: start it with "${agentCommandHint('run', ctx.inspectionConfig.namespace.value)}", or install it as a service with "${agentCommandHint('install', ctx.inspectionConfig.namespace.value)}"` });
    return;
  }
  let step: 'running' | 'check' = 'running';
  try {
    const hello = await client.hello();
    Object.assign(seen, { running: true, agent: hello.agent, protocol: hello.protocol });
    add({ section, name: 'running', level: 'ok', detail: `${hello.agent}, protocol ${hello.protocol}, namespace ${hello.namespace}` });
    step = 'check';
    const target = projectId ?? (await client.list())[0]?.projectId;
    if (target !== undefined) {
      const started = performance.now();
      const state = await client.check(target);
      const ms = performance.now() - started;
      seen.check_ms = Math.round(ms * 10) / 10;
      add({ section, name: 'check', level: 'ok', detail: `answered for ${target} in ${ms.toFixed(1)} ms (${state.valid ? 'valid' : state.reason})` });
    }
  } catch (err) {
    // An answer that cannot be read (or none) is this section's finding; the report goes on.
    add({ section, name: step, level: 'failed', detail: classify(err).message });
  }
}
