import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeAudio, speechWav, transcode } from '../voice-audio';
import { parseMultipart } from './multipart';

// === A fake OpenAI-compatible audio server (real HTTP on 127.0.0.1, port 0)
// `POST /v1/audio/transcriptions` (multipart, like OpenAI, Groq or a local whisper server) and
// `POST /v1/audio/speech` (JSON in, audio bytes out). Every uploaded file is checked with ffprobe, so tests
// can assert that a valid audio file of the declared type arrived; the speech answer is real speech
// (espeak-ng) in the format asked for. Answers can be scripted per request (errors, hangs).

/** One scripted transcription answer; a function gets the recorded request. */
export type FakeTranscriptReply =
  | { text: string; delayMs?: number }
  | { status: number; message?: string }
  | { hang: true }
  | ((req: RecordedTranscription) => FakeTranscriptReply);

/** One scripted speech answer. `format` overrides the requested response_format (a server that ignores it). */
export type FakeSpeechReply = { format?: 'opus' | 'mp3' | 'wav'; delayMs?: number } | { status: number; message?: string } | { hang: true };

/** What the fake saw of one transcription request. */
export interface RecordedTranscription {
  at: number;
  authorization: string | null;
  model: string | null;
  language: string | null;
  responseFormat: string | null;
  fileName: string | null;
  /** Content type of the file part. */
  fileType: string | null;
  bytes: number;
  /** ffprobe's view of the file: null when it could not read it. */
  probe: { format: string; codec: string | null; seconds: number } | null;
  /** The file name's extension names the container ffprobe found (what real servers rely on). */
  typeMatches: boolean;
  data: Buffer;
}

/** What the fake saw of one speech request. */
export interface RecordedSpeech {
  at: number;
  model: string | null;
  input: string;
  voice: string | null;
  responseFormat: string | null;
}

const EXT_FORMATS: Record<string, string[]> = { ogg: ['ogg'], webm: ['matroska', 'webm'], mp3: ['mp3'], wav: ['wav'], m4a: ['mov', 'mp4', 'm4a'], mp4: ['mov', 'mp4'], flac: ['flac'] };

export class FakeAudioServer {
  readonly transcriptions: RecordedTranscription[] = [];
  readonly speeches: RecordedSpeech[] = [];
  /** Answers used in order; when empty, `defaultTranscript` is returned. */
  readonly transcriptReplies: FakeTranscriptReply[] = [];
  readonly speechReplies: FakeSpeechReply[] = [];
  defaultTranscript = 'This is a voice note.';

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<FakeAudioServer> {
    const server = http.createServer();
    const fake = new FakeAudioServer(server);
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:<port>/v1`, the provider's base_url. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async waitFor<T>(fn: () => T | null | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = fn();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`FakeAudioServer: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const url = new URL(req.url ?? '/', 'http://fake');
      if (req.method === 'POST' && url.pathname === '/v1/audio/transcriptions') return await this.transcribe(req, res);
      if (req.method === 'POST' && url.pathname === '/v1/audio/speech') return await this.speak(req, res);
      json(res, 404, { error: { message: `no route ${req.method} ${url.pathname}`, type: 'invalid_request_error' } });
    } catch (err) {
      json(res, 500, { error: { message: `fake server failure: ${(err as Error).message}`, type: 'server_error' } });
    }
  }

  private async transcribe(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parts = parseMultipart(await readBody(req), req.headers['content-type'] ?? '');
    const field = (name: string) => parts.find((p) => p.name === name && p.fileName === null)?.data.toString('utf8') ?? null;
    const file = parts.find((p) => p.name === 'file' && p.fileName !== null);
    const data = file?.data ?? Buffer.alloc(0);
    const fileName = file?.fileName ?? null;
    const probe = data.length ? await probeAudio(data).catch(() => null) : null;
    const ext = fileName?.split('.').pop()?.toLowerCase() ?? '';
    const record: RecordedTranscription = {
      at: Date.now(),
      authorization: req.headers.authorization ?? null,
      model: field('model'),
      language: field('language'),
      responseFormat: field('response_format'),
      fileName,
      fileType: file?.type ?? null,
      bytes: data.length,
      probe,
      typeMatches: !!probe && (EXT_FORMATS[ext] ?? []).some((f) => probe.format.split(',').includes(f)),
      data,
    };
    this.transcriptions.push(record);
    if (!record.model) return json(res, 400, { error: { message: "you must provide a model parameter", type: 'invalid_request_error' } });
    if (!probe) return json(res, 400, { error: { message: 'Invalid file format: the audio could not be decoded.', type: 'invalid_request_error' } });
    const next = this.transcriptReplies.shift() ?? { text: this.defaultTranscript };
    const reply = typeof next === 'function' ? next(record) : next;
    if (typeof reply === 'function') throw new Error('a scripted reply function returned a function');
    if ('hang' in reply) return; // held until the client gives up
    if ('status' in reply) return json(res, reply.status, { error: { message: reply.message ?? 'The server had an error while processing your request.', type: 'server_error' } });
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    json(res, 200, { text: reply.text });
  }

  private async speak(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { model?: string; input?: string; voice?: string; response_format?: string };
    this.speeches.push({ at: Date.now(), model: body.model ?? null, input: body.input ?? '', voice: body.voice ?? null, responseFormat: body.response_format ?? null });
    const reply = this.speechReplies.shift() ?? {};
    if ('hang' in reply) return;
    if ('status' in reply) return json(res, reply.status, { error: { message: reply.message ?? 'speech failed', type: 'server_error' } });
    if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
    const format = reply.format ?? body.response_format ?? 'mp3';
    const wav = await speechWav(body.input ?? '');
    const audio = format === 'opus' ? await transcode(wav, 'ogg') : format === 'mp3' ? await transcode(wav, 'mp3') : wav;
    const type = format === 'opus' ? 'audio/ogg' : format === 'mp3' ? 'audio/mpeg' : 'audio/wav';
    res.writeHead(200, { 'content-type': type, 'content-length': String(audio.length) });
    res.end(audio);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
