// Product names baked into the executable (`projects` of executable.json, what `pnpm package
// --project ID=NAME` writes): the CLI and the license manager of a real packaged executable name
// each plugin, before and after an activation, against the emulator on loopback. The executable is
// the only place the baked list can come from (no variable or hook stands in for it), so it is
// built here, once for this file.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { runBare, startService, stopProcess, type TestService } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { packageRelease, parseOptions } from '../src/build.mjs';
import { bearer, raw, session } from '../../packages/cli/test/manager-helpers.js';

const REVERB = 'fd9c0e11-3a2b-4c5d-8e9f-0123456789ab';
/** Not baked: shown by its id alone. */
const UNNAMED = '00000000-0000-4000-8000-0000000000ff';

let service: TestService<Emulator>;
let exe: string;
let gain: string;
/** What this file made (processes, folders), undone after it, last first, even when a test failed. */
const undo: Array<() => unknown> = [];

beforeAll(async () => {
  service = await startService(startEmulator);
  undo.push(() => service.close());
  gain = service.emulator.projectId;
  const dir = mkdtempSync(join(tmpdir(), 'plc-names-'));
  undo.push(() => rmSync(dir, { recursive: true, force: true }));
  // One name with text a shell would expand.
  const options = parseOptions(['--targets', 'linux-x64', '--app', 'acme-names', '--base-url', service.emulator.baseUrl, '--name', 'acme-license', '--out', join(dir, 'release'), '--project', `${gain}=Acme Gain`, '--project', `${REVERB}=Acme "Reverb" $HOME *`]);
  const manifest = (await packageRelease(options, { log: () => {} })) as { targets: Array<{ file: string }> };
  exe = join(dir, 'release', manifest.targets[0]!.file);
}, 300_000);

afterAll(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

/** A musician's computer: a short home (sun_path is 107 bytes), no Node on the PATH, nothing of ours in the environment. */
function computer(): NodeJS.ProcessEnv {
  const home = mkdtempSync(join('/tmp', 'pln-'));
  undo.push(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, 'run'), { mode: 0o700 });
  return { PATH: '/usr/bin:/bin', HOME: home, XDG_RUNTIME_DIR: join(home, 'run') };
}

/** The executable run to its end on that computer. */
const run = (args: string[], env: NodeJS.ProcessEnv) => runBare(exe, args, env);

/** A process of the executable, up to its first line (the agent's ready line, the manager's url). */
async function start(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; first: Record<string, unknown>; stop: () => Promise<unknown> }> {
  const child = spawn(exe, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  undo.push(() => child.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const line = await new Promise<string>((ok, fail) => {
    createInterface({ input: child.stdout! }).once('line', ok);
    void exited.then((c) => fail(new Error(`${args.join(' ')} exited (${c}): ${stderr}`)));
  });
  return { child, first: JSON.parse(line) as Record<string, unknown>, stop: () => stopProcess(child, exited, 'SIGTERM') };
}

/** The products the manager's page is given, from its live view's first event. */
async function offered(env: NodeJS.ProcessEnv, args: string[] = []): Promise<unknown> {
  const manager = await start(['manager', '--no-open', '--port', '0', ...args], env);
  try {
    const u = new URL(manager.first.url as string);
    const m = { port: Number(u.port), origin: u.origin, token: u.hash.replace(/^#token=/, '') };
    const events = await raw(m.port, 'GET', '/api/events', bearer(await session(m)));
    return (JSON.parse(/^data: (.*)$/m.exec(events.body)![1]!) as { products: unknown }).products;
  } finally {
    await manager.stop();
  }
}

describe('the baked product names', () => {
  it('the license manager offers every baked plugin by name before any activation; a --project name wins for its id', async () => {
    const env = computer();
    const agent = await start(['agent', 'run'], env);
    try {
      expect(await offered(env)).toEqual([
        { project_id: gain, name: 'Acme Gain' },
        { project_id: REVERB, name: 'Acme "Reverb" $HOME *' },
      ]);
      // What a plugin's "Manage licenses…" passes: its own name wins; an id alone keeps the baked name.
      expect(await offered(env, ['--project', `${REVERB.toUpperCase()}=Acme Reverb 2`, '--project', gain, '--project', UNNAMED])).toEqual([
        { project_id: gain, name: 'Acme Gain' },
        { project_id: REVERB, name: 'Acme Reverb 2' },
        { project_id: UNNAMED, name: null },
      ]);
    } finally {
      await agent.stop();
    }
  });

  it('activate, validate, agent check, agent list, doctor and deactivate name the plugin beside its id; JSON gains "name" only when known', async () => {
    const env = computer();
    const agent = await start(['agent', 'run'], env);
    try {
      const code = await service.code(2);
      const activated = await run(['activate', code, '--project', gain], env);
      expect(activated.code, activated.stderr).toBe(0);
      expect(activated.stdout).toMatch(/^plugin\s+Acme Gain\nproject\s+/m);
      expect(activated.stdout).toContain(gain);

      for (const args of [['validate', '--project', gain], ['agent', 'check', gain]]) {
        const human = await run(args, env);
        expect(human.code, `${args.join(' ')}: ${human.stderr}`).toBe(0);
        expect(human.stdout, args.join(' ')).toMatch(/^plugin\s+Acme Gain$/m);
        const json = await run(['--json', ...args], env);
        expect(JSON.parse(json.stdout).license, args.join(' ')).toMatchObject({ project_id: gain, name: 'Acme Gain', valid: true });
      }

      // Unnamed: no plugin field, no name key; the id alone.
      const unnamed = await run(['--json', 'agent', 'check', UNNAMED], env);
      expect(unnamed.code).toBe(3);
      expect(JSON.parse(unnamed.stdout).license).not.toHaveProperty('name');
      expect((await run(['agent', 'check', UNNAMED], env)).stdout).not.toMatch(/^plugin/m);

      const list = await run(['agent', 'list'], env);
      expect(list.stdout).toMatch(/plugin\s+│?\s*project/);
      expect(list.stdout).toMatch(new RegExp(`Acme Gain\\s+│?\\s*${gain}`));
      expect(JSON.parse((await run(['--json', 'agent', 'list'], env)).stdout).licenses).toEqual([expect.objectContaining({ project_id: gain, name: 'Acme Gain' })]);

      const doctor = await run(['doctor'], env);
      expect(doctor.stdout).toMatch(new RegExp(`ok\\s+Acme Gain \\(${gain}\\): .*stored: valid`));
      const facts = JSON.parse((await run(['--json', 'doctor'], env)).stdout) as { licenses: Array<Record<string, unknown>>; checks: Array<Record<string, unknown>> };
      expect(facts.licenses).toEqual([expect.objectContaining({ project_id: gain, name: 'Acme Gain' })]);
      // The check's name stays the project id (an existing key keeps its meaning).
      expect(facts.checks.filter((c) => c.section === 'licenses').map((c) => c.name)).toEqual([gain]);
      expect(JSON.stringify(facts)).not.toContain(code);

      // The offline steps say it too, a name a shell would expand shown as it is.
      const request = await run(['offline', 'request', '--project', REVERB, '--text'], env);
      expect(request.code, request.stderr).toBe(0);
      expect(request.stdout + request.stderr).toContain(`Request for project Acme "Reverb" $HOME * (${REVERB}) from`);

      const released = await run(['deactivate', '--project', gain], env);
      expect(released.code, released.stderr).toBe(0);
      expect(released.stdout).toMatch(/^plugin\s+Acme Gain$/m);

      expect((await run(['activate', code, '--project', gain], env)).code).toBe(0);
      const all = await run(['deactivate', '--all'], env);
      expect(all.stdout).toBe(`released this computer's slot of Acme Gain (${gain}), through the agent\n`);
      expect((await run(['activate', code, '--project', gain], env)).code).toBe(0);
      const allJson = JSON.parse((await run(['--json', 'deactivate', '--all'], env)).stdout);
      expect(allJson).toEqual({ via: 'agent', released: [gain], skipped: [], failed: [], names: { [gain]: 'Acme Gain' } });
    } finally {
      await agent.stop();
    }
  });
});
