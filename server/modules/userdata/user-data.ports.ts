import type { Ctx } from '../../common/ctx';

/** What an erasure removed outside SQL, by one hook (vector indexes, schedules, Redis, files). */
export interface ErasureScope {
  userId: string;
  /** Ids of the user's rows per table, read before the rows are deleted (sessions, memories, beats, …). */
  ids: ReadonlyMap<string, readonly string[]>;
  handles: ReadonlyArray<{ channel: string; handle: string }>;
}

/**
 * A part of an erasure that lives outside the tables: called before the rows are deleted (with their ids),
 * returns how many things it removed. Must be idempotent: an erasure that is run again calls it again.
 */
export interface UserErasureHook {
  readonly name: string;
  /**
   * Tables this hook clears itself (an index keyed by something other than the user id): the mention
   * scrub leaves them alone, so rows written there while the erasure ran still carry the user and the
   * hook's second sweep finds them.
   */
  readonly tables?: readonly string[];
  erase(ctx: Ctx, scope: ErasureScope): Promise<number>;
}

/** Port: queues the building of an export (`exports` queue); returns the job id for `jobProgress`. */
export interface UserExportJobs {
  enqueueExport(ctx: Ctx, exportId: string, userId: string): Promise<string>;
}

/** One export's download ticket: who may fetch which file, once, until when. */
export interface ExportTicket {
  exportId: string;
  userId: string;
  /** sha256 of the download token (the token itself is only ever given to the requester). */
  tokenHash: string;
  expiresAt: string;
  /** Path of the archive inside the data folder, once built. */
  file: string | null;
}

/** Port: download tickets with expiry and single use (Redis). */
export interface ExportTickets {
  put(ticket: ExportTicket, ttlMs: number): Promise<void>;
  /** Marks the archive built (keeps the expiry); false when the ticket expired meanwhile. */
  ready(exportId: string, file: string): Promise<boolean>;
  get(exportId: string): Promise<ExportTicket | null>;
  /** Takes the ticket if `tokenHash` matches and the archive is built: atomically, so it works once. */
  claim(exportId: string, tokenHash: string): Promise<ExportTicket | null>;
  /** Drops every ticket of a user (erasure). Returns how many. */
  dropUser(userId: string): Promise<number>;
}
