import type { Logger } from '../../common/logger';
import type { DeliveryJobs, MailClaim } from './mailbox';

/** What serving a mailbox achieved; `retryAt` when it must be served again later (ms epoch). */
export type DrainResult = { sent: number; skipped: number; retryAt?: number };

/**
 * Serves one chat's mailbox until it is empty, waits for a retry, or `signal` aborts (DeliveryService.drain);
 * `claimed`: the mailbox was taken already.
 */
export type ChatDrain = (channel: string, chatId: string, signal: AbortSignal, claimed?: MailClaim) => Promise<DrainResult>;

/**
 * Puts a message into its chat's mailbox (idempotent); with `claim`, also takes the chat's mailbox in the
 * same step (null when another worker serves it).
 */
export type HandOver = (claim: boolean) => Promise<MailClaim | null>;

/** How soon handing a chat to the queue is tried again when the queue could not take it (Redis away). */
const FALLBACK_RETRY_MS = 1000;

interface Running {
  channel: string;
  chatId: string;
  /** Handed a message while draining: one more pass when this one ends. */
  again: boolean;
  /** The newest key handed over: it names the queue job when the chat goes to the queue. */
  key: string;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Serves chats' mailboxes in the process that holds their channel as soon as a message is handed over,
 * instead of through an `outbound.deliver` job (two BullMQ scripts and the worker's hop). One drain per
 * chat at a time here; a message handed over while it runs gets one more pass. The mailbox and its
 * lock in Redis keep each chat's order and one server at a time against queue jobs and other processes.
 *
 * What a drain here does not finish goes to the outbound queue, as before: a back-off (the job waits
 * for its end), a chat served elsewhere, a failure, more chats at once than `limit`, a channel that
 * stops here. A process that dies mid-drain leaves the messages in their mailbox, and whoever takes the
 * channel next serves every waiting mailbox (DeliveryService.channelStarted).
 */
export class LocalDrains {
  private readonly running = new Map<string, Running>();
  private closed = false;

  constructor(
    private readonly deps: { drain: ChatDrain; jobs: DeliveryJobs; logger: Logger },
    private readonly limit: number,
  ) {}

  /**
   * Puts a message into its chat's mailbox with `handOver` and has the chat served here: at once (the
   * mailbox taken in the same step), or by one more pass of its running drain. False when nothing was
   * done here (closed, or `limit` chats drain already): the caller hands the message to the queue.
   */
  async handOver(channel: string, chatId: string, key: string, handOver: HandOver): Promise<boolean> {
    if (this.closed) return false;
    const id = `${channel}:${chatId}`;
    if (this.running.has(id)) {
      await handOver(false);
      // Marked once the message is in: a pass that starts after this finds it.
      const current = this.running.get(id);
      if (current) {
        this.passAgain(current, key);
        return true;
      }
      // That drain ended meanwhile.
      return this.start(id, channel, chatId, key, null);
    }
    if (this.running.size >= this.limit) return false;
    const run = this.entry(id, channel, chatId, key);
    let claimed: MailClaim | null;
    try {
      claimed = await handOver(true);
    } catch (err) {
      // Others handed messages over meanwhile: they are still served.
      if (run.again) run.done = this.serve(id, run, null);
      else this.running.delete(id);
      throw err;
    }
    this.begin(id, run, claimed);
    return true;
  }

  /** Starts serving a chat whose message is in its mailbox; false at the limit. */
  private start(id: string, channel: string, chatId: string, key: string, claimed: MailClaim | null): boolean {
    if (this.closed || this.running.size >= this.limit) return false;
    this.begin(id, this.entry(id, channel, chatId, key), claimed);
    return true;
  }

  private begin(id: string, run: Running, claimed: MailClaim | null): void {
    run.again = true;
    run.done = this.serve(id, run, claimed);
  }

  /** A running drain makes one more pass for a message handed over meanwhile (`key` names its queue job). */
  private passAgain(run: Running, key: string): void {
    run.again = true;
    run.key = key;
  }

  /** Has the chat served here, its messages being in the mailbox already (a sweep); false at the limit. */
  take(channel: string, chatId: string, key: string): boolean {
    const id = `${channel}:${chatId}`;
    const current = this.running.get(id);
    if (!current) return this.start(id, channel, chatId, key, null);
    this.passAgain(current, key);
    return true;
  }

  private entry(id: string, channel: string, chatId: string, key: string): Running {
    const run: Running = { channel, chatId, again: false, key, abort: new AbortController(), done: Promise.resolve() };
    this.running.set(id, run);
    return run;
  }

  /** Stops the drains of a channel that stops here and waits for them; what they leave goes to the queue. */
  async leave(channel: string): Promise<void> {
    const mine = [...this.running.values()].filter((r) => r.channel === channel);
    for (const r of mine) r.abort.abort(new Error(`channel ${channel} stopped here`));
    await Promise.all(mine.map((r) => r.done));
  }

  /** Stops every drain and hands their chats to the queue; nothing is taken afterwards. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.running.values()];
    for (const r of all) r.abort.abort(new Error('shutting down'));
    await Promise.all(all.map((r) => r.done));
  }

  private async serve(id: string, run: Running, claimed: MailClaim | null): Promise<void> {
    const { signal } = run.abort;
    let queueAt: number | null = null;
    let claim = claimed;
    try {
      while (run.again && !signal.aborted) {
        run.again = false;
        const first = claim ?? undefined;
        claim = null;
        const { retryAt } = await this.deps.drain(run.channel, run.chatId, signal, first);
        // A back-off or a chat served elsewhere: the queue job serves the whole mailbox then.
        if (retryAt) {
          queueAt = retryAt;
          break;
        }
      }
      if (signal.aborted) queueAt = Date.now();
    } catch (err) {
      if (!signal.aborted) this.deps.logger.warn({ err, channel: run.channel, chatId: run.chatId }, 'delivery in process failed; the outbound queue takes the chat');
      queueAt = Date.now();
    } finally {
      this.running.delete(id);
      // Stopped before the first pass: the mailbox taken for it is let go.
      if (claim) await claim.lock.release().catch(() => undefined);
    }
    if (queueAt !== null) await this.toQueue(run, queueAt);
  }

  /** Schedules the chat's outbound job; tried again while the queue cannot take it (unless closed). */
  private async toQueue(run: Running, at: number): Promise<void> {
    try {
      await this.deps.jobs.schedule(run.channel, run.chatId, run.key, at);
    } catch (err) {
      if (this.closed) return;
      this.deps.logger.warn({ err: (err as Error).message, channel: run.channel, chatId: run.chatId }, 'could not hand a chat to the outbound queue; trying again');
      setTimeout(() => void this.toQueue(run, at), FALLBACK_RETRY_MS).unref();
    }
  }
}
