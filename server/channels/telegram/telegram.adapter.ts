import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { run, sequentialize } from '@grammyjs/runner';
import { GrammyError, type Bot } from 'grammy';
import type { Message, Update } from 'grammy/types';
import type { AppConfig } from '../../config';
import type { Logger } from '../../common/logger';
import type { InboundImage } from '../../modules/conversation';
import type { ChannelStatus, ChannelTransport, InboundSink, OutboundChunk, OutboundVoice } from '../channel.types';
import { apiSignal, createTelegramBot, type PollWatcher } from './telegram-bot';
import { describeTelegramError, withoutToken } from './telegram-errors';
import { downloadBotFile } from './telegram-files';
import { isEntityParseError, toTelegramHtml } from './telegram-format';
import { ChannelStatusTracker, secretMatches, sleep, TypingRefresher } from './telegram-support';
import { mapTelegramMessage, type TelegramMediaRef } from './telegram.mapper';
import { TelegramStreamer, type LiveReplyApi } from './telegram-streamer';
import { mapTelegramVoice, sendTelegramVoice, telegramFileFetcher, telegramVoiceOf } from './telegram-voice';
import { mapTelegramDocument, telegramDocumentOf } from './telegram-documents';

/** Options of {@link TelegramTransport}; every field but `token` and `logger` has a default. */
export interface TelegramTransportOptions {
  /** Bot token from @BotFather. Without one, `start()` fails with a message naming the config key. */
  token: string | null;
  /** Bot API server. @default 'https://api.telegram.org' */
  apiRoot?: string;
  /** Public base URL of this server; set, the bot runs in webhook mode. @default null (long polling) */
  webhookUrl?: string | null;
  logger: Logger;
  /** Called on every status change. @default none */
  onStatus?: (transport: ChannelTransport) => void;
  /** Learns the webhook secrets, so they never reach the logs. @default none */
  redactor?: { add(secret: string): void };
  /** Larger images are skipped (with a log line). @default 5 MiB */
  maxImageBytes?: number;
  /** Long-poll timeout of getUpdates, in seconds. @default 30 */
  pollTimeoutSeconds?: number;
  /** Back-off after a polling or start failure: first wait, doubled up to `retryMaxMs`. @default 1000 */
  retryMinMs?: number;
  /** @default 60000 */
  retryMaxMs?: number;
  /** The command menu registered with setMyCommands (the server's slash commands). @default none */
  commands?: () => ReadonlyArray<{ command: string; description: string }>;
  /** `edit`: replies stream live into the chat while the model writes (see TelegramStreamer). @default 'off' */
  stream?: 'off' | 'edit';
  /** Least time between two updates of a live reply in a private chat (groups: three times it). @default 1000 */
  streamIntervalMs?: number;
  /** How often "typing…" is sent again while a turn runs (Telegram shows it for about 5 s). @default 4000 */
  typingRefreshMs?: number;
}

/**
 * Telegram through grammY (issue 4): long polling with `@grammyjs/runner`, ordered per chat by
 * `sequentialize`, or webhook mode when `webhookUrl` is set; 429s and send limits are handled in
 * {@link createTelegramBot}. A 409 Conflict (another poller) and every other failure is logged, shown in
 * `status()` and retried with back-off until `stop()`. SDK types stay in this folder.
 */
export class TelegramTransport implements ChannelTransport {
  readonly channel = 'telegram';
  readonly maxMessageLength = 4096;
  private readonly o: Required<Omit<TelegramTransportOptions, 'token' | 'webhookUrl' | 'onStatus' | 'redactor' | 'stream' | 'streamIntervalMs' | 'commands' | 'typingRefreshMs'>>;
  private readonly streamer: TelegramStreamer | null;
  /** Set when replies stream (`stream: edit`); see ChannelTransport.liveReply. */
  readonly liveReply?: (chatId: string, key: string, textSoFar: string) => void;
  private readonly status$: ChannelStatusTracker;
  private readonly typing: TypingRefresher;
  private readonly hookPath: string;
  private readonly hookSecret: string;
  private bot: Bot | null = null;
  /** Answers webhook updates in a process that does not hold the channel (its bot info, no polling). */
  private receiver: Promise<Bot> | null = null;
  private life: AbortController | null = null;
  private supervisor: Promise<void> | null = null;
  private failures = 0;

  constructor(private readonly options: TelegramTransportOptions) {
    this.o = {
      apiRoot: (options.apiRoot ?? 'https://api.telegram.org').replace(/\/+$/, ''),
      logger: options.logger.child({ channel: 'telegram' }),
      maxImageBytes: options.maxImageBytes ?? 5 * 1024 * 1024,
      pollTimeoutSeconds: options.pollTimeoutSeconds ?? 30,
      retryMinMs: options.retryMinMs ?? 1000,
      retryMaxMs: options.retryMaxMs ?? 60_000,
    };
    this.status$ = new ChannelStatusTracker(this.channel, () => options.onStatus?.(this));
    this.streamer = options.stream === 'edit' ? new TelegramStreamer(() => this.liveApi(), { intervalMs: options.streamIntervalMs ?? 1000, logger: this.o.logger }) : null;
    if (this.streamer) {
      const streamer = this.streamer;
      this.liveReply = (chatId, key, text) => streamer.update(chatId, key, text);
    }
    this.typing = new TypingRefresher((chatId) => this.sendTyping(chatId), options.typingRefreshMs ?? 4000);
    // Derived from the bot token, so every process of a cluster serves the same hook (and no one else can guess it).
    const derive = (purpose: string, bytes: number) =>
      options.token
        ? createHmac('sha256', options.token)
            .update(`muninn telegram ${purpose}`)
            .digest()
            .subarray(0, bytes)
            .toString('base64url')
        : randomBytes(bytes).toString('base64url');
    this.hookPath = `/hooks/telegram/${derive('webhook path', 18)}`;
    this.hookSecret = derive('webhook secret', 24);
    options.redactor?.add(this.hookPath.split('/').pop()!);
    options.redactor?.add(this.hookSecret);
  }

  /** The transport for `channels.telegram` of the config. */
  static fromConfig(deps: {
    config: AppConfig;
    logger: Logger;
    redactor: { add(secret: string): void };
    onStatus: (t: ChannelTransport) => void;
    commands?: () => ReadonlyArray<{ command: string; description: string }>;
    /** A token set up from the console, in place of `bot_token`. */
    token?: string;
  }): TelegramTransport {
    const c = deps.config.channels.telegram;
    return new TelegramTransport({
      token: deps.token ?? c.bot_token,
      apiRoot: c.api_root,
      webhookUrl: c.webhook_url,
      logger: deps.logger,
      redactor: deps.redactor,
      onStatus: deps.onStatus,
      stream: c.stream,
      streamIntervalMs: c.stream_interval_ms,
      commands: deps.commands,
    });
  }

  status(): ChannelStatus {
    return this.status$.get();
  }

  async start(sink: InboundSink): Promise<void> {
    if (this.life) return;
    if (!this.options.token) {
      this.status$.set('ERROR', "channels.telegram.bot_token is not set (env TELEGRAM_BOT_TOKEN); get one from @BotFather and enter it on the console's Channels page");
      throw new Error('channels.telegram.enabled is true but channels.telegram.bot_token is not set (env TELEGRAM_BOT_TOKEN)');
    }
    this.life = new AbortController();
    this.bot = createTelegramBot(this.options.token, this.o.apiRoot, this.pollWatcher());
    this.handleUpdates(this.bot, sink);
    this.status$.set('STARTING', null);
    this.supervisor = this.supervise(this.bot, this.life.signal);
  }

  async stop(): Promise<void> {
    if (!this.life) return;
    this.life.abort();
    await this.supervisor;
    this.typing.clearAll();
    this.streamer?.clearAll();
    this.bot = this.life = this.supervisor = null;
    this.status$.set('STOPPED');
  }

  async send(chunk: OutboundChunk, signal?: AbortSignal): Promise<{ platformMessageId?: string }> {
    this.requireBot();
    // Telegram drops blank lines at the edges anyway; a chunk cut at a paragraph break may start with one.
    const text = chunk.text.replace(/^\n+|\n+$/g, '');
    if (!text.trim()) return {};
    if (chunk.stream) {
      // The live reply stops first; its message (edit mode) becomes the first chunk of the final text.
      const live = await this.streamer?.finish(chunk.stream.key);
      if (chunk.stream.first && live?.messageId) {
        await this.editFinal(chunk.chatId, live.messageId, text, signal);
        this.streamer?.forget(chunk.stream.key);
        return { platformMessageId: String(live.messageId) };
      }
    }
    const sent = await this.sendText(chunk, text, signal);
    if (chunk.stream) this.streamer?.forget(chunk.stream.key);
    return sent;
  }

  /** A spoken reply as a Telegram voice message (OGG/Opus). */
  async sendVoice(chatId: string, voice: OutboundVoice, _idempotencyKey: string, signal?: AbortSignal): Promise<{ platformMessageId?: string }> {
    return sendTelegramVoice(this.requireBot(), chatId, voice, signal).catch((err: unknown) => Promise.reject(withoutToken(err, this.options.token)));
  }

  private async sendText(chunk: OutboundChunk, text: string, signal?: AbortSignal): Promise<{ platformMessageId?: string }> {
    const api = this.requireBot().api;
    const other = chunk.replyTo ? { reply_parameters: { message_id: Number(chunk.replyTo), allow_sending_without_reply: true } } : {};
    try {
      const sent = await api.sendMessage(chunk.chatId, toTelegramHtml(text), { ...other, parse_mode: 'HTML' }, apiSignal(signal));
      return { platformMessageId: String(sent.message_id) };
    } catch (err) {
      if (!(err instanceof GrammyError && isEntityParseError(err.description))) throw withoutToken(err, this.options.token);
      this.o.logger.warn({ chatId: chunk.chatId, error: err.description }, 'telegram: formatting rejected, sending as plain text');
    }
    const sent = await api.sendMessage(chunk.chatId, text, other, apiSignal(signal)).catch((err: unknown) => Promise.reject(withoutToken(err, this.options.token)));
    return { platformMessageId: String(sent.message_id) };
  }

  /** Replaces a live reply's text with the final one (HTML, plain when Telegram refuses the formatting). */
  private async editFinal(chatId: string, messageId: number, text: string, signal?: AbortSignal): Promise<void> {
    const api = this.requireBot().api;
    const unchanged = (err: unknown) => err instanceof GrammyError && /message is not modified/i.test(err.description);
    try {
      await api.editMessageText(chatId, messageId, toTelegramHtml(text), { parse_mode: 'HTML' }, apiSignal(signal));
      return;
    } catch (err) {
      if (unchanged(err)) return;
      if (!(err instanceof GrammyError && isEntityParseError(err.description))) throw withoutToken(err, this.options.token);
      this.o.logger.warn({ chatId, error: err.description }, 'telegram: formatting rejected, sending as plain text');
    }
    await api.editMessageText(chatId, messageId, text, {}, apiSignal(signal)).catch((err: unknown) => (unchanged(err) ? undefined : Promise.reject(withoutToken(err, this.options.token))));
  }

  /** The Bot API calls of live replies, bound to the running bot. */
  private liveApi(): LiveReplyApi | null {
    const api = this.bot?.api;
    if (!api) return null;
    return {
      draft: async (chatId, draftId, text) => void (await api.sendMessageDraft(Number(chatId), draftId, text)),
      send: async (chatId, text) => (await api.sendMessage(chatId, text)).message_id,
      edit: async (chatId, messageId, text) => void (await api.editMessageText(chatId, messageId, text)),
    };
  }

  async setTyping(chatId: string, on: boolean): Promise<void> {
    await this.typing.set(chatId, on && this.bot !== null);
  }

  /**
   * The webhook endpoint (webhook mode). `sink` lets a process that does not hold the channel (API and
   * worker processes apart) answer the updates Telegram posts to it; the holder registers the webhook.
   */
  webhook(sink?: InboundSink): ReturnType<NonNullable<ChannelTransport['webhook']>> {
    if (!this.options.webhookUrl) return null;
    return { path: this.hookPath, handler: (req, res) => void this.onWebhook(req, res, sink) };
  }

  /** Message handling of a bot: per-chat order, messages to the sink, everything else skipped. */
  private handleUpdates(bot: Bot, sink: InboundSink): void {
    bot.use(sequentialize((ctx) => ctx.chat?.id.toString()));
    bot.on('message', (ctx) => this.onMessage(bot, sink, ctx.message));
    bot.use((ctx) =>
      this.o.logger.debug(
        { updateId: ctx.update.update_id, kinds: Object.keys(ctx.update) },
        'telegram: update skipped (not a message)',
      ),
    );
    bot.catch((err) =>
      this.o.logger.warn(
        { err: this.clean(err.error), updateId: err.ctx.update.update_id },
        'telegram: update failed',
      ),
    );
  }

  /** A bot that only handles posted updates (getMe once; never polls, never sets the webhook). */
  private receiverBot(sink: InboundSink): Promise<Bot> {
    this.receiver ??= (async () => {
      const bot = createTelegramBot(this.options.token!, this.o.apiRoot, {
        probing: () => false,
        succeeded: () => undefined,
        failed: () => undefined,
      });
      this.handleUpdates(bot, sink);
      await bot.init();
      return bot;
    })().catch((err: unknown) => {
      this.receiver = null;
      throw err;
    });
    return this.receiver;
  }

  // === Lifecycle

  /** getMe, commands, then webhook or polling; on any failure: status ERROR, back-off, again, until stopped. */
  private async supervise(bot: Bot, signal: AbortSignal): Promise<void> {
    let commandsSet = false;
    while (!signal.aborted) {
      try {
        bot.botInfo = await bot.api.getMe(apiSignal(signal));
        const menu = this.options.commands?.() ?? [];
        if (!commandsSet && menu.length) {
          await bot.api.setMyCommands([...menu], {}, apiSignal(signal)).catch((err: unknown) => this.o.logger.warn({ err: this.clean(err) }, 'telegram: setMyCommands failed'));
          commandsSet = true;
        }
        if (this.options.webhookUrl) {
          const url = `${this.options.webhookUrl.replace(/\/+$/, '')}${this.hookPath}`;
          await bot.api.setWebhook(url, { secret_token: this.hookSecret, allowed_updates: ['message'] }, apiSignal(signal));
          this.failures = 0;
          this.status$.set('WEBHOOK', null);
          this.o.logger.info({ bot: bot.botInfo.username }, 'telegram: webhook set');
          await sleep(2 ** 31 - 1, signal);
          continue;
        }
        await bot.api.deleteWebhook({}, apiSignal(signal));
        this.o.logger.info({ bot: bot.botInfo.username }, 'telegram: polling for updates');
        const runner = run(bot, { runner: { silent: true, maxRetryTime: 30_000, fetch: { timeout: this.o.pollTimeoutSeconds, allowed_updates: ['message'] } } });
        const stopRunner = () => void runner.stop()?.catch(() => undefined);
        signal.addEventListener('abort', stopRunner, { once: true });
        if (signal.aborted) stopRunner();
        await runner.task()?.finally(() => signal.removeEventListener('abort', stopRunner));
        if (!signal.aborted) throw new Error('polling stopped unexpectedly');
      } catch (err) {
        if (signal.aborted) break;
        const waitMs = Math.min(this.o.retryMaxMs, this.o.retryMinMs * 2 ** Math.min(this.failures++, 16));
        const lastError = describeTelegramError(err, this.options.token);
        this.status$.set('ERROR', lastError);
        this.o.logger.warn({ lastError, retryInMs: waitMs }, `telegram: ${lastError}; retrying in ${Math.round(waitMs / 1000)} s`);
        await sleep(waitMs, signal);
      }
    }
  }

  /** getUpdates outcomes drive the status: success → POLLING (and the back-off resets), failure → ERROR. */
  private pollWatcher(): PollWatcher {
    return {
      probing: () => this.status$.state !== 'POLLING',
      succeeded: () => {
        this.failures = 0;
        if (this.status$.set('POLLING', null)) this.o.logger.info('telegram: polling');
      },
      failed: (err, signal) => {
        const lastError = describeTelegramError(err, this.options.token);
        if (!signal?.aborted && this.status$.set('ERROR', lastError)) this.o.logger.warn({ lastError }, 'telegram: polling failed');
      },
    };
  }

  // === Inbound

  private async onMessage(bot: Bot, sink: InboundSink, msg: Message): Promise<void> {
    const me = bot.botInfo;
    const fetcher = telegramFileFetcher(bot, this.o.apiRoot, this.options.token!);
    const voice = telegramVoiceOf(msg, fetcher);
    const document = voice ? null : telegramDocumentOf(msg, fetcher);
    const mapped = voice ? mapTelegramVoice(msg, me, voice) : document ? mapTelegramDocument(msg, me, document) : mapTelegramMessage(msg, { id: me.id, username: me.username });
    if (!mapped.ok)
      return void this.o.logger.debug(
        { chatId: msg.chat?.id, messageId: msg.message_id, reason: mapped.reason },
        'telegram: message skipped',
      );
    const image = mapped.media ? await this.fetchImage(bot, mapped.media) : null;
    if (image) mapped.message.images = [image];
    await sink(mapped.message);
  }

  private async fetchImage(bot: Bot, ref: TelegramMediaRef): Promise<InboundImage | null> {
    const max = this.o.maxImageBytes;
    const tooLarge = (size: number | null | undefined) => {
      this.o.logger.info({ fileId: ref.fileId, size, maxBytes: max }, 'telegram: image skipped (too large)');
      return null;
    };
    if (ref.fileSize !== null && ref.fileSize > max) return tooLarge(ref.fileSize);
    try {
      const file = await bot.api.getFile(ref.fileId);
      if (!file.file_path) throw new Error('getFile returned no file_path');
      if ((file.file_size ?? 0) > max) return tooLarge(file.file_size);
      const data = await downloadBotFile(`${this.o.apiRoot}/file/bot${this.options.token}/${file.file_path}`, max);
      return data ? { mimeType: ref.mimeType, dataBase64: data.toString('base64') } : tooLarge(null);
    } catch (err) {
      this.o.logger.warn({ fileId: ref.fileId, err: this.clean(err) }, 'telegram: could not fetch an image');
      return null;
    }
  }

  private async onWebhook(
    req: IncomingMessage & { body?: unknown },
    res: ServerResponse,
    sink?: InboundSink,
  ): Promise<void> {
    if (!secretMatches(req.headers['x-telegram-bot-api-secret-token'], this.hookSecret))
      return void res.writeHead(401).end();
    let bot = this.bot?.isInited() ? this.bot : null;
    if (!bot && sink && this.options.token) bot = await this.receiverBot(sink).catch(() => null);
    if (!bot) return void res.writeHead(503).end();
    const update = req.body as Update | undefined;
    if (typeof update?.update_id !== 'number') return void res.writeHead(400).end();
    // Answered after the update is handled: ordering holds, and a failed delivery is retried by Telegram.
    await bot.handleUpdate(update).catch((err: unknown) => this.o.logger.warn({ err: this.clean(err), updateId: update.update_id }, 'telegram: update failed'));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  }

  // === Helpers

  private async sendTyping(chatId: string): Promise<void> {
    await this.bot?.api.sendChatAction(chatId, 'typing').catch((err: unknown) => this.o.logger.debug({ chatId, err: this.clean(err) }, 'telegram: typing failed'));
  }

  private requireBot(): Bot {
    if (!this.bot) throw new Error('telegram transport is not started');
    return this.bot;
  }

  private clean(err: unknown): string {
    return withoutToken(err, this.options.token).message;
  }
}
