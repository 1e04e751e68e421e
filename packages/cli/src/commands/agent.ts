import { toWireState, type AgentClient } from '@plugin-license/agent';
import { agentCommandHint } from '@plugin-license/licensing';
import type { Context } from '../context.js';
import { CliError, EXIT, type ExitCode } from '../exit.js';
import { when } from '../output.js';
import { nameField, productName } from '../plugin-names.js';
import { report, THROUGH_AGENT, validity } from './license.js';

async function running(ctx: Context): Promise<AgentClient> {
  const agent = await ctx.agent(undefined, { start: true });
  if (!agent) {
    throw new CliError(
      EXIT.failed,
      'not_running',
      `no agent answers for namespace '${ctx.inspectionConfig.namespace.value}' at ${await ctx.socketPath()}; start it with: ${agentCommandHint('run', ctx.inspectionConfig.namespace.value)}`,
      { socket: await ctx.socketPath(), namespace: ctx.inspectionConfig.namespace.value },
    );
  }
  return agent;
}

/** `agent check ID` / `agent refresh ID`. */
export async function agentStateCommand(ctx: Context, method: 'check' | 'refresh', rawProject: string): Promise<ExitCode> {
  const projectId = ctx.projectId(rawProject);
  const agent = await running(ctx);
  const state = await ctx.out.spin(method === 'refresh' ? 'asking the service through the agent' : 'asking the agent', () =>
    method === 'refresh' ? ctx.deadline.bound(agent.refresh(projectId), THROUGH_AGENT) : agent.check(projectId),
  );
  await report(ctx, method === 'refresh' ? 'refreshed' : 'checked', state, 'agent');
  return validity(state);
}

/** `agent list`: every license the agent holds. */
export async function agentListCommand(ctx: Context): Promise<ExitCode> {
  const agent = await running(ctx);
  const list = await agent.list();
  if (ctx.out.json) {
    ctx.out.document({ licenses: list.map((s) => ({ ...toWireState(s), ...nameField(s.projectId) })) });
    return EXIT.ok;
  }
  if (list.length === 0) {
    ctx.out.line('The agent holds no licenses.');
    return EXIT.ok;
  }
  // A plugin column when the executable names any of them.
  const named = list.some((s) => productName(s.projectId) !== undefined);
  ctx.out.table(
    [...(named ? ['plugin'] : []), 'project', 'license', 'code', 'activations', 'source', 'valid offline until'],
    list.map((s) => [...(named ? [productName(s.projectId) ?? '-'] : []), s.projectId, s.valid ? ctx.out.ok('valid') : ctx.out.bad(s.reason ?? 'not valid'), s.codeHint ?? '-', s.activations === null ? '-' : `${s.activations}/${s.maxActivations}`, s.source, when(s.graceUntil)]),
  );
  return EXIT.ok;
}
