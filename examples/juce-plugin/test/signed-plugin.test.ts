// The example plugin built with a vendor's public key (pnpm build:plugin --ticket-key), loaded as a
// VST3 by the console host with the agent stopped: it plays on a ticket and a signed ticket the
// vendor's key signed for this computer, and stays silent on a forged ticket (a valid MAC, no
// signature), a signed ticket by another key or for another computer, project or app, an expired
// one, and a fake agent answering "valid" on the user's socket; with the relay out of reach the
// signed ticket carries it to its valid_until, then it is silent (docs/signed-ticket.md).
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { dirname, join } from 'node:path';
import { DEFAULT_NAMESPACE, encodeSignedTicket, encodeTicket, machineIdOf, signedTicketPath, ticketKeyOf, ticketPath } from '@plugin-license/licensing';
import { answeringPeer, spawnLines, type LineProcess } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlugin, missingForBuild } from '../build.mjs';
import { startXvfb } from './xvfb.js';

const COMPILED_PROJECT_ID = '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84';
const canBuild = process.platform === 'linux' && (missingForBuild() as string[]).length === 0;
const HINT = 'abcd…1234';
const hasXvfb = spawnSync('Xvfb', ['-help'], { stdio: 'ignore' }).status === 0;

/** An Ed25519 key from a fixed seed (so the keyed build stays the same between runs, and cached). */
function keyOf(label: string) {
  const seed = createHash('sha256').update(`juce-plugin-test/${label}`).digest();
  const privateKey = createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
  return { privateKey, text: `ed25519:${createPublicKey(privateKey).export({ format: 'jwk' }).x!}` };
}

function rawMachineId(): string | undefined {
  for (const f of ['/var/lib/dbus/machine-id', '/etc/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').split('\n')[0]!.trim();
  }
  return undefined;
}

const raw = rawMachineId();

describe.skipIf(!canBuild || raw === undefined)('the example plugin built with the vendor\'s key', () => {
  const vendor = keyOf('vendor');
  const stranger = keyOf('stranger');
  let paths: { vst3: string; testHost: string; uiDriver: string };
  const dirs: string[] = [];
  const stops: Array<() => Promise<unknown>> = [];
  const servers: Server[] = [];

  beforeAll(async () => {
    const buildDir = join(import.meta.dirname, '..', '..', '..', 'dist', 'plugin', 'build-signed');
    paths = (await buildPlugin({ tests: true, quiet: true, buildDir, ticketKeys: [vendor.text], keepInBuildDir: true })) as typeof paths;
  }, 20 * 60_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A home with the files `make` writes, and a socket path no agent listens on unless a test starts one. */
  function place(make: (files: { ticket: () => void; signed: (text: string) => void; claims: Parameters<typeof encodeSignedTicket>[0] }) => void) {
    const root = mkdtempSync(join('/tmp', 'plsig-'));
    dirs.push(root);
    const home = join(root, 'home');
    const ticket = ticketPath({ namespace: DEFAULT_NAMESPACE, home }, COMPILED_PROJECT_ID);
    mkdirSync(dirname(ticket), { recursive: true, mode: 0o700 });
    const now = Math.floor(Date.now() / 1000);
    const times = { issued_at: now - 60, valid_until: now + 30 * 86_400 };
    make({
      ticket: () =>
        writeFileSync(ticket, encodeTicket(ticketKeyOf(raw!, DEFAULT_NAMESPACE), { v: 1, app: DEFAULT_NAMESPACE, project_id: COMPILED_PROJECT_ID, valid: true, reason: null, source: 'online', code_hint: HINT, ...times }), { mode: 0o600 }),
      signed: (text) => writeFileSync(signedTicketPath({ namespace: DEFAULT_NAMESPACE, home }, COMPILED_PROJECT_ID), text, { mode: 0o600 }),
      claims: { app: DEFAULT_NAMESPACE, project_id: COMPILED_PROJECT_ID, machine_id: machineIdOf(raw!, DEFAULT_NAMESPACE), code_hint: HINT, source: 'online', ...times },
    });
    return { home, socket: join(root, 'agent.sock'), plainHome: root };
  }

  /**
   * The host with 2 instances for 30 blocks of 10 ms: its "done" line (plays, silent, first_plays,
   * first_silent). With `clock`, its wall clock is moved by faketime (`+3d`); the monotonic clock
   * that paces the blocks is left alone.
   */
  async function blocks(where: { home: string; socket: string; plainHome: string }, clock?: string): Promise<Record<string, unknown>> {
    const env = { PLUGIN_LICENSE_SOCKET: where.socket, PLUGIN_LICENSE_HOME: where.home, HOME: where.plainHome, PLUGIN_LICENSE_EXECUTABLE: '' };
    const args = [paths.vst3, '2', '60', '--blocks', '30'];
    const p: LineProcess =
      clock === undefined
        ? spawnLines(paths.testHost, args, env, { stdin: true })
        : spawnLines('faketime', ['-f', clock, paths.testHost, ...args], { ...env, FAKETIME_DONT_FAKE_MONOTONIC: '1' }, { stdin: true });
    stops.push(() => p.stop());
    const done = JSON.parse(await p.waitFor(/"event":"done"/, 'the host\'s summary')) as Record<string, unknown>;
    await p.stop();
    return done;
  }

  it('plays from the first block on the ticket and the signed ticket its key signed', async () => {
    const where = place((f) => (f.ticket(), f.signed(encodeSignedTicket(f.claims, { privateKey: vendor.privateKey }))));
    expect(await blocks(where)).toMatchObject({ blocks: 30, plays: 60, silent: 0, first_plays: 0, first_silent: -1 });
  });

  describe.skipIf(!hasXvfb)('its activation panel, under Xvfb', () => {
    let display: ChildProcess;
    let displayName: string;
    beforeAll(async () => {
      ({ display, name: displayName } = await startXvfb());
    });
    afterAll(() => {
      display?.kill();
    });

    // The module README's screenshots of these states are written with UPDATE_SCREENSHOTS=1.
    const shotDir = process.env.UPDATE_SCREENSHOTS === '1' ? join(import.meta.dirname, '..', '..', '..', 'plugin', 'plugin_license', 'screenshots') : mkdtempSync(join('/tmp', 'plsigshots-'));
    afterAll(() => {
      if (process.env.UPDATE_SCREENSHOTS !== '1') rmSync(shotDir, { recursive: true, force: true });
    });

    /** What the panel says of the state (its state line) once it matches, with the agent away; its picture as `shot`.png. */
    async function panelWords(where: ReturnType<typeof place>, match: RegExp, shot: string): Promise<string> {
      const p = spawnLines(paths.uiDriver, [], { DISPLAY: displayName, PLUGIN_LICENSE_SOCKET: where.socket, PLUGIN_LICENSE_HOME: where.home, HOME: where.plainHome, PLUGIN_LICENSE_EXECUTABLE: '', PLUGIN_LICENSE_PROJECT_ID: COMPILED_PROJECT_ID }, { stdin: true });
      stops.push(() => p.stop());
      const line = await p.waitFor(match, `the panel saying ${match}`);
      const file = join(shotDir, `${shot}.png`);
      p.child.stdin!.write(`screenshot ${file}\n`);
      expect(await p.waitFor(/"event":"done"/, 'the screenshot')).not.toContain('"error"');
      expect(readFileSync(file).subarray(1, 4).toString('latin1')).toBe('PNG');
      p.child.stdin!.write('quit\n');
      await p.stop();
      return String((JSON.parse(line) as { state: string }).state);
    }

    it('says who signed the license and until when, or that no license the vendor signed is here', async () => {
      const signed = place((f) => (f.ticket(), f.signed(encodeSignedTicket(f.claims, { privateKey: vendor.privateKey }))));
      const until = new Date((Math.floor(Date.now() / 1000) + 30 * 86_400) * 1000);
      const words = await panelWords(signed, /"event":"panel".*signed by/, 'licensed-signed');
      expect(words).toMatch(/^Licensed with code abcd…1234, signed by the plugin-license example until .+ \(checked offline\)\.$/);
      expect(words).toContain(String(until.getUTCFullYear()));
      const forged = place((f) => f.ticket());
      expect(await panelWords(forged, /"event":"panel".*plays only with a license signed/, 'unsigned')).toBe(
        'This plugin plays only with a license signed by the plugin-license example, and none is here yet. Go online so the license agent fetches one, or activate again.',
      );
    });
  });

  it('is silent from the first block on a forged ticket, another key\'s signature, another computer\'s, project\'s or app\'s, an expired one, and a fake agent answering valid', async () => {
    const cases: [string, ReturnType<typeof place>][] = [
      ['a forged ticket (a valid MAC, no signature)', place((f) => f.ticket())],
      ['signed by another key', place((f) => (f.ticket(), f.signed(encodeSignedTicket(f.claims, { privateKey: stranger.privateKey }))))],
      ['signed for another computer', place((f) => (f.ticket(), f.signed(encodeSignedTicket({ ...f.claims, machine_id: `m1_${'0'.repeat(64)}` }, { privateKey: vendor.privateKey }))))],
    ];
    const now = Math.floor(Date.now() / 1000);
    cases.push(
      ['signed for another project', place((f) => (f.ticket(), f.signed(encodeSignedTicket({ ...f.claims, project_id: '0b7e3c1d-2f4a-4e5b-8c6d-7e8f9a0b1c2d' }, { privateKey: vendor.privateKey }))))],
      ["signed for another vendor's app", place((f) => (f.ticket(), f.signed(encodeSignedTicket({ ...f.claims, app: 'other-vendor' }, { privateKey: vendor.privateKey }))))],
      ['signed, and expired a minute ago', place((f) => (f.ticket(), f.signed(encodeSignedTicket({ ...f.claims, issued_at: now - 31 * 86_400, valid_until: now - 60 }, { privateKey: vendor.privateKey }))))],
    );
    const fake = place(() => undefined);
    const state = { project_id: COMPILED_PROJECT_ID, valid: true, reason: null, source: 'online', code_hint: HINT, activations: 1, max_activations: 3 };
    servers.push(await answeringPeer(fake.socket, (id, method) => JSON.stringify({ jsonrpc: '2.0', id, result: method === 'subscribe' ? { subscribed: true } : state })));
    cases.push(['a fake agent answering valid, no files', fake]);
    for (const [what, where] of cases) expect({ what, ...(await blocks(where)) }).toMatchObject({ what, blocks: 30, plays: 0, silent: 60, first_plays: -1 });
  });

  const hasFaketime = spawnSync('faketime', ['-f', '+0', 'true'], { stdio: 'ignore' }).status === 0;
  const required = process.env.PLUGIN_LICENSE_REQUIRE_JUCE === '1';
  it.skipIf(!hasFaketime && !required)('with the relay out of reach, the signed ticket carries it to its valid_until, then silence (the ticket alone would go on)', async () => {
    // What a computer holds when its agent can no longer reach the relay: the ticket valid for the
    // library's 30 days of grace, the last signed ticket for 2 days. No agent answers here.
    const now = Math.floor(Date.now() / 1000);
    const where = place((f) => (f.ticket(), f.signed(encodeSignedTicket({ ...f.claims, valid_until: now + 2 * 86_400 }, { privateKey: vendor.privateKey }))));
    for (const clock of ['+1d', '+47h']) expect({ clock, ...(await blocks(where, clock)) }).toMatchObject({ clock, plays: 60, silent: 0, first_silent: -1 });
    for (const clock of ['+49h', '+10d']) expect({ clock, ...(await blocks(where, clock)) }).toMatchObject({ clock, plays: 0, silent: 60, first_plays: -1 });
  });
});
