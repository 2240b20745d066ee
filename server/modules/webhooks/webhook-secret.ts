import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SECRET_PREFIX = 'whk_';

/** A new webhook secret: `whk_` + 32 random bytes, base64url. Shown once; only its hash is stored. */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** SHA-256 hex of a secret. */
export function hashWebhookSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * The secret of an `Authorization: Bearer <secret>` header matches the stored hash. Both sides are
 * compared as SHA-256 digests of equal length with `timingSafeEqual`, so the time taken says nothing
 * about how much of the secret was right.
 */
export function secretMatches(authorization: string | undefined, storedHash: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const given = createHash('sha256').update(match?.[1] ?? '', 'utf8').digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === given.length && timingSafeEqual(given, stored) && !!match;
}
