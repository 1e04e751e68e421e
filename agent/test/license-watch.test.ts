// The licenses folder watch: a file created, replaced (rename over it, as every cache write is)
// or removed by another process is reported once per burst, by the OS's notifications and by the
// polling fallback alike.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempHome } from '@plugin-license/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { LicenseWatch } from '../src/license-watch.js';
import { silentLogger } from '../src/logger.js';

const ID = '123e4567-e89b-12d3-a456-426614174000';
let cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

// The watch reports within a second (a 500 ms poll, a 40 ms settle); a loaded machine may take
// longer, so expect.poll's bound here is only on how long a missing report takes to fail the test.
describe.each([
  ['OS notifications', false],
  ['polling', true],
])('LicenseWatch (%s)', (_name, poll) => {
  it('reports a created, replaced and removed cache file within a second; other files are ignored', async () => {
    const home = tempHome('plw-');
    cleanups.push(home.cleanup);
    const dir = join(home.dir, 'licenses');
    mkdirSync(dir);
    writeFileSync(join(dir, `${ID}.json`), '{"before":1}');
    const seen: string[] = [];
    const watch = new LicenseWatch({ dir, logger: silentLogger(), changed: (id) => seen.push(id), poll });
    await watch.start(); // polling: resolves once the first look has learnt what is there
    cleanups.push(() => watch.stop());
    await new Promise((r) => setTimeout(r, poll ? 600 : 50)); // a later look (or a late notification) reports nothing
    expect(seen).toEqual([]);

    writeFileSync(join(dir, `.${ID}.json.123.tmp`), '{"a":1,"b":2}');
    renameSync(join(dir, `.${ID}.json.123.tmp`), join(dir, `${ID}.json`));
    await expect.poll(() => seen, { message: 'a replaced file' }).toHaveLength(1);
    writeFileSync(join(dir, 'notes.txt'), 'not a license');
    writeFileSync(join(dir, `${ID.toUpperCase()}.json.lock`), '');
    rmSync(join(dir, `${ID}.json`));
    await expect.poll(() => seen, { message: 'a removed file' }).toHaveLength(2);
    const other = '00000000-0000-4000-8000-000000000001';
    writeFileSync(join(dir, `${other}.json`), '{}');
    await expect.poll(() => seen, { message: 'a new file' }).toHaveLength(3);
    await new Promise((r) => setTimeout(r, poll ? 700 : 150));
    expect(seen).toEqual([ID, ID, other]);
  });
});
