import { In, IsNull, Not } from 'typeorm';
import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { VoiceConfig } from '../../config';
import type { Db } from '../../persistence/db';
import type { ChatPresence, OutboundRequest, OutboundSender } from '../agent';
import { classifyModelError, isAbortError, type Speaker } from '../models';
import { Message, MessageRole } from '../sessions';
import type { UsageService } from '../usage';
import { inspectAudio } from './audio-format';
import { FfmpegMissingError, type FfmpegConverter } from './ffmpeg';
import type { VoicePreferences } from './voice-commands';
import { RetryableVoiceError, type SpeakJob, type VoiceJobs } from './voice.types';

/** Port: where a spoken reply goes (the delivery service: the chat's outbound mailbox). */
export interface VoiceOutbox {
  canSendVoice(channel: string): boolean;
  deliverVoice(ctx: Ctx, target: { channel: string; chatId: string; key: string }, voice: { dataBase64: string; mimeType: string; seconds: number }): Promise<void>;
}

/** Collaborators of {@link VoiceReplyService}. */
export interface VoiceReplyDeps {
  db: Db;
  /** The text path every reply takes without voice. */
  inner: OutboundSender;
  /** null when `ai.roles.speech` is not set. */
  speaker: Speaker | null;
  jobs: VoiceJobs;
  outbox: VoiceOutbox;
  preferences: VoicePreferences;
  converter: FfmpegConverter;
  presence: ChatPresence;
  usage: UsageService;
  config: () => VoiceConfig;
}

/** How a spoken reply ended (the job's result). */
export type SpeakOutcome = 'voice' | 'text';

/**
 * Voice out (DESIGN §10): an `OutboundSender` in front of the text path. A reply is spoken when the chat's
 * channel has voice messages, a `speech` role is set and the user's `/voice` choice (else `voice.reply`)
 * says so: `always`, or `when_voice` for a turn that answered a voice note. The speech is made on the
 * `voice` queue; a reply longer than `voice.text_over_chars` goes out as text at once as well. When the
 * speech cannot be made (the endpoint fails, ffmpeg is needed but missing) the reply goes out as text.
 */
export class VoiceReplyService implements OutboundSender {
  constructor(private readonly deps: VoiceReplyDeps) {}

  async deliver(ctx: Ctx, req: OutboundRequest): Promise<void> {
    if (!(await this.shouldSpeak(ctx, req).catch((err: unknown) => (ctx.logger.warn({ err }, 'voice reply check failed; sending text'), false)))) {
      return this.deps.inner.deliver(ctx, req);
    }
    const textSent = req.text.length > this.deps.config().text_over_chars;
    if (textSent) await this.deps.inner.deliver(ctx, req);
    await this.deps.jobs.speak({ ctx: ctx.serialize(), sessionId: req.sessionId, channel: req.channel, chatId: req.chatId, messageId: req.messageId, text: req.text, turnId: req.turnId, textSent });
  }

  /**
   * One attempt at speaking a reply. Retryable endpoint failures throw {@link RetryableVoiceError} unless
   * `lastAttempt`; then, like for every other failure, the reply goes out as text (unless it did already).
   */
  async speak(ctx: Ctx, job: SpeakJob, lastAttempt: boolean, signal?: AbortSignal): Promise<SpeakOutcome> {
    const { deps } = this;
    const asText = async (why: string): Promise<SpeakOutcome> => {
      ctx.logger.warn({ messageId: job.messageId, reason: why, textSent: job.textSent }, `voice reply sent as text: ${why}`);
      if (!job.textSent) await deps.inner.deliver(ctx, { sessionId: job.sessionId, channel: job.channel, chatId: job.chatId, messageId: job.messageId, text: job.text, turnId: job.turnId });
      return 'text';
    };
    const speaker = deps.speaker;
    if (!speaker) return asText('no speech role is configured');
    await deps.presence.setTyping(job.channel, job.chatId, true).catch(() => undefined);
    let audio: Buffer;
    let format: string;
    try {
      ({ audio, format } = await speaker.speak(speakable(job.text), signal));
    } catch (err) {
      if (isAbortError(err) && signal?.aborted) throw err;
      const kind = classifyModelError(err);
      if ((kind === 'retry' || kind === 'rate-limit') && !lastAttempt) throw new RetryableVoiceError((err as Error).message, { cause: err });
      return asText(`the speech endpoint failed (${(err as Error).message})`);
    }
    let ogg = audio;
    let seconds: number | null = null;
    try {
      seconds = oggSeconds(audio);
    } catch {
      // Not OGG/Opus (mp3, wav, …, or an "opus" answer in another container): convert it.
      try {
        ogg = await deps.converter.toOggOpus(audio, signal);
        seconds = oggSeconds(ogg);
      } catch (err) {
        if (err instanceof FfmpegMissingError) return asText(`the speech endpoint answered ${format}, and ffmpeg, needed to convert it to OGG/Opus, is not installed`);
        return asText(`the speech audio (${format}) could not be converted to OGG/Opus: ${(err as Error).message}`);
      }
    }
    await deps.outbox.deliverVoice(ctx, { channel: job.channel, chatId: job.chatId, key: `voice:${job.messageId}` }, { dataBase64: ogg.toString('base64'), mimeType: 'audio/ogg', seconds: Math.max(1, Math.ceil(seconds ?? 1)) });
    await deps.usage
      .record(ctx, {
        userId: ctx.userId,
        sessionId: job.sessionId,
        messageId: job.messageId,
        provider: speaker.provider,
        model: speaker.model,
        role: 'speech',
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false },
        audioSeconds: Math.ceil(seconds ?? 0),
      })
      .catch((err: unknown) => ctx.logger.warn({ err }, 'speech usage not recorded'));
    return 'voice';
  }

  private async shouldSpeak(ctx: Ctx, req: OutboundRequest): Promise<boolean> {
    const { deps } = this;
    const config = deps.config();
    const userId = ctx.userId;
    if (!deps.speaker || !userId || !req.chatId || !deps.outbox.canSendVoice(req.channel)) return false;
    if (!req.text.trim() || req.text.length > config.speech_max_chars) return false;
    if (ctx.trust === TrustLevel.GUEST && !config.guests) return false;
    const mode = (await deps.preferences.get(ctx, userId)) ?? config.reply;
    if (mode === 'never') return false;
    if (mode === 'always') return true;
    return this.answersVoice(ctx, req);
  }

  /** Whether the turn this reply ends answered a voice note. */
  private async answersVoice(ctx: Ctx, req: OutboundRequest): Promise<boolean> {
    const repo = this.deps.db.repo(ctx, Message);
    const reply = await repo.findOne({ where: { id: req.messageId }, select: { id: true, turnId: true, replyToId: true } });
    const turnId = req.turnId ?? reply?.turnId ?? null;
    const where = turnId ? { turnId, role: MessageRole.USER } : reply?.replyToId ? { id: In([reply.replyToId]) } : null;
    if (!where) return false;
    return (await repo.count({ where: { ...where, voiceSeconds: Not(IsNull()) } })) > 0;
  }
}

function oggSeconds(audio: Buffer): number {
  const info = inspectAudio(audio);
  if (info.container !== 'ogg' || info.seconds === null) throw new Error(`not OGG (${info.container})`);
  return info.seconds;
}

/** Markdown a listener should not hear: code fences, emphasis marks, link targets, headings. */
export function speakable(text: string): string {
  return text
    .replace(/```[\s\S]*?```/g, ' (code omitted) ')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]+\)/g, '$1')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/(\*\*|__|\*|_|~~)(\S[\s\S]*?\S|\S)\1/g, '$2')
    .replace(/[ \t]+/g, ' ')
    .trim();
}
