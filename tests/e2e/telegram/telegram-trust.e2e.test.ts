/**
 * Trust end to end through the Telegram fake (issue 4 acceptance 3): a BLOCKED sender gets nothing, a
 * stranger under `dm_policy: open` becomes a GUEST who gets replies without tools and is rate-limited, a
 * MEMBER cannot run http_request and a TRUSTED user can (it runs and meets the address policy instead).
 */
import { FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { lastUserText } from '../../support/model-requests';
import { startTelegramKit, type TelegramKit } from './telegram-kit';

const GROUP = -1009876;
let k: TelegramKit;

const offered = (req: RecordedRequest) => (req.body?.tools ?? []).map((t) => t.function.name).sort();
const toolResult = (req: RecordedRequest) => (req.body?.messages ?? []).find((m) => m.role === 'tool')?.content as string | undefined;
const requestsFor = (text: string) => k.model.chatRequests().filter((r) => lastUserText(r).endsWith(text));
const settle = () => new Promise((r) => setTimeout(r, 500));

beforeAll(async () => {
  k = await startTelegramKit({ telegram: { dm_policy: 'open', guest_messages_per_minute: 2, groups: [String(GROUP)] } });
  k.model.setDefault((req) => {
    if ((req.body?.messages ?? []).at(-1)?.role === 'tool') return FakeReplies.text(`tool said: ${toolResult(req)}`);
    if (lastUserText(req).endsWith('fetch the intranet')) return FakeReplies.toolCalls([{ id: 'fetch', name: 'http_request', arguments: { url: 'http://10.0.0.1/' } }]);
    return FakeReplies.text(`Echo: ${lastUserText(req)}`);
  });
  await k.waitForState('POLLING');
});
afterAll(async () => {
  await k?.close();
});

it('a BLOCKED sender gets nothing, in a DM or in a group, and the model never sees them', async () => {
  await k.linkUser(701, 'BLOCKED');
  await k.linkUser(702, 'MEMBER');
  k.tg.pushMessage({ chatId: 701, from: 701, text: 'blocked hello' });
  k.tg.pushMessage({ chatId: 701, from: 701, text: '/whoami' });
  k.tg.pushMessage({ chatId: GROUP, from: 701, text: `@${k.tg.bot.username} blocked in the group` });
  k.tg.pushMessage({ chatId: GROUP, from: 702, text: `@${k.tg.bot.username} member in the group` });
  const [reply] = await k.tg.waitForSent(GROUP);
  expect(reply!.text).toContain('member in the group');
  // A chat's messages are handled in order and its answers delivered in order: a member's later message
  // in the group is answered after anything the blocked one's would have got.
  const marker = `fence ${Date.now()}`;
  k.tg.pushMessage({ chatId: GROUP, from: 702, text: `@${k.tg.bot.username} ${marker}` });
  await k.tg.waitFor(() => k.tg.sentTo(GROUP).some((m) => m.text.includes(marker)), 'the fence in the group');
  expect(k.tg.sentTo(GROUP)).toHaveLength(2);
  expect(await k.noticeFence(701)).toHaveLength(0);
  expect(k.tg.callsOf('sendChatAction').filter((c) => String(c.params.chat_id) === '701')).toHaveLength(0);
  expect(JSON.stringify(k.model.chatRequests().map((r) => r.body))).not.toContain('blocked');
});

it('a stranger becomes a GUEST: replies without tools, then a rate-limit notice, then silence', async () => {
  const sys = k.t.app.systemCtx('test');
  k.tg.pushMessage({ chatId: 703, from: { id: 703, first_name: 'Stranger' }, text: 'guest one' });
  const [first] = await k.tg.waitForSent(703);
  expect(first!.text).toBe('Echo: guest one');
  expect(await k.t.app.services.users.findByIdentity(sys, 'telegram', '703')).toMatchObject({ trust: 'GUEST' });
  expect(offered(requestsFor('guest one')[0]!)).toEqual([]);

  for (const text of ['guest two', 'guest three', 'guest four']) k.tg.pushMessage({ chatId: 703, from: 703, text });
  await k.tg.waitForSent(703, 3);
  await settle();
  // The notice is a direct answer and may arrive before the reply to "guest two" (that one waits for the model).
  const texts = k.tg.sentTo(703).map((m) => m.text);
  expect(texts).toHaveLength(3);
  expect(texts.filter((t) => t.startsWith('Echo:')).sort()).toEqual(['Echo: guest one', 'Echo: guest two']);
  expect(texts.filter((t) => t.includes('faster than I can answer guests (2 a minute)'))).toHaveLength(1);
  expect(requestsFor('guest three')).toHaveLength(0);
  expect(requestsFor('guest four')).toHaveLength(0);
});

it('a MEMBER is not offered http_request, and a call to it is refused for trust', async () => {
  await k.linkUser(704, 'MEMBER');
  k.tg.pushMessage({ chatId: 704, from: 704, text: 'member: fetch the intranet' });
  const [reply] = await k.tg.waitForSent(704);
  const [asked, told] = requestsFor('member: fetch the intranet');
  expect(offered(asked!)).not.toContain('http_request');
  expect(toolResult(told!)).toContain('needs TRUSTED trust; the sender is MEMBER');
  expect(reply!.text).toContain('needs TRUSTED trust');
});

it('a TRUSTED user is offered http_request and it runs (the address policy, not trust, stops a private target)', async () => {
  await k.linkUser(705, 'TRUSTED');
  k.tg.pushMessage({ chatId: 705, from: 705, text: 'trusted: fetch the intranet' });
  const [reply] = await k.tg.waitForSent(705);
  const [asked, told] = requestsFor('trusted: fetch the intranet');
  expect(offered(asked!)).toContain('http_request');
  expect(toolResult(told!)).not.toContain('needs TRUSTED trust');
  expect(toolResult(told!)).toContain('10.0.0.1');
  expect(reply!.text).toContain('10.0.0.1');
});
