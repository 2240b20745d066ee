/**
 * Polling resilience: a 409 Conflict (another process polls the same bot token) is logged clearly, shown
 * as status ERROR and retried with back-off until polling works again; stopping and starting the channel
 * live works.
 */
import { TG_ERRORS } from '../../support/fakes/fake-telegram-server';
import { startTelegramKit, type TelegramKit } from './telegram-kit';

let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit();
  await k.waitForState('POLLING');
});
afterAll(async () => {
  await k?.close();
});

it('a 409 Conflict on getUpdates sets ERROR with a clear message, backs off, and recovers to POLLING', async () => {
  await k.linkUser(301);
  const pollsBefore = k.tg.callsOf('getUpdates').length;
  k.tg.failNext('getUpdates', 2, TG_ERRORS.conflict());
  await k.tg.waitFor(() => k.statuses.some((s) => s.state === 'ERROR'), 'status ERROR');
  await k.waitForState('POLLING', 15_000);

  const error = k.statuses.find((s) => s.state === 'ERROR')!;
  expect(error.lastError).toContain('another process is polling this bot token');
  expect(k.statuses.map((s) => s.state).slice(-1)).toEqual(['POLLING']);
  expect(k.transport().status()).toMatchObject({ state: 'POLLING', lastError: null });
  expect(k.t.logs.text).toContain('another process is polling this bot token');
  expect(k.t.logs.text).toMatch(/retrying in \d+ s/);

  // Two conflicts, then a good poll; the waits between the attempts grow (1 s, then 2 s).
  const polls = k.tg.callsOf('getUpdates').slice(pollsBefore - 1);
  const conflicts = polls.filter((c) => c.status === 409);
  expect(conflicts.length).toBe(2);
  const afterFirst = polls[polls.indexOf(conflicts[0]!) + 1]!;
  const afterSecond = polls[polls.indexOf(conflicts[1]!) + 1]!;
  expect(afterFirst.at - conflicts[0]!.at).toBeGreaterThanOrEqual(1000);
  expect(afterSecond.at - conflicts[1]!.at).toBeGreaterThanOrEqual(2000);
  expect(afterSecond.status === null || afterSecond.status === 200).toBe(true);

  // Polling really works again.
  k.tg.pushMessage({ chatId: 301, from: 301, text: 'are you back?' });
  const [reply] = await k.tg.waitForSent(301);
  expect(reply!.text).toContain('are you back?');
});

it('stops live (status STOPPED, no more polls) and starts again', async () => {
  const chat = k.t.app.chat!;
  await chat.channels.stop('telegram');
  expect(k.transport().status().state).toBe('STOPPED');
  const stoppedAt = k.tg.calls.length;
  const held = k.tg.callsOf('getUpdates').at(-1)!;
  await k.tg.waitFor(() => held.status !== null, 'the held poll to end');

  await chat.channels.start('telegram', (m) => chat.pipeline.handle(m).then(() => undefined));
  await k.waitForState('POLLING');
  // Nothing polled while stopped: the first call after the stop is the restart's getMe.
  expect(k.tg.calls.slice(stoppedAt).map((c) => c.method)[0]).toBe('getMe');
  await k.linkUser(302);
  k.tg.pushMessage({ chatId: 302, from: 302, text: 'hello again' });
  const [reply] = await k.tg.waitForSent(302);
  expect(reply!.text).toContain('hello again');
  expect(k.statuses.map((s) => s.state)).toEqual(expect.arrayContaining(['STOPPED', 'STARTING', 'POLLING']));
});
