/**
 * A reply to a user who blocked the bot (403) is given up at once instead of being retried, and the
 * chat's next reply still goes out.
 */
import { startTelegramKit, type TelegramKit } from './telegram-kit';

let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit({});
  await k.waitForState('POLLING');
});
afterAll(async () => {
  await k?.close();
});

it('gives up a delivery Telegram refuses permanently, without retries, and goes on', async () => {
  await k.linkUser(301);
  k.tg.failNext('sendMessage', 1, { error_code: 403, description: 'Forbidden: bot was blocked by the user' });
  k.tg.pushMessage({ chatId: 301, from: 301, text: 'first message' });
  await k.tg.waitFor(() => k.tg.callsOf('sendMessage').some((c) => String(c.params.chat_id) === '301'), 'the refused send');
  k.tg.pushMessage({ chatId: 301, from: 301, text: 'second message' });
  const [delivered] = await k.tg.waitForSent(301, 1);
  expect(delivered!.text).toContain('second message');
  // A retry of the refused reply would come before the answer to a later message (one mailbox per chat).
  expect((await k.fence(301)).map((m) => m.text)).toEqual([delivered!.text]);
  const sends = k.tg.callsOf('sendMessage').filter((c) => String(c.params.chat_id) === '301');
  expect(sends).toHaveLength(3);
  expect(String(sends[0]!.params.text)).toContain('first message');
  expect(k.t.logs.text).toContain('delivery given up');
});
