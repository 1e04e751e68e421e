// The values pnpm package writes into the installers' scripts and XML: each through its format's
// one function (shellQuote, xmlEscape), tried with hostile text and run by real shells; what a
// format cannot say is refused. Also `pnpm package --help`, which answers without a build.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { brand, brandValues, nsisString, shellQuote, xmlEscape } from '../src/installers.mjs';
// @ts-expect-error: plain JavaScript, no types
import { parseOptions } from '../src/build.mjs';

const ROOT = resolve(import.meta.dirname, '..', '..');
const INSTALLERS = join(ROOT, 'examples', 'installers');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'plc-brand-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const HOSTILE = [
  'Acme Audio',
  '*',
  "it's",
  'say "hi"',
  '$HOME ${PATH}',
  '`touch pwned` $(touch pwned)',
  'back\\slash\\',
  'two\nlines',
  'naïve ü 音',
  '-n',
  '',
  "'; touch pwned; '",
];
const shells = ['sh', 'dash', 'bash'].filter((s) => {
  try {
    execFileSync('sh', ['-c', `command -v ${s}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

describe('shellQuote: a branded value is one word to every shell', () => {
  it.each(HOSTILE)('%j survives sh, dash and bash unchanged, runs nothing', (value) => {
    const script = join(dir, 'value.sh');
    writeFileSync(script, brand('install.sh', '#!/bin/sh\nPRODUCT=@PRODUCT@\nprintf "%s|" "$PRODUCT"\n', { PRODUCT: value }));
    for (const shell of shells) expect(execFileSync(shell, [script], { cwd: dir, encoding: 'utf8' }), shell).toBe(`${value}|`);
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
  });

  it('a NUL cannot be said in a script: refused', () => {
    expect(() => shellQuote('a\0b')).toThrow(/cannot be written into a shell script \(it holds a NUL character\)/);
  });

  it('a comment takes one line of text; a line break there is refused, not written', () => {
    expect(brand('install.sh', '# @PRODUCT@ installs\n', { PRODUCT: "Acme's *" })).toBe("# Acme's * installs\n");
    expect(() => brand('install.sh', '# @PRODUCT@ installs\n', { PRODUCT: 'Acme\nrm -rf ~' })).toThrow(/PRODUCT "Acme\\nrm -rf ~" cannot be written into a comment of install.sh/);
  });

  it('a placeholder inside a longer word is a template error (it could not be one quoted word)', () => {
    expect(() => brand('build-pkg.sh', 'OUT="$HERE/@NAME@.pkg"\n', { NAME: 'x' })).toThrow(/build-pkg.sh line 1: @NAME@ is part of a longer word; put it alone in a variable/);
    expect(brand('build-pkg.sh', 'sed "s/@TEAM_ID@/$T/"\n', { NAME: 'x' })).toBe('sed "s/@TEAM_ID@/$T/"\n');
  });

  it('install.sh and uninstall.sh each take in shared.sh whole, once, in place of their include line; an include of anything else is refused', () => {
    const shared = readFileSync(join(INSTALLERS, 'unix', 'shared.sh'), 'utf8');
    for (const f of ['linux/install.sh', 'unix/uninstall.sh']) {
      const out = brand(f, readFileSync(join(INSTALLERS, f), 'utf8'), { PRODUCT: 'Acme', NAME: 'acme', APP: '', BASE_URL: '', VENDOR_DIR: 'Acme', VERSION: '1' });
      expect(out, f).toContain(shared);
      expect(out.split('require_own_home() {')).toHaveLength(2);
      expect(out).not.toMatch(/^# @include/m);
    }
    for (const name of ['../linux/install.sh', '/etc/passwd', 'shared.sh ', '']) {
      expect(() => brand('install.sh', `# @include ${name}\n`, {}), name).toThrow(/names no shared file \(shared\.sh\)/);
    }
  });

  it('the real scripts, branded with hostile product and base URL, parse, and help shows them literally', async () => {
    const values = { ...brandValues({ name: 'acme-license', app: 'acme-audio', baseUrl: "https://l.example/it's/$(touch pwned)/functions/v1", product: 'Acme "Gain" $HOME `id`', productId: 'acme-gain-home-id', company: "O'Brien & Co" }, '1.2.3'), TARGET: 'darwin-arm64', ARCH: 'arm64' };
    const files = ['linux/install.sh', 'unix/uninstall.sh', 'macos/scripts/preinstall', 'macos/scripts/postinstall', 'macos/scripts/common.sh', 'macos/build-pkg.sh'];
    for (const f of files) {
      const out = join(dir, f.split('/').pop()!);
      writeFileSync(out, brand(f, readFileSync(join(INSTALLERS, f), 'utf8'), values), { mode: 0o755 });
      for (const shell of shells) execFileSync(shell, ['-n', out]);
      expect(readFileSync(out, 'utf8'), f).not.toMatch(/@(NAME|APP|BASE_URL|PRODUCT|PRODUCT_ID|PKG_ID|COMPANY|VERSION|VENDOR_DIR|BUNDLE_ID|TARGET)@/);
    }
    const help = await promisify(execFile)('sh', [join(dir, 'install.sh'), '--help'], { cwd: dir });
    expect(help.stdout.split('\n')[0]).toBe('Acme "Gain" $HOME `id` 1.2.3: installs the license agent for this user only (no administrator rights).');
    const bad = await promisify(execFile)('sh', [join(dir, 'install.sh'), '--bogus'], { cwd: dir }).catch((e: { stderr: string }) => e);
    expect(bad.stderr).toBe("Acme \"Gain\" $HOME `id`: unknown option '--bogus' (see " + join(dir, 'install.sh') + ' --help)\n');
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
  });
});

describe('nsisString: the Windows installer (the Windows job reads the values back from the registry)', () => {
  it.each([
    ['Acme Licenses', 'Acme Licenses'],
    ['Acme $INSTDIR', 'Acme $$INSTDIR'],
    ['$0$$', '$$0$$$$'],
    ['${PRODUCT} $(^Name)', '$${PRODUCT} $$(^Name)'],
    ['Acme "Gain"', 'Acme $\\"Gain$\\"'],
    ["O'Brien `x` 100% \\", "O'Brien `x` 100% \\"],
    ['Ünïcödé 音', 'Ünïcödé 音'],
  ])('%j is written %j', (value, written) => {
    expect(nsisString(value)).toBe(written);
  });
  it.each(['two\nlines', 'tab\there', 'nul\u0000', 'del\u007f'])('%j is refused', (value) => {
    expect(() => nsisString(value)).toThrow(/cannot be written into the Windows installer/);
  });
});

describe('xmlEscape: distribution.xml and entitlements.plist', () => {
  it.each(HOSTILE.filter((v) => !v.includes('\n')).concat(['<x>&amp;</x>', ']]>']))('%j reads back from the XML unchanged', (value) => {
    const xml = brand('macos/distribution.xml', readFileSync(join(INSTALLERS, 'macos', 'distribution.xml'), 'utf8'), { PRODUCT: value });
    const parsed = new XMLParser({ ignoreAttributes: false, parseTagValue: false, trimValues: false, processEntities: true }).parse(xml) as { 'installer-gui-script': { title: unknown } };
    expect(String(parsed['installer-gui-script'].title ?? '')).toBe(value);
  });
  it('a control character XML cannot hold is refused', () => {
    expect(() => xmlEscape('bell\u0007')).toThrow(/cannot be written into XML/);
  });
});

describe('pnpm package options', () => {
  it('no resident agent unless --agent-at-login: the installers are branded AGENT_AT_LOGIN no, or yes when asked', () => {
    const base = { name: 'acme-license', product: 'Acme', company: 'Acme' };
    expect(parseOptions([]).agentAtLogin).toBe(false);
    expect(parseOptions(['--agent-at-login']).agentAtLogin).toBe(true);
    expect(() => parseOptions(['--agent-at-login=yes'])).toThrow(/agent-at-login/);
    expect(brandValues(base, '1.0.0').AGENT_AT_LOGIN).toBe('no');
    expect(brandValues({ ...base, agentAtLogin: true }, '1.0.0').AGENT_AT_LOGIN).toBe('yes');
    const script = brand('linux/install.sh', readFileSync(join(INSTALLERS, 'linux', 'install.sh'), 'utf8'), { ...brandValues(base, '1.0.0'), TARGET: 'linux-x64', ARCH: 'x64' });
    expect(script).toContain("AGENT_AT_LOGIN='no'\n");
  });

  it.each(['two\nlines', 'tab\there', '   '])('--product %j is refused as a usage error', (product) => {
    expect(() => parseOptions(['--product', product])).toThrow(/--product .* is not usable: give one line of text/);
  });

  it('pnpm package --help answers at once, with no build; a bad option too', async () => {
    const help = await promisify(execFile)('pnpm', ['--silent', 'package', '--help'], { cwd: ROOT, timeout: 60_000 });
    expect(help.stdout).toMatch(/^Usage: pnpm package \[options\]/);
    // The example path is the one JUCE writes: the artefacts folder is named after the CMake target (no space).
    expect(help.stdout).toContain('--plugin "build/AcmeGain_artefacts/Release/VST3/Acme Gain.vst3"');
    expect(help.stdout).not.toContain('Acme Gain_artefacts');
    expect(help.stdout + help.stderr).not.toMatch(/build: |tsup|Build success/);
    const bad = await promisify(execFile)('pnpm', ['--silent', 'package', '--bogus'], { cwd: ROOT, timeout: 60_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toMatch(/^pnpm package: Unknown option '--bogus'/);
    expect(bad.stdout + bad.stderr).not.toMatch(/build: |tsup|Build success/);
  });
});
