import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startService as startSharedService, type TestService as SharedTestService } from '@plugin-license/test-utils';
import { startAgent, type AgentOptions, type RunningAgent } from '../src/index.js';

/** A short folder under /tmp: sun_path is only 107 bytes. */
export function shortDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync('/tmp/pla-');
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export type TestService = SharedTestService<Emulator>;

export type Cleanup = () => Promise<void> | void;

/**
 * A test file's emulator (started once, before its tests) and a list of cleanups run after each
 * test, newest first. `service` is filled in by the time the tests run.
 */
export function useTestService(): { service: TestService; cleanups: Cleanup[] } {
  const service = {} as TestService;
  const cleanups: Cleanup[] = [];
  beforeAll(async () => {
    Object.assign(service, await startService());
  });
  afterAll(async () => {
    await service.close?.();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return { service, cleanups };
}

/** The emulator in-process on 127.0.0.1:0 (test-utils' one `startService`). */
export function startService(): Promise<TestService> {
  return startSharedService(startEmulator);
}

export interface TestAgent {
  agent: RunningAgent;
  home: string;
  socketPath: string;
  cleanup(): Promise<void>;
}

/** An agent on a short socket path with its own home, logging to its home's log folder. */
export async function startTestAgent(service: TestService, options: AgentOptions = {}, existing?: { home: string; socketPath: string }): Promise<TestAgent> {
  const dirs = existing ? undefined : shortDir();
  const home = existing?.home ?? join(dirs!.dir, 'home');
  const socketPath = existing?.socketPath ?? join(dirs!.dir, 's', 'agent.sock');
  const agent = await startAgent({
    baseUrl: service.emulator.baseUrl,
    home,
    socketPath,
    namespace: 'agent-test',
    env: {},
    ...options,
  });
  return {
    agent,
    home,
    socketPath,
    cleanup: async () => {
      await agent.close();
      dirs?.cleanup();
    },
  };
}

/** A raw socket that collects what the agent sends, line by line. */
export class RawClient {
  readonly socket: Socket;
  readonly lines: string[] = [];
  closed = false;
  error: NodeJS.ErrnoException | undefined;
  #buffer = '';
  #waiters: Array<() => void> = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let nl: number;
      while ((nl = this.#buffer.indexOf('\n')) !== -1) {
        this.lines.push(this.#buffer.slice(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
      }
      this.#wake();
    });
    socket.on('error', (err) => {
      this.error = err;
    });
    socket.on('close', () => {
      this.closed = true;
      this.#wake();
    });
  }

  static connect(path: string): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = createConnection(path);
      s.once('connect', () => {
        s.off('error', reject);
        resolve(new RawClient(s));
      });
      s.once('error', reject);
    });
  }

  send(text: string | Buffer): void {
    this.socket.write(text);
  }

  request(message: unknown): void {
    this.socket.write(JSON.stringify(message) + '\n');
  }

  /** Waits until `count` lines arrived (or the socket closed); returns them parsed. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- protocol answers are inspected freely in tests
  async next(count = 1): Promise<Array<Record<string, any>>> {
    while (this.lines.length < count && !this.closed) await new Promise<void>((r) => this.#waiters.push(r));
    if (this.lines.length < count) throw new Error(`socket closed after ${this.lines.length} of ${count} lines`);
    return this.lines.splice(0, count).map((l) => JSON.parse(l));
  }

  waitClosed(): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.socket.once('close', () => resolve());
    });
  }

  close(): void {
    this.socket.destroy();
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}

export const UNKNOWN_PROJECT = '0b8a3c2e-5f61-4d7a-9e2b-3c4d5e6f7a8b';
