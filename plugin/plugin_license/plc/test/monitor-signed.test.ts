// plc::Monitor built with the vendor's keys (MonitorOptions::ticketKeys), driven by monitor-probe
// (compiled with c++) as a host: only a ticket the vendor signed makes it play (docs/signed-ticket.md).
// The files are written by the library's own writers (encodeTicket, encodeSignedTicket) for this
// computer's machine id; the agent is a fake one on the user's socket answering "valid", which
// must unlock nothing without a signed ticket that verifies.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSignedTicket, encodeTicket, machineIdOf, parseTicketKeys, signedTicketPath, ticketKeyOf, ticketPath } from '@plugin-license/licensing';
import { answeringPeer } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLines } from './helpers/run.js';
import { run } from './helpers/run.js';
import { C_FLAGS, compile, CXX_FLAGS, hasCc, hasCxx, PLC_C } from './helpers/toolchain.js';

const linux = process.platform === 'linux';
const PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const HINT = 'abcd…1234';

function rawMachineId(): string {
  for (const f of ['/var/lib/dbus/machine-id', '/etc/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').split('\n')[0]!.trim();
  }
  throw new Error('no machine id on this computer');
}

function vendorKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const text = `ed25519:${publicKey.export({ format: 'jwk' }).x!}`;
  return { privateKey, text, kid: parseTicketKeys([text])[0]!.kid };
}

describe.skipIf(!hasCc || !hasCxx || !linux)('plc::Monitor with the vendor\'s keys', () => {
  let dir: string;
  let probe: string;
  let n = 0;
  const vendor = vendorKey();
  const stranger = vendorKey();
  const servers: Server[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plc-monsig-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('c++', [...CXX_FLAGS, '-pthread', 'tools/monitor-probe.cpp', join(dir, 'plc.o'), '-o', (probe = join(dir, 'monitor-probe'))]);
  });
  afterAll(async () => {
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh namespace and home, with writers of its ticket and signed ticket for this computer. */
  function setting() {
    const app = `monsig-${process.pid}-${++n}`;
    const root = mkdtempSync('/tmp/plc-ms-');
    const home = join(root, 'home');
    const raw = rawMachineId();
    const now = Math.floor(Date.now() / 1000);
    const ticket = ticketPath({ namespace: app, home }, PROJECT);
    const signed = signedTicketPath({ namespace: app, home }, PROJECT);
    mkdirSync(join(ticket, '..'), { recursive: true, mode: 0o700 });
    const claims = { app, project_id: PROJECT, machine_id: machineIdOf(raw, app), code_hint: HINT, source: 'online' as const, issued_at: now - 60, valid_until: now + 30 * 86_400 };
    return {
      app,
      env: { PLUGIN_LICENSE_APP: app, PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_SOCKET: join(root, 'agent.sock'), PLUGIN_LICENSE_EXECUTABLE: '' },
      socket: join(root, 'agent.sock'),
      claims,
      writeTicket: () =>
        writeFileSync(ticket, encodeTicket(ticketKeyOf(raw, app), { v: 1, app, project_id: PROJECT, valid: true, reason: null, source: 'online', code_hint: HINT, issued_at: now - 60, valid_until: now + 30 * 86_400 }), { mode: 0o600 }),
      signedText: (over: Partial<typeof claims> = {}, key = vendor) => encodeSignedTicket({ ...claims, ...over }, { privateKey: key.privateKey }),
      writeSigned: (text: string) => writeFileSync(signed, text, { mode: 0o600 }),
    };
  }

  async function load(env: Record<string, string>, keys: string[]): Promise<Record<string, unknown>> {
    const r = await run(probe, ['load', PROJECT, '50', '--no-start', ...keys.flatMap((k) => ['--key', k])], env);
    expect(r.code, r.stderr).toBe(0);
    return jsonLines(r.stdout)[0]!;
  }

  it('plays on the ticket and its signed ticket, and from the first read of all 50 instances', async () => {
    const s = setting();
    s.writeTicket();
    s.writeSigned(s.signedText());
    expect(await load(s.env, [vendor.text])).toMatchObject({ licensed_first_read: 50, state: 'valid', origin: 'ticket', reason: '', connections: 1 });
  });

  it('stays silent on what only the vendor\'s signature can make valid: a ticket alone, a stranger\'s signature, another machine, an ended one, a key typo', async () => {
    const cases: [string, (s: ReturnType<typeof setting>) => void, string[], string][] = [
      ['a valid ticket and no signed ticket (a forged .ticket)', (s) => s.writeTicket(), [vendor.text], 'unsigned'],
      ['a signed ticket by another key', (s) => (s.writeTicket(), s.writeSigned(s.signedText({}, stranger))), [vendor.text], 'cache_invalid'],
      ['a signed ticket for another computer', (s) => (s.writeTicket(), s.writeSigned(s.signedText({ machine_id: `m1_${'0'.repeat(64)}` }))), [vendor.text], 'cache_invalid'],
      ['a signed ticket with its valid_until edited', (s) => (s.writeTicket(), s.writeSigned(s.signedText().replace(/"valid_until":(\d+)/, (_, d: string) => `"valid_until":${Number(d) + 1}`))), [vendor.text], 'cache_invalid'],
      ['a signed ticket that has ended', (s) => (s.writeTicket(), s.writeSigned(s.signedText({ issued_at: s.claims.issued_at - 40 * 86_400, valid_until: s.claims.issued_at - 86_400 }))), [vendor.text], 'grace_expired'],
      ['a key that does not parse (a typo): nothing verifies, never the unsigned rules', (s) => (s.writeTicket(), s.writeSigned(s.signedText())), [`${vendor.text.slice(0, -1)}!`], 'cache_invalid'],
    ];
    for (const [what, make, keys, reason] of cases) {
      const s = setting();
      make(s);
      expect({ what, ...(await load(s.env, keys)) }).toMatchObject({ what, licensed_first_read: 0, state: 'invalid', origin: 'ticket', reason });
    }
    // The same forged .ticket without keys: the old rules, licensed (what the keys are for).
    const s = setting();
    s.writeTicket();
    expect(await load(s.env, [])).toMatchObject({ licensed_first_read: 50, state: 'valid' });
  });

  /** A fake agent on the user's socket answering every check "valid", with `signed` as its signed_ticket (undefined: none). */
  async function fakeAgent(socket: string, signed: string | undefined): Promise<void> {
    const state = { project_id: PROJECT, valid: true, reason: null, source: 'online', code_hint: HINT, activations: 1, max_activations: 3, ...(signed === undefined ? {} : { signed_ticket: signed }) };
    servers.push(
      await answeringPeer(socket, (id, method) => JSON.stringify({ jsonrpc: '2.0', id, result: method === 'subscribe' ? { subscribed: true } : state })),
    );
  }

  /** The probe following the agent a while: its last state line. */
  async function follow(env: Record<string, string>, keys: string[]): Promise<Record<string, unknown>> {
    const r = await run(probe, ['follow', PROJECT, '2', '1500', '--no-start', '--policy', 'keep', ...keys.flatMap((k) => ['--key', k])], env);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonLines(r.stdout);
    expect(lines.at(-1)).toMatchObject({ event: 'done', disagreements: 0 });
    return lines.filter((l) => l.event === 'state').at(-1)!;
  }

  it('a fake agent answering "valid" on the user\'s socket unlocks nothing without a signed ticket that verifies; with one, it plays', async () => {
    const bare = setting();
    await fakeAgent(bare.socket, undefined);
    expect(await follow(bare.env, [vendor.text])).toMatchObject({ origin: 'agent', state: 'invalid', licensed: false, reason: 'unsigned' });
    // Without keys the agent's word is the answer, as before.
    expect(await follow(bare.env, [])).toMatchObject({ origin: 'agent', state: 'valid', licensed: true });

    const forged = setting();
    await fakeAgent(forged.socket, forged.signedText({}, stranger));
    expect(await follow(forged.env, [vendor.text])).toMatchObject({ origin: 'agent', state: 'invalid', licensed: false, reason: 'cache_invalid' });

    const honest = setting();
    await fakeAgent(honest.socket, honest.signedText());
    expect(await follow(honest.env, [vendor.text])).toMatchObject({ origin: 'agent', state: 'valid', licensed: true });
  });
});
