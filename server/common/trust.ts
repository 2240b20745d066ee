import { registerEnumType } from 'type-graphql';

/**
 * Ordered trust levels (DESIGN §3). String values are stored in the database and exposed in GraphQL,
 * so they must never change.
 */
export enum TrustLevel {
  BLOCKED = 'BLOCKED',
  GUEST = 'GUEST',
  MEMBER = 'MEMBER',
  TRUSTED = 'TRUSTED',
  ADMIN = 'ADMIN',
  OWNER = 'OWNER',
}

registerEnumType(TrustLevel, {
  name: 'TrustLevel',
  description: 'Ordered trust level: BLOCKED < GUEST < MEMBER < TRUSTED < ADMIN < OWNER',
});

export const TRUST_ORDER = [
  TrustLevel.BLOCKED,
  TrustLevel.GUEST,
  TrustLevel.MEMBER,
  TrustLevel.TRUSTED,
  TrustLevel.ADMIN,
  TrustLevel.OWNER,
] as const satisfies readonly TrustLevel[];

/** Numeric rank of a trust level; higher may do more. */
export function trustRank(level: TrustLevel): number {
  return TRUST_ORDER.indexOf(level);
}

/** True when `level` is at least `min`. */
export function trustAtLeast(level: TrustLevel, min: TrustLevel): boolean {
  return trustRank(level) >= trustRank(min);
}

/** Parses a trust level name (case-insensitive); returns null when it is not one. */
export function parseTrustLevel(value: string): TrustLevel | null {
  const upper = value.trim().toUpperCase();
  return (TRUST_ORDER as readonly string[]).includes(upper) ? (upper as TrustLevel) : null;
}
