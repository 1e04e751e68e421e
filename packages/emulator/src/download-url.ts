import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a download URL stays valid (the interface leaves the duration to expires_at). */
export const DOWNLOAD_URL_TTL_MS = 15 * 60_000;

function sign(key: Uint8Array, artifactId: string, expiresMs: number): string {
  return createHmac('sha256', key).update(`${artifactId}.${expiresMs}`).digest('hex');
}

/** A signed, expiring URL of an artifact file served under /__emulator/files. */
function artifactDownloadUrl(origin: string, key: Uint8Array, artifactId: string, fileName: string, expiresMs: number): string {
  const url = new URL(`/__emulator/files/artifacts/${artifactId}/${encodeURIComponent(fileName)}`, origin);
  url.searchParams.set('expires', String(expiresMs));
  url.searchParams.set('signature', sign(key, artifactId, expiresMs));
  return url.toString();
}

export function verifyDownloadSignature(key: Uint8Array, artifactId: string, expires: string, signature: string): boolean {
  if (!/^\d{1,16}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
  const expected = Buffer.from(sign(key, artifactId, Number(expires)), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

/** A download link handed out at `nowMs`: the signed URL and when it expires (15 minutes later). */
export function downloadLink(origin: string, key: Uint8Array, artifact: { id: string; file_name: string }, nowMs: number): { url: string; expires_at: string } {
  const expiresMs = nowMs + DOWNLOAD_URL_TTL_MS;
  return { url: artifactDownloadUrl(origin, key, artifact.id, artifact.file_name, expiresMs), expires_at: new Date(expiresMs).toISOString() };
}
