import { createHmac, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as nodeMachineIdModule from 'node-machine-id';
import { LicenseError } from './errors.js';
import { resolveNamespace, resolvePaths, type PathOptions } from './paths.js';
import { moveAsideSync, renameRetryingSync } from '@plugin-license/fs';

/** Where the machine id came from. */
export type MachineIdSource = 'os' | 'generated' | 'caller';

/** A machine id as sent to the service: `m1_` + 64 hex for derived ids, or the caller's own. */
export interface MachineId {
  id: string;
  source: MachineIdSource;
}

/**
 * Returns the raw OS machine id, or null/undefined when the OS has none. Injectable so the
 * "no OS id" cases (a container without /etc/machine-id, Windows refusing REG.exe) are testable.
 */
export type RawMachineIdProvider = () => string | null | undefined;

export interface MachineIdOptions extends PathOptions {
  /** The caller's own machine id, sent as is (`source: 'caller'`). */
  machineId?: string;
  /** Replaces the OS lookup (node-machine-id). */
  rawMachineIdProvider?: RawMachineIdProvider;
}

/** What the library needs internally: the public id and the cache key derived from the raw id. */
export interface MachineIdentity extends MachineId {
  namespace: string;
  /** HMAC key for the cache, derived from the raw OS id (or the generated secret); never stored. */
  cacheKey: Buffer;
  /** HMAC key of the ticket (docs/license-ticket.md), derived from the raw id and the namespace; never stored. */
  ticketKey: Buffer;
  /**
   * True when the id is this computer's own (derived, or a caller's id equal to the derived one):
   * only then is a ticket written here. False when acting for another computer.
   */
  local: boolean;
}

const ID_VERSION = 'm1_';
const CACHE_KEY_LABEL = 'plugin-license/cache-key/v1';
const TICKET_KEY_LABEL = 'plugin-license/ticket/v1';
const SECRET_FILE = 'machine-secret';
const SECRET_PATTERN = /^[0-9a-f]{64}$/;

interface NodeMachineId {
  machineId(original?: boolean): Promise<string>;
  machineIdSync(original?: boolean): string;
}
const nodeMachineId: NodeMachineId =
  (nodeMachineIdModule as unknown as { default?: NodeMachineId }).default ?? (nodeMachineIdModule as unknown as NodeMachineId);

// node-machine-id starts a child process on every call: ask the OS once per process.
let osRaw: string | null | undefined;
let osRawPending: Promise<string | null> | undefined;
const memo = new Map<string, MachineIdentity>();
const memoByProvider = new WeakMap<RawMachineIdProvider, Map<string, MachineIdentity>>();

/**
 * The machine id for a namespace: the OS id (raw, via node-machine-id) run through
 * HMAC-SHA256 keyed by the namespace, as `m1_` + 64 hex, so the raw id never leaves the machine
 * and two vendors see different ids. Where the OS has none, a random secret is generated once,
 * kept in the namespace's data folder, and used instead (`source: 'generated'`). A caller's own
 * id is returned as is (`source: 'caller'`). Memoized per process.
 *
 * @example
 * const { id, source } = await getMachineId({ namespace: 'acme-audio' }); // { id: 'm1_9f…', source: 'os' }
 */
export async function getMachineId(options: MachineIdOptions = {}): Promise<MachineId> {
  const identity = await resolveIdentity(options);
  return { id: identity.id, source: identity.source };
}

/** Async resolution: the OS lookup runs without blocking the event loop. */
export async function resolveIdentity(options: MachineIdOptions = {}): Promise<MachineIdentity> {
  const { key, table } = memoSlot(options);
  const known = table.get(key);
  if (known) return known;
  const raw = options.rawMachineIdProvider ? safeCall(options.rawMachineIdProvider) : await osRawAsync();
  return table.get(key) ?? remember(table, key, build(raw, options));
}

/**
 * The identity without creating or repairing anything on disk, for inspection: null where only a
 * generated id would do and none has been stored yet (then no cache can be authentic either).
 */
export async function peekIdentity(options: MachineIdOptions = {}): Promise<MachineIdentity | null> {
  const { key, table } = memoSlot(options);
  const known = table.get(key);
  if (known) return known;
  const raw = options.rawMachineIdProvider ? safeCall(options.rawMachineIdProvider) : await osRawAsync();
  return build(raw, options, true);
}

/** Sync resolution, for `check()`'s first load; blocks once per process for the OS lookup. */
export function resolveIdentitySync(options: MachineIdOptions = {}): MachineIdentity {
  const { key, table } = memoSlot(options);
  const known = table.get(key);
  if (known) return known;
  const raw = options.rawMachineIdProvider ? safeCall(options.rawMachineIdProvider) : osRawSync();
  return remember(table, key, build(raw, options));
}

/**
 * Validates a caller-supplied machine id: 1-256 characters after trimming, no control characters.
 */
export function normalizeCallerMachineId(value: unknown): string {
  if (typeof value !== 'string') throw new LicenseError('invalid_argument', `machineId must be a string, got ${typeof value}`);
  const id = value.trim();
  if (id === '' || id.length > 256 || /[\u0000-\u001f\u007f]/.test(id)) {
    throw new LicenseError('invalid_argument', 'machineId must be 1-256 printable characters; pass a stable identifier of this machine, or omit it to use the OS id');
  }
  return id;
}

/**
 * The one normalisation of a raw machine id (the contract's): lowercase, without dashes, braces
 * or white space. The cache key, the ticket key and the derived id all start from it.
 */
export function normalizeRawId(raw: string): string {
  return raw.trim().toLowerCase().replace(/[-{}\s]/g, '');
}

/**
 * The ticket's key (docs/license-ticket.md): HMAC-SHA256 keyed by the normalised raw id (its text),
 * over `plugin-license/ticket/v1` NUL `APP`. A plugin's reader derives the same key in-process.
 */
export function ticketKeyOf(raw: string, app: string): Buffer {
  return createHmac('sha256', normalizeRawId(raw)).update(`${TICKET_KEY_LABEL}\0${app}`).digest();
}

/**
 * The machine id sent to the service for a raw id in a namespace (the one derivation, which plc
 * repeats in C to compare a signed ticket's `machine_id`): `m1_` + the lowercase hex
 * HMAC-SHA256 keyed by the namespace over the normalised raw id (or the generated secret).
 *
 * @example
 * machineIdOf('0123456789ABCDEF-0123456789abcdef', 'acme-audio'); // 'm1_…' (64 hex digits)
 */
export function machineIdOf(raw: string, app: string): string {
  return ID_VERSION + createHmac('sha256', app).update(normalizeRawId(raw)).digest('hex');
}

/** Accepts only what looks like a real OS id: 32+ hex digits (dashes ignored), not all one digit. */
export function plausibleRawId(raw: string | null | undefined): string | null {
  if (typeof raw !== 'string') return null;
  const compact = normalizeRawId(raw);
  // node-machine-id falls back to the host name on Linux; a container's is 12 hex digits.
  if (!/^[0-9a-f]{32,}$/.test(compact) || /^(.)\1*$/.test(compact)) return null;
  return compact;
}

function build(raw: string | null, options: MachineIdOptions): MachineIdentity;
function build(raw: string | null, options: MachineIdOptions, readOnly: true): MachineIdentity | null;
function build(raw: string | null, options: MachineIdOptions, readOnly = false): MachineIdentity | null {
  const namespace = resolveNamespace(options.namespace);
  let secret = plausibleRawId(raw);
  let source: MachineIdSource = 'os';
  if (secret === null) {
    secret = readOnly ? peekSecret(join(resolvePaths(options).data, SECRET_FILE)) : generatedSecret(options);
    if (secret === null) return null;
    source = 'generated';
  }
  const cacheKey = createHmac('sha256', secret).update(`${CACHE_KEY_LABEL}\0${namespace}`).digest();
  const ticketKey = ticketKeyOf(secret, namespace);
  const own = machineIdOf(secret, namespace);
  if (options.machineId !== undefined) {
    const id = normalizeCallerMachineId(options.machineId);
    return { id, source: 'caller', namespace, cacheKey, ticketKey, local: id === own };
  }
  return { id: own, source, namespace, cacheKey, ticketKey, local: true };
}

function generatedSecret(options: PathOptions): string {
  const file = join(resolvePaths(options).data, SECRET_FILE);
  const existing = readSecret(file);
  if (existing) return existing;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('hex');
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${secret}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    // link() fails when the file exists: two processes generating at once agree on the first.
    linkSync(tmp, file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST') {
      const valid = readSecret(file);
      if (valid === null) renameRetryingSync(tmp, file);
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already renamed
    }
  }
  const stored = readSecret(file);
  if (stored === null) {
    throw new LicenseError('cache_io', `could not keep a generated machine id in ${file}; check that the folder is writable`);
  }
  return stored;
}

function peekSecret(file: string): string | null {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return SECRET_PATTERN.test(text) ? text : null;
  } catch {
    return null;
  }
}

function readSecret(file: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new LicenseError('cache_io', `could not read the generated machine id in ${file}: ${(e as Error).message}`, { cause: e });
  }
  if (SECRET_PATTERN.test(text)) return text;
  // Unreadable content: keep it for support and start over.
  try {
    moveAsideSync(file);
  } catch {
    // another process moved it first
  }
  return null;
}

function osRawSync(): string | null {
  if (osRaw !== undefined) return osRaw;
  try {
    osRaw = plausibleRawId(nodeMachineId.machineIdSync(true));
  } catch {
    osRaw = null;
  }
  return osRaw;
}

function osRawAsync(): Promise<string | null> {
  if (osRaw !== undefined) return Promise.resolve(osRaw);
  osRawPending ??= nodeMachineId.machineId(true).then(
    (raw) => plausibleRawId(raw),
    () => null,
  ).then((raw) => {
    if (osRaw === undefined) osRaw = raw;
    return osRaw;
  });
  return osRawPending;
}

function safeCall(provider: RawMachineIdProvider): string | null {
  try {
    return provider() ?? null;
  } catch {
    return null;
  }
}

function memoSlot(options: MachineIdOptions): { key: string; table: Map<string, MachineIdentity> } {
  // Keyed on the inputs (cheap), not on resolved paths: the memoized call costs a string and a lookup.
  const env = process.env;
  const key = `${options.namespace ?? ''}\0${options.home ?? ''}\0${env.PLUGIN_LICENSE_APP ?? ''}\0${env.PLUGIN_LICENSE_HOME ?? ''}\0${options.machineId ?? ''}`;
  if (!options.rawMachineIdProvider) return { key, table: memo };
  let table = memoByProvider.get(options.rawMachineIdProvider);
  if (!table) memoByProvider.set(options.rawMachineIdProvider, (table = new Map()));
  return { key, table };
}

function remember(table: Map<string, MachineIdentity>, key: string, identity: MachineIdentity): MachineIdentity {
  table.set(key, identity);
  return identity;
}
