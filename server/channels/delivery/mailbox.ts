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

/**
 * Port: the per-chat outbound mailboxes (Redis in server/redis/). Keys are added once: adding a key that
 * waits or was delivered does nothing. Chunks are marked sent one by one, so a re-run never sends a
 * chunk twice.
 */
export interface Mailbox {
  /** Adds the item unless its key waits or was delivered; true when added. */
  add(chat: string, item: MailItem): Promise<boolean>;
  /** The oldest waiting item, or null when the mailbox is empty. */
  head(chat: string): Promise<MailItem | null>;
  isSent(key: string, index: number): Promise<boolean>;
  markSent(key: string, index: number): Promise<void>;
  /** Counts a failed attempt of the item; returns the count so far. */
  countFailure(key: string): Promise<number>;
  /** Remaining back-off of the item after a failure, in ms (0 when none). */
  backoffLeft(key: string): Promise<number>;
  setBackoff(key: string, ms: number): Promise<void>;
  /** Takes the oldest item off (delivered or given up) and remembers its key as done. */
  finishHead(chat: string, key: string): Promise<void>;
  /** Exclusive right to serve the chat; null when another worker serves it. */
  lock(chat: string): Promise<{ readonly lost: boolean; release(): Promise<unknown> } | null>;
}

/** Port: makes sure some worker serves the chat's mailbox (the `outbound` queue in jobs/). */
export interface DeliveryJobs {
  schedule(channel: string, chatId: string, key: string): Promise<void>;
}
