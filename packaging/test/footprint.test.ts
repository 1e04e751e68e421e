// The packaged executable's agent, idle after an activation, against the same agent run as a
// Node script by the same Node 22.23.2 (issue 28 item 6). No timing: both are measured at the
// same point (an activation answered, a `check` answered), each run from a copy made as the
// Linux installer makes one (`cp`, install.sh), so both binaries came into the page cache the
// same way (see packaging/README.md, "Footprint": a file written in one large write is cached
// in large folios, and a page fault maps its whole folio into the process, which counted ~15 MB
// of never-touched executable pages in the RSS the benchmark compared).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { AgentClient } from '@plugin-license/agent';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { startService, type TestService } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { packageRelease, parseOptions } from '../src/build.mjs';
// @ts-expect-error: plain JavaScript, no types
import { nodeBinary } from '../src/node-binaries.mjs';

const AGENT_SCRIPT = join(import.meta.dirname, '..', '..', 'agent', 'bin', 'plugin-license-agent.js');
/** The budget of issue 28: the executable's agent within 3 MB of the node script's. */
const BUDGET_KB = 3 * 1024;

let service: TestService<Emulator>;
let dir: string;
let exe: string;
let node: string;
const children: ChildProcess[] = [];

/** A copy of `file` in a folder of its own, made as install.sh makes the installed program. */
function installedCopy(file: string, name: string): string {
  const into = join(dir, name);
  mkdirSync(into);
  const to = join(into, basename(file));
  execFileSync('cp', ['--', file, to]);
  return to;
}

beforeAll(async () => {
  service = await startService(startEmulator);
  dir = mkdtempSync(join(tmpdir(), 'plc-footprint-'));
  const options = parseOptions(['--targets', 'linux-x64', '--base-url', service.emulator.baseUrl, '--name', 'acme-license', '--out', join(dir, 'release')]);
  const manifest = (await packageRelease(options, { log: () => {} })) as { targets: Array<{ file: string }> };
  exe = installedCopy(join(dir, 'release', manifest.targets[0]!.file), 'exe');
  node = installedCopy((await nodeBinary('linux-x64', join(dir, 'node-package'))) as string, 'node');
}, 300_000);

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Agent {
  child: ChildProcess;
  socket: string;
  home: string;
  stop(): Promise<number | null>;
}

/** `agent run` of one side, in a home of its own (short: sun_path), up to its ready line. */
async function startAgent(side: 'exe' | 'node', home?: string): Promise<Agent> {
  const h = home ?? mkdtempSync(join('/tmp', `plf-${side}-`));
  const env = { PATH: '/usr/bin:/bin', HOME: h, PLUGIN_LICENSE_HOME: h, PLUGIN_LICENSE_BASE_URL: service.emulator.baseUrl, PLUGIN_LICENSE_SOCKET: join(h, 'a.sock') };
  const child = side === 'exe' ? spawn(exe, ['agent', 'run'], { env, stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(node, [AGENT_SCRIPT, 'run'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const line = await new Promise<string>((ok, fail) => {
    createInterface({ input: child.stdout! }).once('line', ok);
    child.once('exit', (c) => fail(new Error(`the ${side} agent exited (${c}): ${stderr}`)));
  });
  const stop = (): Promise<number | null> => {
    if (child.exitCode !== null) return Promise.resolve(child.exitCode);
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    child.kill('SIGTERM');
    return exited;
  };
  return { child, socket: (JSON.parse(line) as { socket: string }).socket, home: h, stop };
}

/** An activation and a `check`, answered: the agent's idle state after an activation. */
async function activateAndCheck(agent: Agent): Promise<void> {
  const client = await AgentClient.connect({ socketPath: agent.socket, reconnect: false });
  try {
    expect(await client.activate(service.emulator.projectId, await service.code(2))).toMatchObject({ valid: true });
    expect(await client.check(service.emulator.projectId)).toMatchObject({ valid: true });
  } finally {
    client.close();
  }
}

/** kB by kind, from /proc/PID/smaps: what the program allocated, and the pages of its own binary. */
function footprint(pid: number, binary: string): { rss: number; anonymous: number; binary: number } {
  const out = { rss: 0, anonymous: 0, binary: 0 };
  let ofBinary = false;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      ofBinary = head[1] === binary;
      continue;
    }
    const field = /^(Rss|Anonymous):\s+(\d+) kB/.exec(line);
    if (!field) continue;
    const kb = Number(field[2]);
    if (field[1] === 'Anonymous') out.anonymous += kb;
    else {
      out.rss += kb;
      if (ofBinary) out.binary += kb;
    }
  }
  return out;
}

describe('the executable agent idle after an activation', () => {
  it('loads the parser and the agent only: neither the other commands (the manager page and its assets) nor undici', async () => {
    const agent = await startAgent('exe');
    try {
      await activateAndCheck(agent);
    } finally {
      expect(await agent.stop()).toBe(0);
    }
    // run-bundle writes one code cache per file it loaded (at exit at the latest): the record of
    // what was read from the blob and compiled.
    const cached = readdirSync(join(agent.home, 'cache', 'compile')).map((f) => f.replace(/-v\d.*$/, ''));
    expect(cached.sort()).toEqual(['exe-agent', 'exe-cli']);
    rmSync(agent.home, { recursive: true, force: true });
  });

  it('holds within 3 MB of the node script on the same Node, both installed by cp: its own memory, its binary pages, and in all', async () => {
    const measured: Record<string, ReturnType<typeof footprint>> = {};
    for (const side of ['node', 'exe'] as const) {
      // A first start writes the code cache (at exit), so the measured start runs from it, as
      // every start after a customer's first one does, and writes nothing while measured.
      const first = await startAgent(side);
      expect(await first.stop()).toBe(0);
      const agent = await startAgent(side, first.home);
      try {
        await activateAndCheck(agent);
        measured[side] = footprint(agent.child.pid!, side === 'exe' ? exe : node);
      } finally {
        expect(await agent.stop()).toBe(0);
        rmSync(agent.home, { recursive: true, force: true });
      }
    }
    const { node: n, exe: e } = measured as Record<'node' | 'exe', ReturnType<typeof footprint>>;
    const said = `executable ${JSON.stringify(e)} kB against the node script ${JSON.stringify(n)} kB`;
    expect(n.binary, said).toBeGreaterThan(0);
    expect(e.anonymous, said).toBeLessThanOrEqual(n.anonymous + BUDGET_KB);
    expect(e.binary, said).toBeLessThanOrEqual(n.binary + BUDGET_KB);
    expect(e.rss, said).toBeLessThanOrEqual(n.rss + BUDGET_KB);
  });
});
