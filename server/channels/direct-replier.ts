import type { Ctx } from '../common/ctx';
import type { SessionEventPublisher } from '../modules/events';
import type { Session } from '../modules/sessions';
import type { InboundMessage } from './channel.types';

/** Port: sends a one-off text to a platform chat (through the outbound queue). */
export interface NoticeSender {
  notify(ctx: Ctx, target: { channel: string; chatId: string; key: string }, text: string): Promise<void>;
}

/**
 * Direct answers (command replies, refusals): web and TUI clients get them as `Notice` events of the
 * session; platform chats get a message through the outbound queue.
 */
export class ChannelDirectReplier {
  constructor(
    private readonly events: SessionEventPublisher,
    private readonly notices: NoticeSender,
  ) {}

  async reply(ctx: Ctx, message: InboundMessage, text: string, session: Session | null): Promise<void> {
    if (message.channel === 'web' || message.channel === 'tui') {
      if (session) await this.events.publish(session.id, { type: 'Notice', level: 'info', text });
      return;
    }
    const key = `notice:${message.channel}:${message.chatId}:${message.platformMessageId ?? Date.now()}:${hash(text)}`;
    await this.notices.notify(ctx, { channel: message.channel, chatId: message.chatId, key }, text);
  }
}

function hash(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(31, h) + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}
