import { PER_CHAT_BURST } from '../../../server/channels/telegram/telegram-bot';
/**
 * Telegram end to end (issue 4 acceptance 1): a real server with workers, the Telegram transport polling
 * a fake Bot API over real HTTP, and a fake model. Senders are known users (identity linked by GraphQL).
 */
import { TG_ERRORS } from '../../support/fakes/fake-telegram-server';
import { modelSaw, startTelegramKit, type TelegramKit } from './telegram-kit';

const GROUP = -1001234567;
let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit({ ai: { supports_vision: true }, telegram: { groups: [String(GROUP)] }, config: { log: { level: 'debug' } } });
  await k.waitForState('POLLING');
});
afterAll(async () => {
  await k?.close();
});

function imageParts(body: unknown): string[] {
  const messages = (body as { messages?: Array<{ content: unknown }> }).messages ?? [];
  return messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; image_url?: { url: string } }>) : []).filter((p) => p.type === 'image_url').map((p) => p.image_url!.url));
}

describe('Telegram channel against a fake Bot API', () => {
  it('starts with getMe, registers its commands, drops a webhook and long-polls', async () => {
    // After the first (short) poll that made it POLLING, the transport long-polls.
    await k.tg.waitFor(() => k.tg.callsOf('getUpdates').some((c) => Number(c.params.timeout) > 0), 'a long poll');
    const methods = k.tg.calls.map((c) => c.method);
    expect(methods.indexOf('getMe')).toBeGreaterThanOrEqual(0);
    expect(methods.indexOf('getMe')).toBeLessThan(methods.indexOf('getUpdates'));
    expect(methods.indexOf('deleteWebhook')).toBeLessThan(methods.indexOf('getUpdates'));
    const commands = (k.tg.callsOf('setMyCommands')[0]!.params.commands as Array<{ command: string }>).map((c) => c.command);
    expect(commands).toEqual(expect.arrayContaining(['help', 'whoami', 'status', 'new', 'stop', 'usage', 'tools', 'approve', 'trust', 'compact', 'memory', 'memories', 'skills', 'skill']));
    expect(new Set(commands).size).toBe(commands.length);
    expect(k.transport().status()).toMatchObject({ channel: 'telegram', state: 'POLLING', lastError: null });
    expect(Number(k.tg.callsOf('getUpdates')[0]!.params.timeout)).toBe(0);
  });

  it('answers a DM with the model reply', async () => {
    await k.linkUser(201);
    const before = k.model.chatRequests().length;
    k.tg.pushMessage({ chatId: 201, from: { id: 201, first_name: 'Ada', username: 'ada' }, text: 'hello from telegram' });
    const [reply] = await k.tg.waitForSent(201);
    expect(reply!.text).toContain('hello from telegram');
    expect(reply!.text.startsWith('Echo:')).toBe(true);
    expect(k.model.chatRequests().length).toBe(before + 1);
    expect(modelSaw(k.model).at(-1)).toContain('hello from telegram');
    const sends = k.tg.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === '201');
    expect(sends).toHaveLength(1);
    expect(sends[0]!.params.parse_mode).toBe('HTML');
  });

  it('answers /whoami without a model call', async () => {
    await k.linkUser(202);
    const before = k.model.chatRequests().length;
    k.tg.pushMessage({ chatId: 202, from: 202, text: '/whoami' });
    const [reply] = await k.tg.waitForSent(202);
    expect(reply!.text).toContain('Trust: MEMBER');
    expect(reply!.text).toContain('telegram:202');
    expect(reply!.text).toContain('agent:main:telegram:dm:');
    expect(k.model.chatRequests().length).toBe(before);
  });

  it('in a group, answers only when mentioned or replied to, without the mention in the text', async () => {
    await k.linkUser(203);
    await k.linkUser(204);
    const before = k.model.chatRequests().length;
    k.tg.pushMessage({ chatId: GROUP, from: 203, text: 'just chatting among humans' });
    k.tg.pushMessage({ chatId: GROUP, from: 204, text: `@${k.tg.bot.username} what is the plan?` });
    const [first] = await k.tg.waitForSent(GROUP, 1);
    expect(first!.text).toContain('what is the plan?');
    // The unmentioned message was never shown to the model, and the mention was cut from the text.
    expect(k.model.chatRequests().length).toBe(before + 1);
    const seen = modelSaw(k.model).at(-1)!;
    expect(seen).not.toContain('just chatting among humans');
    expect(seen).not.toContain(`@${k.tg.bot.username}`);

    k.tg.pushMessage({ chatId: GROUP, from: 203, text: 'and a follow-up for you', replyTo: first!.message_id });
    const replies = await k.tg.waitForSent(GROUP, 2);
    expect(replies[1]!.text).toContain('and a follow-up for you');
    expect(k.model.chatRequests().length).toBe(before + 2);
  });

  it('delivers a 6000-character reply as two messages, in order, at most one a second', async () => {
    await k.linkUser(205);
    const paragraphs = Array.from({ length: 30 }, (_, i) => `Paragraph ${String(i).padStart(2, '0')} ${'x'.repeat(185)}`);
    const long = paragraphs.join('\n\n');
    expect(long.length).toBeGreaterThan(5900);
    k.model.enqueue({ text: long });
    k.tg.pushMessage({ chatId: 205, from: 205, text: 'write a lot' });
    const sent = await k.tg.waitForSent(205, 2);
    expect(await k.fence(205)).toHaveLength(2);
    const [a, b] = sent;
    expect(a!.text.length).toBeLessThanOrEqual(4096);
    expect(b!.text.length).toBeLessThanOrEqual(4096);
    expect(a!.text.startsWith('Paragraph 00')).toBe(true);
    expect(b!.text.endsWith(paragraphs.at(-1)!)).toBe(true);
    expect(`${a!.text}\n\n${b!.text}`).toBe(long);
    expect(b!.at).toBeGreaterThan(a!.at);
  });

  it('sends a short burst to a chat at once, then about one message a second', async () => {
    await k.linkUser(213);
    const chunks = PER_CHAT_BURST + 2;
    const long = Array.from({ length: chunks }, (_, i) => `Part ${i} ${'z'.repeat(4000)}`).join('\n\n');
    k.model.enqueue({ text: long });
    k.tg.pushMessage({ chatId: 213, from: 213, text: 'a very long answer please' });
    const sent = await k.tg.waitForSent(213, chunks, 20_000);
    expect(sent.map((m) => m.text.split(' ')[1])).toEqual(Array.from({ length: chunks }, (_, i) => String(i)));
    // The burst allowance is used up by the first PER_CHAT_BURST; the next waits for the bucket to refill
    // (arrival times, so a little slack).
    expect(sent[PER_CHAT_BURST]!.at - sent[0]!.at).toBeGreaterThanOrEqual(700);
  });

  it('waits out a 429 retry_after and delivers each chunk exactly once', async () => {
    await k.linkUser(206);
    const long = Array.from({ length: 30 }, (_, i) => `Line ${i} ${'y'.repeat(190)}`).join('\n\n');
    k.model.enqueue({ text: long });
    k.tg.failNext('sendMessage', 1, TG_ERRORS.rateLimited(2));
    k.tg.pushMessage({ chatId: 206, from: 206, text: 'rate limit me' });
    const sent = await k.tg.waitForSent(206, 2, 15_000);
    expect(await k.fence(206)).toHaveLength(2);
    const calls = k.tg.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === '206');
    expect(calls.map((c) => c.status)).toEqual([429, 200, 200, 200]); // the last one is the fence's answer
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(2000);
    expect(new Set(sent.map((m) => m.text)).size).toBe(2);
    expect(`${sent[0]!.text}\n\n${sent[1]!.text}`).toBe(long);
  });

  it('passes the largest photo size to a vision model as an image, with the caption as text', async () => {
    await k.linkUser(207);
    const photo = Buffer.from(`\xff\xd8\xff fake jpeg ${'z'.repeat(2000)}`, 'latin1');
    const message = k.tg.pushMessage({ chatId: 207, from: 207, caption: 'what is in this picture?', photo });
    await k.tg.waitForSent(207);
    const request = k.model.chatRequests().find((r) => JSON.stringify(r.body).includes('what is in this picture?'))!;
    expect(imageParts(request.body)).toEqual([`data:image/jpeg;base64,${photo.toString('base64')}`]);
    // Only the full size was fetched, not the thumbnail.
    expect(k.tg.callsOf('getFile').map((c) => c.params.file_id)).toEqual([message.photo![1]!.file_id]);
  });

  it('skips an image over 5 MiB with a log line and still answers the caption', async () => {
    await k.linkUser(208);
    k.tg.pushMessage({ chatId: 208, from: 208, caption: 'a huge picture', photo: Buffer.alloc(5 * 1024 * 1024 + 10, 1) });
    await k.tg.waitForSent(208);
    const request = k.model.chatRequests().find((r) => JSON.stringify(r.body).includes('a huge picture'))!;
    expect(imageParts(request.body)).toEqual([]);
    expect(k.t.logs.text).toContain('image skipped (too large)');
  });

  it('shows "typing" while a turn runs, refreshes it, and stops after the reply', async () => {
    await k.linkUser(209);
    k.model.enqueue({ text: 'a slow answer', delayMs: 4600 });
    k.tg.pushMessage({ chatId: 209, from: 209, text: 'take your time' });
    const [reply] = await k.tg.waitForSent(209, 1, 15_000);
    const typing = () => k.tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === '209');
    expect(typing().every((c) => c.params.action === 'typing')).toBe(true);
    expect(typing().length).toBeGreaterThanOrEqual(2);
    expect(typing()[0]!.at).toBeLessThan(reply!.at);
    expect(typing()[1]!.at - typing()[0]!.at).toBeGreaterThanOrEqual(3500);
    await new Promise((r) => setTimeout(r, 5500));
    expect(typing().filter((c) => c.at > reply!.at + 1000)).toEqual([]);
  });

  it('answers a redelivered message (same message_id) once', async () => {
    await k.linkUser(210);
    const before = k.model.chatRequests().length;
    const message = k.tg.buildMessage({ chatId: 210, from: 210, text: 'only once please' });
    k.tg.pushUpdate({ message });
    k.tg.pushUpdate({ message });
    await k.tg.waitForSent(210, 1);
    k.tg.pushMessage({ chatId: 210, from: 210, text: 'second message' });
    const sent = await k.tg.waitForSent(210, 2);
    expect((await k.fence(210)).map((m) => m.text)).toEqual([sent[0]!.text, sent[1]!.text]);
    expect(sent[0]!.text).toContain('only once please');
    expect(sent[1]!.text).toContain('second message');
    // Each message was answered by exactly one model call (other tests' background calls may interleave).
    const asked = (text: string) => k.model.chatRequests().slice(before).filter((r) => JSON.stringify(r.body?.messages?.findLast((m) => m.role === 'user')?.content ?? '').includes(text));
    expect([asked('only once please').length, asked('second message').length]).toEqual([1, 1]);
  });

  it('formats code blocks as HTML that Telegram accepts, and falls back to plain text on a parse error', async () => {
    await k.linkUser(211);
    const reply = 'Use `a<b` like this:\n```js\nif (a < b && c > d) return "<ok>";\n```\n**Done** & dusted';
    k.model.enqueue({ text: reply });
    k.tg.pushMessage({ chatId: 211, from: 211, text: 'show me code' });
    const [formatted] = await k.tg.waitForSent(211);
    expect(formatted!.parseMode).toBe('HTML');
    expect(formatted!.raw).toContain('<pre><code class="language-js">');
    expect(formatted!.text).toBe('Use a<b like this:\nif (a < b && c > d) return "<ok>";\nDone & dusted');

    k.model.enqueue({ text: reply });
    k.tg.failNext('sendMessage', 1, TG_ERRORS.parseEntities());
    k.tg.pushMessage({ chatId: 211, from: 211, text: 'again please' });
    const sent = await k.tg.waitForSent(211, 2);
    expect(sent[1]!.parseMode).toBeNull();
    expect(sent[1]!.text).toBe(reply);
    expect(k.t.logs.text).toContain('formatting rejected, sending as plain text');
  });

  it('skips unsupported updates (a sticker) with a debug line and keeps going', async () => {
    await k.linkUser(212);
    const before = k.model.chatRequests().length;
    k.tg.pushMessage({ chatId: 212, from: 212, extra: { sticker: { file_id: 'sticker-1', width: 512, height: 512, type: 'regular' } } });
    k.tg.pushMessage({ chatId: 212, from: 212, text: 'after the sticker' });
    const [reply] = await k.tg.waitForSent(212);
    expect(reply!.text).toContain('after the sticker');
    expect(k.model.chatRequests().length).toBe(before + 1);
    expect(k.t.logs.text).toContain('unsupported message (sticker)');
  });

  it('never writes the bot token to the logs', () => {
    expect(k.t.logs.lines.length).toBeGreaterThan(20);
    expect(k.t.logs.text).not.toContain(k.token);
    expect(k.t.logs.text).not.toContain(k.token.split(':')[1]);
  });
});
