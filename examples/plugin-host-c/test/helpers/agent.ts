import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exampleDir } from './toolchain.js';
import { spawnLines, type LineProcess } from './run.js';

/** The built agent bin; child processes run dist, so `pnpm build` comes first. */
export const agentCli = join(exampleDir, '..', '..', 'agent', 'bin', 'plugin-license-agent.js');

export interface RunningAgent {
  socket: string;
  home: string;
  process: LineProcess;
  /** Stops the agent (SIGTERM) and removes its home unless `keepHome`. */
  stop(keepHome?: 'keep-home'): Promise<number | null>;
}

/** Starts `plugin-license-agent run` with an isolated home and socket; resolves once it prints ready. */
export async function startAgent(options: { socket: string; baseUrl: string; home?: string }): Promise<RunningAgent> {
  if (!existsSync(agentCli)) {
    throw new Error(`the agent is not built (${agentCli} is missing); run \`pnpm build\` at the repository root first`);
  }
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'plc-agent-home-'));
  const proc = spawnLines(process.execPath, [agentCli, 'run'], {
    PLUGIN_LICENSE_HOME: home,
    PLUGIN_LICENSE_SOCKET: options.socket,
    PLUGIN_LICENSE_BASE_URL: options.baseUrl,
  });
  try {
    await proc.waitFor(/"ready"\s*:\s*true/, 'its ready line');
  } catch (error) {
    await proc.stop('SIGKILL');
    rmSync(home, { recursive: true, force: true });
    throw error;
  }
  return {
    socket: options.socket,
    home,
    process: proc,
    async stop(keepHome) {
      const code = await proc.stop('SIGTERM');
      if (keepHome === undefined) rmSync(home, { recursive: true, force: true });
      return code;
    },
  };
}

/** One JSON-RPC request over the agent socket, as a companion app would send it. */
export function rpc(socket: string, method: string, params: unknown, timeoutMs = 10_000): Promise<{ result?: unknown; error?: { code: number; message: string } }> {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    let pending = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
    }, timeoutMs);
    conn.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    conn.on('connect', () => conn.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) + '\n'));
    conn.on('data', (chunk) => {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const message = JSON.parse(pending.slice(0, nl)) as { id?: unknown; result?: unknown; error?: { code: number; message: string } };
        pending = pending.slice(nl + 1);
        if (message.id === 1) {
          clearTimeout(timer);
          conn.end();
          resolve(message);
          return;
        }
      }
    });
  });
}

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
