import type { TrustLevel } from '../../common/trust';

/** A token and its user as the database held them when they were read. */
export interface VerifiedToken {
  tokenId: string;
  userId: string;
  name: string;
  tokenHash: string;
  prefix: string;
  lastUsedAt: Date | null;
  tokenCreatedAt: Date | null;
  tokenUpdatedAt: Date | null;
  displayName: string;
  trust: TrustLevel;
  userCreatedAt: Date | null;
  userUpdatedAt: Date | null;
}

interface Entry {
  value: VerifiedToken;
  /** The change generation the value was read in; any later announced change retires it. */
  generation: number;
  expiresAt: number;
}

/**
 * Recently verified tokens of this process, by token hash, so a busy client's requests do not each read
 * the token and its user again. An entry is used only while no change of users or tokens has been
 * announced since it was read (a revocation, a trust change, a rename or a deletion retires it at once in
 * the process that made it, and in the others as soon as they hear of it) and for at most `ttlMs`. Unknown
 * and revoked tokens are never kept.
 */
export class VerifiedTokens {
  private readonly entries = new Map<string, Entry>();

  constructor(
    /** The current generation of the users/tokens change topic (`Db.changes.generationOf`). */
    private readonly generation: () => number,
    private readonly ttlMs = 1000,
    private readonly maxEntries = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The entry for `hash` when it is still current, else null (and it is dropped). */
  get(hash: string): VerifiedToken | null {
    const entry = this.entries.get(hash);
    if (!entry) return null;
    if (entry.generation !== this.generation() || entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return null;
    }
    return entry.value;
  }

  /** Keeps what was read in `generation`, unless a change was announced since. */
  set(hash: string, value: VerifiedToken, generation: number): void {
    if (generation !== this.generation()) return;
    this.entries.delete(hash);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { value, generation, expiresAt: this.now() + this.ttlMs });
  }

  delete(hash: string): void {
    this.entries.delete(hash);
  }
}
