// The example plugin, built with Debian's JUCE, against the real agent and the emulator: loaded as
// a VST3 by a console host (silence, the signal after an activation, silence after a revocation,
// the fade, 50 instances as one client), and its ActivationComponent driven under Xvfb (a code
// typed and Activate clicked, errors in words, the offline exchange with real files, a panel
// closed in the middle of an activation), with a screenshot of every state.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { answerOfflineRequest, DEFAULT_NAMESPACE, encodeTicket, judgeTicket, offlineText, ticketKeyOf, ticketPath, type TicketFields } from '@plugin-license/licensing';
import { AGENT_CLI, agentRpc, asOtherUser, control, eventually, generateCode, otherUserUnavailable, run, shareWithOtherUser, spawnLines, startAgent, type LineProcess, type RunningAgent } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlugin, missingForBuild, PRODUCT } from '../build.mjs';
import { startXvfb } from './xvfb.js';

const COMPILED_PROJECT_ID = '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84';
const required = process.env.PLUGIN_LICENSE_REQUIRE_JUCE === '1';
const hasTool = (tool: string, args = ['--version']): boolean => spawnSync(tool, args, { stdio: 'ignore' }).status === 0;
const missing = missingForBuild() as string[];
const canBuild = process.platform === 'linux' && missing.length === 0;
const hasXvfb = hasTool('Xvfb', ['-help']);
const hasFaketime = hasTool('faketime', ['-f', '+0', 'true']);
const SCREENSHOTS = join(import.meta.dirname, '..', '..', '..', 'plugin', 'plugin_license', 'screenshots');

if (canBuild && otherUserUnavailable() !== undefined) console.log(`juce-plugin: skipping the other-user ticket test: it ${otherUserUnavailable()}`);
if (canBuild && !hasFaketime) console.log('juce-plugin: skipping the faketime test: faketime is missing (Debian: apt-get install faketime)');
if (!canBuild) console.log(`juce-plugin: skipping the plugin tests: missing ${missing.join(', ') || 'Linux'} (Debian: apt-get install cmake g++ juce-modules-source juce-tools xvfb)`);

/** Where a plugin process finds its agent and its tickets. */
interface Where {
  socket: string;
  home: string;
  /** Set: the plugin finds the socket by the protocol's rule under this XDG_RUNTIME_DIR, as a musician's does (no PLUGIN_LICENSE_SOCKET). */
  runtimeDir?: string;
}

interface Paths {
  vst3: string;
  testHost: string;
  uiDriver: string;
}

type Event = Record<string, unknown> & { event: string };
const events = (p: LineProcess): Event[] => p.lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Event);
const waitEvent = async (p: LineProcess, match: RegExp, what: string): Promise<Event> => JSON.parse(await p.waitFor(match, what)) as Event;
/**
 * What a block played, in the host's words: "silent", else how the sound relates to the input
 * ("same": the example's pass-through, "fade": its gate moving, "gain", "other").
 */
const sound = (e: Event): string => (e.state === 'silent' ? 'silent' : String(e.output));
/** The host's audio line of a block that plays the input unchanged (the example, licensed). */
const PLAYS_SAME = /"event":"audio","state":"plays","output":"same"/;

describe('pnpm build:plugin without its tools', () => {
  it('says what to install, and with --if-available skips, saying why', async () => {
    // A PATH with node alone: no cmake, no compiler.
    const bin = mkdtempSync(join('/tmp', 'plnode-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      const script = join(import.meta.dirname, '..', 'build.mjs');
      const env = { PATH: bin, PLUGIN_LICENSE_REQUIRE_JUCE: '' };
      const plain = await run(join(bin, 'node'), [script], env);
      expect(plain.code).toBe(1);
      expect(plain.stderr).toMatch(/^pnpm build:plugin: cmake, a C\+\+ compiler \(g\+\+\)(, JUCE \(juce-modules-source, juce-tools\))? are not installed: install them \(Debian\/Ubuntu: apt-get install cmake g\+\+ juce-modules-source juce-tools\), or pass --juce \/path\/to\/JUCE\n$/);
      const skipped = await run(join(bin, 'node'), [script, '--if-available'], env);
      expect(skipped.code).toBe(0);
      expect(skipped.stderr).toMatch(/^pnpm build:plugin: skipped, cmake, a C\+\+ compiler \(g\+\+\).* missing/);
      // A bad argument is said first, whatever is installed.
      const bad = await run(join(bin, 'node'), [script, '--project-id', 'plugin-1'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe("pnpm build:plugin: --project-id: project id 'plugin-1' is not a UUID; pass the project's id as shown in the portal (for example 123e4567-e89b-12d3-a456-426614174000)\n");
      const app = await run(join(bin, 'node'), [script, '--app', '../acme'], env);
      expect(app.code).toBe(2);
      expect(app.stderr).toMatch(/^pnpm build:plugin: --app: namespace '\.\.\/acme' is not usable as a folder name/);
      const both = await run(join(bin, 'node'), [script, '--tests', '--host-only'], env);
      expect(both).toMatchObject({ code: 2, stdout: '' });
      expect(both.stderr).toMatch(/^pnpm build:plugin: --tests already builds the console host with the plugin; give --host-only alone/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('--help prints the usage at once: the root script builds nothing first', () => {
    const repo = join(import.meta.dirname, '..', '..', '..');
    const built = join(repo, 'packages', 'licensing', 'dist', 'index.js');
    const before = existsSync(built) ? statSync(built).mtimeMs : undefined;
    const started = Date.now();
    const r = spawnSync('pnpm', ['--silent', 'build:plugin', '--help'], { cwd: repo, encoding: 'utf8', timeout: 20_000 });
    expect({ code: r.status, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^Usage: pnpm build:plugin \[--tests \| --host-only\]/);
    expect(r.stdout).toContain('--host-only      only the console VST3 host, to check the audio of your own plugin');
    expect(Date.now() - started).toBeLessThan(15_000);
    // No package was built (pnpm build rewrites every dist).
    expect(existsSync(built) ? statSync(built).mtimeMs : undefined).toBe(before);
  });
});

describe.runIf(required && !canBuild)('the plugin tests in CI', () => {
  it('have what they need (PLUGIN_LICENSE_REQUIRE_JUCE=1)', () => {
    expect({ linux: process.platform === 'linux', missing }).toEqual({ linux: true, missing: [] });
  });
});

describe.skipIf(!canBuild)('the example plugin', () => {
  let paths: Paths;
  let emulator: Emulator;
  const dirs: string[] = [];
  const stops: Array<() => Promise<unknown>> = [];

  const tempDir = (prefix: string): string => {
    const d = mkdtempSync(join('/tmp', prefix));
    dirs.push(d);
    return d;
  };
  const agent = async (home?: string): Promise<RunningAgent> => {
    const a = await startAgent({ socket: join(tempDir('plx-'), 'agent.sock'), baseUrl: emulator.baseUrl, ...(home ? { home } : {}) });
    stops.push(() => a.stop());
    return a;
  };
  // What a plugin process gets: the agent's socket and home (so it reads the tickets that agent
  // writes), and a HOME of its own, so no installed plugin-license is found unless a test names one.
  let plainHome: string;
  const plugged = (where: Where): NodeJS.ProcessEnv => ({
    ...(where.runtimeDir !== undefined ? { XDG_RUNTIME_DIR: where.runtimeDir } : { PLUGIN_LICENSE_SOCKET: where.socket }),
    PLUGIN_LICENSE_HOME: where.home,
    HOME: plainHome,
  });
  const ticketFile = (home: string): string => ticketPath({ namespace: DEFAULT_NAMESPACE, home }, COMPILED_PROJECT_ID);
  /** A home holding only a ticket folder (0700), as the library makes it. */
  const bareHome = (): string => {
    const home = tempDir('plcase-');
    mkdirSync(dirname(ticketFile(home)), { recursive: true, mode: 0o700 });
    return home;
  };
  const code = (): Promise<string> => generateCode(emulator.baseUrl, emulator.token, COMPILED_PROJECT_ID, 2);
  const faults = async (body: Record<string, unknown>): Promise<void> => {
    const res = await fetch(`${emulator.origin}/__emulator/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBeLessThan(300);
  };

  beforeAll(async () => {
    paths = (await buildPlugin({ tests: true, quiet: true })) as Paths;
    // The plugin's project id is compiled in: the emulator takes it.
    emulator = await startEmulator({ projectId: COMPILED_PROJECT_ID });
    plainHome = tempDir('plhome-');
  }, 20 * 60_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await emulator?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('in a console VST3 host', () => {
    const host = (where: Where, instances: number, env: NodeJS.ProcessEnv = {}): LineProcess => {
      const p = spawnLines(paths.testHost, [paths.vst3, String(instances), '120'], { ...plugged(where), ...env }, { stdin: true });
      stops.push(() => p.stop());
      return p;
    };

    it('50 instances are one client: silent until activated, the signal after a fade in, silent after a revocation, with no click', async () => {
      const a = await agent();
      const h = host(a, 50);
      expect(await waitEvent(h, /"event":"loaded"/, 'the plugins loaded')).toMatchObject({ instances: 50, name: PRODUCT });
      expect(await waitEvent(h, /"event":"audio"/, 'the first block')).toMatchObject({ state: 'silent', agree: true });
      const status = await run(process.execPath, [AGENT_CLI, 'status', '--json'], { PLUGIN_LICENSE_SOCKET: a.socket, PLUGIN_LICENSE_HOME: a.home });
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true, connections: 1 });

      const c = await code();
      const asked = Date.now();
      expect((await agentRpc(a.socket, 'activate', { project_id: COMPILED_PROJECT_ID, code: c })).error).toBeUndefined();
      const signal = await waitEvent(h, PLAYS_SAME, 'the signal');
      console.log(`juce-plugin: activation to audio: ${Number(signal.at_ms) - asked} ms (the activate call, the agent's notification, the next block)`);
      const fadeIn = events(h).find((e) => e.event === 'fade')!;
      expect(fadeIn).toMatchObject({ monotonic: true });
      expect(Number(fadeIn.from)).toBeLessThan(0.05);
      expect(Number(fadeIn.to)).toBeGreaterThan(0.95);
      expect(Number(fadeIn.max_step)).toBeLessThan(0.05);
      expect(signal.agree).toBe(true);

      await fetch(`${emulator.origin}/__emulator/codes/${c}/revoke`, { method: 'POST' });
      const revokedAt = Date.now();
      await agentRpc(a.socket, 'refresh', { project_id: COMPILED_PROJECT_ID });
      const silent = await waitEvent(h, /"state":"silent","output":"none","level_db":null,"at_ms":\d+,"block":[1-9]/, 'silence after the revocation');
      console.log(`juce-plugin: revocation to silence: ${Number(silent.at_ms) - revokedAt} ms`);
      const fadeOut = events(h).filter((e) => e.event === 'fade').at(-1)!;
      expect(fadeOut).toMatchObject({ monotonic: true });
      expect(Number(fadeOut.from)).toBeGreaterThan(0.95);
      expect(Number(fadeOut.to)).toBeLessThan(0.05);
      expect(events(h).filter((e) => e.event === 'audio').map((e) => [sound(e), e.agree])).toEqual([
        ['silent', true],
        ['fade', true],
        ['same', true],
        ['fade', true],
        ['silent', true],
      ]);
    });

    it('--help answers as help does: the usage on standard output, exit 0; an unknown option is a usage error', async () => {
      const help = await run(paths.testHost, ['--help']);
      expect(help).toMatchObject({ code: 0, stderr: '' });
      expect(help.stdout).toMatch(/^usage: plugin-license-test-host PLUGIN\.vst3 \[INSTANCES\] \[SECONDS\] \[--blocks N\]\n/);
      expect(help.stdout).toContain('-h, --help');
      expect((await run(paths.testHost, ['-h'])).stdout).toBe(help.stdout);
      const bad = await run(paths.testHost, ['--bogus']);
      expect(bad).toMatchObject({ code: 64, stdout: '' });
      expect(bad.stderr).toMatch(/^plugin-license-test-host: unknown option --bogus\nusage: /);
      expect(await run(paths.testHost, [])).toMatchObject({ code: 64, stdout: '' });
      // --blocks takes a whole number of blocks, at least 1: anything else is said, once, before any load.
      for (const value of [[], ['0'], ['-3'], ['abc'], ['1 2'], ['1.5'], ['']]) {
        const r = await run(paths.testHost, [paths.vst3, '--blocks', ...value]);
        expect({ value, code: r.code, stdout: r.stdout }).toEqual({ value, code: 64, stdout: '' });
        expect(r.stderr).toMatch(/^plugin-license-test-host: --blocks needs a whole number of blocks, at least 1\nusage: /);
      }
    });

    it('PLUGIN_LICENSE_PROJECT_ID overrides the compiled-in project id', async () => {
      const a = await agent();
      expect((await agentRpc(a.socket, 'activate', { project_id: COMPILED_PROJECT_ID, code: await code() })).error).toBeUndefined();
      const other = host(a, 1, { PLUGIN_LICENSE_PROJECT_ID: '0b8a3c2e-5f61-4d7a-9e2b-3c4d5e6f7a8b' });
      const compiled = host(a, 1);
      await waitEvent(compiled, PLAYS_SAME, 'the compiled-in project playing');
      expect(await waitEvent(other, /"event":"audio"/, 'the other project')).toMatchObject({ state: 'silent' });
      // Given the time the compiled one took, the other one would have played by now if it could.
      await waitEvent(compiled, PLAYS_SAME, 'still playing');
      expect(events(other).filter((e) => e.event === 'audio').map((e) => e.state)).toEqual(['silent']);
    });

    interface Done extends Event {
      blocks: number;
      plays: number;
      silent: number;
      same: number;
      gain: number;
      fade: number;
      other: number;
      first_plays: number;
      first_silent: number;
    }
    interface Played {
      ms: number;
      done: Done;
      /** [sound, block] of each change of what instance 0 played. */
      audio: Array<[string, number]>;
    }
    // A safety net against a hang (the run is killed then, and fails for want of its "done"), and
    // the generous bound a run's length is held to: 20 blocks take 200 ms of audio.
    const HOST_DEADLINE_MS = 60_000;
    /** Runs the host for `blocks` blocks to its end, under `prefix` (e.g. faketime) when given. */
    const play = async (where: Where, instances: number, blocks: number, env: NodeJS.ProcessEnv = {}, prefix: string[] = [], built: Pick<Paths, 'testHost' | 'vst3'> = paths): Promise<Played> => {
      const [file, ...before] = prefix.length > 0 ? [...prefix, built.testHost] : [built.testHost];
      const started = Date.now();
      const r = await run(file!, [...before, built.vst3, String(instances), '600', '--blocks', String(blocks)], { ...plugged(where), ...env }, HOST_DEADLINE_MS);
      const ms = Date.now() - started;
      const all = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Event);
      const done = all.find((e) => e.event === 'done') as Done | undefined;
      if (r.code !== 0 || done === undefined) throw new Error(`the host did not finish (exit ${r.code} after ${ms} ms); stdout:\n${r.stdout}\nstderr:\n${r.stderr}`);
      return { ms, done, audio: all.filter((e) => e.event === 'audio').map((e) => [sound(e), Number(e.block)]) };
    };
    /** An agent in `home` activates the plugin for real (the library writes the ticket), then stops. */
    const activatedThenStopped = async (home: string): Promise<Where & { code: string }> => {
      const a = await agent(home);
      const c = await code();
      expect((await agentRpc(a.socket, 'activate', { project_id: COMPILED_PROJECT_ID, code: c })).error).toBeUndefined();
      expect(await a.stop('keep-home')).toBe(0);
      return { socket: a.socket, home, code: c };
    };
    /** This machine's raw id as the library reads it (the OS's, else the generated secret in the home). */
    const rawMachineId = (home: string): string => {
      for (const f of ['/var/lib/dbus/machine-id', '/etc/machine-id', join(home, 'data', 'machine-secret')]) {
        const first = existsSync(f) ? readFileSync(f, 'utf8').split('\n')[0]!.trim() : '';
        if (first !== '') return first;
      }
      throw new Error('no machine id and no machine-secret: the library could not have keyed a ticket');
    };
    const nowSeconds = (): number => Math.floor(Date.now() / 1000);

    describe('with the agent stopped, from the ticket alone', () => {
      let licensed: Where;
      let good: Buffer;
      let fields: TicketFields;
      let raw: string;

      beforeAll(async () => {
        // A home a user could have: spaces, quotes, a glob, a dollar, a backslash, non-ASCII.
        const home = join(tempDir('plt-'), `home with spaces 'q' "dq" $HOME * \\ é`);
        mkdirSync(home);
        licensed = await activatedThenStopped(home);
        good = readFileSync(ticketFile(home));
        fields = JSON.parse(good.toString('utf8').split('\n')[0]!) as TicketFields;
        raw = rawMachineId(home);
        // The forged tickets below use this machine's key: it is the one the library used.
        expect(judgeTicket(good, { app: DEFAULT_NAMESPACE, projectId: COMPILED_PROJECT_ID, now: nowSeconds(), rawMachineId: raw })).toMatchObject({ verdict: 'valid' });
      }, 120_000);

      it('a licensed ticket plays from the first block, in 50 instances, with no fade in', async () => {
        const p = await play(licensed, 50, 30);
        expect(p.audio).toEqual([['same', 0]]);
        expect(p.done).toMatchObject({ blocks: 30, plays: 30 * 50, same: 30 * 50, silent: 0, fade: 0, other: 0, first_plays: 0, first_silent: -1 });
      });

      const DAY = 86_400;
      const OTHER_PROJECT = '0b8a3c2e-5f61-4d7a-9e2b-3c4d5e6f7a8b';
      const forge = (key: Buffer, change: Partial<Omit<TicketFields, 'v'>> & { v?: number }): string => encodeTicket(key, { ...fields, ...change } as TicketFields);
      const key = (): Buffer => ticketKeyOf(raw, DEFAULT_NAMESPACE);
      const hostile: Array<[string, (file: string) => void]> = [
        ['a byte changed (valid_until pushed out)', (f) => writeFileSync(f, good.toString('utf8').replace(/"valid_until":(\d)/, (_, d: string) => `"valid_until":${(Number(d) + 1) % 10}`))],
        ["another machine's key", (f) => writeFileSync(f, forge(ticketKeyOf('0123456789abcdef0123456789abcdef', DEFAULT_NAMESPACE), {}))],
        ["another app's ticket (another vendor on this machine)", (f) => writeFileSync(f, forge(ticketKeyOf(raw, 'another-vendor'), { app: 'another-vendor' }))],
        ["another project's ticket", (f) => writeFileSync(f, forge(key(), { project_id: OTHER_PROJECT }))],
        ['an unknown version', (f) => writeFileSync(f, forge(key(), { v: 2 }))],
        ['an expired ticket', (f) => writeFileSync(f, forge(key(), { issued_at: nowSeconds() - 40 * DAY, valid_until: nowSeconds() - 10 * DAY }))],
        ['a clock two hours before issued_at', (f) => writeFileSync(f, forge(key(), { issued_at: nowSeconds() + 7200, valid_until: nowSeconds() + 30 * DAY }))],
        ['a link to a valid ticket', (f) => {
          writeFileSync(join(dirname(f), 'elsewhere'), good);
          symlinkSync(join(dirname(f), 'elsewhere'), f);
        }],
        ['a FIFO', (f) => expect(spawnSync('mkfifo', [f]).status).toBe(0)],
        ['a link to a FIFO', (f) => {
          expect(spawnSync('mkfifo', [join(dirname(f), 'fifo')]).status).toBe(0);
          symlinkSync(join(dirname(f), 'fifo'), f);
        }],
        ['a folder', (f) => mkdirSync(f)],
        ['a link to /dev/zero', (f) => symlinkSync('/dev/zero', f)],
        ['a 10 MB file (a ticket, then padding)', (f) => writeFileSync(f, Buffer.concat([good, Buffer.alloc(10 * 1024 * 1024, 0x20)]))],
        ['an empty file', (f) => writeFileSync(f, '')],
      ];
      it.each(hostile)('%s at the ticket path: silent from the first block, and the host finishes', async (_, make) => {
        const home = bareHome();
        make(ticketFile(home));
        // The library's reader agrees that it licenses nothing.
        expect(judgeTicket(ticketFile(home), { app: DEFAULT_NAMESPACE, projectId: COMPILED_PROJECT_ID, now: nowSeconds(), rawMachineId: raw }).verdict).not.toMatch(/^(valid|none)$/);
        const p = await play({ socket: join(home, 'no-agent.sock'), home }, 2, 20);
        expect(p.audio).toEqual([['silent', 0]]);
        expect(p.done).toMatchObject({ blocks: 20, silent: 40, plays: 0, fade: 0, first_plays: -1, first_silent: 0 });
        expect(p.ms).toBeLessThan(HOST_DEADLINE_MS);
      });

      it('a revoked license (revoked on the service, found by the agent, which then stopped): silent from the first block', async () => {
        const home = tempDir('plrev-');
        const a = await agent(home);
        const c = await code();
        expect((await agentRpc(a.socket, 'activate', { project_id: COMPILED_PROJECT_ID, code: c })).error).toBeUndefined();
        await control(emulator.origin).revoke(c);
        expect((await agentRpc(a.socket, 'refresh', { project_id: COMPILED_PROJECT_ID })).result).toMatchObject({ valid: false, reason: 'code_revoked' });
        expect(await a.stop('keep-home')).toBe(0);
        expect(judgeTicket(ticketFile(home), { app: DEFAULT_NAMESPACE, projectId: COMPILED_PROJECT_ID, now: nowSeconds(), rawMachineId: raw })).toMatchObject({ verdict: 'not_licensed', reason: 'code_revoked' });
        const p = await play({ socket: a.socket, home }, 2, 20);
        expect(p.audio).toEqual([['silent', 0]]);
        expect(p.done).toMatchObject({ plays: 0, fade: 0, first_plays: -1 });
      });

      it.skipIf(otherUserUnavailable() !== undefined)("another user's ticket the plugin cannot read (the host run as nobody): silent from the first block", async () => {
        const [setpriv, nobody] = asOtherUser([]);
        const asNobody = [setpriv, ...nobody];
        // Nobody plays a copy of the host and the plugin every user can read: the checkout may sit in a private home (root's, 0700).
        const shared = shareWithOtherUser([paths.testHost, paths.vst3]);
        stops.push(async () => shared.cleanup());
        const built = { testHost: shared.path(basename(paths.testHost)), vst3: shared.path(basename(paths.vst3)) };
        const cases: Array<[string, (home: string) => void]> = [
          ['a ticket only its owner (root) can read', (home) => {
            writeFileSync(ticketFile(home), good, { mode: 0o600 });
            chmodSync(dirname(ticketFile(home)), 0o755);
          }],
          ['a tickets folder only its owner (root) can enter', (home) => writeFileSync(ticketFile(home), good, { mode: 0o600 })],
        ];
        for (const [what, make] of cases) {
          const home = bareHome();
          make(home);
          // Everything above the tickets folder is open to nobody; the host's HOME too.
          for (const d of [home, join(home, 'data')]) chmodSync(d, 0o755);
          const p = await play({ socket: join(home, 'no-agent.sock'), home }, 2, 20, { HOME: home }, asNobody, built);
          expect({ what, audio: p.audio, loud: p.done.first_plays }).toEqual({ what, audio: [['silent', 0]], loud: -1 });
        }
      });

      it('no ticket and no agent (none can be started): plays, then silent after the default 5 s of unknown, with a fade', { timeout: 60_000 }, async () => {
        const home = bareHome();
        // 9 s of audio, paced by the host's clock: the policy's 5 s fall inside it, whatever the load.
        const p = await play({ socket: join(home, 'no-agent.sock'), home }, 2, 900);
        expect(p.audio.map(([state]) => state)).toEqual(['same', 'fade', 'silent']);
        expect(p.audio[0]).toEqual(['same', 0]);
        expect(p.done.first_silent).toBeGreaterThanOrEqual(450);
        expect(p.done.first_silent).toBeLessThan(900);
      });

      it.skipIf(!hasFaketime && !required)("faketime: the host's clock past valid_until, or more than an hour before issued_at, is silent; within them it plays", async () => {
        // Only the wall clock moves (the host paces its blocks by the monotonic one).
        const at = (offset: string): Promise<Played> => play(licensed, 2, 20, { FAKETIME_DONT_FAKE_MONOTONIC: '1' }, ['faketime', '-f', offset]);
        expect(fields.valid_until - fields.issued_at).toBeLessThan(35 * DAY);
        for (const offset of ['+40d', '-2h']) {
          const p = await at(offset);
          expect({ offset, audio: p.audio, loud: p.done.first_plays }).toEqual({ offset, audio: [['silent', 0]], loud: -1 });
        }
        // The same ticket under a clock a day ahead, or half an hour behind (within the hour's slack), plays.
        for (const offset of ['+1d', '-30m']) {
          const p = await at(offset);
          expect({ offset, audio: p.audio, silent: p.done.first_silent }).toEqual({ offset, audio: [['same', 0]], silent: -1 });
        }
      });
    });

    describe('the agent started on demand (PLUGIN_LICENSE_EXECUTABLE: the CLI built binary)', () => {
      const CLI_BIN = join(import.meta.dirname, '..', '..', '..', 'packages', 'cli', 'bin', 'plugin-license.js');
      // As on a musician's computer: no PLUGIN_LICENSE_SOCKET; the plugin and the agent it starts
      // find the socket by the protocol's rule under XDG_RUNTIME_DIR.
      const onDemand = (home: string): Where => {
        const runtimeDir = tempDir('plrun-');
        return { socket: join(runtimeDir, DEFAULT_NAMESPACE, 'agent.sock'), home, runtimeDir };
      };
      const starts = (): NodeJS.ProcessEnv => ({ PLUGIN_LICENSE_EXECUTABLE: CLI_BIN, PLUGIN_LICENSE_BASE_URL: emulator.baseUrl });
      /** Agent processes (`agent run`, however started) of this home, by /proc: pids. */
      const agentsOf = (home: string): number[] =>
        readdirSync('/proc')
          .filter((p) => /^\d+$/.test(p))
          .filter((pid) => {
            try {
              const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
              if (!argv.includes('run') || !(argv.includes('agent') || argv.some((a) => a.endsWith('plugin-license-agent.js')))) return false;
              return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`PLUGIN_LICENSE_HOME=${home}`);
            } catch {
              return false; // gone meanwhile, or a zombie
            }
          })
          .map(Number);
      /** Stops the agents a host started for this home (they are nobody's children here). */
      const stopAgentsOf = async (home: string): Promise<void> => {
        for (const pid of agentsOf(home)) process.kill(pid, 'SIGTERM');
        await expect.poll(() => agentsOf(home), { timeout: 20_000, interval: 100 }).toEqual([]);
      };
      const connections = async (where: Where): Promise<number> => {
        const r = await run(process.execPath, [AGENT_CLI, 'status', '--json'], { PLUGIN_LICENSE_SOCKET: where.socket, PLUGIN_LICENSE_HOME: where.home });
        return r.code === 0 ? Number((JSON.parse(r.stdout) as { connections?: number }).connections ?? -1) : -1;
      };
      const audioOf = (h: LineProcess): Array<[unknown, unknown]> => events(h).filter((e) => e.event === 'audio').map((e) => [sound(e), e.block]);
      /** An agent on the on-demand socket that activated the plugin for real (the library wrote the ticket); still running. */
      const licensedAgent = async (prefix: string): Promise<{ where: Where; a: RunningAgent }> => {
        const home = tempDir(prefix);
        const where = onDemand(home);
        const a = await startAgent({ socket: where.socket, baseUrl: emulator.baseUrl, home });
        stops.push(() => a.stop());
        stops.push(() => stopAgentsOf(home));
        expect((await agentRpc(a.socket, 'activate', { project_id: COMPILED_PROJECT_ID, code: await code() })).error).toBeUndefined();
        return { where, a };
      };

      it('SIGKILL of the agent under a playing, licensed host: no silent block, and the host brings one agent back', { timeout: 90_000 }, async () => {
        const { where, a } = await licensedAgent('plkill-');
        const home = where.home;
        const h = host(where, 10, starts());
        expect(await waitEvent(h, /"event":"audio"/, 'the first block')).toMatchObject({ state: 'plays', output: 'same', block: 0, agree: true });
        await expect.poll(() => connections(where), { timeout: 20_000, interval: 100 }).toBe(1);
        const killed = a.process.child.pid!;
        expect(agentsOf(home)).toEqual([killed]);
        a.process.child.kill('SIGKILL');
        await a.process.exited;

        // The host starts the agent again (once), and it answers the host's one connection.
        await expect.poll(() => agentsOf(home).length, { timeout: 30_000, interval: 100 }).toBe(1);
        const back = agentsOf(home)[0];
        expect(back).not.toBe(killed);
        await expect.poll(() => connections(where), { timeout: 30_000, interval: 200 }).toBe(1);
        h.child.stdin!.write('quit\n');
        const done = await waitEvent(h, /"event":"done"/, 'the end of the run');
        expect(done).toMatchObject({ silent: 0, fade: 0, first_silent: -1, first_plays: 0 });
        expect(audioOf(h)).toEqual([['same', 0]]);
        expect(agentsOf(home)).toEqual([back]);
      });

      it('five hosts started at once with no agent running: one agent, and each plays from its first block', { timeout: 90_000 }, async () => {
        const { where, a } = await licensedAgent('plfive-');
        const home = where.home;
        expect(await a.stop('keep-home')).toBe(0);
        expect(agentsOf(home)).toEqual([]);

        const hosts = Array.from({ length: 5 }, () => host(where, 2, starts()));
        for (const h of hosts) expect(await waitEvent(h, /"event":"audio"/, 'the first block')).toMatchObject({ state: 'plays', output: 'same', block: 0 });
        // Every host started one; the socket chose one winner, which all five hosts reach.
        await expect.poll(() => connections(where), { timeout: 30_000, interval: 200 }).toBe(5);
        await expect.poll(() => agentsOf(home).length, { timeout: 20_000, interval: 100 }).toBe(1);
        for (const h of hosts) {
          h.child.stdin!.write('quit\n');
          expect(await waitEvent(h, /"event":"done"/, 'the end of the run')).toMatchObject({ silent: 0, fade: 0, first_silent: -1 });
          expect(audioOf(h)).toEqual([['same', 0]]);
        }
      });
    });
  });

  describe.skipIf(!hasXvfb && !required)('the activation panel, under Xvfb', () => {
    let display: ChildProcess;
    let displayName: string;
    const shots = (): string => process.env.UPDATE_SCREENSHOTS === '1' ? SCREENSHOTS : tempDir('plshots-');
    let shotDir: string;

    beforeAll(async () => {
      if (!hasXvfb && required) throw new Error('Xvfb is missing (Debian: apt-get install xvfb)');
      shotDir = shots();
      mkdirSync(shotDir, { recursive: true });
      ({ display, name: displayName } = await startXvfb());
    });
    afterAll(() => {
      display?.kill();
    });

    type Driver = LineProcess & { send(line: string): Promise<Event>; mark: number };
    const driver = (where: Where, env: NodeJS.ProcessEnv = {}): Driver => {
      const p = spawnLines(paths.uiDriver, [], { DISPLAY: displayName, ...plugged(where), PLUGIN_LICENSE_PROJECT_ID: COMPILED_PROJECT_ID, ...env }, { stdin: true });
      stops.push(() => p.stop());
      let sent = 0;
      const d: Driver = Object.assign(p, {
        // Panel reports before this index came before the last command: waits look after it.
        mark: 0,
        async send(line: string): Promise<Event> {
          const n = ++sent;
          d.mark = events(p).length;
          p.child.stdin!.write(`${line}\n`);
          // The nth "done" line answers the nth command.
          const done = await eventually(() => p.lines.filter((l) => l.includes('"event":"done"'))[n - 1], `the answer to ${line}`, {
            gone: () => (p.child.exitCode === null ? undefined : `the driver exited (${p.child.exitCode})`),
            seen: () => p.lines.join('\n'),
            timeoutMs: 30_000,
          });
          return JSON.parse(done) as Event;
        },
      });
      return d;
    };
    interface PanelMatch {
      state?: RegExp;
      message?: RegExp;
      busy?: boolean;
      licensed?: boolean;
    }
    /** The first panel report since the last command (seen or to come) that matches every field given. */
    const panel = async (d: Driver, want: PanelMatch, what: string): Promise<Event> => {
      const ok = (e: Event): boolean =>
        e.event === 'panel' &&
        (want.state === undefined || want.state.test(String(e.state))) &&
        (want.message === undefined || want.message.test(String(e.message))) &&
        (want.busy === undefined || e.busy === want.busy) &&
        (want.licensed === undefined || e.licensed === want.licensed);
      return eventually(() => events(d).slice(d.mark).find(ok), `the panel showing ${what}`, {
        gone: () => (d.child.exitCode === null ? undefined : `the driver exited (${d.child.exitCode})`),
        seen: () => events(d).filter((e) => e.event === 'panel').map((e) => JSON.stringify(e)).join('\n'),
        timeoutMs: 20_000,
      });
    };
    const shot = async (d: Driver, name: string): Promise<void> => {
      expect(await d.send(`screenshot ${join(shotDir, `${name}.png`)}`)).not.toHaveProperty('error');
      expect(readFileSync(join(shotDir, `${name}.png`)).subarray(1, 4).toString('latin1')).toBe('PNG');
    };

    it('types a code and clicks Activate; errors in words; deactivates; every state on a screenshot', { timeout: 120_000 }, async () => {
      const dir = tempDir('plui-');
      const socket = join(dir, 'agent.sock');
      const home = tempDir('pluihome-');
      const d = driver({ socket, home });
      await panel(d, { state: /^The license agent is not running on this computer\. Reinstall the plugin-license example's software/ }, 'the agent not running');
      await shot(d, 'agent-not-running');

      const a = await startAgent({ socket, baseUrl: emulator.baseUrl, home });
      stops.push(() => a.stop());
      await panel(d, { state: /^Not activated on this computer\. Enter your activation code and press Activate\.$/ }, 'not activated');
      await shot(d, 'not-activated');

      await d.send('type AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE');
      await d.send('click activate');
      const refused = await panel(d, { message: /^Activation failed: / }, 'the refusal');
      expect(refused.message).toMatch(/AAAA…EEEE/);
      expect(refused.message).not.toContain('AAAAAAAA-BBBB');
      await shot(d, 'activation-refused');

      const c = await code();
      // The service holds the activation until the screenshot is taken (no window of time to race).
      await faults({ mode: 'hold', count: 1 });
      // The refused code stayed in the field, to be corrected; typing replaces it.
      expect(await d.send(`type ${c}`)).toMatchObject({ field_chars: c.length });
      await d.send('click activate');
      await control(emulator.origin).held(1);
      await panel(d, { message: /^Activating…$/, busy: true }, 'the activation under way');
      await shot(d, 'activating');
      await faults({ mode: 'none' }); // lets the activation go
      const licensed = await panel(d, { state: /^Licensed on this computer with code /, message: /^Activated\.$/, licensed: true }, 'licensed');
      expect(licensed.state).toContain(`${c.slice(0, 4)}…${c.slice(-4)}`);
      expect(licensed.state).toMatch(/\(1 of 2 computers\)\. Works offline until \d\d \w\w\w \d{4}\./);
      await shot(d, 'licensed');

      await d.send('click deactivate');
      await panel(d, { state: /^Not activated on this computer/, message: /^Deactivated: the slot is free for another computer\.$/ }, 'deactivated');
      await shot(d, 'deactivated');

      // The code again, then revoked on the service: Check now says so.
      await d.send(`type ${c}`);
      await d.send('click activate');
      await panel(d, { licensed: true, busy: false }, 'licensed again');
      await fetch(`${emulator.origin}/__emulator/codes/${c}/revoke`, { method: 'POST' });
      await d.send('click check-now');
      await panel(d, { state: /was revoked\. Contact the plugin-license example for a new code\.$/, licensed: false }, 'revoked');
      await shot(d, 'revoked');
    });

    it('the offline exchange through the panel: the request saved to a file, answered elsewhere, the response loaded', { timeout: 60_000 }, async () => {
      const dir = tempDir('ploff-');
      const a = await agent();
      const d = driver(a);
      await panel(d, { state: /^Not activated on this computer\. Enter your activation code and press Activate\.$/ }, 'not activated');
      const c = await code();
      await d.send(`type ${c}`);
      // A place that can't be written: said, and nothing else changes (the request is kept for the next try).
      await d.send(`save-request ${join(dir, 'no-such-folder', 'request.txt')}`);
      await panel(d, { message: /^Could not write .*no-such-folder\/request\.txt: choose a folder you can write to\.$/, busy: false }, 'the unwritable place');
      const requestFile = join(dir, 'request.txt');
      await d.send(`save-request ${requestFile}`);
      await panel(d, { message: /^Offline request saved to .*request\.txt\. On a computer that is online, answer it with the license manager \(or: plugin-license offline activate request\.txt\), then load the response here\.$/ }, 'the request saved');
      await shot(d, 'offline-request-saved');
      const line = readFileSync(requestFile, 'utf8');
      expect(line).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{8}\n$/);

      // The online step, on another computer (here: the library, as `plugin-license offline activate` runs it).
      const response = await answerOfflineRequest(line, { baseUrl: emulator.baseUrl, validDays: 60, offlineMaxDays: 365 });
      const responseFile = join(dir, 'response.txt');
      writeFileSync(responseFile, `${offlineText(response)}\n`);
      await d.send(`load-response ${responseFile}`);
      // The state may arrive (by the subscription) before the import's own answer: wait for both.
      await panel(d, { state: /^Licensed by an offline activation with code \S+…\S+, until \d\d \w\w\w \d{4}\.$/, message: /^Offline response imported\.$/, licensed: true }, 'licensed offline');
      await shot(d, 'licensed-offline');

      // The same response again: refused in the import's words.
      await d.send(`load-response ${responseFile}`);
      await panel(d, { message: /^The import failed: .*answers no pending request of this machine/ }, 'the repeat refused');
    });

    it('with the agent away, the panel says what the ticket says: licensed until its date, or a license file not valid here', { timeout: 60_000 }, async () => {
      const a = await agent(tempDir('pltkt-'));
      const c = await code();
      expect((await agentRpc(a.socket, 'activate', { project_id: COMPILED_PROJECT_ID, code: c })).error).toBeUndefined();
      expect(await a.stop('keep-home')).toBe(0);
      const d = driver(a);
      const shown = await panel(d, { state: /^Licensed with code \S+…\S+ \(checked offline, until \d\d \w\w\w \d{4}\)\.$/, licensed: true }, 'licensed from the ticket');
      expect(shown.state).toContain(`${c.slice(0, 4)}…${c.slice(-4)}`);
      await shot(d, 'licensed-from-ticket');

      // The same ticket edited by hand (its date pushed out): not valid here, and silent.
      const edited = bareHome();
      writeFileSync(ticketFile(edited), readFileSync(ticketFile(a.home), 'utf8').replace(/"valid_until":(\d)/, (_, n: string) => `"valid_until":${(Number(n) + 1) % 10}`));
      const e = driver({ socket: join(edited, 'no-agent.sock'), home: edited });
      await panel(e, { state: /^The license file on this computer is not valid here — open Manage licenses…$/, licensed: false }, 'the edited ticket');
      await shot(e, 'ticket-not-valid');
    });

    it('"Load offline response" given what is not a response file: words, at once, and the panel keeps answering', { timeout: 60_000 }, async () => {
      const dir = tempDir('plbad-');
      const a = await agent();
      const d = driver(a);
      await panel(d, { state: /^Not activated on this computer/ }, 'not activated');
      const fifo = join(dir, 'response fifo');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      mkdirSync(join(dir, 'a folder'));
      symlinkSync(join(dir, 'a folder'), join(dir, 'link to folder'));
      symlinkSync(fifo, join(dir, 'link to fifo'));
      writeFileSync(join(dir, 'huge.bin'), Buffer.alloc(200_000, 65));
      writeFileSync(join(dir, 'empty.txt'), '');
      const NOT_A_FILE = 'this is not a regular file \\(a pipe, a device or a folder\\); nothing was read: choose the file itself\\.';
      const table: Array<[string, string]> = [
        [fifo, NOT_A_FILE],
        ['/dev/zero', NOT_A_FILE],
        [join(dir, 'a folder'), NOT_A_FILE],
        [join(dir, 'link to folder'), NOT_A_FILE],
        [join(dir, 'link to fifo'), NOT_A_FILE],
        [join(dir, 'huge.bin'), 'the file is far larger than the document it should be; nothing was read: choose the right file\\.'],
        [join(dir, 'missing.txt'), 'no such file\\.'],
      ];
      for (const [file, words] of table) {
        await d.send(`load-response ${file}`);
        const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        await panel(d, { message: new RegExp(`^Could not load ${escaped}: ${words}$`), busy: false }, `${file} refused`);
      }
      await d.send(`load-response ${join(dir, 'empty.txt')}`);
      await panel(d, { message: /empty\.txt is empty: choose the offline response file\.$/, busy: false }, 'an empty file refused');
      // The message thread never waited: the panel still draws and answers.
      await shot(d, 'offline-response-refused');
      expect(d.child.exitCode).toBeNull();
    });

    it('closing the panel in the middle of an activation is safe; the activation completes and a new panel shows it', async () => {
      const a = await agent();
      const d = driver(a);
      await panel(d, { state: /^Not activated on this computer\. Enter your activation code and press Activate\.$/ }, 'not activated');
      const c = await code(); // before the hold, which takes the next service request
      await faults({ mode: 'hold', count: 1 });
      try {
        await d.send(`type ${c}`);
        await d.send('click activate');
        await control(emulator.origin).held(1);
        await panel(d, { busy: true }, 'the activation under way');
        // Closed and opened again while the service still holds the activation.
        expect(await d.send('close')).not.toHaveProperty('error');
        expect(await d.send('open')).not.toHaveProperty('error');
        await control(emulator.origin).releaseHeld();
        await panel(d, { state: /^Licensed on this computer/, licensed: true }, 'the activation, finished by the agent');
      } finally {
        await faults({ mode: 'none' });
      }
      expect(d.child.exitCode).toBeNull();
    });

    it('Manage licenses starts the vendor\'s plugin-license manager', async () => {
      const dir = tempDir('plmgr-');
      const a = await agent();
      const fake = join(dir, 'plugin-license');
      const seen = join(dir, 'args.txt');
      writeFileSync(fake, `#!/bin/sh\necho "$@" > '${seen}'\necho '{"url":"http://127.0.0.1:1/#token=x","pid":1}'\n`);
      chmodSync(fake, 0o755);
      const d = driver(a, { PLUGIN_LICENSE_EXECUTABLE: fake, PLUGIN_LICENSE_APP: 'plugin-license' });
      await panel(d, { state: /^Not activated/ }, 'the panel');
      await d.send('click manage');
      await panel(d, { message: /^The license manager opens in your web browser\.$/ }, 'the manager started');
      // The page offers this plugin by its name (JucePlugin_Name), activated or not.
      await expect.poll(() => (existsSync(seen) ? readFileSync(seen, 'utf8') : '')).toMatch(/^--app plugin-license manager --project [0-9a-f-]{36}=plugin-license example\n$/);
      // Started detached: once it has exited it is nobody's zombie, the host's least of all.
      const children = (): string[] =>
        readdirSync('/proc')
          .filter((p) => /^\d+$/.test(p))
          .map((p) => {
            try {
              return readFileSync(`/proc/${p}/stat`, 'utf8').replace(/^\d+ \(.*\) /, '');
            } catch {
              return '';
            }
          })
          .filter((stat) => stat.split(' ')[1] === String(d.child.pid));
      expect(children()).toEqual([]);

      const notExecutable = join(dir, 'not-executable');
      writeFileSync(notExecutable, '#!/bin/sh\n');
      const denied = driver(a, { PLUGIN_LICENSE_EXECUTABLE: notExecutable });
      await panel(denied, { state: /^Not activated/ }, 'the panel');
      await denied.send('click manage');
      await panel(denied, { message: /^Could not start .*not-executable \(Permission denied\)\.$/ }, 'the manager refused by the system');

      const missing = driver(a, { PLUGIN_LICENSE_EXECUTABLE: join(dir, 'nowhere') });
      await panel(missing, { state: /^Not activated/ }, 'the panel');
      await missing.send('click manage');
      await panel(missing, { message: /^The license manager is not installed \(.*nowhere\)\. Reinstall the plugin-license example's software\.$/ }, 'the manager missing');
    });

    it('Manage licenses where no web browser opens: the real manager\'s address, selectable, with Copy address', { timeout: 90_000 }, async () => {
      const dir = tempDir('plnobrowser-');
      const a = await agent();
      const CLI_BIN = join(import.meta.dirname, '..', '..', '..', 'packages', 'cli', 'bin', 'plugin-license.js');
      // The CLI's built binary, through a wrapper that keeps each manager's pid (exec) so the test
      // stops every one it started (each click starts one), even when it fails.
      const pidFile = join(dir, 'manager.pid');
      const wrapper = join(dir, 'plugin-license');
      writeFileSync(wrapper, `#!/bin/sh\necho $$ >> '${pidFile}'\nexec '${process.execPath}' '${CLI_BIN}' "$@"\n`, { mode: 0o755 });
      const stopManagers = (): void => {
        for (const pid of existsSync(pidFile) ? readFileSync(pidFile, 'utf8').split('\n').filter(Boolean).map(Number) : []) {
          try {
            process.kill(pid, 'SIGTERM');
          } catch {
            // Already gone.
          }
        }
      };
      stops.push(async () => stopManagers());
      // No browser: the opener fails, as xdg-open does with none installed (status 3).
      const noBrowser = join(dir, 'no-browser');
      writeFileSync(noBrowser, '#!/bin/sh\nexit 3\n', { mode: 0o755 });
      const d = driver(a, { PLUGIN_LICENSE_EXECUTABLE: wrapper, PLUGIN_LICENSE_APP: 'plugin-license', BROWSER: noBrowser });
      const before = await panel(d, { state: /^Not activated/ }, 'the panel');
      expect(before.address).toBe('');
      await d.send('click manage');
      const shown = await panel(d, { message: /^No web browser could be opened here \(.*no-browser exited with status 3\)\. Open this address in a web browser on this computer:$/, busy: false }, 'the address');
      const address = String(shown.address);
      expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]{16,}$/);
      const url = new URL(address);
      const token = url.hash.replace(/^#token=/, '');
      expect(String(shown.message)).not.toContain(token);
      // Shown with its Copy address button, which copies exactly it.
      const controls = (await d.send('controls')).value as Array<{ id: string; text: string; visible: boolean }>;
      expect(controls.find((c) => c.id === 'manager-address')).toMatchObject({ visible: true });
      expect(controls.find((c) => c.id === 'copy-address')).toMatchObject({ visible: true, text: 'Copy address' });
      await d.send('click copy-address');
      expect((await d.send('clipboard')).value).toBe(address);
      await shot(d, 'manager-address');
      // The address is live: the manager takes its token (once) and gives the page a session.
      const r = await fetch(`${url.origin}/api/session`, { method: 'POST', headers: { origin: url.origin, 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      expect(r.status).toBe(200);
      // A second click starts a new manager; a browser that opens hides the address again.
      const opens = join(dir, 'opens');
      writeFileSync(opens, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
      const e = driver(a, { PLUGIN_LICENSE_EXECUTABLE: wrapper, PLUGIN_LICENSE_APP: 'plugin-license', BROWSER: opens });
      await panel(e, { state: /^Not activated/ }, 'the panel');
      await e.send('click manage');
      const opened = await panel(e, { message: /^The license manager opens in your web browser\.$/, busy: false }, 'the manager opened');
      expect(opened.address).toBe('');
      expect(readFileSync(pidFile, 'utf8').split('\n').filter(Boolean)).toHaveLength(2);
      stopManagers();
    });

    it('takes a vendor\'s strings and colours, has its documented size, and calls back on activation, deactivation and state changes', { timeout: 90_000 }, async () => {
      const a = await agent();
      const d = driver(a);
      const first = await panel(d, { state: /^Not activated/ }, 'the panel');
      expect(first.size).toEqual([460, 340]);
      // onStateChange, set after the panel was made, hears the state it opened with first.
      await expect.poll(() => events(d).find((e) => e.event === 'callback' && e.name === 'state')).toMatchObject({ valid: false });
      await d.send('style');
      const odd = ` "q" 'a' $HOME * \\ é…`;
      const controls = (await d.send('controls')).value as Array<{ id: string; text: string; visible: boolean }>;
      const text = (id: string): string | undefined => controls.find((c) => c.id === id)?.text;
      expect([text('activate'), text('deactivate'), text('check-now'), text('save-offline-request'), text('load-offline-response'), text('manage'), text('copy-address'), text('code')]).toEqual([
        `Aktivieren${odd}`,
        `Deaktivieren${odd}`,
        'Jetzt prüfen',
        `Anfrage speichern${odd}`,
        `Antwort laden${odd}`,
        `Lizenzen verwalten${odd}`,
        `Adresse kopieren${odd}`,
        `Aktivierungscode${odd}`,
      ]);
      expect(controls.some((c) => c.text === `Lizenz${odd}`)).toBe(true);
      expect((await d.send('pixel 2 2')).value).toBe('ff123456');
      await shot(d, 'styled');

      await d.send(`type ${await code()}`);
      await d.send('click activate');
      await panel(d, { message: /^Activated\.$/, licensed: true }, 'licensed');
      await expect.poll(() => events(d).filter((e) => e.event === 'callback').map((e) => e.name)).toEqual(expect.arrayContaining(['activated', 'state']));
      expect(events(d).some((e) => e.event === 'callback' && e.name === 'state' && e.valid === true)).toBe(true);
      await d.send('click deactivate');
      await panel(d, { message: /^Deactivated: /, licensed: false }, 'deactivated');
      await expect.poll(() => events(d).filter((e) => e.event === 'callback' && e.name === 'deactivated').length).toBe(1);
      expect(events(d).filter((e) => e.event === 'callback' && e.name === 'activated')).toHaveLength(1);
    });
  });
});
