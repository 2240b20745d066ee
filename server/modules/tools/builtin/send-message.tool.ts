import { z } from 'zod';
import { TrustLevel, trustAtLeast } from '../../../common/trust';
import type { Identity, UserService } from '../../users';
import type { MessageSender } from '../message-sender';
import { clip } from '../tool-args';
import { defineTool, ToolRefusedError, type Tool } from '../tool';

export interface SendMessageToolOptions {
  users: Pick<UserService, 'findByIdentity' | 'identitiesOf' | 'findOne'>;
  sender: MessageSender;
}

const schema = z
  .object({
    text: z.string().trim().min(1).max(4000).describe('The message text.'),
    channel: z.string().min(1).max(32).optional().describe('Channel of the recipient identity: telegram, whatsapp, web or tui.'),
    handle: z.string().min(1).max(200).optional().describe('Handle of the recipient on that channel (e.g. Telegram user id).'),
    user_id: z.string().min(1).max(36).optional().describe('Recipient user id (instead of channel + handle); ADMIN and above for other users.'),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.user_id !== undefined && a.handle !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['handle'], message: 'give either user_id or channel + handle, not both' });
    } else if (a.user_id === undefined && a.handle === undefined) {
      ctx.addIssue({ code: 'custom', path: ['handle'], message: 'give channel + handle, or user_id' });
    } else if (a.handle !== undefined && a.channel === undefined) {
      ctx.addIssue({ code: 'custom', path: ['channel'], message: 'channel is required with handle' });
    }
  });

export type SendMessageArgs = z.output<typeof schema>;

/**
 * `send_message` (TRUSTED): sends text to one of the sender's own identities; ADMIN and above may send
 * to any known user or identity (DESIGN §3). Sending to someone else below ADMIN is refused (audited).
 */
export function createSendMessageTool(options: SendMessageToolOptions): Tool<SendMessageArgs> {
  const { users, sender } = options;
  return defineTool({
    name: 'send_message',
    description:
      "Sends a text message to one of the user's own identities (channel + handle, or user_id). " +
      'ADMIN users may message any user.',
    schema,
    minTrust: TrustLevel.TRUSTED,
    summarizeArgs: (a) => `to=${a.user_id ? `user:${a.user_id}` : `${a.channel}:${clip(a.handle ?? '', 60)}`}${a.channel && a.user_id ? ` via ${a.channel}` : ''} text=${a.text.length} chars`,
    async run(tc, args) {
      const { ctx } = tc;
      const mayMessageOthers = trustAtLeast(ctx.trust, TrustLevel.ADMIN);
      let identity: Pick<Identity, 'userId' | 'channel' | 'handle'>;
      if (args.handle !== undefined) {
        const channel = args.channel!;
        const owner = await users.findByIdentity(ctx, channel, args.handle);
        // Below ADMIN an unknown handle is refused like someone else's, so the tool does not reveal who exists.
        if ((!owner || owner.id !== ctx.userId) && !mayMessageOthers) {
          throw new ToolRefusedError(`sending to ${channel}:${args.handle} needs ADMIN trust: it is not one of your own identities`);
        }
        if (!owner) throw new Error(`no user has the identity ${channel}:${args.handle}`);
        identity = { userId: owner.id, channel, handle: args.handle };
      } else {
        const userId = args.user_id!;
        if (userId !== ctx.userId && !mayMessageOthers) throw new ToolRefusedError('sending to another user needs ADMIN trust');
        const user = await users.findOne(ctx, userId);
        if (!user) throw new Error(`user ${userId} was not found`);
        const [all = []] = await users.identitiesOf(ctx, [userId]);
        const candidates = args.channel ? all.filter((i) => i.channel === args.channel) : all;
        const chosen = candidates.find((i) => i.channel === tc.channel) ?? candidates[0];
        if (!chosen) throw new Error(`user ${userId} has no identity${args.channel ? ` on ${args.channel}` : ''} to send to`);
        identity = chosen;
      }
      await sender.send(ctx, { channel: identity.channel, chatId: identity.handle }, args.text);
      return { sent: true, to: `${identity.channel}:${identity.handle}`, userId: identity.userId };
    },
  });
}
