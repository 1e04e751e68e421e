// The sources build cleanly with the system compilers at -Wall -Wextra -Werror, the library
// links no allocator and no signal handling, and the Windows branch cross-compiles.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C_FLAGS, compile, CXX_FLAGS, exampleDir, hasCc, hasCxx, hasMingw, hasTool, MINGW, PLC_C, PLC_DIR } from './helpers/toolchain.js';

const hasMake = hasTool('make');
/** clang with its libFuzzer and sanitizer runtimes (Debian: clang, libclang-rt-dev). */
const hasLibFuzzer = hasTool('clang') && spawnSync('clang', ['-fsanitize=fuzzer', '-x', 'c', '-', '-o', '/dev/null'], { input: 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n', stdio: ['pipe', 'ignore', 'ignore'] }).status === 0;
if (hasCc && !hasLibFuzzer) console.log('plugin-host-c: skipping the fuzzing harness build: no clang with libFuzzer (Debian: apt-get install clang libclang-rt-dev)');
const hasNm = hasTool('nm');
if (hasCc && !hasCxx) console.log('plugin-host-c: skipping the C++ wrapper build: no `c++` on PATH');
if (hasCc && !hasMake) console.log('plugin-host-c: skipping the Makefile build: no `make` on PATH');
if (!hasMingw) {
  console.log(
    `plugin-host-c: skipping the Windows cross-compile: no ${MINGW} on PATH (Debian: apt-get install gcc-mingw-w64-x86-64)`,
  );
}

describe.skipIf(!hasCc)('plugin-host-c builds', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-compile-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles plc.c as C99 and C11 with -Wpedantic, and every C program, without a warning', () => {
    for (const std of ['-std=c99', '-std=c11']) {
      compile('cc', [std, '-Wall', '-Wextra', '-Werror', '-Wpedantic', '-O2', `-I${PLC_DIR}`, '-c', PLC_C, '-o', join(dir, `plc${std}.o`)]);
    }
    compile('cc', [...C_FLAGS, '-Wpedantic', '-pthread', 'host-example.c', PLC_C, '-o', join(dir, 'host-example')]);
    compile('cc', [...C_FLAGS, '-Wpedantic', 'plc-check.c', PLC_C, '-o', join(dir, 'plc-check')]);
    compile('cc', [...C_FLAGS, 'bench-check.c', PLC_C, '-o', join(dir, 'bench-check')]);
    compile('cc', [...C_FLAGS, 'echo-server.c', '-o', join(dir, 'echo-server')]);
  });

  it.skipIf(!hasLibFuzzer)('builds the fuzzing harness (libFuzzer, ASan, UBSan) and replays its corpus clean', () => {
    const fuzzer = join(dir, 'plc-fuzz');
    compile('clang', ['-g', '-O1', '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all', '-Wall', '-Wextra', '-Werror', `-I${PLC_DIR}`, 'fuzz/plc-fuzz.c', '-o', fuzzer]);
    const r = spawnSync(fuzzer, ['-runs=0', join(exampleDir, 'fuzz', 'corpus')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it.skipIf(!hasLibFuzzer)('builds the ticket fuzzer (structure-aware, libFuzzer, ASan, UBSan), replays its corpus clean, then runs 5,000 of its mutations', () => {
    const fuzzer = join(dir, 'ticket-fuzz');
    compile('clang', ['-g', '-O1', '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all', '-Wall', '-Wextra', '-Werror', `-I${PLC_DIR}`, 'fuzz/ticket-fuzz.c', '-o', fuzzer]);
    const replay = spawnSync(fuzzer, ['-runs=0', '-max_len=8192', join(exampleDir, 'fuzz', 'ticket-corpus')], { encoding: 'utf8' });
    expect(replay.status, replay.stderr).toBe(0);
    // A fixed seed and count, into a copy (libFuzzer adds what it finds to the folder it is given).
    const copy = join(dir, 'ticket-corpus');
    cpSync(join(exampleDir, 'fuzz', 'ticket-corpus'), copy, { recursive: true });
    const run = spawnSync(fuzzer, ['-runs=5000', '-seed=1', '-max_len=8192', copy], { encoding: 'utf8' });
    expect(run.status, run.stderr.slice(-4000)).toBe(0);
    expect(run.stderr).toMatch(/Done 5000 runs/);
  });

  it('has a macOS branch (the app-group socket path) that compiles; checked for syntax against this system\'s headers, as no Mac is here', () => {
    compile('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-D__APPLE__', '-D_DEFAULT_SOURCE', '-fsyntax-only', PLC_C]);
  });

  it('keeps a bigger buffer when PLC_BUFFER_SIZE is set for the build', () => {
    compile('cc', [...C_FLAGS, '-DPLC_BUFFER_SIZE=65536', 'plc-check.c', PLC_C, '-o', join(dir, 'plc-check-64k')]);
  });

  it.skipIf(!hasNm)('links no allocator and installs no signal handler', () => {
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc-nm.o')]);
    const r = spawnSync('nm', ['-u', join(dir, 'plc-nm.o')], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const undefinedSymbols = r.stdout.split('\n').map((l) => l.trim().split(/\s+/).pop() ?? '');
    expect(undefinedSymbols).toContain('poll');
    expect(undefinedSymbols).toContain('send');
    for (const forbidden of ['malloc', 'calloc', 'realloc', 'free', 'strdup', 'signal', 'sigaction', 'printf', 'snprintf']) {
      expect(undefinedSymbols).not.toContain(forbidden);
    }
  });

  it.skipIf(!hasCxx)('compiles the C++ wrapper example with -Wall -Wextra -Werror, with and without exceptions', () => {
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc-cxx.o')]);
    compile('c++', [...CXX_FLAGS, '-Wpedantic', '-pthread', 'wrapper-example.cpp', join(dir, 'plc-cxx.o'), '-o', join(dir, 'wrapper-example')]);
    compile('c++', [...CXX_FLAGS, '-fno-exceptions', '-pthread', 'wrapper-example.cpp', join(dir, 'plc-cxx.o'), '-o', join(dir, 'wrapper-noexc')]);
  });

  it.skipIf(!hasMake || !hasCxx)('builds every Makefile target', () => {
    const build = join(dir, 'make');
    const r = spawnSync('make', ['-s', `BUILD=${build}`, 'all'], { cwd: exampleDir, encoding: 'utf8' });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
    for (const name of ['plc.o', 'host-example', 'plc-check', 'wrapper-example', 'bench-check', 'echo-server']) {
      expect(readFileSync(join(build, name)).length).toBeGreaterThan(0);
    }
  });

  it.skipIf(!hasMingw)('cross-compiles the Windows named-pipe branch with mingw-w64', () => {
    const win = (name: string) => join(dir, name);
    compile(MINGW, [...C_FLAGS, '-Wpedantic', '-c', PLC_C, '-o', win('plc-win.o')]);
    compile(MINGW, [...C_FLAGS, 'host-example.c', win('plc-win.o'), '-o', win('host-example.exe')]);
    compile(MINGW, [...C_FLAGS, 'plc-check.c', win('plc-win.o'), '-o', win('plc-check.exe')]);
    for (const exe of ['host-example.exe', 'plc-check.exe']) {
      expect(readFileSync(win(exe)).subarray(0, 2).toString('latin1')).toBe('MZ');
    }
    const nm = spawnSync(`x86_64-w64-mingw32-nm`, ['-u', win('plc-win.o')], { encoding: 'utf8' });
    expect(nm.status).toBe(0);
    for (const api of ['CreateFileA', 'ReadFile', 'WriteFile', 'WaitForMultipleObjects', 'CancelIoEx', 'GetOverlappedResult']) {
      expect(nm.stdout).toContain(api);
    }
  });

  it.skipIf(!hasMingw || !hasMake)('has a working `make windows` target', () => {
    const build = join(dir, 'make-win');
    const r = spawnSync('make', ['-s', `BUILD=${build}`, 'windows'], { cwd: exampleDir, encoding: 'utf8' });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
    expect(readFileSync(join(build, 'windows', 'plc-check.exe')).subarray(0, 2).toString('latin1')).toBe('MZ');
  });
});
