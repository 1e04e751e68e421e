export { AGENT_CLI as agentCli, agentRpc as rpc, startAgent, type RunningAgent } from '@plugin-license/test-utils';

/** A fresh activation code from the emulator (POST /plugin-activation/generate). */
export async function generateCode(emulator: { baseUrl: string; token: string; projectId: string }): Promise<string> {
  const res = await fetch(`${emulator.baseUrl}/plugin-activation/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: emulator.projectId, max_activations: 2, notes: 'plugin-host-c test' }),
  });
  if (res.status !== 201) throw new Error(`generate answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { code: string }).code;
}

export function codeHint(code: string): string {
  return `${code.slice(0, 4)}…${code.slice(-4)}`;
}
