import type { SerializedCtx } from '../../common/ctx';

/**
 * A voice note or audio file as a channel adapter hands it over (on `InboundMessage.voice`). The audio is
 * fetched only once the sender is admitted, so strangers cannot make the server download anything.
 */
export interface InboundVoice {
  /** What the platform called it (Telegram `voice`, `audio`, `video_note`; WhatsApp voice notes are `voice`). */
  kind: 'voice' | 'audio' | 'video_note';
  /** Declared type, e.g. `audio/ogg`; the bytes decide in the end. */
  mimeType: string;
  /** Declared play time in seconds, when the platform gives one. */
  seconds: number | null;
  /** Declared size in bytes, when known (checked before downloading). */
  declaredBytes: number | null;
  /** Downloads the audio, reading at most `maxBytes`; null when it is larger. Throws when it cannot be fetched. */
  fetch(maxBytes: number, signal?: AbortSignal): Promise<Buffer | null>;
}

/** One voice note waiting for its transcript (the `voice.transcribe` job). */
export interface TranscribeJob {
  ctx: SerializedCtx;
  /** Key of the stashed audio. */
  audioId: string;
  mimeType: string;
  /** Measured or declared play time; null when neither is known. */
  seconds: number | null;
  sessionId: string;
  channel: string;
  chatId: string;
  /** Text sent along (a caption), added after the transcript. */
  caption: string;
  /** `channel:chat:platformMessageId`, so a redelivered note is answered once. */
  dedupeKey: string | null;
}

/** One reply to speak (the `voice.speak` job). */
export interface SpeakJob {
  ctx: SerializedCtx;
  sessionId: string;
  channel: string;
  chatId: string;
  /** The stored reply. */
  messageId: string;
  text: string;
  turnId?: string;
  /** The text went out already (a long reply): a failed synthesis sends nothing more. */
  textSent: boolean;
}

/** Port: the `voice` queue (jobs/voice.ts). */
export interface VoiceJobs {
  transcribe(job: TranscribeJob): Promise<void>;
  speak(job: SpeakJob): Promise<void>;
}

/** Port: received audio between the adapter and the transcription worker (Redis, so any worker can take it). */
export interface AudioStash {
  put(id: string, audio: Buffer, ttlSeconds: number): Promise<void>;
  /** null when it expired or was taken. */
  get(id: string): Promise<Buffer | null>;
  delete(id: string): Promise<void>;
}

/** How a transcription attempt ended (the job's result). */
export type TranscribeOutcome = 'submitted' | 'empty' | 'failed' | 'expired';

/** Thrown by the service to ask the queue for another attempt (a timeout, a 5xx, a refused connection). */
export class RetryableVoiceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableVoiceError';
  }
}
