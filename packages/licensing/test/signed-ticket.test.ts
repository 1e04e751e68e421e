// The signed ticket (docs/signed-ticket.md): the checked-in vectors.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeSignedVectors, SIGNED_VECTORS_DIR, writeSignedVectors } from './signed-ticket-vectors.js';

describe('the checked-in signed-ticket vectors', () => {
  if (process.env.UPDATE_SIGNED_TICKET_VECTORS === '1') writeSignedVectors();
  const { manifest, files } = makeSignedVectors();

  it('are exactly what the generator makes today (regenerate: UPDATE_SIGNED_TICKET_VECTORS=1)', () => {
    expect(JSON.parse(readFileSync(join(SIGNED_VECTORS_DIR, 'manifest.json'), 'utf8'))).toEqual(manifest);
    expect(readdirSync(SIGNED_VECTORS_DIR).filter((n) => n !== 'manifest.json').sort()).toEqual([...files.keys()].sort());
    for (const [name, bytes] of files) expect(readFileSync(join(SIGNED_VECTORS_DIR, name)).equals(bytes), name).toBe(true);
  });
});
