/**
 * Port: one-time link codes (a user id per code, for a while) and a count of wrong codes per sender,
 * shared by every process (Redis in production).
 */
export interface LinkCodeStore {
  /** Stores `code` for `userId` for `ttlSeconds`, replacing the user's previous code. */
  put(code: string, userId: string, ttlSeconds: number): Promise<void>;
  /** The user of `code` and deletes it (a code works once); null when unknown or expired. */
  take(code: string): Promise<string | null>;
  /** Counts one wrong code of `sender` within `windowSeconds`; returns the count so far. */
  countFailure(sender: string, windowSeconds: number): Promise<number>;
  /** Wrong codes of `sender` in the current window. */
  failures(sender: string): Promise<number>;
}
