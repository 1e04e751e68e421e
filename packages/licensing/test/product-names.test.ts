// The one product-name rule (the manager's --project, pnpm package --project, the names baked
// into an executable) and the defensive reading of the baked list.
import { describe, expect, it } from 'vitest';
import { bakedProjects, isProjectId, normalizeProductName, PRODUCT_NAME_RULE } from '../src/executable.js';

const ID = '123e4567-e89b-12d3-a456-426614174000';

describe('normalizeProductName', () => {
  it.each([
    ['Acme Gain', 'Acme Gain'],
    ['  Acme Gain  ', 'Acme Gain'],
    [`Acme $HOME 'Gain' "x" * \\ ü 🎛`, `Acme $HOME 'Gain' "x" * \\ ü 🎛`],
    ['x'.repeat(80), 'x'.repeat(80)],
    ['x'.repeat(81), undefined],
    ['', undefined],
    ['   ', undefined],
    ['Acme\nGain', undefined],
    ['Acme\rGain', undefined],
    ['Acme\u001b[31mGain', undefined],
    ['Acme\u007fGain', undefined],
    ['Acme\u0000Gain', undefined],
    [42, undefined],
    [null, undefined],
  ])('%j -> %j', (given, expected) => {
    expect(normalizeProductName(given)).toBe(expected);
  });

  it('is said in words the same way everywhere', () => {
    expect(PRODUCT_NAME_RULE).toBe('1 to 80 printable characters');
  });
});

describe('isProjectId', () => {
  it.each([[ID, true], [ID.toUpperCase(), true], [`${ID} `, false], ['plugin-1', false], ['', false], [undefined, false], [`${ID}\n`, false]])('%j -> %j', (given, expected) => {
    expect(isProjectId(given)).toBe(expected);
  });
});

describe('bakedProjects: executable.json read defensively', () => {
  it('keeps good entries (ids lower-cased, names trimmed) and drops every bad one', () => {
    expect(
      bakedProjects([
        { project_id: ID.toUpperCase(), name: ' Acme Gain ' },
        { project_id: 'plugin-1', name: 'Bad id' },
        { project_id: '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84', name: 'Bad\nname' },
        { project_id: ID, name: 'The same id again' },
        { name: 'No id' },
        'not an object',
        null,
        ['3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84', 'an array'],
        { project_id: '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84', name: 'Acme Synth' },
      ]),
    ).toEqual([
      { projectId: ID, name: 'Acme Gain' },
      { projectId: '3f6c1b2a-8d4e-4f7a-9c2b-5e1d0a7b6c84', name: 'Acme Synth' },
    ]);
  });

  it.each([undefined, null, 'projects', 42, {}, {}])('%j is no list: none', (value) => {
    expect(bakedProjects(value)).toEqual([]);
  });
});
