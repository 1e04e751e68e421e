// One rule for the user's folders in C and TypeScript: plc's ticket path (data_folder, home_folder)
// and the library's (ticketPath: userHome, xdgDir) agree on every HOME and XDG_DATA_HOME below,
// an empty or relative HOME refused by both, a relative XDG_DATA_HOME ignored by both.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isLicenseError, ticketPath } from '@plugin-license/licensing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, C_FLAGS, hasCc, PLC_C } from './helpers/toolchain.js';

const PROJECT = '123e4567-e89b-12d3-a456-426614174000';
const HOMES: Array<string | undefined> = [undefined, '', 'relative/path', '.', './x', '~', ' /home/me', '/home/me', '/home/a b/"q"$x/', '/'];
const XDGS: Array<string | undefined> = [undefined, '', 'data', './d', '/xdg/data'];

describe.skipIf(!hasCc || process.platform !== 'linux')('the home and XDG rule, plc and the library alike', () => {
  let dir: string;
  let tool: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'home-rule-'));
    compile('cc', [...C_FLAGS, '-c', PLC_C, '-o', join(dir, 'plc.o')]);
    compile('cc', [...C_FLAGS, 'tools/plc-ticket.c', join(dir, 'plc.o'), '-o', (tool = join(dir, 'plc-ticket'))]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const cases = HOMES.flatMap((home) => XDGS.map((xdg): [string, string | undefined, string | undefined] => [`HOME=${JSON.stringify(home)} XDG_DATA_HOME=${JSON.stringify(xdg)}`, home, xdg]));
  it.each(cases)('%s', (_, home, xdg) => {
    const env: Record<string, string> = {};
    if (home !== undefined) env.HOME = home;
    if (xdg !== undefined) env.XDG_DATA_HOME = xdg;
    let library: string;
    try {
      library = ticketPath({ namespace: 'acme', env, platform: 'linux' }, PROJECT);
    } catch (e) {
      if (!isLicenseError(e)) throw e;
      library = 'refused';
    }
    const r = spawnSync(tool, ['--app', 'acme', PROJECT], { encoding: 'utf8', env, cwd: dir });
    const plc = r.status === 2 && /no ticket path/.test(r.stderr) ? 'refused' : (JSON.parse(r.stdout) as { path: string }).path;
    expect(plc).toBe(library);
    if (library !== 'refused') expect(library.startsWith('/')).toBe(true);
  });
});
