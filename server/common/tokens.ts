import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'mun_';

/** A new API token: `mun_` + 32 random bytes, base64url. */
export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 hex of a token; only this is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
