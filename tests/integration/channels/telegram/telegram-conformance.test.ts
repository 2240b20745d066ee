/** The Telegram transport against the fake Bot API (real HTTP), through the shared transport suite. */
import pino from 'pino';
import type { ChannelStatus } from '../../../../server/channels/channel.types';
import { TelegramTransport } from '../../../../server/channels/telegram/telegram.adapter';
import { describeChannelTransportConformance, TYPING_REFRESH_MS } from '../../../support/conformance/channel-transport.conformance';
import { FakeTelegramServer, TG_ERRORS } from '../../../support/fakes/fake-telegram-server';

const token = `${Math.floor(1e8 + Math.random() * 9e8)}:conformance${Math.random().toString(36).slice(2, 12)}`;
let tg: FakeTelegramServer;
let nextChat = 7_100_000 + Math.floor(Math.random() * 10_000) * 100;

beforeAll(async () => {
  tg = await FakeTelegramServer.start({ token, botUsername: 'muninn_conformance_bot' });
});
afterAll(() => tg.close());

describeChannelTransportConformance('telegram (fake Bot API)', async () => {
  const reported: ChannelStatus[] = [];
  const transport = new TelegramTransport({
    token,
    apiRoot: tg.url,
    logger: pino({ level: 'silent' }),
    onStatus: (t) => reported.push(t.status()),
    retryMinMs: 50,
    retryMaxMs: 200,
    pollTimeoutSeconds: 1,
    typingRefreshMs: TYPING_REFRESH_MS,
  });
  return {
    transport,
    reported,
    runningState: 'POLLING',
    connect: () => tg.waitFor(() => transport.status().state === 'POLLING', 'POLLING').then(() => undefined),
    platform: {
      newChat: () => String(++nextChat),
      delivered: (chatId) => tg.sentTo(chatId).map((m) => m.text),
      failNextSendOf: (marker) => tg.failNext('sendMessage', 1, { error_code: 400, description: 'Bad Request: temporary failure' }, (p) => String(p.text).includes(marker)),
      // Telegram shows **bold** and `code` as formatting; blank lines at the edges are dropped.
      rendered: (markdown) => markdown.replace(/^\n+|\n+$/g, '').replace(/\*\*|`/g, ''),
      rejectMarkupOnce: () => tg.failNext('sendMessage', 1, TG_ERRORS.parseEntities(), (p) => p.parse_mode === 'HTML'),
      typingSignals: (chatId) => tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === chatId).length,
      pushDm: (chatId, { text, photo }) => void tg.pushMessage(photo ? { chatId: Number(chatId), from: Number(chatId), caption: text, photo } : { chatId: Number(chatId), from: Number(chatId), text }),
      photos: true,
    },
    close: async () => undefined,
  };
});
