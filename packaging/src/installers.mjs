// The installers of a release: examples a vendor copies and brands (examples/installers/), filled
// in with the release's name, namespace, base URL and product.
import { run } from './run.mjs';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PackageError } from './errors.mjs';
import { ROOT } from './root.mjs';
import { stagePlugins } from './plugins.mjs';
import { signWindowsFile } from './windows.mjs';

export const INSTALLERS = join(ROOT, 'examples', 'installers');

/** The values an installer is branded with, as `@KEY@` placeholders in its files. */
export function brandValues(options, version) {
  return {
    NAME: options.name,
    APP: options.app ?? '',
    BASE_URL: options.baseUrl ?? '',
    PRODUCT: options.product,
    // What the product's installer, uninstaller and record of plugins are known by (pnpm package --product-id).
    PRODUCT_ID: options.productId,
    COMPANY: options.company,
    VERSION: version,
    VENDOR_DIR: options.app ?? options.name,
    // No resident agent unless the vendor asks for one at login (pnpm package --agent-at-login).
    AGENT_AT_LOGIN: options.agentAtLogin === true ? 'yes' : 'no',
    // macOS: the package and signing identifier; a vendor puts its own reverse-DNS name here.
    BUNDLE_ID: `dev.plugin-license.${options.app ?? options.name}`,
    // macOS: the product's package identifier (its receipt): one per product, the program shared.
    PKG_ID: `dev.plugin-license.${options.app ?? options.name}.${options.productId}`,
  };
}

/**
 * A value as one single-quoted shell word: nothing in it is expanded, split or run (`'` becomes
 * `'\''`). The one way a branded value reaches a shell script.
 *
 * @example
 * shellQuote("Acme's $HOME") // => 'Acme'\''s $HOME'
 */
export function shellQuote(value) {
  const text = String(value);
  if (text.includes('\0')) throw new PackageError(`${JSON.stringify(text)} cannot be written into a shell script (it holds a NUL character)`);
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * A value for the NSIS script's double-quoted strings (`Name "${PRODUCT}"`, `WriteRegStr … "${COMPANY}"`,
 * `DetailPrint`): `$` becomes `$$` and `"` becomes `$\"`, so NSIS neither expands a variable
 * (`$INSTDIR`, `$0`, `${define}`, `$(lang)`) nor ends the string; a line break or control character
 * is refused. The one way a branded value reaches the Windows installer (the paths of the built
 * files, read by makensis itself, go as they are).
 *
 * @example
 * nsisString('Acme "Gain" $INSTDIR') // => 'Acme $\"Gain$\" $$INSTDIR'
 */
export function nsisString(value) {
  const text = String(value);
  if (/[\u0000-\u001f\u007f]/.test(text)) throw new PackageError(`${JSON.stringify(text)} cannot be written into the Windows installer (it holds a line break or a control character)`);
  return text.replaceAll('$', '$$$$').replaceAll('"', '$$\\"');
}

/**
 * A value as XML character data or an attribute value (distribution.xml, entitlements.plist);
 * a control character XML 1.0 cannot hold is refused.
 *
 * @example
 * xmlEscape('Tom & Jerry <Audio>') // => 'Tom &amp; Jerry &lt;Audio&gt;'
 */
export function xmlEscape(value) {
  const text = String(value);
   
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) throw new PackageError(`${JSON.stringify(text)} cannot be written into XML (it holds a control character)`);
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);
}

const SHELL_SCRIPTS = new Set(['install.sh', 'uninstall.sh', 'preinstall', 'postinstall', 'common.sh', 'build-pkg.sh']);
/** What a shell script may take in whole by a line `# @include NAME`: install.sh and uninstall.sh ship as one file each. */
const SHELL_INCLUDES = { 'shared.sh': join(INSTALLERS, 'unix', 'shared.sh') };

function withIncludes(file, text) {
  return text.replace(/^# @include (.*)$/gm, (_, name) => {
    if (!Object.hasOwn(SHELL_INCLUDES, name)) throw new PackageError(`${file}: "# @include ${name}" names no shared file (${Object.keys(SHELL_INCLUDES).join(', ')})`);
    return readFileSync(SHELL_INCLUDES[name], 'utf8').replace(/\n$/, '');
  });
}

/**
 * A file of the examples with its `@KEY@` placeholders filled in for the file's format: in a
 * shell script a placeholder stands alone as a word (`NAME=@NAME@`) and becomes one quoted word,
 * or sits in a comment and must then be one line of text; a line `# @include shared.sh` becomes
 * that shared file, branded the same way; in XML it is escaped. A placeholder
 * whose key is not a value (`@TEAM_ID@`, filled on the vendor's Mac) is left as it is.
 *
 * @param {string} file the file's name (its format)
 * @example
 * brand('install.sh', 'PRODUCT=@PRODUCT@\n', { PRODUCT: "Acme's" }) // => "PRODUCT='Acme'\\''s'\n"
 */
export function brand(file, text, values) {
  const name = file.split('/').pop();
  const has = (key) => Object.hasOwn(values, key);
  if (/\.(xml|plist)$/.test(name)) return text.replace(/@([A-Z_]+)@/g, (whole, key) => (has(key) ? xmlEscape(values[key]) : whole));
  if (!SHELL_SCRIPTS.has(name)) throw new PackageError(`${file}: no branding rule for this kind of file (add it in packaging/src/installers.mjs)`);
  return withIncludes(file, text)
    .split('\n')
    .map((line, i) => {
      const comment = /^\s*#/.test(line);
      return line.replace(/@([A-Z_]+)@/g, (whole, key, offset) => {
        if (!has(key)) return whole;
        const value = String(values[key]);
        if (comment) {
           
          if (/[\u0000-\u001f\u007f]/.test(value)) throw new PackageError(`${key} ${JSON.stringify(value)} cannot be written into a comment of ${file}: it holds a line break or a control character; use one line of plain text`);
          return value;
        }
        if (!/(^|[\s=])$/.test(line.slice(0, offset)) || !/^(\s|;|$)/.test(line.slice(offset + whole.length))) {
          throw new PackageError(`${file} line ${i + 1}: ${whole} is part of a longer word; put it alone in a variable (KEY=${whole}) and use "$KEY", so it is written as one quoted word`);
        }
        return shellQuote(value);
      });
    })
    .join('\n');
}

/**
 * @returns {Promise<Array<{ file: string, staged: object[] }>>} the installer files written into
 * `work`, each with the plugins (of `options.plugins`) staged into it
 */
export async function buildInstallers({ work, scratch, options, version, targets, log }) {
  const values = brandValues(options, version);
  const plugins = options.plugins ?? [];
  const written = [];
  const linux = targets.find((t) => t.target === 'linux-x64');
  if (linux) written.push(await linuxTarball({ work, scratch, values, exe: join(work, linux.file), name: options.name, plugins }));
  for (const mac of targets.filter((t) => t.target.startsWith('darwin-'))) {
    written.push(await macKit({ work, scratch, values: { ...values, TARGET: mac.target, ARCH: mac.target === 'darwin-arm64' ? 'arm64' : 'x86_64' }, exe: join(work, mac.file), name: options.name, target: mac.target, plugins }));
  }
  const windows = targets.find((t) => t.target === 'win-x64');
  if (windows) {
    const setup = await windowsSetup({ work, scratch, values, exe: join(work, windows.file), options, log, plugins });
    if (setup) written.push(setup);
  }
  return written;
}

/**
 * An installer's file name (and the Linux download's folder), as the shipping contract names it:
 * the program's name, the version and the target (`acme-license-0.1.0-linux-x64`). A vendor with
 * several products runs `pnpm package` once per product, each with its own `--out`.
 */
export const installerBase = (values, suffix) => `${values.NAME}-${values.VERSION}-${suffix}`;

async function linuxTarball({ work, scratch, values, exe, name, plugins }) {
  const base = installerBase(values, 'linux-x64');
  const dir = join(scratch, 'linux', base);
  mkdirSync(dir, { recursive: true });
  copyFileSync(exe, join(dir, name));
  chmodSync(join(dir, name), 0o755);
  // Beside the program: install.sh runs "plugins install --from" on this folder when it exists.
  const staged = stagePlugins(plugins, 'linux-x64', join(dir, 'plugins'));
  for (const script of ['install.sh', 'uninstall.sh']) {
    writeFileSync(join(dir, script), brand(script, readFileSync(join(INSTALLERS, script === 'install.sh' ? 'linux' : 'unix', script), 'utf8'), values), { mode: 0o755 });
  }
  const file = `${base}.tar.gz`;
  try {
    await run('tar', ['-czf', join(work, file), '-C', join(scratch, 'linux'), '--owner=0', '--group=0', base]);
  } catch (err) {
    throw new PackageError(`could not write ${file}: ${String(err.stderr || err.message).trim()}`);
  }
  return { file, staged };
}

/**
 * The macOS installer kit: the pkgbuild payload and scripts, and build-pkg.sh, which signs,
 * packages and notarizes on the vendor's Mac (none of that runs on Linux).
 */
async function macKit({ work, scratch, values, exe, name, target, plugins }) {
  const base = installerBase(values, `${target}-pkg-kit`);
  const dir = join(scratch, 'macos', base);
  mkdirSync(join(dir, 'payload'), { recursive: true });
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  copyFileSync(exe, join(dir, 'payload', name));
  chmodSync(join(dir, 'payload', name), 0o755);
  // In the payload: postinstall runs "plugins install --from" on it, then removes it.
  const staged = stagePlugins(plugins, target, join(dir, 'payload', 'plugins'));
  const put = (from, to, mode = 0o644) => writeFileSync(join(dir, to), brand(from, readFileSync(join(INSTALLERS, from), 'utf8'), values), { mode });
  // Installed beside the program under the product's own name: each product has its own uninstaller.
  put('unix/uninstall.sh', `payload/uninstall-${values.PRODUCT_ID}.sh`, 0o755);
  put('macos/scripts/preinstall', 'scripts/preinstall', 0o755);
  put('macos/scripts/postinstall', 'scripts/postinstall', 0o755);
  put('macos/scripts/common.sh', 'scripts/common.sh');
  put('macos/build-pkg.sh', 'build-pkg.sh', 0o755);
  put('macos/distribution.xml', 'distribution.xml');
  put('macos/entitlements.plist', 'entitlements.plist');
  const file = `${base}.tar.gz`;
  try {
    await run('tar', ['-czf', join(work, file), '-C', join(scratch, 'macos'), '--owner=0', '--group=0', base]);
  } catch (err) {
    throw new PackageError(`could not write ${file}: ${String(err.stderr || err.message).trim()}`);
  }
  return { file, staged };
}

/**
 * The Windows installer's part for the plugins, included by installer.nsi: where they go (for
 * the last page), a Start-menu shortcut for each Standalone and its removal. Every value goes
 * through nsisString.
 */
export function pluginsNsh(staged) {
  const lines = ['; Written by pnpm package (packaging/src/installers.mjs): the plugins of this installer.'];
  const formats = [...new Set(staged.map((p) => p.format))];
  const where = { vst3: 'VST3 plugins: $LOCALAPPDATA\\Programs\\Common\\VST3', clap: 'CLAP plugins: $LOCALAPPDATA\\Programs\\Common\\CLAP', standalone: 'Standalone applications: $INSTDIR, in the Start menu' };
  const said = formats.filter((f) => where[f] !== undefined).map((f) => where[f]);
  lines.push(`!define PLUGINS_WHERE "${said.join('$\\r$\\n')}"`);
  lines.push('!macro PluginShortcuts');
  for (const p of staged.filter((s) => s.format === 'standalone')) lines.push(`  CreateShortCut "$SMPROGRAMS\\${nsisString(p.name)}.lnk" "$INSTDIR\\${nsisString(p.file)}"`);
  lines.push('!macroend', '!macro RemovePluginShortcuts');
  for (const p of staged.filter((s) => s.format === 'standalone')) lines.push(`  Delete "$SMPROGRAMS\\${nsisString(p.name)}.lnk"`);
  lines.push('!macroend', '');
  return lines.join('\n');
}

async function windowsSetup({ work, scratch, values, exe, options, log, plugins }) {
  const script = join(INSTALLERS, 'windows', 'installer.nsi');
  if (!existsSync(script)) return undefined;
  const makensis = await run('makensis', ['-VERSION']).then(
    () => true,
    () => false,
  );
  if (!makensis) {
    log('win-x64: no Windows installer (makensis is not installed; Debian: apt-get install nsis)');
    return undefined;
  }
  const file = `${installerBase(values, 'win-x64-setup')}.exe`;
  const dir = join(scratch, 'windows');
  mkdirSync(dir, { recursive: true });
  // File /r takes this folder into the installer, which extracts it to $PLUGINSDIR.
  const staged = stagePlugins(plugins, 'win-x64', join(dir, 'plugins'));
  const pluginDefines = [];
  if (staged.length > 0) {
    writeFileSync(join(dir, 'plugins.nsh'), pluginsNsh(staged));
    pluginDefines.push(`-DPLUGINS=${join(dir, 'plugins')}`, `-DPLUGINS_NSH=${join(dir, 'plugins.nsh')}`);
  }
  const compression = options.installerCompression === 'fast' ? ['-DFAST_COMPRESSION'] : [];
  const defines = [...Object.entries(values).map(([k, v]) => `-D${k}=${nsisString(v)}`), `-DEXE=${exe}`, `-DOUTFILE=${join(work, file)}`, ...pluginDefines, ...compression];
  try {
    await run('makensis', ['-V2', '-INPUTCHARSET', 'UTF8', ...defines, script], { cwd: join(INSTALLERS, 'windows'), timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    throw new PackageError(`makensis could not build ${file}: ${String(err.stdout || '').trim().split('\n').slice(-3).join(' ')} ${String(err.stderr || err.message).trim()}`);
  }
  if (options.sign) await signWindowsFile(join(work, file), { ...options.sign, description: `${options.product} setup` });
  return { file, staged };
}
