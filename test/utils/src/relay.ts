// The vendor's license relay as the client side's tests meet it: a vendor key made with
// node:crypto, and the relay as a real process (the built CLI's `plugin-license relay serve`) in
// front of a service (the emulator).
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnLines, type LineProcess } from './processes.js';

/** The built CLI; child processes run dist, so `pnpm build` comes first. */
export const PLUGIN_LICENSE_CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../../../packages/cli/bin/plugin-license.js');

/** A vendor's signing key: the PKCS#8 PEM the relay holds, the public key a plugin trusts, and its id. */
export interface VendorKey {
  pem: string;
  /** The private key's 32-byte seed, unpadded base64url (the other form RELAY_SIGNING_KEY takes). */
  seed: string;
  /** Unpadded base64url of the raw 32 bytes (what `offline keygen` prints). */
  publicKey: string;
  /** The first 8 bytes of the SHA-256 of the raw key, hex. */
  kid: string;
}

/** A new Ed25519 vendor key. */
export function makeVendorKey(): VendorKey {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    seed: privateKey.export({ format: 'jwk' }).d!,
    publicKey: raw.toString('base64url'),
    kid: createHash('sha256').update(raw).digest().subarray(0, 8).toString('hex'),
  };
}

/** What a relay serves: the service behind it, the namespace, the projects and the keys (the first signs). */
export interface RelaySettings {
  serviceUrl: string;
  token: string;
  app: string;
  projects: string[];
  keys: VendorKey[];
  ticketDays?: number;
  /** Default 0 here: a test's revocation reaches the next validate at once. */
  validateCacheS?: number;
}

/** The relay's environment for `settings` (its RELAY_* variables). */
export function relayEnvironment(s: RelaySettings): Record<string, string> {
  return {
    RELAY_SIGNING_KEY: s.keys.map((k) => k.pem).join(','),
    RELAY_SERVICE_URL: s.serviceUrl,
    RELAY_SERVICE_TOKEN: s.token,
    RELAY_APP: s.app,
    RELAY_PROJECTS: s.projects.join(','),
    RELAY_TICKET_DAYS: String(s.ticketDays ?? 30),
    RELAY_VALIDATE_CACHE_S: String(s.validateCacheS ?? 0),
  };
}

/** A relay process that printed its start line. */
export interface RunningRelay {
  /** Its base URL (`…/functions/v1`): what `relay_url` names. */
  baseUrl: string;
  /** `http://HOST:PORT`, where `/.well-known/plugin-license-keys` is. */
  origin: string;
  /** The keys it lists, the signing one first. */
  keys: Array<{ kid: string; public_key: string }>;
  process: LineProcess;
  stop(): Promise<number | null>;
}

/**
 * Starts `plugin-license relay serve --port 0` (the built CLI) with `settings` and waits for its
 * start line; `stop()` it after the test.
 *
 * @example
 * const relay = await startRelayProcess({ serviceUrl: service.emulator.baseUrl, token: service.emulator.token, app: 'plugin-license', projects: [projectId], keys: [makeVendorKey()] });
 */
export async function startRelayProcess(settings: RelaySettings): Promise<RunningRelay> {
  if (!existsSync(PLUGIN_LICENSE_CLI)) throw new Error(`the CLI is not built (${PLUGIN_LICENSE_CLI} is missing); run \`pnpm build\` at the repository root first`);
  const proc = spawnLines(process.execPath, [PLUGIN_LICENSE_CLI, 'relay', 'serve', '--port', '0'], relayEnvironment(settings));
  let line: string;
  try {
    line = await proc.waitFor(/"base_url"/, 'its start line');
  } catch (error) {
    await proc.stop('SIGKILL');
    throw error;
  }
  const info = JSON.parse(line) as { base_url: string; keys: Array<{ kid: string; public_key: string }> };
  return { baseUrl: info.base_url, origin: new URL(info.base_url).origin, keys: info.keys, process: proc, stop: () => proc.stop('SIGTERM') };
}
