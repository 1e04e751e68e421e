import { control } from '@plugin-license/test-utils';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions } from '../src/index.js';

/** Rate limits no test file reaches, for the files that do not test them. */
export const HIGH_LIMITS = { activation: 100_000, builds: 100_000, general: 100_000, trigger: 100_000 };

/**
 * A test file's emulator, in-process on 127.0.0.1:0: started before its tests, closed after them.
 * With `reset`, its state, clock and faults are reset before each test; with `buildStepMs`, its
 * builds then take that long a step and never fail. `emu` and `ctl` (its `/__emulator/` controls)
 * are the same objects throughout, filled in by the time the tests run.
 */
export function useEmulator(options: EmulatorOptions, each: { reset?: boolean; buildStepMs?: number } = {}): { emu: Emulator; ctl: ReturnType<typeof control> } {
  const emu = {} as Emulator;
  const ctl = {} as ReturnType<typeof control>;
  beforeAll(async () => {
    Object.assign(emu, await startEmulator(options));
    Object.assign(ctl, control(emu.origin));
  });
  afterAll(async () => {
    await emu.close?.();
  });
  if (each.reset || each.buildStepMs !== undefined) {
    beforeEach(async () => {
      await ctl.reset();
      if (each.buildStepMs !== undefined) await ctl.buildSettings({ step_ms: each.buildStepMs, fail_rate: 0, seed: 0 });
    });
  }
  return { emu, ctl };
}
