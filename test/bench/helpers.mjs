// What the benchmarks share: a child process awaited until it is ready, a code from the emulator,
// one raw JSON-RPC request to the agent.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { request } from 'undici';

/**
 * Spawns a program and resolves `ready` at its first stdout line matching `pattern` (default:
 * the {"ready":true,...} line a server prints when it listens). `stderrFd`: a file descriptor its
 * stderr goes to instead of a pipe to this process.
 */
export function startReady(file, args, env, pattern = /"ready"\s*:\s*true/, readyMs = 15_000, stderrFd = undefined) {
  const child = spawn(file, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', stderrFd ?? 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} not ready within ${readyMs} ms; stderr: ${stderr}`)), readyMs);
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (pattern.test(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited (code ${code}) before it was ready; stderr: ${stderr}`));
    });
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A fresh code of the emulator's demo project. */
export async function generateCode(emulator) {
  const res = await request(`${emulator.baseUrl}/plugin-activation/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${emulator.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project_id: emulator.projectId, max_activations: 2, notes: 'bench' }),
  });
  const body = await res.body.text();
  if (res.statusCode !== 201) throw new Error(`generate answered ${res.statusCode}: ${body}`);
  return JSON.parse(body).code;
}

/** One raw JSON-RPC line over the socket, as any client would send it. */
export function rpc(socket, method, params) {
  return new Promise((resolve, reject) => {
    const conn = connect(socket);
    let pending = '';
    const timer = setTimeout(() => {
      conn.destroy();
      reject(new Error(`no answer to ${method} within 10 s`));
    }, 10_000);
    conn.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    conn.on('connect', () => conn.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) + '\n'));
    conn.on('data', (chunk) => {
      pending += chunk;
      const nl = pending.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      conn.end();
      resolve(JSON.parse(pending.slice(0, nl)));
    });
  });
}
