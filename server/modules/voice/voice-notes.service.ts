import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Ctx } from '../../common/ctx';
import { newId } from '../../common/ids';
import { TrustLevel } from '../../common/trust';
import type { VoiceConfig } from '../../config';
import type { Db } from '../../persistence/db';
import type { ChatPresence } from '../agent';
import type { TurnService } from '../conversation';
import type { NoticeSender } from '../events';
import { classifyModelError, isAbortError, type Transcriber } from '../models';
import { Session, SessionStatus, type SessionLifecycleService } from '../sessions';
import type { UsageService } from '../usage';
import { formatDuration, inspectAudio, InvalidAudioError } from './audio-format';
import { RetryableVoiceError, type AudioStash, type InboundVoice, type TranscribeJob, type TranscribeOutcome, type VoiceJobs } from './voice.types';

/** What the sender is told, one place for every refusal and failure. */
export const VOICE_MESSAGES = {
  notSetUp: '🎤 Voice notes are not set up on this server (no transcription model is configured). Please send your message as text.',
  guests: '🎤 Voice notes are not available to guests here. Please send your message as text.',
  tooLong: (seconds: number, max: number) => `🎤 That voice note is ${formatDuration(seconds)} long; I take up to ${formatDuration(max)}. Please send a shorter one, or text.`,
  tooLarge: (maxBytes: number) => `🎤 That audio file is larger than ${Math.round(maxBytes / 1024 / 1024)} MiB, the most I take. Please send a shorter one, or text.`,
  unreadable: (why: string) => `🎤 I could not read that audio (${why}). Please record it again, or send text.`,
  download: '🎤 I could not download that voice note. Please send it again.',
  expired: '🎤 Your voice note waited too long and was dropped before I could transcribe it. Please send it again.',
  failed: (why: string) => `🎤 Sorry, I could not transcribe your voice note (${why}). Please try again later, or send text.`,
  empty: '🎤 I could not make out any words in that voice note. Please try again closer to the microphone, or send text.',
} as const;

/** Collaborators of {@link VoiceNoteService}. */
export interface VoiceNoteDeps {
  db: Db;
  /** null when `ai.roles.transcribe` is not set. */
  transcriber: Transcriber | null;
  stash: AudioStash;
  jobs: VoiceJobs;
  turns: TurnService;
  lifecycle: SessionLifecycleService;
  notices: NoticeSender;
  presence: ChatPresence;
  usage: UsageService;
  config: () => VoiceConfig;
  /** Where kept audio goes (`voice.keep_audio`): `<data_dir>/voice`. */
  keepDir: string;
}

/** Where an inbound voice note came from, as the inbound pipeline knows it. */
export interface VoiceNoteOrigin {
  session: Session;
  trust: TrustLevel;
  channel: string;
  chatId: string;
  caption: string;
  dedupeKey: string | null;
}

/**
 * Voice notes in: `accept` checks and stashes a note where it arrives (the inbound pipeline, after the
 * sender was admitted), then the `voice` queue runs `transcribe`, whose transcript goes into the session
 * like a typed message (marked with its length). Everything that goes wrong is told to the sender.
 */
export class VoiceNoteService {
  constructor(private readonly deps: VoiceNoteDeps) {}

  /**
   * Checks a note (role set up, trust, declared and measured length and size, a readable container),
   * downloads and stashes it and queues its transcription. Returns the reply for the sender: a refusal,
   * or null when the note was queued.
   */
  async accept(ctx: Ctx, voice: InboundVoice, origin: VoiceNoteOrigin): Promise<{ reply: string | null; queued: boolean }> {
    const config = this.deps.config();
    const refuse = (reply: string, reason: string) => {
      ctx.logger.info({ reason, kind: voice.kind, seconds: voice.seconds, bytes: voice.declaredBytes }, 'voice note refused');
      return { reply, queued: false };
    };
    if (!this.deps.transcriber) return refuse(VOICE_MESSAGES.notSetUp, 'no transcribe role');
    if (origin.trust === TrustLevel.GUEST && !config.guests) return refuse(VOICE_MESSAGES.guests, 'guest');
    if (voice.seconds !== null && voice.seconds > config.max_seconds) return refuse(VOICE_MESSAGES.tooLong(voice.seconds, config.max_seconds), 'too long (declared)');
    if (voice.declaredBytes !== null && voice.declaredBytes > config.max_bytes) return refuse(VOICE_MESSAGES.tooLarge(config.max_bytes), 'too large (declared)');
    let audio: Buffer | null;
    try {
      audio = await voice.fetch(config.max_bytes, ctx.signal);
    } catch (err) {
      ctx.logger.warn({ err: (err as Error).message }, 'voice note could not be downloaded');
      return refuse(VOICE_MESSAGES.download, 'download failed');
    }
    if (!audio) return refuse(VOICE_MESSAGES.tooLarge(config.max_bytes), 'too large');
    let info;
    try {
      info = inspectAudio(audio);
    } catch (err) {
      if (err instanceof InvalidAudioError) return refuse(VOICE_MESSAGES.unreadable(err.message), 'unreadable');
      throw err;
    }
    const seconds = info.seconds ?? voice.seconds;
    if (seconds !== null && seconds > config.max_seconds) return refuse(VOICE_MESSAGES.tooLong(seconds, config.max_seconds), 'too long (measured)');
    const audioId = newId();
    // Long enough for every attempt with its back-off; deleted as soon as it is transcribed.
    const ttl = Math.ceil((config.attempts * (config.timeout_ms + 30_000)) / 1000) + 3600;
    await this.deps.stash.put(audioId, audio, ttl);
    await this.deps.jobs.transcribe({
      ctx: ctx.serialize(),
      audioId,
      mimeType: info.mimeType,
      seconds: seconds === null ? null : Math.round(seconds * 10) / 10,
      sessionId: origin.session.id,
      channel: origin.channel,
      chatId: origin.chatId,
      caption: origin.caption,
      dedupeKey: origin.dedupeKey,
    });
    await this.deps.presence.setTyping(origin.channel, origin.chatId, true).catch(() => undefined);
    ctx.logger.info({ audioId, container: info.container, seconds, bytes: audio.length }, 'voice note queued for transcription');
    return { reply: null, queued: true };
  }

  /**
   * One attempt at a queued note. A retryable failure (timeout, 5xx, unreachable) throws
   * {@link RetryableVoiceError} unless `lastAttempt`; every other ending tells the sender what happened.
   * An empty transcript is not sent to the model.
   */
  async transcribe(ctx: Ctx, job: TranscribeJob, lastAttempt: boolean, signal?: AbortSignal): Promise<TranscribeOutcome> {
    const { deps } = this;
    const config = deps.config();
    const target = { channel: job.channel, chatId: job.chatId, sessionId: job.sessionId };
    const tell = (text: string, key: string) => deps.notices.notify(ctx, { ...target, key: `voice:${job.audioId}:${key}`, level: 'warn' }, text);
    const audio = await deps.stash.get(job.audioId);
    if (!audio) {
      await tell(VOICE_MESSAGES.expired, 'expired');
      return 'expired';
    }
    const transcriber = deps.transcriber;
    if (!transcriber) {
      await deps.stash.delete(job.audioId);
      await tell(VOICE_MESSAGES.notSetUp, 'off');
      return 'failed';
    }
    await deps.presence.setTyping(job.channel, job.chatId, true).catch(() => undefined);
    let text: string;
    let reported: number | null | undefined;
    try {
      ({ text, seconds: reported } = await transcriber.transcribe({ audio, mimeType: job.mimeType, language: config.language }, signal));
    } catch (err) {
      if (isAbortError(err) && signal?.aborted) throw err;
      const kind = classifyModelError(err);
      const retryable = kind === 'retry' || kind === 'rate-limit';
      ctx.logger.warn({ err: (err as Error).message, audioId: job.audioId, retryable, lastAttempt }, 'transcription failed');
      if (retryable && !lastAttempt) throw new RetryableVoiceError((err as Error).message, { cause: err });
      await deps.stash.delete(job.audioId);
      await deps.presence.setTyping(job.channel, job.chatId, false).catch(() => undefined);
      await tell(VOICE_MESSAGES.failed(retryable ? 'the speech service did not answer in time' : 'the speech service refused it'), 'failed');
      return 'failed';
    }
    const seconds = job.seconds ?? reported ?? 0;
    await this.keepOrDrop(ctx, job, audio);
    await deps.usage
      .record(ctx, {
        userId: ctx.userId,
        sessionId: job.sessionId,
        messageId: null,
        provider: transcriber.provider,
        model: transcriber.model,
        role: 'transcribe',
        usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false },
        audioSeconds: Math.ceil(seconds),
      })
      .catch((err: unknown) => ctx.logger.warn({ err }, 'transcription usage not recorded'));
    // Whisper-style models print only punctuation or a bracketed noise tag for silence.
    if (!/[\p{L}\p{N}]/u.test(text.replace(/\[[^\]]*\]|\([^)]*\)/g, ''))) {
      await deps.presence.setTyping(job.channel, job.chatId, false).catch(() => undefined);
      await tell(VOICE_MESSAGES.empty, 'empty');
      return 'empty';
    }
    const session = await this.activeSession(ctx, job.sessionId);
    const caption = job.caption.trim();
    await deps.turns.submit(ctx, session, { text: caption ? `${text}\n\n${caption}` : text, voiceSeconds: Math.round(seconds), dedupeKey: job.dedupeKey });
    ctx.logger.info({ audioId: job.audioId, seconds, chars: text.length }, 'voice note transcribed');
    return 'submitted';
  }

  /** The note's session, or the one that replaced it while the note waited (a /new, a daily reset). */
  private async activeSession(ctx: Ctx, sessionId: string): Promise<Session> {
    const session = await this.deps.db.repo(ctx, Session).findOneByOrFail({ id: sessionId });
    if (session.status === SessionStatus.ACTIVE) return session;
    return this.deps.lifecycle.resolveActive(ctx, { key: session.key, userId: session.userId, channel: session.channel, chatId: session.chatId, chatKind: session.chatKind });
  }

  private async keepOrDrop(ctx: Ctx, job: TranscribeJob, audio: Buffer): Promise<void> {
    if (this.deps.config().keep_audio) {
      try {
        const dir = path.join(this.deps.keepDir, job.sessionId);
        await mkdir(dir, { recursive: true, mode: 0o700 });
        await writeFile(path.join(dir, `${job.audioId}.${inspectAudio(audio).container}`), audio, { mode: 0o600 });
      } catch (err) {
        ctx.logger.warn({ err, audioId: job.audioId }, 'voice note could not be kept');
      }
    }
    await this.deps.stash.delete(job.audioId);
  }
}
