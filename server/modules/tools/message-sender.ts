import type { Ctx } from '../../common/ctx';

/** Where a tool-sent message goes: a channel and a chat on it (for a DM, the identity's handle). */
export interface MessageTarget {
  channel: string;
  chatId: string;
}

/**
 * Port through which `send_message` delivers text; the app wires it to the outbound queue. Implementations
 * should resolve once the message is accepted for delivery and throw when it cannot be.
 */
export interface MessageSender {
  send(ctx: Ctx, target: MessageTarget, text: string): Promise<void>;
}
