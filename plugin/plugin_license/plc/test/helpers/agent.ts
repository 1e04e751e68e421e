import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startAgent, type RunningAgent } from '@plugin-license/test-utils';
import { afterAll, beforeAll } from 'vitest';
import { useSocketDir, type SocketDir } from './toolchain.js';

export { AGENT_CLI as agentCli, agentRpc as rpc, startAgent, type RunningAgent } from '@plugin-license/test-utils';

/** A fresh activation code from the emulator (POST /plugin-activation/generate). */
export async function generateCode(emulator: { baseUrl: string; token: string; projectId: string }): Promise<string> {
  const res = await fetch(`${emulator.baseUrl}/plugin-activation/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: emulator.projectId, max_activations: 2, notes: 'plc test' }),
  });
  if (res.status !== 201) throw new Error(`generate answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { code: string }).code;
}

export function codeHint(code: string): string {
  return `${code.slice(0, 4)}…${code.slice(-4)}`;
}

/**
 * The test file's real agent (the built agent, on `agent.sock` of the file's socket folder) against
 * the emulator, started before its tests and stopped after them; `sockets` holds other agents' sockets.
 */
export function useAgent(): { readonly emulator: Emulator; readonly agent: RunningAgent; sockets: SocketDir } {
  const sockets = useSocketDir();
  let emulator: Emulator | undefined;
  let agent: RunningAgent | undefined;
  beforeAll(async () => {
    emulator = await startEmulator();
    agent = await startAgent({ socket: sockets.path('agent.sock'), baseUrl: emulator.baseUrl });
  });
  afterAll(async () => {
    await agent?.stop();
    await emulator?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useAgent: not started yet (use it inside a test)');
    return value;
  };
  return {
    get emulator() {
      return started(emulator);
    },
    get agent() {
      return started(agent);
    },
    sockets,
  };
}
