// The vendor's plugins placed by an installer: `plugin-license plugins install` upgrading a VST3
// bundle (48 MB in 40 files, its code two ELF libraries) from one version to the other, against
// what a plain installer script does in the same run: `cp -a` of the new bundle beside the old,
// `mv` over, `rm -rf` of the old (no digest, no record, no code moved out first). Both are whole
// processes, alternated, medians of RUNS each; the ratio is what the record, the digests (of the
// staged tree, the copy, and the installed one) and the code-first move cost.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const CLI = resolve(here, '../../packages/cli/bin/plugin-license.js');
const BUILT = resolve(here, '../../packages/cli/dist/bin/cli.cjs');
const RUNS = 9;
const NAME = 'Acme Gain.vst3';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timed(file, args, env) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(Number(process.hrtime.bigint() - started) / 1e6) : fail(new Error(`${file} ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

/** A staged folder with one VST3 bundle of this version: 38 resource files of 1 MB, two 5 MB ELF libraries. */
function stage(dir, version) {
  const bundle = join(dir, `stage-${version}`, 'vst3', NAME);
  mkdirSync(join(bundle, 'Contents', 'x86_64-linux'), { recursive: true });
  mkdirSync(join(bundle, 'Contents', 'Resources'), { recursive: true });
  for (const lib of ['Acme Gain.so', 'libacme-dsp.so']) {
    const bytes = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), randomBytes(5 * 1024 * 1024)]);
    writeFileSync(join(bundle, 'Contents', 'x86_64-linux', lib), bytes);
  }
  for (let i = 0; i < 38; i++) writeFileSync(join(bundle, 'Contents', 'Resources', `impulse-${i}.wav`), randomBytes(1024 * 1024));
  writeFileSync(join(bundle, 'Contents', 'Resources', 'moduleinfo.json'), JSON.stringify({ Name: 'Acme Gain', Version: `${version}.0.0` }));
  return join(dir, `stage-${version}`);
}

export async function run() {
  if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: run "pnpm build" first`);
  const dir = mkdtempSync(join(tmpdir(), 'plc-bench-plugins-'));
  try {
    const stages = [stage(dir, 1), stage(dir, 2)];
    const home = join(dir, 'home');
    const plain = join(dir, 'plain');
    mkdirSync(home);
    mkdirSync(plain);
    const record = join(dir, 'app', 'installed-plugins.json');
    const env = { PATH: process.env.PATH, HOME: home, PLUGIN_LICENSE_HOME: join(dir, 'data'), PLUGIN_LICENSE_APP: 'acme-bench' };
    const script = join(dir, 'plain-install.sh');
    writeFileSync(script, 'set -e\nrm -rf "$2/.new"\ncp -a "$1" "$2/.new"\nif [ -e "$2/b" ]; then mv "$2/b" "$2/.old"; fi\nmv "$2/.new" "$2/b"\nrm -rf "$2/.old"\n');
    const ours = [];
    const theirs = [];
    // The first install of each side is not timed: every timed run is an upgrade.
    await timed(process.execPath, [CLI, 'plugins', 'install', '--from', stages[0], '--record', record], env);
    await timed('sh', [script, join(stages[0], 'vst3', NAME), plain], env);
    for (let i = 1; i <= RUNS; i++) {
      const from = stages[i % 2];
      for (const side of i % 2 === 0 ? ['ours', 'theirs'] : ['theirs', 'ours']) {
        if (side === 'ours') ours.push(await timed(process.execPath, [CLI, 'plugins', 'install', '--from', from, '--record', record], env));
        else theirs.push(await timed('sh', [script, join(from, 'vst3', NAME), plain], env));
      }
    }
    const value = median(ours);
    const baseline = median(theirs);
    return [{ name: 'plugins install: upgrade a 48 MB VST3 bundle', value, unit: 'ms', baseline, ratio: value / baseline, goal: 'at most 15x: a Node start, four SHA-256 passes (staged, installed, copy, settled) and the record written twice' }];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
