// The one naming rule of plugins: the name a caller gives (`manager --project ID=NAME`) wins over
// the baked one (`pnpm package --project`), which wins over none; and the one check of a name,
// tried with hostile text. The baked list itself is read from a real packaged executable in
// packaging/test/product-names.test.ts; here it is passed in, as the functions take it.
import { describe, expect, it } from 'vitest';
import { productName, productNameProblem, productNames, readBakedProjects } from '../src/index.js';

const GAIN = '2bfd7a59-0b7d-4e55-9a10-77c2d4e8b601';
const REVERB = 'fd9c0e11-3a2b-4c5d-8e9f-0123456789ab';
const baked = [
  { projectId: GAIN, name: 'Acme Gain' },
  { projectId: REVERB, name: 'Acme Reverb' },
];

describe('productNames and productName: given > baked > none', () => {
  it('nothing baked and nothing given: no name (the id alone is shown)', () => {
    expect(productNames([], [])).toEqual([]);
    expect(productName(GAIN, [], [])).toBeUndefined();
  });

  it('the baked names, in their order', () => {
    expect(productNames([], baked)).toEqual([
      { projectId: GAIN, name: 'Acme Gain' },
      { projectId: REVERB, name: 'Acme Reverb' },
    ]);
    expect(productName(GAIN, [], baked)).toBe('Acme Gain');
  });

  it("the caller's name wins per id; a caller's id without a name keeps the baked name; others are added after", () => {
    const other = '00000000-0000-4000-8000-000000000001';
    const given = [
      { projectId: REVERB.toUpperCase(), name: 'Acme Reverb 2' },
      { projectId: GAIN, name: null },
      { projectId: other, name: null },
    ];
    expect(productNames(given, baked)).toEqual([
      { projectId: GAIN, name: 'Acme Gain' },
      { projectId: REVERB, name: 'Acme Reverb 2' },
      { projectId: other, name: null },
    ]);
    expect(productName(REVERB, given, baked)).toBe('Acme Reverb 2');
    expect(productName(GAIN.toUpperCase(), given, baked)).toBe('Acme Gain');
    expect(productName(other, given, baked)).toBeUndefined();
    expect(productName('00000000-0000-4000-8000-000000000002', given, baked)).toBeUndefined();
  });

  it('a plain Node process (no executable) has nothing baked', () => {
    expect(productNames()).toEqual([]);
    expect(productName(GAIN)).toBeUndefined();
  });
});

describe('productNameProblem: one line of text, shown as text', () => {
  it.each([
    'Acme Gain',
    '*',
    '[a-z]?*',
    "it's",
    'say "hi"',
    '$HOME ${PATH} $(touch pwned) `id`',
    'back\\slash\\',
    'naïve Übersteuer 音 🎛',
    '<script>alert(1)</script>',
    '-n',
    '  padded  ',
    'x'.repeat(80),
    '🎛'.repeat(80),
  ])('accepts %j', (name) => {
    expect(productNameProblem(name)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['x'.repeat(81), /^it is 81 characters long$/],
    ['two\nlines', /line break/],
    ['cr\rhere', /line break/],
    ['tab\there', /control/],
    ['nul\0', /control/],
    ['\u001b[31mred\u001b[0m', /control/],
    ['del\u007f', /control/],
    ['c1\u009b31m', /control/],
    ['line\u2028separator', /line break/],
    ['Acme \u202egnirts', /text-direction/],
    ['Acme \u2066isolate\u2069', /text-direction/],
    ['mark\u200f', /text-direction/],
    ['lone \ud800 surrogate', /control/],
  ])('refuses %j', (name, words) => {
    expect(productNameProblem(name)).toMatch(words);
  });
});

describe('readBakedProjects: the baked list, read defensively', () => {
  it('keeps good entries (id lower-cased, name trimmed) and drops every bad one', () => {
    expect(
      readBakedProjects([
        { project_id: GAIN.toUpperCase(), name: ' Acme Gain ' },
        { project_id: 'acme', name: 'Not a UUID' },
        { project_id: `${REVERB}\n`, name: 'Trailing newline in the id' },
        { project_id: ` ${REVERB}`, name: 'Leading space in the id' },
        { project_id: '*', name: 'Glob' },
        { project_id: REVERB, name: 'two\nlines' },
        { project_id: REVERB, name: '' },
        { project_id: REVERB, name: 42 },
        { project_id: 42, name: 'number id' },
        { projectId: REVERB, name: 'camelCase key' },
        { project_id: REVERB },
        null,
        'a string',
        [REVERB, 'an array'],
        { project_id: REVERB, name: 'Acme Reverb "$HOME" *' },
      ]),
    ).toEqual([
      { projectId: GAIN, name: 'Acme Gain' },
      { projectId: REVERB, name: 'Acme Reverb "$HOME" *' },
    ]);
  });

  it('a later entry for the same id wins, as a repeated flag does', () => {
    expect(readBakedProjects([{ project_id: GAIN, name: 'Old' }, { project_id: GAIN.toUpperCase(), name: 'New' }])).toEqual([{ projectId: GAIN, name: 'New' }]);
  });

  it.each([undefined, null, 'Acme Gain', 42, { project_id: GAIN, name: 'Acme Gain' }])('not a list (%j): nothing baked', (raw) => {
    expect(readBakedProjects(raw)).toEqual([]);
  });
});
