/**
 * A printable hint of a secret-ish string (activation code, token): the first 4 and last 4
 * characters around an ellipsis. Strings of 12 characters or fewer are fully masked, because
 * 8 shown characters would reveal most of them.
 *
 * @example
 * codeHint('3f2a9c1e-0b7d-4e55-9a10-77c2d4e8b601'); // '3f2a…b601'
 * codeHint('short'); // '*****'
 */
export function codeHint(code: string): string {
  const text = String(code);
  if (text.length <= 12) return '*'.repeat(Math.max(text.length, 1));
  return `${text.slice(0, 4)}…${text.slice(-4)}`;
}

/**
 * Replaces every occurrence of each secret in `text` with its hint, ignoring case: the service
 * compares codes case-insensitively and may echo one back normalised. Used on anything that
 * reaches an error message.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (!secret || secret.length < 4 || !out.toLowerCase().includes(secret.toLowerCase())) continue;
    const hint = codeHint(secret);
    out = out.replace(new RegExp(secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), () => hint);
  }
  return out;
}

/** Redacts secrets in every string inside a JSON-like value (error `details`). */
export function redactDeep(value: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, secrets)]));
  }
  return value;
}
