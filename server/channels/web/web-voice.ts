import type { Ctx } from '../../common/ctx';
import { UserInputError } from '../../common/errors';
import type { InboundVoice } from '../../modules/voice';
import { ChatClient } from './session-stream-transport';
import type { WebChannel, WebSendResult } from './web-channel';

/** What browsers record (MediaRecorder: WebM or OGG with Opus, MP4/AAC in Safari) and common audio files. */
export const WEB_VOICE_TYPES = ['audio/webm', 'video/webm', 'audio/ogg', 'audio/mp4', 'audio/mpeg', 'audio/wav', 'audio/x-wav', 'audio/flac'] as const;

export interface WebVoiceInput {
  sessionId?: string | null;
  /** e.g. `audio/webm;codecs=opus` as MediaRecorder reports it. */
  mimeType: string;
  dataBase64: string;
  /** Length the client measured, in seconds (the container is measured too where it can be). */
  durationSeconds?: number | null;
}

/**
 * Voice notes from the web chat (and the TUI): GraphQL `sendVoiceNote`. The recording goes through the
 * same inbound pipeline and checks as a Telegram voice note; its transcript arrives later as the user's
 * message (MessageAdded with `voiceSeconds`). Malformed input is refused here with BAD_USER_INPUT.
 */
export class WebVoiceNotes {
  constructor(
    private readonly web: WebChannel,
    /** `voice.max_bytes`. */
    private readonly maxBytes: () => number,
  ) {}

  async send(ctx: Ctx, input: WebVoiceInput, channel: ChatClient = ChatClient.WEB): Promise<WebSendResult> {
    const mimeType = input.mimeType.split(';')[0]!.trim().toLowerCase();
    if (!(WEB_VOICE_TYPES as readonly string[]).includes(mimeType)) throw new UserInputError(`mimeType must be one of ${WEB_VOICE_TYPES.join(', ')}.`, 'mimeType');
    const base64 = input.dataBase64.replace(/\s+/g, '');
    if (!base64 || !/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw new UserInputError('dataBase64 is not base64.', 'dataBase64');
    const max = this.maxBytes();
    if (Math.floor((base64.length * 3) / 4) > max) throw new UserInputError(`The recording is larger than ${Math.round(max / 1024 / 1024)} MiB (voice.max_bytes).`, 'dataBase64');
    const duration = input.durationSeconds;
    if (duration != null && !(Number.isFinite(duration) && duration >= 0)) throw new UserInputError('durationSeconds must be a non-negative number.', 'durationSeconds');
    const data = Buffer.from(base64, 'base64');
    const voice: InboundVoice = {
      kind: 'voice',
      mimeType,
      seconds: duration ?? null,
      declaredBytes: data.length,
      fetch: async (maxBytes) => (data.length > maxBytes ? null : data),
    };
    return this.web.send(ctx, { sessionId: input.sessionId, text: '', voice }, channel);
  }
}
