// The sources build cleanly with the system compilers at -Wall -Wextra -Werror, the library
// links no allocator and no signal handling, every compile-out switch leaves its part out (a
// ticket-only object has no socket and no fork in it), the files keep the library's layout, and
// the Windows branch cross-compiles.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { C_FLAGS, compile, CXX_FLAGS, EXAMPLES_DIR, example, hasCc, hasCxx, hasMingw, hasTool, MINGW, PLC_C, PLC_DIR } from './helpers/toolchain.js';

const hasMake = hasTool('make');
/** clang with its libFuzzer and sanitizer runtimes (Debian: clang, libclang-rt-dev). */
const hasLibFuzzer = hasTool('clang') && spawnSync('clang', ['-fsanitize=fuzzer', '-x', 'c', '-', '-o', '/dev/null'], { input: 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n', stdio: ['pipe', 'ignore', 'ignore'] }).status === 0;
if (hasCc && !hasLibFuzzer) console.log('plc: skipping the fuzzing harness build: no clang with libFuzzer (Debian: apt-get install clang libclang-rt-dev)');
const hasNm = hasTool('nm');
if (hasCc && !hasCxx) console.log('plc: skipping the C++ wrapper build: no `c++` on PATH');
if (hasCc && !hasMake) console.log('plc: skipping the Makefile build: no `make` on PATH');
if (!hasMingw) {
  console.log(
    `plc: skipping the Windows cross-compile: no ${MINGW} on PATH (Debian: apt-get install gcc-mingw-w64-x86-64)`,
  );
}

describe.skipIf(!hasCc)('plc builds', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-compile-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles plc.c as C99 and C11 with -Wpedantic, and every C program, without a warning', () => {
    for (const std of ['-std=c99', '-std=c11']) {
      compile('cc', [std, '-Wall', '-Wextra', '-Werror', '-Wpedantic', '-O2', `-I${PLC_DIR}`, '-c', PLC_C, '-o', join(dir, `plc${std}.o`)]);
    }
    compile('cc', [...C_FLAGS, '-Wpedantic', '-pthread', example('host-example.c'), PLC_C, '-o', join(dir, 'host-example')]);
    compile('cc', [...C_FLAGS, '-Wpedantic', 'tools/plc-check.c', PLC_C, '-o', join(dir, 'plc-check')]);
    compile('cc', [...C_FLAGS, 'tools/bench-check.c', PLC_C, '-o', join(dir, 'bench-check')]);
    compile('cc', [...C_FLAGS, 'tools/echo-server.c', '-o', join(dir, 'echo-server')]);
  });

  it.skipIf(!hasLibFuzzer)('builds the fuzzing harness (libFuzzer, ASan, UBSan) and replays its corpus clean', () => {
    const fuzzer = join(dir, 'plc-fuzz');
    compile('clang', ['-g', '-O1', '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all', '-Wall', '-Wextra', '-Werror', `-I${PLC_DIR}`, 'fuzz/plc-fuzz.c', '-o', fuzzer]);
    const r = spawnSync(fuzzer, ['-runs=0', join(PLC_DIR, 'fuzz', 'corpus')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it.skipIf(!hasLibFuzzer)('builds the ticket fuzzer (structure-aware, libFuzzer, ASan, UBSan), replays its corpus clean, then runs 5,000 of its mutations', () => {
    const fuzzer = join(dir, 'ticket-fuzz');
    compile('clang', ['-g', '-O1', '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all', '-Wall', '-Wextra', '-Werror', `-I${PLC_DIR}`, 'fuzz/ticket-fuzz.c', '-o', fuzzer]);
    const replay = spawnSync(fuzzer, ['-runs=0', '-max_len=8192', join(PLC_DIR, 'fuzz', 'ticket-corpus')], { encoding: 'utf8' });
    expect(replay.status, replay.stderr).toBe(0);
    // A fixed seed and count, into a copy (libFuzzer adds what it finds to the folder it is given).
    const copy = join(dir, 'ticket-corpus');
    cpSync(join(PLC_DIR, 'fuzz', 'ticket-corpus'), copy, { recursive: true });
    // -reload=0: libFuzzer would otherwise read the folder again each second and count those runs too.
    const run = spawnSync(fuzzer, ['-runs=5000', '-seed=1', '-reload=0', '-max_len=8192', copy], { encoding: 'utf8' });
    expect(run.status, run.stderr.slice(-4000)).toBe(0);
    expect(run.stderr).toMatch(/Done 5000 runs/);
  });

  it.skipIf(!hasLibFuzzer)('builds the signed-ticket and Ed25519 fuzzer (libFuzzer, ASan, UBSan), replays its corpus clean, then runs 300 of its mutations', () => {
    const fuzzer = join(dir, 'signed-fuzz');
    compile('clang', ['-g', '-O1', '-fsanitize=fuzzer,address,undefined', '-fno-sanitize-recover=all', '-Wall', '-Wextra', '-Werror', `-I${PLC_DIR}`, 'fuzz/signed-fuzz.c', '-o', fuzzer]);
    const replay = spawnSync(fuzzer, ['-runs=0', '-max_len=8192', join(PLC_DIR, 'fuzz', 'signed-corpus')], { encoding: 'utf8' });
    expect(replay.status, replay.stderr).toBe(0);
    const copy = join(dir, 'signed-corpus');
    cpSync(join(PLC_DIR, 'fuzz', 'signed-corpus'), copy, { recursive: true });
    const run = spawnSync(fuzzer, ['-runs=300', '-seed=1', '-reload=0', '-max_len=8192', copy], { encoding: 'utf8' });
    expect(run.status, run.stderr.slice(-4000)).toBe(0);
    expect(run.stderr).toMatch(/Done 300 runs/);
  }, 180_000); // each run signs and verifies up to three times under ASan: a minute on a loaded 2-core machine

  it('has a macOS branch (the app-group socket path) that compiles; checked for syntax against this system\'s headers, as no Mac is here', () => {
    compile('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', '-D__APPLE__', '-D_DEFAULT_SOURCE', '-fsyntax-only', PLC_C]);
  });

  it('keeps a bigger buffer when PLC_BUFFER_SIZE is set for the build', () => {
    compile('cc', [...C_FLAGS, '-DPLC_BUFFER_SIZE=65536', 'tools/plc-check.c', PLC_C, '-o', join(dir, 'plc-check-64k')]);
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
    compile('c++', [...CXX_FLAGS, '-Wpedantic', '-pthread', example('wrapper-example.cpp'), join(dir, 'plc-cxx.o'), '-o', join(dir, 'wrapper-example')]);
    compile('c++', [...CXX_FLAGS, '-fno-exceptions', '-pthread', example('wrapper-example.cpp'), join(dir, 'plc-cxx.o'), '-o', join(dir, 'wrapper-noexc')]);
  });

  it.skipIf(!hasMake || !hasCxx)('builds every Makefile target: plc\'s (the library, its tools) and the examples\'', () => {
    const built = (cwd: string, build: string, names: string[]) => {
      const r = spawnSync('make', ['-s', `BUILD=${build}`, 'all'], { cwd, encoding: 'utf8' });
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
      for (const name of names) expect(readFileSync(join(build, name)).length).toBeGreaterThan(0);
    };
    built(PLC_DIR, join(dir, 'make'), ['plc.o', 'plc-check', 'plc-ticket', 'monitor-probe', 'bench-check', 'echo-server']);
    built(EXAMPLES_DIR, join(dir, 'make-examples'), ['plc.o', 'host-example', 'wrapper-example']);
  });

  it.skipIf(!hasMingw)('cross-compiles the Windows named-pipe branch with mingw-w64', () => {
    const win = (name: string) => join(dir, name);
    compile(MINGW, [...C_FLAGS, '-Wpedantic', '-c', PLC_C, '-o', win('plc-win.o')]);
    compile(MINGW, [...C_FLAGS, example('host-example.c'), win('plc-win.o'), '-o', win('host-example.exe')]);
    compile(MINGW, [...C_FLAGS, 'tools/plc-check.c', win('plc-win.o'), '-o', win('plc-check.exe')]);
    for (const exe of ['host-example.exe', 'plc-check.exe']) {
      expect(readFileSync(win(exe)).subarray(0, 2).toString('latin1')).toBe('MZ');
    }
    const nm = spawnSync(`x86_64-w64-mingw32-nm`, ['-u', win('plc-win.o')], { encoding: 'utf8' });
    expect(nm.status).toBe(0);
    for (const api of ['CreateFileA', 'ReadFile', 'WriteFile', 'WaitForMultipleObjects', 'CancelIoEx', 'GetOverlappedResult']) {
      expect(nm.stdout).toContain(api);
    }
  });

  it.skipIf(!hasMingw || !hasMake)('has a working `make windows` target, in plc\'s folder and the examples\'', () => {
    for (const [cwd, exe] of [[PLC_DIR, 'plc-check.exe'], [PLC_DIR, 'plc-ticket.exe'], [EXAMPLES_DIR, 'host-example.exe']] as const) {
      const build = join(dir, `make-win-${exe}`);
      const r = spawnSync('make', ['-s', `BUILD=${build}`, 'windows'], { cwd, encoding: 'utf8' });
      expect(r.stderr + r.stdout).toBe('');
      expect(r.status).toBe(0);
      expect(readFileSync(join(build, 'windows', exe)).subarray(0, 2).toString('latin1')).toBe('MZ');
    }
  });
});

/** The three parts and what each switch leaves out. */
const PARTS = [
  { define: 'PLC_NO_AGENT_CLIENT', exports: ['plc_init', 'plc_check', 'plc_wait_change', 'plc_waker_open', 'plc_describe', 'plc_default_socket_path', 'plc_read_document'] },
  { define: 'PLC_NO_AGENT_START', exports: ['plc_start_agent', 'plc_start_program', 'plc_default_executable'] },
  { define: 'PLC_NO_TICKET', exports: ['plc_ticket_check', 'plc_ticket_judge', 'plc_raw_machine_id', 'plc_ticket_path', 'plc_ticket_check_signed', 'plc_answer_judge', 'plc_ed25519_verify', 'plc_ticket_key_parse'] },
];
/** Every build with one or two parts left out (all three is refused: nothing would be left). */
const BUILDS = [1, 2, 3, 4, 5, 6].map((mask) => PARTS.filter((_, i) => (mask & (1 << i)) !== 0));

describe.skipIf(!hasCc || !hasNm)('plc\'s compile-out switches', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-switches-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The symbols an object defines (T) and the ones it takes from elsewhere (U). */
  const symbols = (nm: string, object: string): { defined: string[]; undefined: string[] } => {
    const r = spawnSync(nm, [object], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const rows = r.stdout.split('\n').map((l) => l.trim().split(/\s+/));
    return { defined: rows.filter((c) => c.length === 3 && c[1] === 'T').map((c) => c[2]!), undefined: rows.filter((c) => c[0] === 'U').map((c) => c[1]!) };
  };

  it.each(BUILDS.map((left) => [left.map((p) => p.define).join(' '), left] as const))('builds without a warning with %s, and leaves exactly those parts out', (_name, left) => {
    const defines = left.map((p) => `-D${p.define}`);
    const object = join(dir, `plc-${left.map((p) => p.define).join('-')}.o`);
    compile('cc', [...C_FLAGS, '-Wpedantic', ...defines, '-c', PLC_C, '-o', object]);
    compile('cc', ['-std=c11', '-Wall', '-Wextra', '-Werror', ...defines, '-D__APPLE__', '-D_DEFAULT_SOURCE', '-fsyntax-only', PLC_C]);
    const { defined } = symbols('nm', object);
    for (const part of PARTS) {
      for (const name of part.exports) expect({ name, defined: defined.includes(name) }).toEqual({ name, defined: !left.includes(part) });
    }
    expect(defined).toContain('plc_strerror');
    if (hasMingw) compile(MINGW, [...C_FLAGS, '-Wpedantic', ...defines, '-c', PLC_C, '-o', `${object}.win`]);
  });

  it('a plugin that only judges its ticket links no socket, pipe or process start (POSIX and Windows)', () => {
    const ticketOnly = ['-DPLC_NO_AGENT_CLIENT', '-DPLC_NO_AGENT_START'];
    compile('cc', [...C_FLAGS, ...ticketOnly, '-c', PLC_C, '-o', join(dir, 'ticket-only.o')]);
    const posix = symbols('nm', join(dir, 'ticket-only.o')).undefined;
    for (const call of ['socket', 'connect', 'poll', 'send', 'recv', 'fork', 'execve', 'setsid', 'waitpid', 'pipe', 'pipe2']) expect(posix).not.toContain(call);
    expect(posix).toContain('open'); // the ticket is read all the same
    if (hasMingw) {
      compile(MINGW, [...C_FLAGS, ...ticketOnly, '-c', PLC_C, '-o', join(dir, 'ticket-only-win.o')]);
      const windows = symbols('x86_64-w64-mingw32-nm', join(dir, 'ticket-only-win.o')).undefined.join(' ');
      for (const call of ['CreateFileA', 'WaitNamedPipeA', 'CreateProcessW', 'CancelIoEx', 'GetNamedPipeServerProcessId']) expect(windows).not.toContain(call);
      expect(windows).toContain('RegGetValueW');
    }
  });

  it('refuses to build with every part left out, in words', () => {
    const r = spawnSync('cc', [...C_FLAGS, '-DPLC_NO_AGENT_CLIENT', '-DPLC_NO_AGENT_START', '-DPLC_NO_TICKET', '-fsyntax-only', PLC_C], { cwd: PLC_DIR, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/leave nothing to build/);
  });
});

describe('plc\'s files', () => {
  const src = join(PLC_DIR, 'src');
  const files = ['plc.c', ...readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => /\.[ch]$/.test(f)).map((f) => join('src', f))];

  it('are a concern each, none over 800 lines', () => {
    expect(files.length).toBeGreaterThan(20);
    const long = files.map((f) => [f, readFileSync(join(PLC_DIR, f), 'utf8').split('\n').length] as const).filter(([, n]) => n > 800);
    expect(long).toEqual([]);
  });

  it('choose an OS by the folder, never by a conditional inside a function', () => {
    const inside: string[] = [];
    for (const f of files) {
      let depth = 0;
      readFileSync(join(PLC_DIR, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (depth > 0 && /^\s*#\s*(if|ifdef|ifndef|elif|else)\b/.test(line)) inside.push(`${f}:${i + 1}: ${line.trim()}`);
          const code = line.replace(/"(\\.|[^"\\])*"|'(\\.|[^'\\])*'|\/\*.*?\*\/|\/\/.*$/g, '');
          depth += (code.match(/\{/g) ?? []).length - (code.match(/\}/g) ?? []).length;
        });
    }
    expect(inside).toEqual([]);
  });
});
