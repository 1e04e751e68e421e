// `pnpm package --relay URL --ticket-key KEY` (docs/signed-ticket.md, "The client side"): both
// halves baked into the Linux executable, which a customer's computer runs with nothing in its
// environment but a home: its activation goes through the vendor's relay (a real `relay serve`
// process in front of the emulator), and it stores the signed ticket only after verifying it with
// the baked key.
import { execFile } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startEmulator, type Emulator } from '@plugin-license/emulator';
import { makeVendorKey, startRelayProcess, startService, type RunningRelay, type TestService } from '@plugin-license/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { packageRelease, parseOptions } from '../src/build.mjs';

interface Manifest {
  relay_url: string | null;
  ticket_keys: string[];
  targets: Array<{ file: string }>;
}

const key = makeVendorKey();
let service: TestService<Emulator>;
let relay: RunningRelay;
let dir: string;
let exe: string;
let manifest: Manifest;
let code: string;

beforeAll(async () => {
  service = await startService(startEmulator);
  // The code exists before the relay's first listing of the project's codes.
  code = await service.code(2);
  relay = await startRelayProcess({ serviceUrl: service.emulator.baseUrl, token: service.emulator.token, app: 'acme-audio', projects: [service.emulator.projectId], keys: [key] });
  dir = mkdtempSync(join(tmpdir(), 'plc-signed-exe-'));
  const options = parseOptions(['--targets', 'linux-x64', '--app', 'acme-audio', '--base-url', service.emulator.baseUrl, '--relay', relay.baseUrl, '--ticket-key', `ed25519:${key.publicKey}`, '--name', 'acme-license', '--out', join(dir, 'release')]);
  manifest = (await packageRelease(options, { log: () => {} })) as Manifest;
  exe = join(dir, 'release', manifest.targets[0]!.file);
}, 300_000);

afterAll(async () => {
  await relay?.stop();
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function runExe(args: string[], home: string): Promise<{ code: number; stdout: string; stderr: string }> {
  // A customer's computer: no Node on the PATH, nothing of ours in the environment but the home.
  const env = { PATH: '/usr/bin:/bin', HOME: home, XDG_RUNTIME_DIR: join(home, 'run'), PLUGIN_LICENSE_HOME: home, PLUGIN_LICENSE_NO_AUTOSTART: '1' };
  try {
    const { stdout, stderr } = await promisify(execFile)(exe, args, { env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('an executable built with --relay and --ticket-key', () => {
  it('names both in the manifest, and resolves them as its baked defaults', async () => {
    expect(manifest).toMatchObject({ relay_url: relay.baseUrl, ticket_keys: [key.publicKey] });
    const home = mkdtempSync(join('/tmp', 'plx-'));
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    try {
      const doctor = await runExe(['--json', 'doctor'], home);
      const doc = JSON.parse(doctor.stdout) as { configuration: Record<string, { value: unknown; source: string }>; relay: Record<string, unknown> };
      expect(doc.configuration.relay_url).toEqual({ value: relay.baseUrl, source: 'executable' });
      expect(doc.configuration.ticket_keys).toEqual({ value: [key.publicKey], source: 'executable' });
      expect(doc.relay).toMatchObject({ ticket_keys: [key.kid], signer: key.kid });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('activates through the baked relay and stores the signed ticket it verified with the baked key', async () => {
    const home = mkdtempSync(join('/tmp', 'plx-'));
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    try {
      const activated = await runExe(['activate', code, '--project', service.emulator.projectId, '--json'], home);
      expect(activated.code, activated.stderr).toBe(0);
      const signed = readFileSync(join(home, 'data', 'tickets', `${service.emulator.projectId.toLowerCase()}.signed`), 'utf8');
      expect(JSON.parse(activated.stdout)).toMatchObject({ license: { valid: true, signed_ticket: signed } });
      const [line1, line2] = signed.split('\n');
      expect(JSON.parse(line1!)).toMatchObject({ app: 'acme-audio', kid: key.kid, source: 'online' });
      const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.publicKey }, format: 'jwk' });
      expect(verify(null, Buffer.from(`plugin-license/signed-ticket/v1\0${line1}`), publicKey, Buffer.from(line2!.split(':')[2]!, 'base64url'))).toBe(true);
      expect((await service.admin.activation.status(code)).activations).toBe(1);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
