// The report's formatters: what a value looks like in a line of the report.

/** The expiry of a JWT in ms; undefined when it has none; null when the token is not a JWT. */
export function jwtExpiry(token: string): number | undefined | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const payload = JSON.parse(Buffer.from(parts[1] as string, 'base64url').toString('utf8')) as { exp?: unknown };
    return typeof payload.exp === 'number' ? payload.exp * 1000 : undefined;
  } catch {
    return null;
  }
}

/** A proxy URL without its password. */
export function maskUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = '****';
    return u.href;
  } catch {
    return value.includes('@') ? '(set, with credentials)' : value;
  }
}

export function formatDuration(ms: number): string {
  if (ms >= 86_400_000) return `${(ms / 86_400_000).toFixed(1)} days`;
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  if (ms >= 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 1000)} s`;
}
