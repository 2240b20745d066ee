import { Ctx } from '../common/ctx';
import { asStorageFull, ServiceUnavailableError } from '../common/errors';
import type { Logger } from '../common/logger';
import { TrustLevel } from '../common/trust';
import type { SlashCommandService } from '../modules/commands';
import type { TurnService, TurnTicket } from '../modules/conversation';
import type { SessionEventPublisher } from '../modules/events';
import { ChatKind, sessionKeyFor, type Session, type SessionLifecycleService } from '../modules/sessions';
import type { User, UserService } from '../modules/users';
import { VOICE_MESSAGES, type VoiceNoteService } from '../modules/voice';
import type { DocumentInbox } from '../modules/documents';
import type { InboundMessage } from './channel.types';
import { compose, type Middleware } from './middleware';

/** Everything a step knows about one inbound message. */
export interface InboundContext {
  message: InboundMessage;
  ctx: Ctx;
  user: User | null;
  session: Session | null;
  ticket: TurnTicket | null;
  /** Direct answers to the sender (command replies, refusals, pairing codes). */
  replies: string[];
  /** Why the message was not processed, when it was not. */
  dropped?: string;
  /** A voice note was queued for transcription (its transcript becomes the message later). */
  voiceQueued?: boolean;
  /** A backing service (database disk, Redis) refused the message: nothing was stored. */
  unavailable?: ServiceUnavailableError;
}

/** Port: decides what happens to senders without an identity (pairing, open, allowlist…; DESIGN §3). */
export interface SenderPolicy {
  /** Returns the user to act as, or null to stop (optionally with a reply, e.g. a pairing code). */
  admit(ctx: Ctx, message: InboundMessage): Promise<{ user: User | null; reply?: string }>;
  /** Extra gating for known senders (GUEST rate limits, group allowlists); null lets the message on, '' drops it silently. */
  gate?(ctx: Ctx, message: InboundMessage, user: User): Promise<string | null>;
}

/** Refuses every unknown sender; channel policies replace it. */
export const REFUSE_UNKNOWN: SenderPolicy = { admit: async () => ({ user: null }) };

/** Port: sends direct answers to the sender on platform channels. */
export interface DirectReplier {
  reply(ctx: Ctx, message: InboundMessage, text: string): Promise<void>;
}

/**
 * Port: rotates a stale session (daily reset, idle timeout) before a message goes in; returns the session
 * to use and a notice for the sender, or null when the session is fine.
 */
export interface SessionExpiry {
  refresh(ctx: Ctx, session: Session): Promise<{ session: Session; notice: string | null } | null>;
}

/** Port: remembers platform message ids for a while; true when the id was seen before. */
export interface Deduper {
  seen(key: string): Promise<boolean>;
}

/** Port: `/link CODE` from a platform sender (known or not) links their handle to the code's user. */
export interface SelfLinker {
  /** True when the text is a `/link` command this step answers. */
  matches(text: string): boolean;
  /** Links (or refuses) and returns the answer for the sender. */
  redeem(ctx: Ctx, req: { channel: string; chatKind: 'dm' | 'group'; handle: string; displayName?: string | null; text: string }): Promise<string>;
}

export interface InboundPipelineDeps {
  dedupe: Deduper;
  users: UserService;
  lifecycle: SessionLifecycleService;
  turns: TurnService;
  commands: SlashCommandService;
  events: SessionEventPublisher;
  policy: (channel: string) => SenderPolicy;
  requireMention: (channel: string) => boolean;
  dmScope: () => 'per-user' | 'main';
  replier: DirectReplier;
  logger: Logger;
  /** Session resets (`session.daily_reset_hour`, `session.idle_minutes`); none when omitted. */
  expiry?: SessionExpiry;
  /** `/link CODE` on platform channels, answered before the unknown-sender policy; off when omitted. */
  linker?: SelfLinker;
  /** Voice notes: checked, stashed and queued for transcription; without it they are refused. */
  voice?: Pick<VoiceNoteService, 'accept'>;
  /** Documents sent in chats: checked, downloaded and queued for ingestion; without it they are refused. */
  documents?: Pick<DocumentInbox, 'accept'>;
}

/**
 * The inbound pipeline of DESIGN §2.2: dedupe → resolve user and trust → group mention gating →
 * session resolution → slash commands → store and enqueue. Every channel adapter feeds it.
 */
export class InboundPipeline {
  private readonly run: (c: InboundContext) => Promise<void>;

  constructor(private readonly deps: InboundPipelineDeps) {
    const steps: Array<Middleware<InboundContext>> = [
      (c, next) => this.dedupe(c, next),
      (c, next) => this.link(c, next),
      (c, next) => this.identify(c, next),
      (c, next) => this.gate(c, next),
      (c, next) => this.resolveSession(c, next),
      (c, next) => this.commands(c, next),
      (c) => this.enqueue(c),
    ];
    this.run = compose(steps);
  }

  /**
   * Processes one message. `knownUser` is set by channels that authenticate the sender themselves
   * (web and TUI through an API token), `session` by callers that name one. Errors are logged and
   * answered, never thrown at the adapter.
   */
  async handle(message: InboundMessage, known: { user?: User | null; session?: Session | null } = {}): Promise<InboundContext> {
    const c: InboundContext = {
      message,
      ctx: new Ctx({ actor: { kind: 'anonymous' }, logger: this.deps.logger, channel: message.channel }),
      user: known.user ?? null,
      session: known.session ?? null,
      ticket: null,
      replies: [],
    };
    try {
      await this.run(c);
    } catch (err) {
      const unavailable = asStorageFull(err) ?? (err instanceof ServiceUnavailableError ? err : null);
      if (unavailable) {
        // An operator's problem (free disk space, bring Redis back), not a bug: no stack trace.
        this.deps.logger.error({ reason: unavailable.details?.reason ?? unavailable.message, channel: message.channel }, 'inbound message refused: storage or queue unavailable');
        c.unavailable = unavailable;
        c.replies.push(`⚠️ ${unavailable.message}`);
      } else {
        this.deps.logger.error({ err, channel: message.channel, chatId: message.chatId }, 'inbound message failed');
        c.replies.push('⚠️ Sorry, something went wrong while handling your message.');
      }
    }
    for (const text of c.replies) {
      try {
        await this.deps.replier.reply(c.ctx, message, text);
      } catch (err) {
        this.deps.logger.warn({ err, channel: message.channel }, 'could not send a direct reply');
      }
    }
    return c;
  }

  private actAs(c: InboundContext, user: User): void {
    c.user = user;
    c.ctx = new Ctx({
      actor: { kind: 'user', userId: user.id, trust: user.trust },
      logger: this.deps.logger.child({ userId: user.id, channel: c.message.channel }),
      channel: c.message.channel,
      requestId: c.ctx.requestId,
    });
  }

  private dedupeKey(message: InboundMessage): string | null {
    return message.platformMessageId ? `${message.channel}:${message.chatId}:${message.platformMessageId}` : null;
  }

  private async dedupe(c: InboundContext, next: () => Promise<void>): Promise<void> {
    const key = this.dedupeKey(c.message);
    if (key && (await this.deps.dedupe.seen(key))) {
      c.dropped = 'duplicate';
      return;
    }
    await next();
  }

  /** `/link CODE` from a platform chat: answered here, whoever the sender is, and never stored or sent to the model. */
  private async link(c: InboundContext, next: () => Promise<void>): Promise<void> {
    const { message } = c;
    const linker = this.deps.linker;
    if (!linker || message.sessionKey || !linker.matches(message.text ?? '')) return next();
    c.replies.push(await linker.redeem(c.ctx, { channel: message.channel, chatKind: message.chatKind, handle: message.sender.handle, displayName: message.sender.displayName ?? null, text: message.text ?? '' }));
    c.dropped = 'link command';
  }

  private async identify(c: InboundContext, next: () => Promise<void>): Promise<void> {
    const { message } = c;
    let user = c.user ?? (await this.deps.users.findByIdentity(c.ctx, message.channel, message.sender.handle));
    if (!user) {
      const admitted = await this.deps.policy(message.channel).admit(c.ctx, message);
      if (admitted.reply) c.replies.push(admitted.reply);
      user = admitted.user;
      if (!user) {
        c.dropped = 'unknown sender';
        return;
      }
    }
    if (user.trust === TrustLevel.BLOCKED) {
      c.dropped = 'blocked';
      return;
    }
    this.actAs(c, user);
    await next();
  }

  private async gate(c: InboundContext, next: () => Promise<void>): Promise<void> {
    const { message } = c;
    if (message.chatKind === 'group' && this.deps.requireMention(message.channel) && !message.mentionsBot) {
      c.dropped = 'not mentioned';
      return;
    }
    const refusal = await this.deps.policy(message.channel).gate?.(c.ctx, message, c.user!);
    if (refusal != null) {
      if (refusal) c.replies.push(refusal);
      c.dropped = 'gated';
      return;
    }
    await next();
  }

  private async resolveSession(c: InboundContext, next: () => Promise<void>): Promise<void> {
    const { message } = c;
    const user = c.user!;
    const group = message.chatKind === 'group';
    const key = sessionKeyFor({
      channel: message.channel,
      chatKind: message.chatKind,
      chatId: message.chatId,
      userId: user.id,
      isOwner: user.trust === TrustLevel.OWNER,
      dmScope: this.deps.dmScope(),
      clientKey: message.sessionKey,
    });
    c.session ??= await this.deps.lifecycle.resolveActive(c.ctx, {
      key,
      userId: group ? null : user.id,
      channel: message.channel,
      chatId: message.chatId,
      chatKind: group ? ChatKind.GROUP : ChatKind.DM,
    });
    const fresh = await this.deps.expiry?.refresh(c.ctx, c.session);
    if (fresh) {
      c.session = fresh.session;
      if (fresh.notice) c.replies.push(fresh.notice);
    }
    await next();
  }

  private async commands(c: InboundContext, next: () => Promise<void>): Promise<void> {
    const result = await this.deps.commands.handle(c.ctx, c.session!, c.message.text);
    if (!result) return next();
    if (result.session) c.session = result.session;
    c.replies.push(result.reply);
  }

  private async enqueue(c: InboundContext): Promise<void> {
    const { message } = c;
    if (message.voice) return this.enqueueVoice(c, message.voice);
    if (message.document) return this.enqueueDocument(c, message.document);
    if (!message.text.trim() && !message.images?.length) {
      c.dropped = 'empty';
      return;
    }
    c.ticket = await this.deps.turns.submit(c.ctx, c.session!, { text: message.text, images: message.images, dedupeKey: this.dedupeKey(message) });
    if (c.ticket.duplicate) c.dropped = 'duplicate';
  }

  private async enqueueVoice(c: InboundContext, voice: NonNullable<InboundMessage['voice']>): Promise<void> {
    const { message } = c;
    const origin = { session: c.session!, trust: c.user!.trust, channel: message.channel, chatId: message.chatId, caption: message.text, dedupeKey: this.dedupeKey(message) };
    const outcome = this.deps.voice ? await this.deps.voice.accept(c.ctx, voice, origin) : { reply: VOICE_MESSAGES.notSetUp, queued: false };
    if (outcome.reply) c.replies.push(outcome.reply);
    if (outcome.queued) c.voiceQueued = true;
    else c.dropped = 'voice refused';
  }

  private async enqueueDocument(c: InboundContext, doc: NonNullable<InboundMessage['document']>): Promise<void> {
    const { message } = c;
    const origin = { session: c.session!, trust: c.user!.trust, channel: message.channel, chatId: message.chatId };
    const outcome = this.deps.documents ? await this.deps.documents.accept(c.ctx, doc, origin) : { reply: 'Documents are not read on this server.', queued: false };
    c.replies.push(outcome.reply);
    if (!outcome.queued) c.dropped = 'document refused';
  }
}
