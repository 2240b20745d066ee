import type { OutboundVoice } from '../channel.types';

/** One message waiting in a chat's mailbox: its chunks, already split to the channel's limit. */
export interface MailItem {
  key: string;
  chunks: string[];
  /** The turn whose live reply the chunks replace (see OutboundChunk.stream). */
  stream?: string;
  /** A spoken reply (OGG/Opus) sent as one voice message instead of the chunks (which are then empty). */
  voice?: OutboundVoice;
}

/** The oldest waiting item of a chat, with what its drain needs to know before sending. */
export interface MailHead extends MailItem {
  /** Per part (each chunk, or the one voice message): whether it was sent already. */
  sent: boolean[];
  /** Remaining back-off after a failure, in ms (0 when none). */
  backoffMs: number;
}

/** A chat of a platform channel. */
export interface MailChat {
  channel: string;
  chatId: string;
}

/** The exclusive right to serve a chat's mailbox; `lost` turns true when renewal found another holder. */
export interface MailboxLock {
  readonly lost: boolean;
  release(): Promise<unknown>;
}

/** A chat's mailbox taken to serve: its lock and its oldest item (null: empty). */
export interface MailClaim {
  lock: MailboxLock;
  head: MailHead | null;
}

/**
 * Port: the per-chat outbound mailboxes (Redis in server/redis/). Keys are added once: adding a key that
 * waits or was delivered does nothing. Chunks are marked sent one by one, so a re-run never sends a
 * chunk twice. Reading the head goes with taking the lock and with finishing the item before it, so a
 * drain costs one round trip per message.
 */
export interface Mailbox {
  /** Adds the item unless its key waits or was delivered; true when added. */
  add(chat: MailChat, item: MailItem): Promise<boolean>;
  /** Takes the chat's lock and reads its oldest item (null: empty); null when another worker serves it. */
  claim(chat: MailChat): Promise<MailClaim | null>;
  /** {@link add} and {@link claim} in one step; `claimed` is null when another worker serves the chat. */
  addAndClaim(chat: MailChat, item: MailItem): Promise<{ added: boolean; claimed: MailClaim | null }>;
  markSent(key: string, index: number): Promise<void>;
  /**
   * Takes the oldest item off (delivered or given up), remembers its key as done (marking its part
   * `sentIndex` sent, when given), and returns the next item (null: the mailbox is empty).
   */
  finish(chat: MailChat, key: string, sentIndex?: number): Promise<MailHead | null>;
  /** Counts a failed attempt of the item; returns the count so far. */
  countFailure(key: string): Promise<number>;
  setBackoff(key: string, ms: number): Promise<void>;
  /** The chats of `channel` whose mailboxes hold something (served by whoever takes the channel). */
  waitingChats(channel: string): Promise<string[]>;
}

/** Port: makes sure some worker serves the chat's mailbox (the `outbound` queue in jobs/), from `at` (ms epoch) on. */
export interface DeliveryJobs {
  schedule(channel: string, chatId: string, key: string, at?: number): Promise<void>;
}
