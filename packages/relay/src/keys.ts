import { RelayConfigError } from './errors.js';
import { base64UrlDecode, base64UrlEncode, ticketKeyId } from '@plugin-license/api/signed-ticket';

/** One of the vendor's Ed25519 private keys, imported into `crypto.subtle`. */
export interface SigningKey {
  /** Its key id: the first 8 bytes of SHA-256 of the raw public key, lowercase hex. */
  kid: string;
  /** The public key: unpadded base64url of its raw 32 bytes. */
  publicKey: string;
  /** Signs `bytes` (an Ed25519 signature, 64 bytes). */
  sign(bytes: Uint8Array): Promise<Uint8Array>;
  /** The private key in `crypto.subtle` (a platform adapter may sign with it by its own means). */
  privateKey: CryptoKey;
}

type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

// PKCS#8 of an Ed25519 key is this fixed prefix and the 32-byte seed (RFC 8410, section 7).
const PKCS8_ED25519_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

function fromBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * The DER of one key text: a PKCS#8 PEM block (its line breaks may have become spaces or literal
 * `\n`, as a platform's secret field leaves them), or the base64url of the 32-byte seed.
 */
function pkcs8Of(given: string, where: string, variable: string): Uint8Array {
  const text = given.replace(/\\n/g, '\n').trim();
  const pem = /^-----BEGIN ([A-Z ]+)-----([\s\S]*?)-----END \1-----$/.exec(text);
  if (pem) {
    if (pem[1] !== 'PRIVATE KEY') {
      const hint = pem[1] === 'ENCRYPTED PRIVATE KEY' ? 'an encrypted key; give the key unencrypted (as a secret of the platform)' : `a ${pem[1]} block`;
      throw new RelayConfigError(variable, `${where} is ${hint}, not the PKCS#8 private key (-----BEGIN PRIVATE KEY-----) that plugin-license relay keygen writes`);
    }
    const der = fromBase64(pem[2]!.replace(/\s/g, ''));
    if (der === undefined) throw new RelayConfigError(variable, `${where} is a PEM block whose content is not base64; copy the key file again, whole`);
    return der;
  }
  const seed = /^([A-Za-z0-9_-]{43})$/.exec(text);
  if (seed) {
    const bytes = base64UrlDecode(seed[1]!);
    if (bytes !== undefined && bytes.length === 32) {
      const der = new Uint8Array(PKCS8_ED25519_PREFIX.length + 32);
      der.set(PKCS8_ED25519_PREFIX);
      der.set(bytes, PKCS8_ED25519_PREFIX.length);
      return der;
    }
  }
  throw new RelayConfigError(variable, `${where} is neither a PEM private key (-----BEGIN PRIVATE KEY-----, as plugin-license relay keygen writes) nor the base64url of a 32-byte Ed25519 seed (43 characters)`);
}

async function importOne(text: string, where: string, variable: string): Promise<SigningKey> {
  const der = pkcs8Of(text, where, variable);
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey('pkcs8', der, { name: 'Ed25519' }, true, ['sign']);
  } catch {
    throw new RelayConfigError(variable, `${where} is not an Ed25519 private key (PKCS#8); make one with plugin-license relay keygen --out FILE`);
  }
  const jwk = await crypto.subtle.exportKey('jwk', privateKey);
  const raw = jwk.x === undefined ? undefined : base64UrlDecode(jwk.x);
  if (raw === undefined || raw.length !== 32) throw new RelayConfigError(variable, `${where} gave no Ed25519 public key; make a key with plugin-license relay keygen --out FILE`);
  const kid = await ticketKeyId(raw, async (bytes) => new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
  return {
    kid,
    publicKey: base64UrlEncode(raw),
    sign: async (bytes) => new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, bytes)),
    privateKey,
  };
}

/**
 * Imports the vendor's private keys (PKCS#8 PEM or base64url seeds) in order: the first signs,
 * all are listed. A bad entry throws {@link RelayConfigError} naming its position, never its
 * content; the same key twice is refused too (a rotation that was meant to add a new one).
 *
 * @example
 * const [signer] = await importSigningKeys([pem], 'RELAY_SIGNING_KEY');
 */
export async function importSigningKeys(texts: readonly string[], variable: string): Promise<SigningKey[]> {
  const entries = texts.map((t) => t.trim());
  const keys: SigningKey[] = [];
  for (const [i, entry] of entries.entries()) {
    const where = entries.length === 1 ? variable : `${variable} entry ${i + 1}`;
    if (entry === '') throw new RelayConfigError(variable, `${where} is empty; separate the keys with single commas`);
    const key = await importOne(entry, where, variable);
    const same = keys.findIndex((k) => k.kid === key.kid);
    if (same >= 0) throw new RelayConfigError(variable, `${variable} entries ${same + 1} and ${i + 1} are the same key (${key.kid}); list each key once, the signing one first`);
    keys.push(key);
  }
  return keys;
}
