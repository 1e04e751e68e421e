/**
 * The rule for a well-formed activation code: UUID-like text, 8-4-4-4-12 hexadecimal digits,
 * case-insensitive, nothing around it (no spaces, no braces). Codes are compared lower-cased.
 */
export const CODE_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isWellFormedCode(code: string): boolean {
  return CODE_PATTERN.test(code);
}

export function normalizeCode(code: string): string {
  return code.toLowerCase();
}

/** A code as it may appear in messages and logs: first 4 + "…" + last 4 characters; short text is hidden whole. */
export function codeHint(code: string): string {
  if (code.length < 12) return `…(${code.length} chars)`;
  return `${code.slice(0, 4)}…${code.slice(-4)}`;
}

/** Replaces the code in paths that carry one, so request logs never hold a full code. */
export function redactPath(url: string): string {
  const path = url.split('?')[0] ?? url;
  return path.replace(/(\/plugin-activation\/status\/|\/__emulator\/codes\/)([^/]+)/, (_m, prefix: string, code: string) => {
    let decoded = code;
    try {
      decoded = decodeURIComponent(code);
    } catch {
      // keep the raw segment; it is hidden below either way
    }
    return prefix + codeHint(decoded);
  });
}

const CODE_LIKE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * For paths that match no route: a code typed into a wrong path must not come back whole, and
 * nothing tells a code from an id there, so every code-shaped part is shown as a hint.
 */
export function redactUnknownPath(url: string): string {
  let path = redactPath(url);
  try {
    path = decodeURIComponent(path);
  } catch {
    // a malformed escape stays as sent; code-shaped parts are still hidden below
  }
  return path.replace(CODE_LIKE, (m) => codeHint(m));
}
