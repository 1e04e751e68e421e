import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import selfsigned from 'selfsigned';

/** The emulator's HTTPS identity: a certificate made at start for the loopback host it serves. */
export interface TlsIdentity {
  key: string;
  cert: string;
  /** The certificate's PEM file, to trust as a CA (`ca` option, NODE_EXTRA_CA_CERTS, curl --cacert). */
  caFile: string;
  /** Removes the PEM file when it was written to a temporary folder. */
  cleanup(): void;
}

/**
 * A self-signed certificate for `host` (plus localhost, 127.0.0.1 and ::1), valid two days, its
 * PEM written beside the data file or in a fresh temporary folder. Trusting that PEM is trusting
 * this emulator run only: a new run makes a new key.
 */
export function createTlsIdentity(host: string, dataFile: string | undefined): TlsIdentity {
  const bare = host.replace(/^\[|\]$/g, '');
  const altNames = [
    { type: 2, value: 'localhost' },
    { type: 7, ip: '127.0.0.1' },
    { type: 7, ip: '::1' },
    ...(isIP(bare) && bare !== '127.0.0.1' && bare !== '::1' ? [{ type: 7, ip: bare }] : []),
    ...(!isIP(bare) && bare !== 'localhost' ? [{ type: 2, value: bare }] : []),
  ];
  const pems = selfsigned.generate([{ name: 'commonName', value: `plugin-license-emulator ${bare}` }], {
    days: 2,
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  const temporary = dataFile === undefined ? mkdtempSync(join(tmpdir(), 'plugin-license-emulator-')) : undefined;
  const caFile = join(temporary ?? dirname(dataFile as string), temporary ? 'ca.pem' : 'emulator-ca.pem');
  writeFileSync(caFile, pems.cert, { mode: 0o644 });
  return {
    key: pems.private,
    cert: pems.cert,
    caFile,
    cleanup: () => {
      if (temporary) rmSync(temporary, { recursive: true, force: true });
    },
  };
}
