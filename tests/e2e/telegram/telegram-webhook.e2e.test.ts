/**
 * Webhook mode (`channels.telegram.webhook_url` set): the transport registers `<url>/hooks/telegram/<secret>`
 * with a secret token, never polls, and the HTTP server accepts updates on that path only with the
 * `X-Telegram-Bot-Api-Secret-Token` header Telegram would send.
 */
import { startTelegramKit, type TelegramKit } from './telegram-kit';

const PUBLIC_URL = 'https://muninn.example.test/';
let k: TelegramKit;

beforeAll(async () => {
  k = await startTelegramKit({ telegram: { webhook_url: PUBLIC_URL } });
  await k.waitForState('WEBHOOK');
});
afterAll(async () => {
  await k?.close();
});

function post(path: string, body: unknown, secret?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (secret !== undefined) headers['x-telegram-bot-api-secret-token'] = secret;
  return fetch(`${k.t.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

it('registers the webhook with a secret path and token, and does not poll', () => {
  const hook = k.transport().webhook?.();
  expect(hook?.path).toMatch(/^\/hooks\/telegram\/[A-Za-z0-9_-]{20,}$/);
  const set = k.tg.callsOf('setWebhook');
  expect(set).toHaveLength(1);
  expect(set[0]!.params.url).toBe(`https://muninn.example.test${hook!.path}`);
  expect(String(set[0]!.params.secret_token)).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  expect(k.tg.callsOf('getUpdates')).toHaveLength(0);
  expect(k.tg.callsOf('deleteWebhook')).toHaveLength(0);
  expect(k.transport().status()).toMatchObject({ state: 'WEBHOOK', lastError: null });
});

it('processes an update posted with the right secret and rejects a wrong or missing one', async () => {
  await k.linkUser(401);
  const path = k.transport().webhook!()!.path;
  const secret = k.tg.webhook!.secretToken!;
  const before = k.model.chatRequests().length;

  const forged = { update_id: 1, message: k.tg.buildMessage({ chatId: 401, from: 401, text: 'forged message' }) };
  expect((await post(path, forged, 'not-the-secret')).status).toBe(401);
  expect((await post(path, forged)).status).toBe(401);
  expect((await post(path, forged, `${secret}x`)).status).toBe(401);

  const genuine = { update_id: 2, message: k.tg.buildMessage({ chatId: 401, from: 401, text: 'genuine message' }) };
  const res = await post(path, genuine, secret);
  expect(res.status).toBe(200);
  const [reply] = await k.tg.waitForSent(401);
  expect(reply!.text).toContain('genuine message');
  expect(k.model.chatRequests().length).toBe(before + 1);
  expect(JSON.stringify(k.model.chatRequests().map((r) => r.body))).not.toContain('forged message');
  // Telegram retries deliveries: the same update again is accepted but answered only once.
  expect((await post(path, genuine, secret)).status).toBe(200);
  const next = { update_id: 3, message: k.tg.buildMessage({ chatId: 401, from: 401, text: 'next message' }) };
  expect((await post(path, next, secret)).status).toBe(200);
  const replies = await k.tg.waitForSent(401, 2);
  expect(replies[1]!.text).toContain('next message');
  expect(k.tg.sentTo(401)).toHaveLength(2);
  expect(k.model.chatRequests().length).toBe(before + 2);
});

it('answers 404 on other hook paths and 400 on a body that is not an update', async () => {
  const secret = k.tg.webhook!.secretToken!;
  expect((await post('/hooks/telegram/guessed-path', { update_id: 4 }, secret)).status).toBe(404);
  expect((await post(k.transport().webhook!()!.path, { hello: 'world' }, secret)).status).toBe(400);
});

it('keeps the webhook secrets out of the logs', () => {
  const path = k.transport().webhook!()!.path;
  expect(k.t.logs.text).not.toContain(path.split('/').pop()!);
  expect(k.t.logs.text).not.toContain(k.tg.webhook!.secretToken!);
  expect(k.t.logs.text).not.toContain(k.token);
});
