/**
 * Telegram and WhatsApp set up from the console (issue 28): an OWNER enters the bot token (checked with
 * getMe against the fake Bot API, stored sealed) or enables WhatsApp (the fake socket offers a QR, then
 * opens); the transport starts in the running server, without a restart, and answers messages. Removing
 * the set-up stops it again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { fakeSocketFactory } from '../../support/fakes/fake-whatsapp-socket';
import { createUserWithToken, eventually } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import {
  ChannelSetupsDocument,
  ChannelStatesDocument,
  EnableWhatsAppDocument,
  LinkIdentityDocument,
  RemoveChannelSetupDocument,
  SetTelegramBotDocument,
} from '../../support/graphql/generated';
import { newBotToken } from '../telegram/telegram-kit';
import { ChannelSetup } from '../../../server/modules/channel-setup';

jest.setTimeout(60_000);

describe('channels set up from the console', () => {
  const token = newBotToken();
  const wa = fakeSocketFactory();
  let tg: FakeTelegramServer;
  let model: FakeOpenAIServer;
  let t: TestApp;
  let owner: GraphQLTestClient;
  let authRoot: string;

  const channel = async (name: string) => dataOf(await owner.http(ChannelStatesDocument, {})).channels.find((c) => c.name === name);
  const setup = async (name: string) => dataOf(await owner.http(ChannelSetupsDocument, {})).channelSetups.find((c) => c.channel === name)!;

  beforeAll(async () => {
    [tg, model] = await Promise.all([FakeTelegramServer.start({ token }), FakeOpenAIServer.start()]);
    authRoot = mkdtempSync(path.join(os.tmpdir(), 'muninn-setup-'));
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } },
        // Neither platform is on in the config; the Bot API server is (a self-hosted one, here the fake).
        channels: { telegram: { enabled: false, api_root: tg.url }, whatsapp: { enabled: false, per_chat_per_second: 50, per_minute: 1000 } },
        log: { level: 'debug' },
      },
      channelSdk: { whatsAppSocket: wa.make },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner?.close();
    await t?.close();
    await Promise.all([tg?.close(), model?.close()]);
    rmSync(authRoot, { recursive: true, force: true });
  });

  it('Telegram: a refused token is not stored; an accepted one starts the bot at once and it answers', async () => {
    expect(await setup('telegram')).toMatchObject({ source: 'NONE', secretSet: false, label: null });
    expect(await channel('telegram')).toBeUndefined();

    // Well-formed but not this bot's: the fake Bot API answers getMe with 401.
    const refused = await owner.http(SetTelegramBotDocument, { botToken: newBotToken() });
    expect(refused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(refused.errors?.[0]?.message).toMatch(/Telegram did not accept this token: 401 Unauthorized/);
    expect(await setup('telegram')).toMatchObject({ source: 'NONE', secretSet: false });

    const stored = dataOf(await owner.http(SetTelegramBotDocument, { botToken: ` ${token}\n` })).setTelegramBot;
    expect(stored).toMatchObject({ channel: 'telegram', source: 'CONSOLE', secretSet: true, label: '@muninn_test_bot' });
    expect(stored.updatedById).toBeTruthy();
    // Sealed at rest.
    const row = await t.app.db.repo(t.app.systemCtx('test'), ChannelSetup).findOneByOrFail({ channel: 'telegram' });
    expect(row.sealed).toMatch(/^v1:/);
    expect(row.sealed).not.toContain(token.split(':')[1]);

    await eventually(async () => (await channel('telegram'))?.state === 'POLLING', 15_000, 'telegram polling');
    expect(await channel('telegram')).toMatchObject({ enabled: true, lastError: null });

    const member = await createUserWithToken(owner, 'Tina Telegram', 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: member.id, channel: 'telegram', handle: '424242' } }));
    tg.pushMessage({ chatId: 424242, from: 424242, text: 'hello from telegram' });
    const [reply] = await tg.waitForSent(424242, 1, 15_000);
    expect(reply!.text.length).toBeGreaterThan(0);
    expect(JSON.stringify(model.chatRequests().at(-1)?.body?.messages)).toContain('hello from telegram');
    // Its outbound queue joins the Queues page.
    const queues = dataOf(await owner.http<{ queues: Array<{ name: string }> }, unknown>('{ queues { name } }' as never)).queues.map((q) => q.name);
    expect(queues).toContain('outbound.telegram');
  });

  it('Telegram: removing the set-up stops the bot (the config file does not turn it on)', async () => {
    expect(dataOf(await owner.http(RemoveChannelSetupDocument, { channel: 'telegram' })).removeChannelSetup).toBe(true);
    await eventually(async () => (await channel('telegram')) === undefined, 15_000, 'telegram removed');
    expect(t.app.chat!.channels.isStarted('telegram')).toBe(false);
    expect(await setup('telegram')).toMatchObject({ source: 'NONE', secretSet: false });
    expect(dataOf(await owner.http(RemoveChannelSetupDocument, { channel: 'telegram' })).removeChannelSetup).toBe(false);
  });

  it('WhatsApp: enabling it offers the linking QR; once scanned it connects and answers', async () => {
    expect(await setup('whatsapp')).toMatchObject({ source: 'NONE' });
    expect(dataOf(await owner.http(EnableWhatsAppDocument, {})).enableWhatsApp).toMatchObject({ channel: 'whatsapp', source: 'CONSOLE', secretSet: false });
    await eventually(() => wa.sockets.length > 0, 15_000, 'a WhatsApp socket');
    expect((await channel('whatsapp'))?.state).toBe('NEEDS_LINK');
    wa.latest().qr('2@console-qr-code,abc,def');
    await eventually(async () => (await channel('whatsapp'))?.qr === '2@console-qr-code,abc,def', 10_000, 'the QR in channels');
    wa.latest().open();
    await eventually(async () => (await channel('whatsapp'))?.state === 'CONNECTED', 10_000, 'whatsapp connected');
    expect((await channel('whatsapp'))?.qr).toBeNull();

    const jid = '491700001234@s.whatsapp.net';
    const member = await createUserWithToken(owner, 'Walt WhatsApp', 'MEMBER');
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: member.id, channel: 'whatsapp', handle: jid } }));
    wa.latest().upsert([{ key: { remoteJid: jid, fromMe: false, id: 'SETUP1' }, message: { conversation: 'hello from whatsapp' }, pushName: 'Walt', messageTimestamp: Math.floor(Date.now() / 1000) }]);
    await eventually(() => wa.latest().sent.some((m) => m.jid === jid), 15_000, 'the WhatsApp reply');
    expect(JSON.stringify(model.chatRequests().at(-1)?.body?.messages)).toContain('hello from whatsapp');
  });

  it('the set-up changes are audited without the token', async () => {
    const log = JSON.stringify(
      await t.app.db.dataSource.query(`SELECT action, details FROM audit_log WHERE action LIKE 'channel.setup%' ORDER BY id`),
    );
    expect(log).toContain('channel.setup');
    expect(log).toContain('channel.setup.remove');
    expect(log).toContain('@muninn_test_bot');
    expect(log).not.toContain(token);
    expect(t.logs.text).not.toContain(token);
  });
});
