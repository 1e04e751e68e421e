// The one atomic writer and its companions, on the real file system: whole or not at all, no
// temporary file left behind whatever fails, and only its own temporary names swept.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureDir, moveAside, moveAsideSync, probeWritable, removeFileDurably, sweepTempFiles, writeFileAtomic } from '../src/index.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'plc-fs-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';

describe('writeFileAtomic', () => {
  it('creates missing folders (0700), writes the file (0600), replaces it whole, and leaves no temporary file', async () => {
    const file = join(dir, 'a', 'b', 'state.json');
    await writeFileAtomic(file, 'one\n');
    await writeFileAtomic(file, 'two\n');
    expect(readFileSync(file, 'utf8')).toBe('two\n');
    expect(readdirSync(join(dir, 'a', 'b'))).toEqual(['state.json']);
    if (posix) {
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir, 'a')).mode & 0o777).toBe(0o700);
    }
  });

  // Each case: what stands in the way, the system's codes that may come back unchanged, and
  // whether a probe beside the file fails too.
  const inTheWay: Array<[string, (file: string) => void, string[], boolean]> = [
    ['a folder at the file', (file) => mkdirSync(file, { recursive: true }), ['EISDIR', 'EPERM', 'EEXIST'], false],
    ['a file where its folder should be', (file) => writeFileSync(join(file, '..'), 'x'), ['ENOTDIR', 'EEXIST'], true],
  ];
  it.each(inTheWay)('%s: the system error, no temporary file', async (_name, block, codes, probeFails) => {
    const file = join(dir, 'sub', 'state.json');
    block(file);
    const before = readdirSync(dir, { recursive: true }).sort();
    const error = (await writeFileAtomic(file, 'new').catch((e: unknown) => e)) as NodeJS.ErrnoException;
    expect(codes).toContain(error.code);
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
    const probe = (await probeWritable(file, 4096).catch((e: unknown) => e)) as NodeJS.ErrnoException | undefined;
    expect(probe === undefined ? undefined : codes.includes(probe.code ?? '')).toBe(probeFails ? true : undefined);
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
  });
});

describe('probeWritable', () => {
  it('writes beside the file and removes what it wrote; the file itself is untouched', async () => {
    const file = join(dir, 'state.json');
    writeFileSync(file, 'kept');
    await probeWritable(file, 4096);
    expect(readdirSync(dir)).toEqual(['state.json']);
    expect(readFileSync(file, 'utf8')).toBe('kept');
  });
});

describe('sweepTempFiles', () => {
  it("removes only the file's own temporary names", async () => {
    const file = join(dir, 'state.json');
    const names = {
      own: ['.state.json.123.abcdef012345.tmp', '.state.json.9.x.tmp'],
      others: ['state.json', '.state.json.123.abc', '.other.json.123.abcdef012345.tmp', 'state.json.123.abcdef012345.tmp', '.state.jsonx.1.a.tmp.kept', '..state.json.1.a.tmp'],
    };
    for (const n of [...names.own, ...names.others]) writeFileSync(join(dir, n), '');
    await sweepTempFiles(file);
    expect(readdirSync(dir).sort()).toEqual([...names.others].sort());
  });

  it('a missing folder is nothing to sweep', async () => {
    await expect(sweepTempFiles(join(dir, 'missing', 'state.json'))).resolves.toBeUndefined();
  });
});

describe('moveAside, removeFileDurably, ensureDir', () => {
  it('moves a bad file aside under a name of its own each time, never over an earlier one', async () => {
    const file = join(dir, 'state.json');
    const moved: Array<string | null> = [];
    for (let n = 0; n < 5; n++) {
      writeFileSync(file, `bad ${n}`);
      moved.push(n % 2 === 0 ? await moveAside(file) : moveAsideSync(file));
    }
    expect(new Set(moved).size).toBe(5);
    for (const [n, path] of moved.entries()) expect(readFileSync(path as string, 'utf8')).toBe(`bad ${n}`);
    expect(moved.every((p) => p?.startsWith(`${file}.invalid-`))).toBe(true);
    expect(await moveAside(file)).toBeNull();
    expect(moveAsideSync(file)).toBeNull();
  });

  it('removes a file; one already gone is not an error', async () => {
    const file = join(dir, 'intent.json');
    writeFileSync(file, '{}');
    await removeFileDurably(file);
    expect(existsSync(file)).toBe(false);
    await expect(removeFileDurably(file)).resolves.toBeUndefined();
  });

  it('creates nested folders, accepts an existing one, and says what is in the way', async () => {
    await ensureDir(join(dir, 'x', 'y', 'z'));
    await ensureDir(join(dir, 'x', 'y', 'z'));
    expect(statSync(join(dir, 'x', 'y', 'z')).isDirectory()).toBe(true);
    writeFileSync(join(dir, 'file'), '');
    await expect(ensureDir(join(dir, 'file', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });
});
