import { createServer, type Server, type Socket } from 'node:net';
import { afterEach } from 'vitest';
import { useSocketDir } from './toolchain.js';

/**
 * A stand-in agent on a real Unix socket, for the answers a real agent never gives (silence,
 * oversized lines, malformed JSON). `onLine` gets each request line and the socket to answer on.
 */
export interface FixtureServer {
  path: string;
  /** Lines received, in order. */
  received: string[];
  connections: number;
  close(): Promise<void>;
}

export type LineHandler = (line: string, socket: Socket) => void;

export async function startFixtureServer(path: string, onLine: LineHandler): Promise<FixtureServer> {
  const sockets = new Set<Socket>();
  const state: FixtureServer = { path, received: [], connections: 0, close };
  const server: Server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        state.received.push(line);
        onLine(line, socket);
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });

  function close(): Promise<void> {
    for (const s of sockets) s.destroy();
    return new Promise((resolve) => server.close(() => resolve()));
  }
  return state;
}

/**
 * The stand-in agent of a test file: `serve(onLine)` starts one on a fresh socket of the file's own
 * folder (closing the one before) and returns its path; `current()` is the one serving. Each is
 * closed after its test, the folder after the file.
 */
export function useFixtureServer(): { serve(onLine: LineHandler): Promise<string>; current(): FixtureServer; dir(): string } {
  const sockets = useSocketDir();
  let fixture: FixtureServer | undefined;
  afterEach(async () => {
    await fixture?.close();
    fixture = undefined;
  });
  return {
    async serve(onLine) {
      await fixture?.close();
      fixture = await startFixtureServer(sockets.path(`f${Math.random().toString(36).slice(2, 8)}.sock`), onLine);
      return fixture.path;
    },
    current() {
      if (fixture === undefined) throw new Error('useFixtureServer: nothing is served (call serve first)');
      return fixture;
    },
    dir: () => sockets.dir,
  };
}

/** The request's id, for answers that must match it. */
export function requestId(line: string): number {
  return (JSON.parse(line) as { id: number }).id;
}

export const SAMPLE_STATE = {
  project_id: 'proj_1',
  valid: true,
  reason: null,
  source: 'online',
  code_hint: 'a1b2…7890',
  activations: 1,
  max_activations: 2,
  validated_at: '2026-11-22T10:00:00Z',
  grace_until: '2026-12-22T10:00:00Z',
  next_check_at: '2026-11-23T09:41:07Z',
};

export function answer(id: number | null, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result }) + '\n';
}
