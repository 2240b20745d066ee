/**
 * Telegram live replies (issue 14, `channels.telegram.stream: edit`): drafts in private chats, a message
 * edited as the reply grows in groups (or where drafts are refused), updates throttled per chat, 429
 * honoured, and the final text exact and split at 4096.
 */
import { TG_ERRORS } from '../../support/fakes/fake-telegram-server';
import { startTelegramKit, type TelegramKit } from './telegram-kit';

const GROUP = -1009876543;
const INTERVAL = 300;
let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit({ telegram: { stream: 'edit', stream_interval_ms: INTERVAL, groups: [String(GROUP)], require_mention: false } });
  await k.waitForState('POLLING');
});
afterAll(async () => {
  await k?.close();
});

const sentence = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');

function gaps(times: number[]): number[] {
  return times.slice(1).map((t, i) => t - times[i]!);
}

describe('Telegram live replies (stream: edit)', () => {
  it('streams a DM as a draft, updates at most once per interval, then sends the exact final text once', async () => {
    await k.linkUser(501);
    const text = sentence(60, 'dm');
    k.model.enqueue({ text, chunks: 12, chunkDelayMs: 100 });
    k.tg.pushMessage({ chatId: 501, from: 501, text: 'tell me a long story' });
    const [final] = await k.tg.waitForSent(501);
    expect(final!.text).toBe(text);
    expect(k.tg.sentTo(501)).toHaveLength(1);
    const drafts = k.tg.drafts.filter((d) => d.chatId === '501');
    expect(drafts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(drafts.map((d) => d.draftId)).size).toBe(1);
    // Each draft shows more of the reply, and every one is the start of the final text.
    for (const d of drafts) expect(text.startsWith(d.text)).toBe(true);
    expect(drafts.map((d) => d.text.length)).toEqual([...drafts.map((d) => d.text.length)].sort((a, b) => a - b));
    for (const gap of gaps(drafts.map((d) => d.at))) expect(gap).toBeGreaterThanOrEqual(INTERVAL - 25);
    // The final message comes after the last draft.
    expect(final!.at).toBeGreaterThanOrEqual(drafts.at(-1)!.at);
  });

  it('in a group, sends the first text and edits it (three times the interval apart); the one message ends with the exact final text', async () => {
    await k.linkUser(502);
    const text = sentence(80, 'grp');
    k.model.enqueue({ text, chunks: 16, chunkDelayMs: 120 });
    k.tg.pushMessage({ chatId: GROUP, from: 502, text: 'group question' });
    await k.tg.waitFor(() => k.tg.sentTo(GROUP).some((m) => m.text === text), 'the final text in the group');
    const messages = k.tg.sentTo(GROUP);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.edits).toBeGreaterThanOrEqual(1);
    const edits = k.tg.callsOf('editMessageText').filter((c) => String(c.params.chat_id) === String(GROUP));
    // Live edits (plain text) are spaced; the final edit comes when the reply is delivered.
    const live = edits.filter((c) => !c.params.parse_mode);
    const first = k.tg.callsOf('sendMessage').find((c) => String(c.params.chat_id) === String(GROUP))!;
    for (const gap of gaps([first.at, ...live.map((c) => c.at)])) expect(gap).toBeGreaterThanOrEqual(3 * INTERVAL - 25);
    expect(edits.filter((c) => c.params.parse_mode === 'HTML')).toHaveLength(1);
    expect(k.tg.drafts.filter((d) => d.chatId === String(GROUP))).toEqual([]);
  });

  it('a reply longer than 4096 characters: the live message becomes the first chunk, the rest follows in order', async () => {
    await k.linkUser(503);
    const text = sentence(1100, 'long');
    expect(text.length).toBeGreaterThan(2 * 4096);
    const before = k.tg.sentTo(GROUP).length;
    k.model.enqueue({ text, chunks: 10, chunkDelayMs: 80 });
    k.tg.pushMessage({ chatId: GROUP, from: 503, text: 'a very long answer please' });
    const ours = () => k.tg.sentTo(GROUP).slice(before);
    await k.tg.waitFor(() => ours().map((m) => m.text).join(' ') === text, 'the long reply in chunks');
    const [live, ...rest] = ours();
    expect(rest).toHaveLength(2);
    for (const m of ours()) expect(m.text.length).toBeLessThanOrEqual(4096);
    // The live message showed the start while streaming and was then edited to the exact first chunk.
    expect(live!.edits).toBeGreaterThanOrEqual(1);
    expect(rest.map((m) => m.edits ?? 0)).toEqual([0, 0]);
    expect(rest.map((m) => m.message_id)).toEqual([...rest.map((m) => m.message_id)].sort((a, b) => a - b));
  });

  it('honours a 429 on an edit: the chat waits retry_after, no update is lost and the final text is exact', async () => {
    await k.linkUser(504);
    const text = sentence(70, 'slow');
    k.tg.failNext('editMessageText', 1, TG_ERRORS.rateLimited(1));
    k.model.enqueue({ text, chunks: 14, chunkDelayMs: 120 });
    const chat = GROUP;
    const before = k.tg.sentTo(chat).length;
    k.tg.pushMessage({ chatId: chat, from: 504, text: 'slow reply' });
    await k.tg.waitFor(() => k.tg.sentTo(chat).some((m) => m.text === text), 'the final text after a 429');
    expect(k.tg.sentTo(chat)).toHaveLength(before + 1);
    const edits = k.tg.callsOf('editMessageText').filter((c) => String(c.params.chat_id) === String(chat));
    const refused = edits.findIndex((c) => c.status === 429);
    expect(refused).toBeGreaterThanOrEqual(0);
    // The next edit of the chat waited out retry_after (1 s).
    expect(edits[refused + 1]!.at - edits[refused]!.at).toBeGreaterThanOrEqual(1000 - 25);
  });

  it('a reply ready within the interval goes out as one message: no draft, no live message to edit', async () => {
    await k.linkUser(506);
    const before = k.tg.sentTo(GROUP).length;
    const editsBefore = k.tg.callsOf('editMessageText').length;
    k.model.enqueue({ text: 'quick answer', chunks: 3 });
    k.tg.pushMessage({ chatId: 506, from: 506, text: 'quick one' });
    const [dm] = await k.tg.waitForSent(506);
    k.model.enqueue({ text: 'quick group answer', chunks: 3 });
    k.tg.pushMessage({ chatId: GROUP, from: 506, text: 'quick group one' });
    await k.tg.waitFor(() => k.tg.sentTo(GROUP).length > before, 'the group reply');
    expect(dm!.text).toBe('quick answer');
    expect(k.tg.drafts.filter((d) => d.chatId === '506')).toEqual([]);
    expect(k.tg.sentTo(GROUP).slice(before).map((m) => [m.text, m.edits ?? 0])).toEqual([['quick group answer', 0]]);
    expect(k.tg.callsOf('editMessageText')).toHaveLength(editsBefore);
  });

  it('falls back to edits in a DM when the Bot API has no drafts', async () => {
    await k.linkUser(505);
    k.tg.draftsUnsupported = true;
    try {
      const text = sentence(60, 'nodraft');
      k.model.enqueue({ text, chunks: 12, chunkDelayMs: 100 });
      k.tg.pushMessage({ chatId: 505, from: 505, text: 'no drafts here' });
      await k.tg.waitFor(() => k.tg.sentTo(505).some((m) => m.text === text), 'the final text by edit');
      expect(k.tg.sentTo(505)).toHaveLength(1);
      expect(k.tg.sentTo(505)[0]!.edits).toBeGreaterThanOrEqual(1);
    } finally {
      k.tg.draftsUnsupported = false;
    }
  });
});
