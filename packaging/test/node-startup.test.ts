import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript, no types
import { ignoreReplModuleVariable, replModuleNameOffsets } from '../src/node-startup.mjs';

const NAME = 'NODE_REPL_EXTERNAL_MODULE';
const cString = (before: string, after: string) => Buffer.from(`${before}\0${NAME}\0${after}`, 'latin1');
/** How V8's snapshot keeps the same name: a header ending in the length, u32 little-endian. */
const snapshotString = () => Buffer.concat([Buffer.from([1, 0x18, 0x52, 0x64, NAME.length, 0, 0, 0]), Buffer.from(`${NAME}\0\0`, 'latin1')]);

describe('the C string NODE_REPL_EXTERNAL_MODULE in a Node binary', () => {
  it.each([
    ['the C string alone', cString('NODE_OPTIONS', 'NODE_ICU_DATA'), 1],
    ['the C string among snapshot copies', Buffer.concat([snapshotString(), cString('x', 'y'), snapshotString()]), 1],
    ['only snapshot copies', Buffer.concat([snapshotString(), snapshotString()]), 0],
    ['the name inside a longer string (a message, JavaScript source)', Buffer.from(`\0${NAME} can't be used\0process.env.${NAME})\0`, 'latin1'), 0],
    ['two C strings', Buffer.concat([cString('a', 'b'), cString('c', 'd')]), 2],
    ['nothing', Buffer.from('\0\0\0'), 0],
  ])('%s', (_, binary, count) => {
    expect(replModuleNameOffsets(binary)).toHaveLength(count);
    if (count === 1) {
      const before = Buffer.from(binary);
      ignoreReplModuleVariable(binary, 'linux-x64');
      const at: number = replModuleNameOffsets(before)[0];
      // Only the first byte of that one string changes: the name reads "" now.
      expect(binary[at]).toBe(0);
      expect([...binary].filter((b: number, i: number) => b !== before[i])).toHaveLength(1);
      expect(replModuleNameOffsets(binary)).toEqual([]);
    } else {
      expect(() => ignoreReplModuleVariable(Buffer.from(binary), 'win-x64')).toThrow(`the win-x64 Node binary has ${count} C strings NODE_REPL_EXTERNAL_MODULE, not 1`);
    }
  });

  it('refuses a binary already changed (made twice over, it would say so instead of changing another byte)', () => {
    const binary = cString('a', 'b');
    ignoreReplModuleVariable(binary, 'darwin-arm64');
    expect(() => ignoreReplModuleVariable(binary, 'darwin-arm64')).toThrow(/has 0 C strings/);
  });
});
