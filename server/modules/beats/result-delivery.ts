import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import type { NoticeOrigin, NoticeSender } from '../events';
import { Session, SessionStatus } from '../sessions';
import type { UserService } from '../users';

/** A chat to deliver to: a channel and a chat on it (for a DM, the identity's handle). */
export interface ResultTarget {
  channel: string;
  chatId: string;
}

export interface ResultDeliveryRequest {
  /** Whose principal chat is used when `target` is null (and who web/TUI targets belong to). */
  userId: string | null;
  target: ResultTarget | null;
  /** Idempotency key: a result handed over twice with the same key is delivered once. */
  key: string;
  text: string;
  /** What sends it: web and TUI show it beside the text, platform chats get it as a first line (⏰ name). */
  origin?: NoticeOrigin | null;
}

/** Port: the channels of this deployment, as the channel registry knows them. */
export interface ResultChannels {
  /** Channel names, platforms first: the order in which a user's principal chat is looked for. */
  names(): readonly string[];
  /** The channel's clients read the session event stream (web, TUI): a result goes to the user's session there. */
  readsSessionEvents(channel: string): boolean;
}

/**
 * Delivers the result of work the server did on its own (a beat's run, a webhook's turn) to a target
 * chat or to the owner's principal chat, through the outbound delivery (split to the channel's limit,
 * idempotent per chunk). The principal chat is the user's Telegram DM, else WhatsApp, else their web (or
 * TUI) session, where the result arrives as a notice.
 */
export class ResultDelivery {
  constructor(private readonly deps: { db: Db; users: Pick<UserService, 'identitiesOf'>; notices: NoticeSender; channels: ResultChannels }) {}

  /** The user's principal chat, or null when they have none to reach. */
  async principalChat(ctx: Ctx, userId: string): Promise<ResultTarget | null> {
    const { channels } = this.deps;
    const [identities = []] = await this.deps.users.identitiesOf(ctx, [userId]);
    for (const channel of channels.names()) {
      const identity = identities.find((i) => i.channel === channel);
      if (identity) return { channel, chatId: channels.readsSessionEvents(channel) ? userId : identity.handle };
    }
    for (const channel of channels.names().filter((c) => channels.readsSessionEvents(c))) {
      if (await this.activeSession(ctx, `${channel}:${userId}`)) return { channel, chatId: userId };
    }
    return null;
  }

  /** Hands the text to the target (or the principal chat); returns where it went, null when nowhere. */
  async deliver(ctx: Ctx, req: ResultDeliveryRequest): Promise<ResultTarget | null> {
    const target = req.target ?? (req.userId ? await this.principalChat(ctx, req.userId) : null);
    if (!target) return null;
    if (this.deps.channels.readsSessionEvents(target.channel)) {
      const session = await this.activeSession(ctx, `${target.channel}:${target.chatId}`);
      if (!session) return null;
      await this.deps.notices.notify(ctx, { channel: target.channel, chatId: null, key: req.key, sessionId: session.id, origin: req.origin ?? null }, req.text);
      return target;
    }
    const text = req.origin ? `⏰ ${req.origin.name}\n${req.text}` : req.text;
    await this.deps.notices.notify(ctx, { channel: target.channel, chatId: target.chatId, key: req.key }, text);
    return target;
  }

  private activeSession(ctx: Ctx, key: string): Promise<Session | null> {
    return this.deps.db.repo(ctx, Session).findOne({ where: { key, status: SessionStatus.ACTIVE }, order: { id: 'DESC' } });
  }
}
