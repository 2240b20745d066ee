import type { Clock } from '../../../server/common/clock';
import type { Ctx } from '../../../server/common/ctx';
import type { DeliveryJobs, MailChat, MailClaim, MailHead, Mailbox, MailItem } from '../../../server/channels/delivery';
import type { ChatPresence, OutboundRequest, OutboundSender } from '../../../server/modules/agent';
import type { NoticeSender, NoticeTarget } from '../../../server/modules/events';
import { FakeClock } from '../fakes/fake-clock';

/**
 * The outbound mailboxes in process, with the Redis mailbox's rules: a key is added once (also after it
 * was delivered), chunks are marked sent one by one, back-offs run on the injected clock, and one
 * holder at a time serves a chat.
 */
export class InMemoryMailbox implements Mailbox {
  private readonly chats = new Map<string, string[]>();
  private readonly items = new Map<string, MailItem>();
  private readonly done = new Set<string>();
  private readonly sent = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly retryAt = new Map<string, number>();
  private readonly locked = new Set<string>();

  constructor(readonly clock: Clock = new FakeClock()) {}

  async add(chat: MailChat, item: MailItem): Promise<boolean> {
    if (this.done.has(item.key) || this.items.has(item.key)) return false;
    this.items.set(item.key, { ...item, chunks: [...item.chunks] });
    const id = chatId(chat);
    this.chats.set(id, [...(this.chats.get(id) ?? []), item.key]);
    return true;
  }

  async claim(chat: MailChat): Promise<MailClaim | null> {
    const id = chatId(chat);
    if (this.locked.has(id)) return null;
    this.locked.add(id);
    return { lock: { lost: false, release: async () => void this.locked.delete(id) }, head: this.head(id) };
  }

  async addAndClaim(chat: MailChat, item: MailItem): Promise<{ added: boolean; claimed: MailClaim | null }> {
    const added = await this.add(chat, item);
    return { added, claimed: await this.claim(chat) };
  }

  async markSent(key: string, index: number): Promise<void> {
    this.sent.add(`${key}:${index}`);
  }

  async finish(chat: MailChat, key: string, sentIndex?: number): Promise<MailHead | null> {
    if (sentIndex !== undefined) await this.markSent(key, sentIndex);
    this.done.add(key);
    this.items.delete(key);
    this.failures.delete(key);
    this.retryAt.delete(key);
    const id = chatId(chat);
    this.chats.set(id, (this.chats.get(id) ?? []).filter((k) => k !== key));
    return this.head(id);
  }

  async countFailure(key: string): Promise<number> {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    return n;
  }

  async setBackoff(key: string, ms: number): Promise<void> {
    this.retryAt.set(key, this.clock.now().getTime() + ms);
  }

  async waitingChats(channel: string): Promise<string[]> {
    return [...this.chats].filter(([id, keys]) => keys.length && id.startsWith(`${channel}:`)).map(([id]) => id.slice(channel.length + 1));
  }

  /** Keys still waiting in a chat's mailbox (`<channel>:<chatId>`), oldest first. */
  waiting(chat: string): string[] {
    return [...(this.chats.get(chat) ?? [])];
  }

  private head(id: string): MailHead | null {
    const key = this.chats.get(id)?.[0];
    if (key === undefined) return null;
    const item = this.items.get(key) ?? { key, chunks: [] };
    const parts = item.voice ? 1 : item.chunks.length;
    return {
      ...item,
      chunks: [...item.chunks],
      sent: Array.from({ length: parts }, (_, i) => this.sent.has(`${key}:${i}`)),
      backoffMs: Math.max(0, (this.retryAt.get(key) ?? 0) - this.clock.now().getTime()),
    };
  }
}

function chatId(chat: MailChat): string {
  return `${chat.channel}:${chat.chatId}`;
}

/** The outbound queue in process: records each scheduled drain; `onSchedule` may serve it at once. */
export class InProcessDeliveryJobs implements DeliveryJobs {
  readonly scheduled: Array<{ channel: string; chatId: string; key: string; at?: number }> = [];
  onSchedule: ((job: { channel: string; chatId: string; key: string; at?: number }) => Promise<void>) | null = null;

  async schedule(channel: string, chatId: string, key: string, at?: number): Promise<void> {
    const job = { channel, chatId, key, ...(at === undefined ? {} : { at }) };
    this.scheduled.push(job);
    await this.onSchedule?.(job);
  }
}

/** The outbound sender, notice and chat presence ports, recording what was handed over (for code upstream of delivery). */
export class RecordingOutbound implements OutboundSender, NoticeSender, ChatPresence {
  readonly replies: OutboundRequest[] = [];
  readonly notices: Array<{ target: NoticeTarget; text: string }> = [];
  /** `on`/`off` typing switches, as `<channel>:<chatId>:on|off`. */
  readonly typing: string[] = [];
  private waiters: Array<{ match: (n: { target: NoticeTarget; text: string }) => boolean; resolve: (n: { target: NoticeTarget; text: string }) => void }> = [];

  async deliver(_ctx: Ctx, req: OutboundRequest): Promise<void> {
    this.replies.push(req);
  }

  async notify(_ctx: Ctx, target: NoticeTarget, text: string): Promise<void> {
    const notice = { target, text };
    this.notices.push(notice);
    const ready = this.waiters.filter((w) => w.match(notice));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const w of ready) w.resolve(notice);
  }

  async setTyping(channel: string, chatId: string, on: boolean): Promise<void> {
    this.typing.push(`${channel}:${chatId}:${on ? 'on' : 'off'}`);
  }

  /** Resolves with the first notice (handed over already or still to come) that matches. */
  nextNotice(match: (n: { target: NoticeTarget; text: string }) => boolean = () => true): Promise<{ target: NoticeTarget; text: string }> {
    const found = this.notices.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }
}
