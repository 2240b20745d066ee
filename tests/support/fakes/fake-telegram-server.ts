import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseMultipart } from './multipart';

// === A fake Telegram Bot API (real HTTP on 127.0.0.1, port 0)
// Answers `/bot<token>/<method>` (JSON, urlencoded form or query parameters) for the methods the Telegram
// transport uses, plus file downloads at `/file/bot<token>/<path>`. getUpdates is a real long poll
// (held until an update is queued or `timeout` seconds pass, filtered by `offset`; a newer poll ends an
// older one with 409 like Telegram does). sendMessage checks what Telegram checks (empty text, 4096
// characters after entity parsing, well-formed HTML). Every call is recorded with its arrival time, and
// errors can be injected for the next N calls of a method (429 with `retry_after`, 409 Conflict, …).

/** A Telegram user as the fake knows it. */
export interface FakeTgUser {
  id: number;
  is_bot?: boolean;
  first_name: string;
  last_name?: string;
  username?: string;
}

/** A message entity (offsets in UTF-16 code units, like Telegram). */
export interface FakeTgEntity {
  type: string;
  offset: number;
  length: number;
  user?: FakeTgUser;
}

/** The subset of a Telegram Message the fake produces. */
export interface FakeTgMessage {
  message_id: number;
  date: number;
  chat: { id: number; type: 'private' | 'group' | 'supergroup' | 'channel'; title?: string; first_name?: string };
  from?: FakeTgUser;
  text?: string;
  caption?: string;
  entities?: FakeTgEntity[];
  caption_entities?: FakeTgEntity[];
  reply_to_message?: FakeTgMessage;
  photo?: Array<{ file_id: string; file_unique_id: string; width: number; height: number; file_size: number }>;
  [key: string]: unknown;
}

export interface FakeTgUpdate {
  update_id: number;
  message?: FakeTgMessage;
  [key: string]: unknown;
}

/** One recorded Bot API call. `at` is epoch milliseconds with sub-millisecond precision (arrival time). */
export interface RecordedTgCall {
  seq: number;
  method: string;
  params: Record<string, unknown>;
  at: number;
  /** HTTP status of the answer; null while a long poll is held; 0 when the connection was dropped. */
  status: number | null;
  /** The injected fault this call was answered with, if any. */
  fault?: FakeTgError;
}

/** A message the bot sent, as the user would see it. */
export interface FakeSentMessage {
  message_id: number;
  chatId: string;
  /** Visible text (tags removed, entities decoded). */
  text: string;
  /** Text as sent. */
  raw: string;
  parseMode: string | null;
  at: number;
  replyTo: number | null;
  /** How often the message was edited. */
  edits?: number;
}

/** A message draft streamed to a private chat (sendMessageDraft). */
export interface FakeDraft {
  chatId: string;
  draftId: number;
  text: string;
  at: number;
}

/** A voice message the bot sent (sendVoice, multipart upload). */
export interface FakeSentVoice {
  message_id: number;
  chatId: string;
  audio: Buffer;
  fileName: string | null;
  /** Content type of the uploaded part. */
  fileType: string | null;
  duration: number | null;
  at: number;
}

/** A file part of a multipart upload, as the fake hands it to the method. */
export interface FakeUpload {
  fileName: string | null;
  type: string | null;
  data: Buffer;
}

/** What `pushVoice` builds: a `voice` (default), `audio` or `video_note` message with these bytes. */
export interface PushVoiceInput {
  chatId: number;
  from: FakeTgUser | number;
  audio: Buffer;
  /** Declared length in seconds (Telegram's `duration`). */
  duration: number;
  kind?: 'voice' | 'audio' | 'video_note';
  mimeType?: string;
  /** Declared size; the real length when omitted. */
  fileSize?: number;
  caption?: string;
  replyTo?: number;
}

/** A Bot API error answer. */
export interface FakeTgError {
  error_code: number;
  description: string;
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
  /** Answer with this HTML page (status `error_code`) instead of JSON, like a proxy in front of the Bot API. */
  html?: string;
  /** Close the connection without any answer (a reset). */
  drop?: boolean;
  /** sendMessage only: the message is sent (the chat gets it) and the answer is this error anyway. */
  accepted?: boolean;
}

/** What `pushMessage` builds. Positive chat ids are private chats, negative ones supergroups. */
export interface PushMessageInput {
  chatId: number;
  chatType?: 'private' | 'group' | 'supergroup' | 'channel';
  from: FakeTgUser | number;
  text?: string;
  caption?: string;
  /** Given: used as is; omitted: `@mentions` and a leading `/command` are detected like Telegram does. */
  entities?: FakeTgEntity[];
  /** Id of a message in the same chat (one the bot sent or one pushed before) this message replies to. */
  replyTo?: number;
  /** Photo bytes: stored as a file with a small thumbnail size and this full size. */
  photo?: Buffer;
  /** Reuse a message id (redelivery); a new one otherwise. */
  messageId?: number;
  /** Extra message fields (e.g. `{ sticker: {…} }`). */
  extra?: Record<string, unknown>;
}

export const TG_ERRORS = {
  rateLimited: (retryAfter: number): FakeTgError => ({ error_code: 429, description: `Too Many Requests: retry after ${retryAfter}`, parameters: { retry_after: retryAfter } }),
  conflict: (): FakeTgError => ({ error_code: 409, description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running' }),
  parseEntities: (): FakeTgError => ({ error_code: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0" }),
  chatNotFound: (): FakeTgError => ({ error_code: 400, description: 'Bad Request: chat not found' }),
  /** A 502 as the Bot API answers it (JSON). */
  badGateway: (): FakeTgError => ({ error_code: 502, description: 'Bad Gateway' }),
  /** A 502 page of the proxy in front of the Bot API (HTML, not JSON). */
  badGatewayPage: (): FakeTgError => ({ error_code: 502, description: 'Bad Gateway', html: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>' }),
  /** The connection closed before any answer. */
  connectionReset: (): FakeTgError => ({ error_code: 0, description: 'connection reset', drop: true }),
};

const HTML_TAGS = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'code', 'pre', 'blockquote', 'tg-emoji']);

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Parses Telegram's HTML parse mode strictly enough to catch unescaped `<`, `&` and unbalanced tags. */
export function parseTelegramHtml(raw: string): { text: string } | { error: string } {
  const stack: string[] = [];
  let text = '';
  for (let i = 0; i < raw.length; ) {
    const ch = raw[i]!;
    if (ch === '<') {
      const m = /^<(\/?)([a-zA-Z][a-zA-Z-]*)((?:\s+[a-zA-Z-]+(?:="[^"<>]*")?)*)\s*>/.exec(raw.slice(i));
      if (!m) return { error: `Bad Request: can't parse entities: Unsupported start tag at byte offset ${i}` };
      const name = m[2]!.toLowerCase();
      if (!HTML_TAGS.has(name)) return { error: `Bad Request: can't parse entities: Unsupported start tag "${name}" at byte offset ${i}` };
      if (m[1]) {
        if (stack.pop() !== name) return { error: `Bad Request: can't parse entities: Unexpected end tag at byte offset ${i}` };
      } else stack.push(name);
      i += m[0].length;
    } else if (ch === '&') {
      const m = /^&(lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);/.exec(raw.slice(i));
      if (!m) return { error: `Bad Request: can't parse entities: Character '&' is reserved and must be escaped at byte offset ${i}` };
      const e = m[1]!;
      text += e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'amp' ? '&' : e === 'quot' ? '"' : String.fromCodePoint(e.startsWith('#x') ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
      i += m[0].length;
    } else if (ch === '>') {
      return { error: `Bad Request: can't parse entities: Character '>' is reserved and must be escaped at byte offset ${i}` };
    } else {
      text += ch;
      i += 1;
    }
  }
  if (stack.length) return { error: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${stack.at(-1)}"` };
  return { text };
}

/** Entities Telegram would detect in a plain text: `@username` mentions and a leading `/command[@bot]`. */
export function detectEntities(text: string): FakeTgEntity[] {
  const out: FakeTgEntity[] = [];
  const cmd = /^\/[a-zA-Z0-9_]{1,32}(?:@[a-zA-Z0-9_]{3,32})?/.exec(text);
  if (cmd) out.push({ type: 'bot_command', offset: 0, length: cmd[0].length });
  for (const m of text.matchAll(/(^|[^\w/@])(@[a-zA-Z0-9_]{5,32})/g)) out.push({ type: 'mention', offset: m.index + m[1]!.length, length: m[2]!.length });
  return out;
}

/**
 * @example
 * const tg = await FakeTelegramServer.start({ token: '123:ABC' });
 * tg.pushMessage({ chatId: 42, from: 42, text: 'hello' });
 * const [reply] = await tg.waitForSent(1, { chatId: 42 });
 */
export class FakeTelegramServer {
  readonly calls: RecordedTgCall[] = [];
  readonly sentMessages: FakeSentMessage[] = [];
  readonly sentVoices: FakeSentVoice[] = [];
  /** Every draft update, in order. */
  readonly drafts: FakeDraft[] = [];
  /** Answer sendMessageDraft with 404 like a Bot API server older than 9.3. */
  draftsUnsupported = false;
  /** Webhook set by setWebhook (url, secret), or null. */
  webhook: { url: string; secretToken: string | null } | null = null;
  readonly bot: FakeTgUser & { username: string };
  private readonly updates: FakeTgUpdate[] = [];
  private readonly messages = new Map<string, FakeTgMessage>();
  private readonly files = new Map<string, { path: string; data: Buffer }>();
  private readonly faults = new Map<string, Array<{ error: FakeTgError; when?: (params: Record<string, unknown>) => boolean }>>();
  private polls: Array<{ seq: number; offset: number; limit: number; finish: (body: { status: number; json: unknown }) => void }> = [];
  private nextUpdateId = 1000;
  private nextMessageId = 1;
  private nextFileId = 1;
  private seq = 0;
  private closed = false;

  private constructor(
    private readonly server: http.Server,
    readonly token: string,
    bot: { id: number; username: string; first_name: string },
  ) {
    this.bot = { ...bot, is_bot: true };
  }

  static async start(options: { token: string; botId?: number; botUsername?: string; botName?: string }): Promise<FakeTelegramServer> {
    const server = http.createServer();
    const botId = options.botId ?? Number(options.token.split(':')[0]) ?? 999;
    const fake = new FakeTelegramServer(server, options.token, { id: botId, username: options.botUsername ?? 'muninn_test_bot', first_name: options.botName ?? 'Muninn' });
    server.on('request', (req, res) => void fake.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The `apiRoot` to give grammY: `http://127.0.0.1:<port>`. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  // === Script

  /** Queues an update (update_id assigned) and wakes a held getUpdates. Returns the update. */
  pushUpdate(update: Omit<FakeTgUpdate, 'update_id'>): FakeTgUpdate {
    const full = { ...update, update_id: this.nextUpdateId++ } as FakeTgUpdate;
    this.updates.push(full);
    this.flushPolls();
    return full;
  }

  /** Builds a message (and remembers it for replies) without queuing it: for webhook tests. */
  buildMessage(input: PushMessageInput): FakeTgMessage {
    const from: FakeTgUser = typeof input.from === 'number' ? { id: input.from, is_bot: false, first_name: `User${input.from}` } : { is_bot: false, ...input.from };
    const type = input.chatType ?? (input.chatId > 0 ? 'private' : 'supergroup');
    const msg: FakeTgMessage = {
      message_id: input.messageId ?? this.nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: type === 'private' ? { id: input.chatId, type, first_name: from.first_name } : { id: input.chatId, type, title: `Group ${input.chatId}` },
      from,
      ...input.extra,
    };
    if (input.text !== undefined) {
      msg.text = input.text;
      const entities = input.entities ?? detectEntities(input.text);
      if (entities.length) msg.entities = entities;
    }
    if (input.caption !== undefined) {
      msg.caption = input.caption;
      const entities = input.entities ?? detectEntities(input.caption);
      if (entities.length) msg.caption_entities = entities;
    }
    if (input.replyTo !== undefined) {
      const target = this.messages.get(`${input.chatId}:${input.replyTo}`);
      if (!target) throw new Error(`FakeTelegramServer: no message ${input.replyTo} in chat ${input.chatId} to reply to`);
      msg.reply_to_message = { ...target, reply_to_message: undefined };
    }
    if (input.photo) msg.photo = this.photoSizes(input.photo);
    this.messages.set(`${input.chatId}:${msg.message_id}`, msg);
    return msg;
  }

  /** Builds a message, queues it as a `message` update and returns the message. */
  pushMessage(input: PushMessageInput): FakeTgMessage {
    const message = this.buildMessage(input);
    this.pushUpdate({ message });
    return message;
  }

  /** Queues a voice note (or audio file, or round video) whose bytes are served by getFile and the file endpoint. */
  pushVoice(input: PushVoiceInput): FakeTgMessage {
    const kind = input.kind ?? 'voice';
    const file = this.addFile(input.audio, kind === 'video_note' ? 'mp4' : 'oga');
    const mime = input.mimeType ?? (kind === 'voice' ? 'audio/ogg' : kind === 'audio' ? 'audio/mpeg' : undefined);
    const media = { file_id: file.file_id, file_unique_id: file.file_unique_id, duration: input.duration, file_size: input.fileSize ?? file.file_size, ...(mime ? { mime_type: mime } : {}), ...(kind === 'video_note' ? { length: 240 } : {}) };
    return this.pushMessage({ chatId: input.chatId, from: input.from, caption: input.caption, replyTo: input.replyTo, extra: { [kind]: media } });
  }

  /** Stores a file for getFile and downloads. */
  addFile(data: Buffer, ext = 'jpg'): { file_id: string; file_unique_id: string; file_size: number; file_path: string } {
    const n = this.nextFileId++;
    const fileId = `file-${n}-${'x'.repeat(20)}`;
    const path = `photos/file_${n}.${ext}`;
    this.files.set(fileId, { path, data });
    return { file_id: fileId, file_unique_id: `u${n}`, file_size: data.length, file_path: path };
  }

  /** A photo as Telegram sends it: a 90px thumbnail (other bytes) and the full size with these bytes. */
  photoSizes(data: Buffer): NonNullable<FakeTgMessage['photo']> {
    const thumb = this.addFile(Buffer.from(`thumbnail of ${data.length} bytes`));
    const full = this.addFile(data);
    return [
      { file_id: thumb.file_id, file_unique_id: thumb.file_unique_id, width: 90, height: 60, file_size: thumb.file_size },
      { file_id: full.file_id, file_unique_id: full.file_unique_id, width: 1280, height: 853, file_size: full.file_size },
    ];
  }

  /**
   * The next `count` calls of `method` (those matching `when`, if given) get `error`. Held getUpdates polls are answered with it at once
   * (Telegram ends a running poll when another poller appears).
   */
  failNext(method: string, count: number, error: FakeTgError, when?: (params: Record<string, unknown>) => boolean): void {
    const queue = this.faults.get(method) ?? [];
    for (let i = 0; i < count; i++) queue.push({ error, when });
    this.faults.set(method, queue);
    if (method === 'getUpdates') {
      const held = this.polls;
      this.polls = [];
      for (const p of held) {
        const err = this.takeFault('getUpdates');
        if (err) p.finish({ status: err.error_code, json: { ok: false, ...err } });
        else this.polls.push(p);
      }
    }
  }

  /** Forgets recorded calls and sent messages (state such as queued updates and files stays). */
  resetRecords(): void {
    this.calls.length = 0;
    this.sentMessages.length = 0;
    this.drafts.length = 0;
    this.sentVoices.length = 0;
  }

  // === Records

  callsOf(method: string): RecordedTgCall[] {
    return this.calls.filter((c) => c.method === method);
  }

  sentTo(chatId: number | string): FakeSentMessage[] {
    return this.sentMessages.filter((m) => m.chatId === String(chatId));
  }

  /** Resolves with `fn()` once it returns a truthy value; rejects after `timeoutMs` with `what`. */
  async waitFor<T>(fn: () => T | null | undefined | false, what = 'condition', timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = fn();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`FakeTelegramServer: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Waits until `count` messages were sent to the chat; returns them. */
  waitForSent(chatId: number | string, count = 1, timeoutMs = 10_000): Promise<FakeSentMessage[]> {
    return this.waitFor(() => (this.sentTo(chatId).length >= count ? this.sentTo(chatId) : null), `${count} message(s) sent to chat ${chatId}`, timeoutMs);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.polls) p.finish({ status: 200, json: { ok: true, result: [] } });
    this.polls = [];
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // === HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      await this.route(req, res);
    } catch (err) {
      this.json(res, 500, { ok: false, error_code: 500, description: `fake server failure: ${(err as Error).message}` });
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    if (file) return this.download(file[1]!, decodeURIComponent(file[2]!), res);
    const call = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
    if (!call) return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    Object.assign(params, await this.body(req));
    const record: RecordedTgCall = { seq: ++this.seq, method: call[2]!, params, at: now(), status: null };
    this.calls.push(record);
    const finish = (answer: { status: number; json: unknown }) => {
      record.status = answer.status;
      this.json(res, answer.status, answer.json);
    };
    res.on('close', () => {
      record.status ??= res.headersSent ? res.statusCode : 499;
      // A client that gave up on its long poll is no longer waiting for updates.
      for (const p of this.polls.filter((q) => q.seq === record.seq)) p.finish({ status: 499, json: null });
    });
    if (call[1] !== this.token) return finish({ status: 401, json: { ok: false, error_code: 401, description: 'Unauthorized' } });
    const fault = record.method === 'getUpdates' && this.webhook ? null : this.takeFault(record.method, params);
    if (fault) {
      record.fault = fault;
      const answerFault = () => this.answerFault(req, res, record, fault);
      // An accepted fault: the message is sent first, only its answer is the fault.
      if (!(fault.accepted && record.method === 'sendMessage')) return answerFault();
      return this.sendMessage(params, answerFault, (error_code, description) => finish({ status: error_code, json: { ok: false, error_code, description } }));
    }
    const ok = (result: unknown) => finish({ status: 200, json: { ok: true, result } });
    const fail = (error_code: number, description: string) => finish({ status: error_code, json: { ok: false, error_code, description } });
    switch (record.method) {
      case 'getMe':
        return ok({ ...this.bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false });
      case 'setMyCommands':
      case 'deleteMyCommands':
        return ok(true);
      case 'deleteWebhook':
        this.webhook = null;
        return ok(true);
      case 'setWebhook':
        this.webhook = { url: String(params.url), secretToken: typeof params.secret_token === 'string' ? params.secret_token : null };
        return ok(true);
      case 'getWebhookInfo':
        return ok({ url: this.webhook?.url ?? '', has_custom_certificate: false, pending_update_count: 0 });
      case 'getUpdates':
        return this.getUpdates(params, record.seq, finish, fail);
      case 'sendMessage':
        return this.sendMessage(params, ok, fail);
      case 'editMessageText': {
        const msg = this.sentMessages.find((m) => m.chatId === String(params.chat_id) && m.message_id === Number(params.message_id));
        if (!msg) return fail(400, 'Bad Request: message to edit not found');
        const parsed = this.visible(params);
        if ('error' in parsed) return fail(400, parsed.error);
        if (parsed.text === msg.text && String(params.text) === msg.raw) {
          return fail(400, 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
        }
        msg.edits = (msg.edits ?? 0) + 1;
        Object.assign(msg, { text: parsed.text, raw: String(params.text), parseMode: typeof params.parse_mode === 'string' ? params.parse_mode : null });
        return ok({ message_id: msg.message_id, date: Math.floor(Date.now() / 1000), chat: this.chatOf(msg.chatId), from: this.bot, text: parsed.text });
      }
      case 'sendChatAction':
        return ok(true);
      case 'sendMessageDraft': {
        // Bot API 9.3: private chats only, a non-zero draft id, 0–4096 characters.
        if (this.draftsUnsupported) return fail(404, 'Not Found: method not found');
        if (!(Number(params.chat_id) > 0)) return fail(400, 'Bad Request: drafts can be sent to private chats only');
        if (!Number(params.draft_id)) return fail(400, 'Bad Request: draft_id must be non-zero');
        const parsed = typeof params.text === 'string' && params.text.length ? this.visible(params) : { text: '' };
        if ('error' in parsed) return fail(400, parsed.error);
        this.drafts.push({ chatId: String(params.chat_id), draftId: Number(params.draft_id), text: parsed.text, at: now() });
        return ok(true);
      }
      case 'sendVoice': {
        const upload = params.voice as FakeUpload | string | undefined;
        if (params.chat_id === undefined) return fail(400, 'Bad Request: chat_id is empty');
        if (!upload || typeof upload === 'string') return fail(400, 'Bad Request: there is no voice in the request');
        if (!upload.data.length) return fail(400, 'Bad Request: file must be non-empty');
        const chatId = String(params.chat_id);
        const sent: FakeSentVoice = { message_id: this.nextMessageId++, chatId, audio: upload.data, fileName: upload.fileName, fileType: upload.type, duration: params.duration === undefined ? null : Number(params.duration), at: now() };
        this.sentVoices.push(sent);
        return ok({ message_id: sent.message_id, date: Math.floor(Date.now() / 1000), chat: this.chatOf(chatId), from: this.bot, voice: { file_id: `sent-${sent.message_id}`, file_unique_id: `s${sent.message_id}`, duration: sent.duration ?? 0, mime_type: 'audio/ogg', file_size: upload.data.length } });
      }
      case 'getFile': {
        const f = this.files.get(String(params.file_id));
        if (!f) return fail(400, 'Bad Request: invalid file_id');
        return ok({ file_id: params.file_id, file_unique_id: `u-${params.file_id}`, file_size: f.data.length, file_path: f.path });
      }
      default:
        return fail(404, 'Not Found: method not found');
    }
  }

  /** Answers a call with an injected fault: a dropped connection, a proxy's HTML page or a Bot API error. */
  private answerFault(req: IncomingMessage, res: ServerResponse, record: RecordedTgCall, fault: FakeTgError): void {
    if (fault.drop) {
      record.status = 0;
      req.socket.destroy();
      return;
    }
    record.status = fault.error_code;
    if (fault.html) {
      res.writeHead(fault.error_code, { 'content-type': 'text/html' });
      res.end(fault.html);
      return;
    }
    this.json(res, fault.error_code, { ok: false, error_code: fault.error_code, description: fault.description, ...(fault.parameters ? { parameters: fault.parameters } : {}) });
  }

  /** The first fault queued for `method` whose condition (if any) holds for these params; it is used up. */
  private takeFault(method: string, params: Record<string, unknown> = {}): FakeTgError | undefined {
    const queue = this.faults.get(method);
    const index = queue?.findIndex((f) => !f.when || f.when(params)) ?? -1;
    return index >= 0 ? queue!.splice(index, 1)[0]!.error : undefined;
  }

  private getUpdates(params: Record<string, unknown>, seq: number, finish: (a: { status: number; json: unknown }) => void, fail: (code: number, d: string) => void): void {
    if (this.webhook) return fail(409, "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first");
    const offset = Number(params.offset ?? 0);
    const limit = Math.min(100, Math.max(1, Number(params.limit ?? 100)));
    if (offset > 0) this.updates.splice(0, this.updates.length, ...this.updates.filter((u) => u.update_id >= offset));
    // Telegram allows one poller: a newer getUpdates ends the held one with 409.
    for (const p of this.polls.splice(0)) p.finish({ status: 409, json: { ok: false, ...TG_ERRORS.conflict() } });
    const ready = this.updates.filter((u) => u.update_id >= offset).slice(0, limit);
    const timeoutS = Number(params.timeout ?? 0);
    if (ready.length || timeoutS <= 0 || this.closed) return finish({ status: 200, json: { ok: true, result: ready } });
    const poll = {
      seq,
      offset,
      limit,
      finish: (answer: { status: number; json: unknown }) => {
        clearTimeout(timer);
        this.polls = this.polls.filter((p) => p !== poll);
        finish(answer);
      },
    };
    const timer = setTimeout(() => poll.finish({ status: 200, json: { ok: true, result: [] } }), timeoutS * 1000);
    this.polls.push(poll);
  }

  private flushPolls(): void {
    const held = this.polls;
    this.polls = [];
    for (const p of held) {
      const ready = this.updates.filter((u) => u.update_id >= p.offset).slice(0, p.limit);
      if (ready.length) p.finish({ status: 200, json: { ok: true, result: ready } });
      else this.polls.push(p);
    }
  }

  private visible(params: Record<string, unknown>): { text: string } | { error: string } {
    const raw = typeof params.text === 'string' ? params.text : '';
    const mode = typeof params.parse_mode === 'string' ? params.parse_mode : null;
    if (mode && mode !== 'HTML') return { error: `Bad Request: the fake supports parse_mode HTML only, got ${mode}` };
    const parsed = mode ? parseTelegramHtml(raw) : { text: raw };
    if ('text' in parsed && !parsed.text.trim()) return { error: 'Bad Request: message text is empty' };
    if ('text' in parsed && parsed.text.length > 4096) return { error: 'Bad Request: message is too long' };
    return parsed;
  }

  private sendMessage(params: Record<string, unknown>, ok: (r: unknown) => void, fail: (code: number, d: string) => void): void {
    if (params.chat_id === undefined) return fail(400, 'Bad Request: chat_id is empty');
    const parsed = this.visible(params);
    if ('error' in parsed) return fail(400, parsed.error);
    const chatId = String(params.chat_id);
    const replyParams = params.reply_parameters as { message_id?: number } | undefined;
    const sent: FakeSentMessage = {
      message_id: this.nextMessageId++,
      chatId,
      text: parsed.text,
      raw: String(params.text),
      parseMode: typeof params.parse_mode === 'string' ? params.parse_mode : null,
      at: now(),
      replyTo: replyParams?.message_id ?? null,
    };
    this.sentMessages.push(sent);
    const message: FakeTgMessage = { message_id: sent.message_id, date: Math.floor(Date.now() / 1000), chat: this.chatOf(chatId), from: this.bot, text: parsed.text };
    this.messages.set(`${chatId}:${sent.message_id}`, message);
    ok(message);
  }

  private chatOf(chatId: string): FakeTgMessage['chat'] {
    const id = Number(chatId);
    return id > 0 ? { id, type: 'private' } : { id, type: 'supergroup', title: `Group ${id}` };
  }

  private download(token: string, path: string, res: ServerResponse): void {
    this.calls.push({ seq: ++this.seq, method: 'file', params: { path }, at: now(), status: 200 });
    const file = token === this.token ? [...this.files.values()].find((f) => f.path === path) : undefined;
    if (!file) {
      this.calls.at(-1)!.status = 404;
      return this.json(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.data.length) });
    res.end(file.data);
  }

  private async body(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const type = req.headers['content-type'] ?? '';
    if (type.includes('multipart/form-data')) {
      // File uploads (sendVoice): files become FakeUpload (also where a field says `attach://<part>`, as
      // grammY writes them); other fields are parsed like form values.
      const parts = parseMultipart(Buffer.concat(chunks), type);
      const files = new Map(parts.filter((p) => p.fileName !== null).map((p) => [p.name, { fileName: p.fileName, type: p.type, data: p.data } satisfies FakeUpload]));
      const out: Record<string, unknown> = {};
      for (const p of parts) {
        if (p.fileName !== null) continue;
        const v = p.data.toString('utf8');
        const attached = /^attach:\/\/(.+)$/.exec(v);
        out[p.name] = attached ? (files.get(attached[1]!) ?? v) : /^[[{]/.test(v) ? JSON.parse(v) : v;
      }
      for (const [name, file] of files) if (!(name in out) && ![...Object.values(out)].includes(file)) out[name] = file;
      return out;
    }
    const raw = Buffer.concat(chunks).toString('utf8');
    if (!raw) return {};
    if (type.includes('application/json')) return JSON.parse(raw) as Record<string, unknown>;
    if (type.includes('application/x-www-form-urlencoded')) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of new URLSearchParams(raw)) out[k] = /^[[{]/.test(v) ? JSON.parse(v) : v;
      return out;
    }
    throw new Error(`FakeTelegramServer: unsupported content type ${type}`);
  }

  private json(res: ServerResponse, status: number, body: unknown): void {
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}
