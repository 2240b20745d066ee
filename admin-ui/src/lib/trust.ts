import type { TrustLevel } from '../gql/graphql';

export const TRUST_ORDER: readonly TrustLevel[] = ['BLOCKED', 'GUEST', 'MEMBER', 'TRUSTED', 'ADMIN', 'OWNER'];

export function trustAtLeast(trust: TrustLevel | undefined | null, min: TrustLevel): boolean {
  return !!trust && TRUST_ORDER.indexOf(trust) >= TRUST_ORDER.indexOf(min);
}

/** Highest level the signed-in user may grant (DESIGN §3): OWNER anything, ADMIN up to TRUSTED. */
export function maxGrantable(trust: TrustLevel): TrustLevel | null {
  if (trust === 'OWNER') return 'OWNER';
  if (trust === 'ADMIN') return 'TRUSTED';
  return null;
}
