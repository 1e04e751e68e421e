// The console host's words (test-apps/block-measure.h) on a table of effects, compiled with the
// system compiler (no JUCE): "plays" or "silent" whatever the effect, and how the output relates
// to the input. A delay plays ("other"), it is never a "fade" nor "no sound".
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const hasCxx = spawnSync('c++', ['--version'], { stdio: 'ignore' }).status === 0;
const here = join(import.meta.dirname, '..');

describe.skipIf(!hasCxx)('the console host says "plays" or "silent" for any effect', () => {
  let dir: string;
  let said: Map<string, { state: string; output: string; level_db: number | null; monotonic: boolean }>;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'block-measure-'));
    const exe = join(dir, 'cases');
    const built = spawnSync('c++', ['-std=c++17', '-Wall', '-Wextra', '-Werror', '-O2', `-I${join(here, 'test-apps')}`, join(here, 'test', 'block-measure-cases.cpp'), '-o', exe], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(built.stderr);
    const out = spawnSync(exe, { encoding: 'utf8' }).stdout;
    said = new Map(out.trim().split('\n').map((l) => {
      const j = JSON.parse(l) as { case: string; state: string; output: string; level_db: number | null; monotonic: boolean };
      return [j.case, j];
    }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['pass-through', 'plays', 'same'],
    ['volume -6 dB', 'plays', 'gain'],
    ['gate fading out', 'plays', 'fade'],
    ['gate fading in halfway', 'plays', 'fade'],
    ['delay, wet', 'plays', 'other'],
    ['delay, dry + wet', 'plays', 'other'],
    ['delay of whole periods, dry + wet', 'plays', 'gain'],
    ['delay before its first echo', 'silent', 'none'],
    ['silence', 'silent', 'none'],
    ['noise at -130 dBFS', 'silent', 'none'],
    ['noise at -110 dBFS', 'plays', 'other'],
    ['not a number', 'silent', 'none'],
    ['phase inverted', 'plays', 'other'],
    ['distortion', 'plays', 'other'],
    ['DC offset', 'plays', 'other'],
    ['a synth ignoring its input', 'plays', 'other'],
    ['full scale', 'plays', 'gain'],
  ])('%s: %s, output %s', (name, state, output) => {
    expect(said.get(name)).toMatchObject({ state, output });
  });

  it('a block\'s level is its peak in dBFS, null when silent; a gate\'s fade is monotonic', () => {
    expect(said.get('pass-through')?.level_db).toBeCloseTo(-6, 0);
    expect(said.get('noise at -110 dBFS')?.level_db).toBeCloseTo(-110.5, 0);
    expect(said.get('silence')?.level_db).toBeNull();
    expect(said.get('gate fading out')?.monotonic).toBe(true);
  });
});
