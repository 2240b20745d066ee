/**
 * The Telegram transport on its own against the fake Bot API: inbound mapping through real polling,
 * per-chat ordering, sends, typing, start failures, and logs written without any redactor (so the
 * token must stay out of them by construction, not by masking).
 */
import pino from 'pino';
import type { ChannelStatus, InboundMessage } from '../../../server/channels/channel.types';
import { PER_CHAT_BURST } from '../../../server/channels/telegram/telegram-bot';
import { TelegramTransport, type TelegramTransportOptions } from '../../../server/channels/telegram/telegram.adapter';
import { FakeTelegramServer, TG_ERRORS } from '../../support/fakes/fake-telegram-server';
import { LogCapture } from '../../support/log-capture';
import { newBotToken } from './telegram-kit';

const token = newBotToken();
let tg: FakeTelegramServer;
const running: TelegramTransport[] = [];

beforeAll(async () => {
  tg = await FakeTelegramServer.start({ token, botUsername: 'muninn_unit_bot' });
});
afterAll(async () => {
  for (const t of running) await t.stop();
  await tg.close();
});

interface Harness {
  transport: TelegramTransport;
  logs: LogCapture;
  received: InboundMessage[];
  statuses: ChannelStatus[];
}

function harness(options: Partial<TelegramTransportOptions> = {}, onMessage?: (m: InboundMessage) => Promise<void>): Harness & { start(): Promise<void> } {
  const logs = new LogCapture();
  const received: InboundMessage[] = [];
  const statuses: ChannelStatus[] = [];
  const transport = new TelegramTransport({
    token,
    apiRoot: tg.url,
    logger: pino({ level: 'debug' }, logs),
    onStatus: (t) => statuses.push(t.status()),
    retryMinMs: 100,
    retryMaxMs: 400,
    pollTimeoutSeconds: 1,
    ...options,
  });
  running.push(transport);
  return {
    transport,
    logs,
    received,
    statuses,
    start: () =>
      transport.start(async (m) => {
        received.push(m);
        await onMessage?.(m);
      }),
  };
}

async function polling(h: Harness): Promise<void> {
  await tg.waitFor(() => h.transport.status().state === 'POLLING', 'POLLING');
}

describe('TelegramTransport', () => {
  it('refuses to start without a token, naming the config key', async () => {
    const h = harness({ token: null });
    await expect(h.start()).rejects.toThrow('channels.telegram.bot_token');
    expect(h.transport.status()).toMatchObject({ state: 'ERROR', lastError: expect.stringContaining('@BotFather') });
  });

  it('reports a rejected token as ERROR and keeps retrying with back-off, without logging the token', async () => {
    const wrong = newBotToken();
    const h = harness({ token: wrong });
    const before = tg.callsOf('getMe').length;
    await h.start();
    await tg.waitFor(() => tg.callsOf('getMe').length >= before + 3, 'three getMe attempts');
    await h.transport.stop();
    expect(h.statuses.map((s) => s.state)).toEqual(['STARTING', 'ERROR', 'STOPPED']);
    expect(h.statuses[1]!.lastError).toContain('401 Unauthorized');
    expect(h.statuses[1]!.lastError).toContain('channels.telegram.bot_token');
    const attempts = tg.callsOf('getMe').slice(before);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(100);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(200);
    expect(h.logs.text).toContain('401 Unauthorized');
    expect(h.logs.text).not.toContain(wrong);
    expect(h.logs.text).not.toContain(wrong.split(':')[1]);
  });

  it('maps DMs, group mentions, commands, replies and captions; skips what it cannot answer', async () => {
    const h = harness();
    await h.start();
    await polling(h);
    const bot = tg.bot;
    const sentByBot = await h.transport.send({ chatId: '-100777', text: 'I am the bot', idempotencyKey: 'k:0' });
    tg.pushMessage({ chatId: 501, from: { id: 501, first_name: 'Ada', last_name: 'L' }, text: 'plain DM' });
    tg.pushMessage({ chatId: -100777, from: 502, text: 'no mention here' });
    tg.pushMessage({ chatId: -100777, from: 502, text: `hey @${bot.username}, status?` });
    tg.pushMessage({ chatId: -100777, from: 502, text: 'Muninn look', entities: [{ type: 'text_mention', offset: 0, length: 6, user: bot }] });
    tg.pushMessage({ chatId: -100777, from: 502, text: `/help@${bot.username}` });
    tg.pushMessage({ chatId: -100777, from: 502, text: 'replying to you', replyTo: Number(sentByBot.platformMessageId) });
    tg.pushMessage({ chatId: -100777, from: 502, chatType: 'group', caption: `@${bot.username} see this`, photo: Buffer.from('jpeg bytes') });
    tg.pushMessage({ chatId: 501, from: 501, extra: { sticker: { file_id: 's', file_unique_id: 'su', type: 'regular', width: 512, height: 512, is_animated: false, is_video: false } } });
    tg.pushMessage({ chatId: 501, from: { id: 9, is_bot: true, first_name: 'OtherBot' }, text: 'bot talk' });
    tg.pushMessage({ chatId: 501, from: 501, text: 'last' });
    await tg.waitFor(() => h.received.length === 8, 'eight messages');

    // Chats are handled in parallel, each in order.
    const row = (m: InboundMessage) => [m.chatKind, m.chatId, m.sender.handle, m.text, m.mentionsBot ?? false];
    expect(h.received.filter((m) => m.chatId === '501').map(row)).toEqual([
      ['dm', '501', '501', 'plain DM', false],
      ['dm', '501', '501', 'last', false],
    ]);
    const group = h.received.filter((m) => m.chatId === '-100777');
    expect(group.map(row)).toEqual([
      ['group', '-100777', '502', 'no mention here', false],
      ['group', '-100777', '502', 'hey, status?', true],
      ['group', '-100777', '502', 'look', true],
      ['group', '-100777', '502', '/help', true],
      ['group', '-100777', '502', 'replying to you', true],
      ['group', '-100777', '502', 'see this', true],
    ]);
    expect(h.received[0]!.sender.displayName).toBe('Ada L');
    expect(group[4]!.replyTo).toBe(sentByBot.platformMessageId);
    expect(group[5]!.images).toEqual([{ mimeType: 'image/jpeg', dataBase64: Buffer.from('jpeg bytes').toString('base64') }]);
    expect(new Set(h.received.map((m) => m.platformMessageId)).size).toBe(8);
    expect(h.logs.text).toContain('unsupported message (sticker)');
    expect(h.logs.text).toContain('sent by a bot');
    await h.transport.stop();
  });

  it('keeps each chat in order while other chats go on in parallel', async () => {
    const spans: Array<{ chat: string; text: string; start: number; end: number }> = [];
    const h = harness({}, async (m) => {
      const start = performance.now();
      await new Promise((r) => setTimeout(r, m.text === 'a1' ? 400 : 20));
      spans.push({ chat: m.chatId, text: m.text, start, end: performance.now() });
    });
    await h.start();
    await polling(h);
    for (const text of ['a1', 'a2', 'a3']) tg.pushMessage({ chatId: 601, from: 601, text });
    tg.pushMessage({ chatId: 602, from: 602, text: 'b1' });
    await tg.waitFor(() => spans.length === 4, 'four messages handled');
    const a = spans.filter((s) => s.chat === '601');
    expect(a.map((s) => s.text)).toEqual(['a1', 'a2', 'a3']);
    expect(a[1]!.start).toBeGreaterThanOrEqual(a[0]!.end);
    expect(a[2]!.start).toBeGreaterThanOrEqual(a[1]!.end);
    const b = spans.find((s) => s.chat === '602')!;
    expect(b.end).toBeLessThan(a[0]!.end);
    await h.transport.stop();
  });

  it('logs an image it cannot fetch and still delivers the caption, with no token in the logs', async () => {
    const h = harness();
    await h.start();
    await polling(h);
    tg.failNext('getFile', 1, { error_code: 400, description: 'Bad Request: invalid file_id' });
    tg.pushMessage({ chatId: 701, from: 701, caption: 'broken picture', photo: Buffer.from('x') });
    await tg.waitFor(() => h.received.length === 1, 'the message');
    expect(h.received[0]!.text).toBe('broken picture');
    expect(h.received[0]!.images).toBeUndefined();
    expect(h.logs.text).toContain('could not fetch an image');
    expect(h.logs.text).not.toContain(token);
    expect(h.logs.text).not.toContain(token.split(':')[1]);
    await h.transport.stop();
  });

  it('sends with reply parameters, skips blank chunks, and rejects failures without the token', async () => {
    const h = harness();
    await h.start();
    await polling(h);
    const first = await h.transport.send({ chatId: '801', text: 'first', idempotencyKey: 'a:0' });
    expect(first.platformMessageId).toBe(String(tg.sentTo(801)[0]!.message_id));
    await h.transport.send({ chatId: '801', text: 'second', idempotencyKey: 'a:1', replyTo: first.platformMessageId });
    expect(tg.sentTo(801)[1]!.replyTo).toBe(Number(first.platformMessageId));
    const calls = tg.callsOf('sendMessage').length;
    expect(await h.transport.send({ chatId: '801', text: '\n\n', idempotencyKey: 'a:2' })).toEqual({});
    expect(tg.callsOf('sendMessage').length).toBe(calls);
    tg.failNext('sendMessage', 1, TG_ERRORS.chatNotFound());
    const err = (await h.transport.send({ chatId: '802', text: 'nobody', idempotencyKey: 'b:0' }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('chat not found');
    expect(err.message).not.toContain(token);
    await h.transport.stop();
  });

  it('sends a burst to a chat at once; a send whose job stops while it waits for the chat lets go at once and is never sent', async () => {
    const h = harness();
    await h.start();
    await polling(h);
    const send = (text: string, signal?: AbortSignal) => h.transport.send({ chatId: '811', text, idempotencyKey: `c:${text}` }, signal);
    const burst = Array.from({ length: PER_CHAT_BURST }, (_, i) => send(`burst ${i}`));
    const fifth = send('fifth');
    const stop = new AbortController();
    // Behind the fifth, so it waits about two seconds for the chat's allowance.
    const late = send('late', stop.signal);
    const order: string[] = [];
    void fifth.then(() => order.push('fifth sent'));
    await Promise.all(burst);
    stop.abort(new Error('job stopped'));
    // The stopped send lets go at once, not when its turn in the chat would have come.
    await expect(late).rejects.toThrow('job stopped');
    order.push('late stopped');
    await fifth;
    expect(order).toEqual(['late stopped', 'fifth sent']);
    await send('after');
    expect(tg.sentTo(811).map((m) => m.text)).toEqual([...Array.from({ length: PER_CHAT_BURST }, (_, i) => `burst ${i}`), 'fifth', 'after']);
    await h.transport.stop();
  });

  it('sends "typing" at once and stops refreshing it when switched off or stopped', async () => {
    const h = harness({ typingRefreshMs: 50 });
    await h.start();
    await polling(h);
    const typingIn = (chat: string) => tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === chat);
    await h.transport.setTyping!('901', true);
    // At once: sent before setTyping resolved (a refresh may already have followed on a slow machine).
    expect(typingIn('901').length).toBeGreaterThanOrEqual(1);
    expect(typingIn('901')[0]!.params.action).toBe('typing');
    await h.transport.setTyping!('901', false);
    await h.transport.setTyping!('902', true);
    // One refresh in chat 902 since 901 was switched off: anything of 901's started before has landed.
    await tg.waitFor(() => typingIn('902').length >= 2, 'a refresh in chat 902');
    const at901Off = typingIn('901').length;
    // 902's further refreshes show the refresher running meanwhile; 901 (switched off) got none of them.
    await tg.waitFor(() => typingIn('902').length >= 4, 'two more refreshes in chat 902');
    expect(typingIn('901')).toHaveLength(at901Off);
    await h.transport.stop();
    expect(h.transport.status().state).toBe('STOPPED');
    const atStop = typingIn('902').length;

    // A second transport with the same refresh interval as a witness: once it refreshed twice, a
    // refresh of the stopped one would have come too.
    const witness = harness({ typingRefreshMs: 50 });
    await witness.start();
    await polling(witness);
    await witness.transport.setTyping!('903', true);
    await tg.waitFor(() => typingIn('903').length >= 3, 'two refreshes in chat 903');
    expect(typingIn('902')).toHaveLength(atStop);
    await witness.transport.stop();
  });
});
