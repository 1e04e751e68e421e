import { SignJWT, jwtVerify } from 'jose';

const ISSUER = 'plugin-license-emulator';
const AUDIENCE = 'authenticated';
/** Emulator tokens live ten years on the emulator clock: long enough for any test or demo. */
const TOKEN_LIFETIME_S = 10 * 365 * 24 * 3600;

/** Result of looking at the Authorization header of a request. */
export type AuthResult = { kind: 'none' } | { kind: 'invalid'; reason: string } | { kind: 'valid'; subject: string };

export function decodeKey(base64url: string): Uint8Array {
  return new Uint8Array(Buffer.from(base64url, 'base64url'));
}

/** Issues the HS256 bearer JWT of the demo account. */
export async function issueToken(key: Uint8Array, subject: string, nowMs: number): Promise<string> {
  const iat = Math.floor(nowMs / 1000);
  return new SignJWT({ role: 'authenticated' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject(subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + TOKEN_LIFETIME_S)
    .sign(key);
}

/** Checks `Authorization: Bearer <jwt>` against the emulator's key, on the emulator clock. */
export async function authenticate(header: string | undefined, key: Uint8Array, nowMs: number): Promise<AuthResult> {
  if (header === undefined || header.trim() === '') return { kind: 'none' };
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) return { kind: 'invalid', reason: 'the Authorization header is not of the form "Bearer <token>"' };
  try {
    const { payload } = await jwtVerify(match[1], key, {
      algorithms: ['HS256'],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: new Date(nowMs),
    });
    if (typeof payload.sub !== 'string' || payload.sub === '') return { kind: 'invalid', reason: 'the token names no subject' };
    return { kind: 'valid', subject: payload.sub };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return { kind: 'invalid', reason: code === 'ERR_JWT_EXPIRED' ? 'the token has expired' : 'the token is not one this service issued' };
  }
}
