// The built package loads as ESM and as CommonJS, from its own name, the way consumers load it.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = async (args: string[]): Promise<string> => (await promisify(execFile)(process.execPath, args, { cwd: packageDir })).stdout.trim();

// Writes a file with the atomic writer, reads it back, and lists the exported names.
const probe = `
  const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
  const dir = mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'plc-fs-exports-'));
  const file = dir + '/a/state.json';
  m.writeFileAtomic(file, 'whole').then(() => {
    console.log(JSON.stringify({ names: Object.keys(m).sort(), text: readFileSync(file, 'utf8'), window: m.RENAME_RETRY_MS }));
    rmSync(dir, { recursive: true, force: true });
  });
`;

describe('built package', () => {
  it('is built (pnpm build)', () => {
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) expect(existsSync(join(packageDir, 'dist', file)), file).toBe(true);
  });

  it('loads with require() and with import, exposing the same names', async () => {
    const cjs = JSON.parse(await node(['-e', `const m = require('@plugin-license/fs');${probe}`]));
    const esm = JSON.parse(await node(['--input-type=module', '-e', `import { createRequire } from 'node:module'; const require = createRequire(process.cwd() + '/package.json'); const m = await import('@plugin-license/fs');${probe}`]));
    expect(esm.names).toEqual(cjs.names);
    expect(cjs.names).toEqual(['RENAME_RETRY_MS', 'ensureDir', 'moveAside', 'moveAsideSync', 'probeWritable', 'removeFileDurably', 'renameRetrying', 'renameRetryingSync', 'sweepTempFiles', 'syncDir', 'writeFileAtomic']);
    for (const r of [cjs, esm]) expect(r).toMatchObject({ text: 'whole', window: 2000 });
  });
});
