import type { Ctx } from '../common/ctx';
import type { NoticeSender } from '../modules/events';
import type { InboundMessage } from './channel.types';

/**
 * Direct answers (command replies, refusals) to the chat a message came from. Clients that chat through
 * GraphQL get them once, as the reply of their `sendMessage`, so they are not published again; platform
 * chats get a message through their mailbox.
 */
export class ChannelDirectReplier {
  constructor(private readonly notices: NoticeSender) {}

  async reply(ctx: Ctx, message: InboundMessage, text: string): Promise<void> {
    const key = `notice:${message.channel}:${message.chatId}:${message.platformMessageId ?? Date.now()}:${hash(text)}`;
    await this.notices.notify(ctx, { channel: message.channel, chatId: message.chatId, key }, text);
  }
}

function hash(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(31, h) + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}
