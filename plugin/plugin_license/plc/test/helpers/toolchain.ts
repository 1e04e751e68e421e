import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

/** The C client's own folder, in the JUCE module (its one copy): plc.c, the Makefile, tools/, test/, fuzz/. */
export const PLC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PLC_C = join(PLC_DIR, 'plc.c');
/** The repository's root. */
export const ROOT = join(PLC_DIR, '..', '..', '..');
/** The runnable examples built against plc (host-example.c, wrapper-example.cpp, their Makefile). */
export const EXAMPLES_DIR = join(ROOT, 'examples', 'plugin-host-c');
/** An example's source. */
export const example = (name: string): string => join(EXAMPLES_DIR, name);

export const C_FLAGS = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-O2', `-I${PLC_DIR}`];
export const CXX_FLAGS = ['-std=c++17', '-Wall', '-Wextra', '-Werror', '-O2', `-I${PLC_DIR}`];

/** True when `tool --version` runs: the compiler is installed. */
export function hasTool(tool: string): boolean {
  const r = spawnSync(tool, ['--version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

export const hasCc = hasTool('cc');
export const hasCxx = hasTool('c++');
export const MINGW = 'x86_64-w64-mingw32-gcc';
export const hasMingw = hasTool(MINGW);

if (!hasCc) console.log('plc: skipping the C client tests: no `cc` on PATH (install a C compiler to run them)');

/** Runs a compiler in plc's folder (sources as tools/…, test/…, fuzz/…); throws with its diagnostics when it fails, so a warning shows in the test output. */
export function compile(tool: string, args: string[]): void {
  const r = spawnSync(tool, args, { cwd: PLC_DIR, encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`${tool} ${args.join(' ')} failed (exit ${r.status}):\n${r.stderr}${r.stdout}`);
  }
}

export interface Binaries {
  dir: string;
  plcCheck: string;
  hostExample: string;
  wrapperExample: string | undefined;
  /** plc::Monitor and the agent on demand, driven as a host would (monitor-probe.cpp). */
  monitorProbe: string | undefined;
  benchCheck: string;
  echoServer: string;
  /** Hostile peers (a flood, a stalled listener, a recorder) and a client of one call against them. */
  flood: string;
  cleanup(): void;
}

/** Compiles the library, its tools and the examples with -Wall -Wextra -Werror into a temp folder. */
export function buildAll(): Binaries {
  const dir = mkdtempSync(join(tmpdir(), 'plc-build-'));
  const out = (name: string) => join(dir, name);
  compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', out('plc.o')]);
  compile('cc', [...C_FLAGS, 'tools/plc-check.c', out('plc.o'), '-o', out('plc-check')]);
  compile('cc', [...C_FLAGS, '-pthread', example('host-example.c'), out('plc.o'), '-o', out('host-example')]);
  compile('cc', [...C_FLAGS, 'tools/bench-check.c', out('plc.o'), '-o', out('bench-check')]);
  compile('cc', [...C_FLAGS, 'tools/echo-server.c', '-o', out('echo-server')]);
  compile('cc', [...C_FLAGS, '-pthread', 'test/plc-flood.c', out('plc.o'), '-o', out('plc-flood')]);
  let wrapperExample: string | undefined;
  let monitorProbe: string | undefined;
  if (hasCxx) {
    compile('c++', [...CXX_FLAGS, '-pthread', example('wrapper-example.cpp'), out('plc.o'), '-o', out('wrapper-example')]);
    compile('c++', [...CXX_FLAGS, '-pthread', 'tools/monitor-probe.cpp', out('plc.o'), '-o', out('monitor-probe')]);
    wrapperExample = out('wrapper-example');
    monitorProbe = out('monitor-probe');
  }
  return {
    dir,
    plcCheck: out('plc-check'),
    hostExample: out('host-example'),
    wrapperExample,
    monitorProbe,
    benchCheck: out('bench-check'),
    echoServer: out('echo-server'),
    flood: out('plc-flood'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** `make()` once for the test file (beforeAll), its `cleanup()` after it (afterAll): use the fields inside tests. */
function useForFile<T extends { cleanup(): void }>(make: () => T): T {
  const made = {} as T;
  beforeAll(() => {
    Object.assign(made, make());
  });
  afterAll(() => made.cleanup?.());
  return made;
}

/** Everything built once for the test file, removed after it. */
export const useBinaries = (): Binaries => useForFile(buildAll);

export interface SocketDir {
  dir: string;
  path(name?: string): string;
  cleanup(): void;
}

/** A short private folder under /tmp for sockets (sun_path holds 107 bytes at most). */
export function socketDir(): SocketDir {
  const dir = mkdtempSync('/tmp/plc-');
  return {
    dir,
    path: (name = 'agent.sock') => join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The test file's socket folder, made before its tests and removed after them. */
export const useSocketDir = (): SocketDir => useForFile(socketDir);
