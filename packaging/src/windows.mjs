// The Windows executable's own parts: its version resource (resedit, pure JavaScript, so it
// runs on the Linux machine that packages) and its Authenticode signature (osslsigncode).
import { run } from './run.mjs';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as ResEdit from 'resedit';
import { PackageError } from './errors.mjs';


/**
 * Node's signature removed (it would no longer match once the blob is injected) and the version
 * resource set to the vendor's product: the name Windows shows in Properties, Task Manager and
 * the firewall prompt.
 *
 * @param {string} file the executable, changed in place
 * @param {{ product: string, company: string, description: string, version: string, fileName: string }} info
 */
export function brandWindowsExecutable(file, info) {
  const exe = ResEdit.NtExecutable.from(readFileSync(file), { ignoreCert: true });
  const res = ResEdit.NtExecutableResource.from(exe);
  const [found] = ResEdit.Resource.VersionInfo.fromEntries(res.entries);
  const vi = found ?? ResEdit.Resource.VersionInfo.createEmpty();
  const languages = vi.getAvailableLanguages();
  const lang = languages[0] ?? { lang: 1033, codepage: 1200 };
  const [major = 0, minor = 0, patch = 0] = info.version.split(/[.+-]/).map((n) => Number.parseInt(n, 10) || 0);
  vi.setFileVersion(major, minor, patch, 0, lang.lang);
  vi.setProductVersion(major, minor, patch, 0, lang.lang);
  vi.setStringValues(lang, {
    ProductName: info.product,
    CompanyName: info.company,
    FileDescription: info.description,
    FileVersion: info.version,
    ProductVersion: info.version,
    InternalName: info.fileName.replace(/\.exe$/i, ''),
    OriginalFilename: info.fileName,
    LegalCopyright: `${info.company}`,
  });
  vi.outputToResourceEntries(res.entries);
  res.outputResource(exe);
  writeFileSync(file, Buffer.from(exe.generate()));
}

/**
 * Signs `file` in place with a PKCS#12 certificate; `timestampUrl` adds a timestamp, so the
 * signature outlives the certificate.
 *
 * @param {string} file
 * @param {{ cert: string, password: string, description: string, url?: string, timestampUrl?: string }} options
 */
export async function signWindowsFile(file, options) {
  const signed = `${file}.signed`;
  const args = ['sign', '-pkcs12', options.cert, '-pass', options.password, '-n', options.description, '-h', 'sha256'];
  if (options.url) args.push('-i', options.url);
  if (options.timestampUrl) args.push('-ts', options.timestampUrl);
  args.push('-in', file, '-out', signed);
  try {
    await run('osslsigncode', args, { timeout: 120_000 });
  } catch (err) {
    rmSync(signed, { force: true });
    if (err.code === 'ENOENT') throw new PackageError('signing needs osslsigncode (Debian: apt-get install osslsigncode)');
    const text = String(err.stderr || err.stdout || err.message);
    if (/mac verify failure|PKCS12|password|Failed to parse PKCS#12/i.test(text)) {
      throw new PackageError(`the certificate ${options.cert} could not be opened: check PLUGIN_LICENSE_SIGN_PASSWORD (${text.trim().split('\n')[0]})`);
    }
    throw new PackageError(`osslsigncode could not sign ${file}: ${text.trim().split('\n').slice(-2).join(' ')}`);
  }
  renameSync(signed, file);
}
