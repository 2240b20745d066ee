import { In, IsNull, MoreThan, Not } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import { Message } from '../sessions';
import { Session } from '../sessions';
import { MessageRole, MessageStatus } from '../sessions';
import type { OutboundSender } from './agent.ports';

/**
 * Closes the gap between storing a reply and enqueuing its delivery: when a worker starts, recent
 * replies of platform chats are handed to the outbound queue again. Delivery is idempotent (one job per
 * reply, each chunk marked sent), so replies already delivered are not sent twice.
 */
export class ReplyRedelivery {
  constructor(
    private readonly db: Db,
    private readonly outbound: OutboundSender,
  ) {}

  async recover(ctx: Ctx, windowMs = 3_600_000): Promise<number> {
    const replies = await this.db.repo(ctx, Message).find({
      where: {
        role: MessageRole.ASSISTANT,
        status: In([MessageStatus.DONE, MessageStatus.FAILED]),
        toolCalls: IsNull(),
        createdAt: MoreThan(new Date(Date.now() - windowMs)),
        dedupeKey: Not(IsNull()),
      },
      order: { id: 'ASC' },
    });
    if (!replies.length) return 0;
    const sessions = await this.db.repo(ctx, Session).findBy({ id: In([...new Set(replies.map((r) => r.sessionId))]) });
    const byId = new Map(sessions.map((s) => [s.id, s]));
    let count = 0;
    for (const reply of replies) {
      const session = byId.get(reply.sessionId);
      if (!session?.chatId) continue;
      await this.outbound.deliver(ctx, { sessionId: session.id, channel: session.channel, chatId: session.chatId, messageId: reply.id, text: reply.content });
      count += 1;
    }
    return count;
  }
}
