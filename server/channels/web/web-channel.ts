import type { Ctx } from '../../common/ctx';
import { ConflictError, ForbiddenError, ServiceUnavailableError, UserInputError } from '../../common/errors';
import type { InboundImage } from '../../modules/conversation';
import type { InboundVoice } from '../../modules/voice';
import { SessionStatus, type SessionService } from '../../modules/sessions';
import type { User, UserService } from '../../modules/users';
import type { InboundPipeline } from '../inbound-pipeline';
import { ChatClient } from './session-stream-transport';

export const MAX_TEXT_CHARS = 32_000;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

export interface WebSendInput {
  sessionId?: string | null;
  text: string;
  images?: InboundImage[] | null;
  /** A voice note (see WebVoiceNotes); the text is then its caption. */
  voice?: InboundVoice | null;
}

export interface WebSendResult {
  sessionId: string;
  messageId: string | null;
  status: string;
  duplicate: boolean;
  reply: string | null;
}

/**
 * The web channel: `sendMessage` from GraphQL (and the TUI, which uses the same API with channel `tui`)
 * goes through the same inbound pipeline as the chat bots, as the token's user.
 */
export class WebChannel {
  constructor(
    private readonly pipeline: InboundPipeline,
    private readonly users: UserService,
    private readonly sessions: SessionService,
    /** Whether `channels.web` / `channels.tui` are enabled in the config. */
    private readonly enabled: (channel: ChatClient) => boolean = () => true,
    /** Null when the queues can take a message now, else why not (Redis down): checked before anything is stored. */
    private readonly unavailable: () => Promise<string | null> = async () => null,
    /** Throws BudgetExceededError when the user's budget is spent (and calls over it are refused): checked before a message that needs the model is stored. */
    private readonly budget: (ctx: Ctx, userId: string) => Promise<void> = async () => undefined,
  ) {}

  /** `viewer`: the acting user as this request's token check just read them (spares reading them again). */
  async send(ctx: Ctx, input: WebSendInput, channel: ChatClient = ChatClient.WEB, viewer?: User): Promise<WebSendResult> {
    const userId = ctx.userId;
    if (!userId) throw new ForbiddenError('Only users can chat.');
    if (!this.enabled(channel)) throw new ForbiddenError(`The ${channel} channel is disabled on this server (channels.${channel}.enabled).`);
    const text = input.text ?? '';
    if (text.length > MAX_TEXT_CHARS) throw new UserInputError(`text must be at most ${MAX_TEXT_CHARS} characters.`, 'text');
    const images = (input.images ?? []).map((img, i) => checkImage(img, i));
    if (!text.trim() && !images.length && !input.voice) throw new UserInputError('text must not be empty.', 'text');
    // The queue check (a Redis round trip) overlaps the reads below, which store nothing; it is still
    // answered before anything is stored, and before any error of those reads.
    const checking = this.unavailable();
    const reading = Promise.all([viewer?.id === userId ? viewer : this.users.get(ctx, userId), input.sessionId ? this.sessions.getVisible(ctx, input.sessionId) : null]);
    reading.catch(() => undefined);
    const down = await checking;
    if (down) {
      ctx.logger.warn({ reason: down }, 'sendMessage refused while the queues are unreachable');
      throw new ServiceUnavailableError('The message queue is unreachable right now; nothing was stored. Try again in a few seconds.');
    }
    const [user, session] = await reading;
    // Slash commands (/usage among them) are answered without the model, so they work over budget too.
    if (!text.trim().startsWith('/')) await this.budget(ctx, userId);
    if (session) {
      if (session.userId !== userId) throw new ForbiddenError('You can only chat in your own sessions.');
      if (session.status !== SessionStatus.ACTIVE) throw new ConflictError('This session is archived; send without sessionId to use your active session.');
    }
    const result = await this.pipeline.handle(
      { channel, chatId: `${channel}:${userId}`, sessionKey: `${channel}:${userId}`, chatKind: 'dm', sender: { handle: userId, displayName: user.displayName }, text, images, ...(input.voice ? { voice: input.voice } : {}) },
      { user, session },
    );
    // Nothing was stored (full disk, Redis gone mid-way): the client gets the retryable error, not a reply.
    if (result.unavailable) throw result.unavailable;
    const sessionId = result.session?.id ?? session?.id;
    if (!sessionId) throw new ForbiddenError(result.replies[0] ?? `Your message was not accepted (${result.dropped ?? 'refused'}).`);
    return {
      sessionId,
      messageId: result.ticket?.messageId ?? null,
      // A voice note waits for its transcript (TRANSCRIBING) or was turned down with a reply (REFUSED).
      status: result.ticket?.status ?? (result.voiceQueued ? 'TRANSCRIBING' : input.voice ? 'REFUSED' : 'DONE'),
      duplicate: result.ticket?.duplicate ?? false,
      reply: result.replies.join('\n\n') || null,
    };
  }
}

function checkImage(img: InboundImage, index: number): InboundImage {
  const field = `images.${index}`;
  if (!IMAGE_TYPES.includes(img.mimeType)) throw new UserInputError(`${field}.mimeType must be one of ${IMAGE_TYPES.join(', ')}.`, `${field}.mimeType`);
  if (!/^[A-Za-z0-9+/=\s]+$/.test(img.dataBase64)) throw new UserInputError(`${field}.dataBase64 is not base64.`, `${field}.dataBase64`);
  if ((img.dataBase64.length * 3) / 4 > MAX_IMAGE_BYTES) throw new UserInputError(`${field} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MiB.`, `${field}.dataBase64`);
  return { mimeType: img.mimeType, dataBase64: img.dataBase64.replace(/\s+/g, '') };
}
