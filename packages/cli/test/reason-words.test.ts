// The words for a license that is not valid live in one table, page/reason-words.json: the
// license manager page reads it, and the JUCE module's panel reads the C++ header made of it. This
// test holds the header to the table (regenerate: UPDATE_REASON_WORDS=1), the table to the
// library's reasons, and the page's filling of it to hostile reasons.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Reason } from '@plugin-license/licensing';
import { describe, expect, it } from 'vitest';
import { reasonWords } from '../page/reason-words.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const TABLE = join(root, 'packages', 'cli', 'page', 'reason-words.json');
const HEADER = join(root, 'plugin', 'plugin_license', 'plugin_license_reason_words.h');

/** Every reason the library stores or the service answers; the type fails to check when one is missing. */
const REASONS = ['not_activated', 'code_revoked', 'code_not_found', 'deactivated', 'grace_expired', 'clock_tampered', 'cache_invalid', 'unsigned'] as const satisfies readonly Reason[];
type Missing = Exclude<Reason, (typeof REASONS)[number]>;
const everyReason: Missing extends never ? true : Missing = true;

/** A C++ string literal of UTF-8 text: bytes past ASCII as octal escapes (never a hex escape that swallows the next letter); a control character is refused. */
function cString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (byte < 0x20 || byte === 0x7f) throw new Error(`a reason's words hold a control character (${byte}): ${JSON.stringify(text)}`);
    if (c === '"' || c === '\\') out += `\\${c}`;
    else if (c === '?') out += '\\?'; // never part of a trigraph, whatever the compiler's mode
    else if (byte > 0x7e) out += `\\${byte.toString(8).padStart(3, '0')}`;
    else out += c;
  }
  return `${out}"`;
}

const camel = (reason: string): string => reason.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
/** plc's name of a reason (plc.hpp's `Reason`): its camelCase, except `unsigned`, a C++ keyword. */
const plcName = (reason: string): string => (reason === 'unsigned' ? 'unsignedTicket' : camel(reason));

/** The module's header, made from the table. */
function header(table: Record<string, string>): string {
  const cases = REASONS.map((r) => `    case plc::Reason::${plcName(r)}: return ${cString(table[r] as string)};`);
  return [
    '// The words for a license that is not valid, one template per reason, in UTF-8. MADE FROM',
    '// packages/cli/page/reason-words.json, the one table the license manager page reads too: change',
    '// the table, never this file, then run',
    '//   UPDATE_REASON_WORDS=1 pnpm exec vitest run packages/cli/test/reason-words.test.ts',
    '// (which fails while the two differ). describeState fills {code} (" with code" and its hint, or',
    "// nothing), {vendor} (the vendor's name) and {reason} (the reason as the agent sent it).",
    '#pragma once',
    '',
    'namespace plugin_license {',
    '',
    'inline const char *reasonTemplate(plc::Reason reason) {',
    '  switch (reason) {',
    ...cases,
    '    case plc::Reason::none:',
    '    case plc::Reason::other: break;',
    '  }',
    `  return ${cString(table.other as string)};`,
    '}',
    '',
    '}  // namespace plugin_license',
    '',
  ].join('\n');
}

describe("the reasons' words", () => {
  const table = JSON.parse(readFileSync(TABLE, 'utf8')) as Record<string, string>;
  if (process.env.UPDATE_REASON_WORDS === '1') writeFileSync(HEADER, header(table));

  it('has a template for every reason and for any other, with only the placeholders the page and the panel fill', () => {
    expect(everyReason).toBe(true);
    expect(Object.keys(table).sort()).toEqual([...REASONS, 'other'].sort());
    for (const [reason, words] of Object.entries(table)) {
      expect(words.replace(/\{(code|vendor|reason)\}/g, ''), reason).not.toMatch(/[{}]/);
      expect(words, reason).toMatch(/^[A-Z].*\.$/);
    }
    expect(table.other).toContain('{reason}');
  });

  it("the JUCE module's header is made from the table (regenerate: UPDATE_REASON_WORDS=1)", () => {
    expect(readFileSync(HEADER, 'utf8')).toBe(header(table));
  });

  it('a C++ literal says the words byte for byte, and refuses what it cannot say', () => {
    expect(cString('a "b" \\ c?? d')).toBe('"a \\"b\\" \\\\ c\\?\\? d"');
    expect(cString('caf\u00e9 \u2014 A')).toBe('"caf\\303\\251 \\342\\200\\224 A"');
    expect(() => cString('two\nlines')).toThrow(/control character/);
  });

  it('the page fills a template once, and says an unknown reason as it is', () => {
    const cases: Array<[string | null, string]> = [
      ['code_revoked', 'This license was revoked. Contact the vendor for a new code.'],
      ['code_not_found', 'The license service does not know this code. Check it, or contact the vendor.'],
      ['not_activated', table.not_activated as string],
      [null, 'Not licensed (no reason given).'],
      ['expired_by_vendor', 'Not licensed (expired_by_vendor).'],
      ['other', 'Not licensed (other).'],
      ['__proto__', 'Not licensed (__proto__).'],
      ['toString', 'Not licensed (toString).'],
      ['{vendor}', 'Not licensed ({vendor}).'],
      ['{code}{reason}', 'Not licensed ({code}{reason}).'],
    ];
    for (const [reason, words] of cases) expect(reasonWords(reason), String(reason)).toBe(words);
  });
});
