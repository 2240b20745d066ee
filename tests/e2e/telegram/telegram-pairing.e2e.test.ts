/**
 * Pairing end to end through the Telegram fake (issue 4 acceptance 1), with the default `dm_policy:
 * pairing`: a stranger gets a code in Telegram and is not answered; an ADMIN approves it with `/approve
 * CODE` in their own Telegram chat, or by GraphQL `approvePairing`; the requester is told in Telegram
 * and is answered from then on.
 */
import { PAIRING_CODE_ALPHABET } from '../../../server/modules/pairing';
import { PairingGraphQL } from '../pairing/pairing-fixture';
import { startTelegramKit, type TelegramKit } from './telegram-kit';

const CODE = new RegExp(`\\b([${PAIRING_CODE_ALPHABET}]{8})\\b`);
const APPROVE = `mutation Approve($code: String!) { approvePairing(code: $code) { code status user { trust } } }`;
let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit();
  await k.waitForState('POLLING');
  await k.linkUser(800, 'ADMIN');
});
afterAll(async () => {
  await k?.close();
});

/** A stranger writes; returns the pairing code Telegram delivered to them. */
async function codeFor(userId: number): Promise<string> {
  const before = k.model.chatRequests().length;
  k.tg.pushMessage({ chatId: userId, from: { id: userId, first_name: `Stranger${userId}` }, text: 'hello, may I talk to you?' });
  const [message] = await k.tg.waitForSent(userId);
  expect(k.model.chatRequests().length).toBe(before);
  return CODE.exec(message!.text)![1]!;
}

it('a stranger gets a code and is not answered; /approve CODE from an ADMIN lets them in and tells them', async () => {
  const code = await codeFor(811);
  expect(code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
  expect(k.tg.sentTo(811)[0]!.text).toContain(`/approve ${code}`);

  k.tg.pushMessage({ chatId: 800, from: 800, text: `/approve ${code}` });
  const [confirmation] = await k.tg.waitForSent(800);
  expect(confirmation!.text).toContain(`Approved pairing ${code}`);
  const notices = await k.tg.waitForSent(811, 2);
  expect(notices[1]!.text).toContain('approved your pairing request');

  k.tg.pushMessage({ chatId: 811, from: 811, text: 'now can we talk?' });
  const replies = await k.tg.waitForSent(811, 3);
  expect(replies[2]!.text).toBe('Echo: now can we talk?');
  expect(await k.t.app.services.users.findByIdentity(k.t.app.systemCtx('test'), 'telegram', '811')).toMatchObject({ trust: 'MEMBER' });
});

it('approvePairing by GraphQL lets a stranger in and tells them in Telegram', async () => {
  const code = await codeFor(812);
  const gql = await PairingGraphQL.create(k.t.app);
  const res = await gql.exec(k.t.ownerToken, APPROVE, { code });
  expect(res.data!.approvePairing).toEqual({ code, status: 'APPROVED', user: { trust: 'MEMBER' } });
  const notices = await k.tg.waitForSent(812, 2);
  expect(notices[1]!.text).toContain('approved your pairing request');
  k.tg.pushMessage({ chatId: 812, from: 812, text: 'thanks!' });
  const replies = await k.tg.waitForSent(812, 3);
  expect(replies[2]!.text).toBe('Echo: thanks!');
});
