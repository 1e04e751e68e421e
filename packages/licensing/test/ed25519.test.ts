// Ed25519 verification of signed tickets (docs/signed-ticket.md): the checked-in vectors (RFC 8032
// and the edge cases where libsodium refuses what RFC 8032 or node:crypto accept).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ED25519_VECTORS_FILE, makeEd25519Vectors, writeEd25519Vectors } from './ed25519-vectors.js';

describe('the checked-in Ed25519 vectors', () => {
  if (process.env.UPDATE_ED25519_VECTORS === '1') writeEd25519Vectors();
  const vectors = makeEd25519Vectors();

  it('are exactly what the generator makes today (regenerate: UPDATE_ED25519_VECTORS=1)', () => {
    expect(JSON.parse(readFileSync(ED25519_VECTORS_FILE, 'utf8'))).toEqual(vectors);
  });
});
