import type { Logger } from '../../../common/logger';
import type {
  SpeechAudio,
  SpeechFormat,
  Speaker,
  Transcriber,
  Transcription,
  TranscriptionInput,
} from '../audio-provider';
import {
  isAbortError,
  ModelApiError,
  ModelResponseError,
  ModelTransportError,
  parseRetryAfterMs,
  type ModelErrorContext,
} from '../model.errors';
import { redactUrl } from '../presets';

/** Where an OpenAI-compatible audio endpoint lives and how long to wait for it. */
export interface OpenAICompatibleAudioOptions {
  /** Provider name (`ai.providers.<name>`). */
  provider: string;
  /** Base URL ending in `/v1` (the endpoints are `<baseUrl>/audio/…`). */
  baseUrl: string;
  /** null sends no Authorization header (local servers). */
  apiKey: string | null;
  model: string;
  /** Timeout of one request. @default 120000 */
  timeoutMs?: number;
  logger?: Logger;
}

/** File extensions the endpoints recognise, by container type (they look at the file name). */
const EXTENSIONS: Record<string, string> = {
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/webm': 'webm',
  'video/webm': 'webm',
  'audio/mpeg': 'mp3',
  'audio/mp3': 'mp3',
  'audio/mp4': 'm4a',
  'audio/m4a': 'm4a',
  'audio/x-m4a': 'm4a',
  'video/mp4': 'mp4',
  'audio/wav': 'wav',
  'audio/x-wav': 'wav',
  'audio/wave': 'wav',
  'audio/flac': 'flac',
  'audio/x-flac': 'flac',
};

/** `audio/ogg; codecs=opus` → `voice.ogg` (the endpoints pick the decoder by extension). */
export function audioFileName(mimeType: string): string {
  return `voice.${EXTENSIONS[mimeType.split(';')[0]!.trim().toLowerCase()] ?? 'ogg'}`;
}

abstract class AudioEndpoint {
  readonly provider: string;
  readonly model: string;
  protected readonly timeoutMs: number;

  constructor(protected readonly options: OpenAICompatibleAudioOptions) {
    this.provider = options.provider;
    this.model = options.model;
    this.timeoutMs = options.timeoutMs ?? 120_000;
  }

  protected get context(): ModelErrorContext {
    return { provider: this.provider, model: this.model };
  }

  /** POSTs to `<baseUrl>/<path>` with the timeout and the caller's signal; maps failures to model errors. */
  protected async post(path: string, body: FormData | string, signal?: AbortSignal): Promise<Response> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/${path}`;
    const headers: Record<string, string> = {};
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const reason = timeout.aborted ? `timed out after ${this.timeoutMs} ms` : describeFetchError(err);
      throw new ModelTransportError(
        `${this.provider}: ${path} at ${redactUrl(this.options.baseUrl)} failed: ${reason}`,
        this.context,
        err,
      );
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new ModelApiError(
        `${this.provider}: ${path} answered ${res.status}: ${errorMessage(text) ?? res.statusText}`,
        {
          ...this.context,
          status: res.status,
          retryAfterMs: parseRetryAfterMs(res.headers),
        },
      );
    }
    return res;
  }

  /** Reads a body within the timeout (a server that stalls mid-body is a transport failure too). */
  protected async read<T>(res: Response, how: (r: Response) => Promise<T>, path: string): Promise<T> {
    try {
      return await how(res);
    } catch (err) {
      if (isAbortError(err) || (err as Error).name === 'TimeoutError')
        throw new ModelTransportError(
          `${this.provider}: ${path} timed out while reading the answer`,
          this.context,
          err,
        );
      throw new ModelResponseError(
        `${this.provider}: ${path} sent an unreadable answer: ${(err as Error).message}`,
        this.context,
        err,
      );
    }
  }
}

/**
 * Speech to text through `POST <baseUrl>/audio/transcriptions` (multipart: `file`, `model`, optional
 * `language`, `response_format=json`), as OpenAI, Groq, faster-whisper-server and whisper.cpp's server
 * speak it. Accepts `{ "text": … }` JSON and, from servers that ignore the format, plain text.
 */
export class OpenAICompatibleTranscriber extends AudioEndpoint implements Transcriber {
  async transcribe(input: TranscriptionInput, signal?: AbortSignal): Promise<Transcription> {
    const form = new FormData();
    form.append(
      'file',
      new Blob([input.audio], { type: input.mimeType.split(';')[0]!.trim() }),
      audioFileName(input.mimeType),
    );
    form.append('model', this.model);
    form.append('response_format', 'json');
    if (input.language) form.append('language', input.language);
    const path = 'audio/transcriptions';
    const res = await this.post(path, form, signal);
    const raw = await this.read(res, (r) => r.text(), path);
    const type = res.headers.get('content-type') ?? '';
    if (!type.includes('json')) return { text: raw.trim() };
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      throw new ModelResponseError(`${this.provider}: ${path} sent broken JSON`, this.context, err);
    }
    const text = (body as { text?: unknown } | null)?.text;
    if (typeof text !== 'string')
      throw new ModelResponseError(`${this.provider}: ${path} answered without a "text" field`, this.context);
    const duration = (body as { duration?: unknown }).duration;
    return {
      text: text.trim(),
      seconds: typeof duration === 'number' && Number.isFinite(duration) ? duration : null,
    };
  }
}

/** Text to speech through `POST <baseUrl>/audio/speech` (`model`, `input`, `voice`, `response_format`). */
export class OpenAICompatibleSpeaker extends AudioEndpoint implements Speaker {
  constructor(
    options: OpenAICompatibleAudioOptions,
    private readonly speech: { voice: string; format: SpeechFormat },
  ) {
    super(options);
  }

  async speak(text: string, signal?: AbortSignal): Promise<SpeechAudio> {
    const path = 'audio/speech';
    const res = await this.post(
      path,
      JSON.stringify({
        model: this.model,
        input: text,
        voice: this.speech.voice,
        response_format: this.speech.format,
      }),
      signal,
    );
    const audio = Buffer.from(await this.read(res, (r) => r.arrayBuffer(), path));
    if (!audio.length)
      throw new ModelResponseError(`${this.provider}: ${path} answered with no audio`, this.context);
    return { audio, format: this.speech.format };
  }
}

function errorMessage(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string; message?: unknown };
    const message =
      typeof parsed.error === 'string' ? parsed.error : (parsed.error?.message ?? parsed.message);
    return typeof message === 'string' ? message.slice(0, 300) : null;
  } catch {
    return body.trim() ? body.trim().slice(0, 200) : null;
  }
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
