// === Voice ports (DESIGN §10): speech to text and text to speech, next to the chat providers.

/** One audio file to transcribe. */
export interface TranscriptionInput {
  audio: Buffer;
  /** Container type of `audio`, e.g. `audio/ogg`; decides the file name the endpoint sees. */
  mimeType: string;
  /** ISO-639-1 hint; null lets the model detect the language. */
  language?: string | null;
}

/** What the transcriber heard. */
export interface Transcription {
  text: string;
  /** Length of the audio when the endpoint reports it (verbose_json), in seconds. */
  seconds?: number | null;
}

/**
 * Port: speech to text. Throws `ModelApiError` when the endpoint answers with an error status,
 * `ModelTransportError` when it cannot be reached or times out, `ModelResponseError` for a body that is no
 * transcription; an abort of `signal` rejects with an `AbortError`.
 * @example
 * const { text } = await transcriber.transcribe({ audio, mimeType: 'audio/ogg' }, signal);
 */
export interface Transcriber {
  /** `provider/model`, for logs and usage. */
  readonly provider: string;
  readonly model: string;
  transcribe(input: TranscriptionInput, signal?: AbortSignal): Promise<Transcription>;
}

/** Audio formats a speech endpoint can return (OpenAI's `response_format`). */
export type SpeechFormat = 'opus' | 'mp3' | 'wav' | 'aac' | 'flac' | 'pcm';

/** Spoken text as the endpoint returned it. */
export interface SpeechAudio {
  audio: Buffer;
  format: SpeechFormat;
}

/** Port: text to speech; fails like {@link Transcriber}. */
export interface Speaker {
  readonly provider: string;
  readonly model: string;
  speak(text: string, signal?: AbortSignal): Promise<SpeechAudio>;
}
