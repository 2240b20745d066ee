import { randomBytes } from 'node:crypto';
import type { ChannelStatus, ChannelTransport } from '../../../server/channels/channel.types';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer, type FakeSentMessage } from '../../support/fakes/fake-telegram-server';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { CreateUserDocument, LinkIdentityDocument, type TrustLevel } from '../../support/graphql/generated';
import { startTestApp, type TestApp } from '../../support/test-app';

/** A bot token shaped like a real one, new per test file. */
export function newBotToken(): string {
  return `${100000 + (randomBytes(3).readUIntBE(0, 3) % 800000)}:AA${randomBytes(24).toString('base64url').slice(0, 33)}`;
}

export interface TelegramKit {
  t: TestApp;
  tg: FakeTelegramServer;
  model: FakeOpenAIServer;
  owner: GraphQLTestClient;
  token: string;
  /** Every status the Telegram transport reported, in order. */
  statuses: ChannelStatus[];
  transport(): ChannelTransport;
  /** Creates a user with this Telegram user id as identity (senders must be known: pairing is not ours). */
  linkUser(telegramUserId: number, trust?: TrustLevel): Promise<string>;
  waitForState(state: ChannelStatus['state'], timeoutMs?: number): Promise<void>;
  /**
   * Sends a message in a DM and waits for the model's answer to it; returns what the chat got before
   * that answer. A chat's turns and deliveries run in order, so anything still on its way to the chat
   * (a later chunk, a retry, a second answer) arrives before the fence: no need to wait and see.
   */
  fence(chatId: number): Promise<FakeSentMessage[]>;
  /** Like `fence` with a notice handed to the chat's mailbox (for chats whose messages get no answer). */
  noticeFence(chatId: number): Promise<FakeSentMessage[]>;
  close(): Promise<void>;
}

/** A real server with the Telegram channel on, against a fake Bot API and a fake model. */
export async function startTelegramKit(options: { telegram?: Record<string, unknown>; ai?: Record<string, unknown>; config?: Record<string, unknown> } = {}): Promise<TelegramKit> {
  const token = newBotToken();
  const tg = await FakeTelegramServer.start({ token });
  const model = await FakeOpenAIServer.start({ chunks: 2 });
  const t = await startTestApp({
    config: {
      ...options.config,
      ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4, ...options.ai } } },
      channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url, ...options.telegram } },
    },
  });
  const owner = t.client(t.ownerToken);
  const statuses: ChannelStatus[] = [];
  const channels = t.app.chat!.channels;
  channels.onStatus((s) => {
    if (s.channel === 'telegram') statuses.push(s);
  });
  const transport = () => channels.get('telegram')!;
  return {
    t,
    tg,
    model,
    owner,
    token,
    statuses,
    transport,
    linkUser: async (telegramUserId, trust = 'MEMBER') => {
      const user = dataOf(await owner.http(CreateUserDocument, { input: { displayName: `tg ${telegramUserId}`, trust } })).createUser;
      dataOf(await owner.http(LinkIdentityDocument, { input: { userId: user.id, channel: 'telegram', handle: String(telegramUserId) } }));
      return user.id;
    },
    waitForState: async (state, timeoutMs = 10_000) => {
      await tg.waitFor(() => transport().status().state === state, `telegram state ${state}`, timeoutMs);
    },
    fence: async (chatId) => {
      const marker = `fence ${randomBytes(4).toString('hex')}`;
      tg.pushMessage({ chatId, from: chatId, text: marker });
      await tg.waitFor(() => tg.sentTo(chatId).some((m) => m.text.includes(marker)), `the answer to "${marker}"`);
      const sent = tg.sentTo(chatId);
      return sent.slice(0, sent.findIndex((m) => m.text.includes(marker)));
    },
    noticeFence: async (chatId) => {
      const marker = `fence ${randomBytes(4).toString('hex')}`;
      await t.app.chat!.delivery.notify(t.app.systemCtx('fence'), { channel: 'telegram', chatId: String(chatId), key: `fence:${marker}` }, marker);
      await tg.waitFor(() => tg.sentTo(chatId).some((m) => m.text === marker), `the notice "${marker}"`);
      const sent = tg.sentTo(chatId);
      return sent.slice(0, sent.findIndex((m) => m.text === marker));
    },
    close: async () => {
      await owner.close();
      await t.close();
      await tg.close();
      await model.close();
    },
  };
}

/** The user-visible text of the chat requests the fake model received. */
export function modelSaw(model: FakeOpenAIServer): string[] {
  return model.chatRequests().map((r) => JSON.stringify(r.body?.messages ?? []));
}
