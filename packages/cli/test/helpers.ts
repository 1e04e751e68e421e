import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startService, tempHome, type TestService } from '@plugin-license/test-utils';
import { afterAll, afterEach, beforeAll } from 'vitest';

export const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'plugin-license.js');
export const BUILT = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin', 'cli.cjs');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a customer's shell would have: this home, the emulator, nothing inherited. */
export function envFor(service: TestService<Emulator> | undefined, home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: home,
    PLUGIN_LICENSE_HOME: home,
    PLUGIN_LICENSE_SOCKET: join(home, 'agent.sock'),
    ...(service ? { PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl, PLUGIN_LICENSE_TOKEN: service.emulator.token } : {}),
    ...extra,
  };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Runs the built binary as a child process (asynchronously: the emulator runs in this process). */
export function cli(args: string[], env: Record<string, string>, onSpawn?: (child: ChildProcess) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    onSpawn?.(child);
  });
}

/** Parses stdout as exactly one JSON document (anything else on stdout fails the test). */
export function jsonOf(run: Run): Record<string, unknown> {
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** A suite's emulator (in-process, real HTTP on loopback) and a fresh home per test. */
export function useCliService(): { service: TestService<Emulator>; home: () => string } {
  const service = {} as TestService<Emulator>;
  let current: { dir: string; cleanup: () => void } | undefined;
  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run "pnpm build" first`);
    Object.assign(service, await startService(startEmulator));
  });
  afterAll(async () => {
    await service.close?.();
  });
  afterEach(() => {
    current?.cleanup();
    current = undefined;
  });
  return {
    service,
    home: () => {
      current ??= tempHome('plc-');
      return current.dir;
    },
  };
}
