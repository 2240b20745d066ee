/**
 * No token or secret appears in logs (issue 2 acceptance 4): a debug-level run that uses the owner token, a
 * fresh token, an invalid token, a Telegram bot token from config and a model API key from the environment,
 * including requests that fail inside the server with those secrets in their input.
 */
import { randomBytes } from 'node:crypto';
import { dataOf, type GraphQLTestClient } from '../support/graphql-client';
import {
  CreateApiTokenDocument,
  CreateMemoryDocument,
  MeDocument,
  MemoriesDocument,
  MessagesDocument,
  UsersDocument,
} from '../support/graphql/generated';
import { startTestApp, type TestApp } from '../support/test-app';

const BOT_TOKEN = `7${randomBytes(4).readUInt32BE() % 1_000_000_000}:AA${randomBytes(24).toString('base64url').slice(0, 33)}`;
const MODEL_API_KEY = `sk-test-${randomBytes(20).toString('hex')}`;
const INVALID_TOKEN = `mun_${randomBytes(32).toString('base64url')}`;

let t: TestApp;
let freshToken: string;
const savedEnv = { key: process.env.MUNINN_MODEL_API_KEY, url: process.env.MUNINN_MODEL_BASE_URL };

beforeAll(async () => {
  // The model key is read from the environment, like in production.
  process.env.MUNINN_MODEL_API_KEY = MODEL_API_KEY;
  process.env.MUNINN_MODEL_BASE_URL = 'http://127.0.0.1:9/v1';
  t = await startTestApp({
    config: {
      log: { level: 'debug' },
      ai: { max_retries: 0 },
      channels: { telegram: { bot_token: BOT_TOKEN } },
    },
    env: {
      MUNINN_MODEL_BASE_URL: 'http://127.0.0.1:9/v1',
      MUNINN_MODEL: 'test-model',
      MUNINN_MODEL_API_KEY: MODEL_API_KEY,
    },
  });
  expect(t.config.channels.telegram.bot_token).toBe(BOT_TOKEN);
  expect(t.config.ai.providers.env?.api_key_env).toBe('MUNINN_MODEL_API_KEY');
});

afterAll(async () => {
  await t.close();
  for (const [name, value] of [
    ['MUNINN_MODEL_API_KEY', savedEnv.key],
    ['MUNINN_MODEL_BASE_URL', savedEnv.url],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

const SEND_MESSAGE =
  'mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { sessionId messageId status } }';
type SendResult = { sendMessage: { sessionId: string; messageId: string | null; status: string } };

/** The assistant's answer in a session, once the turn has finished. */
async function waitForReply(
  client: GraphQLTestClient,
  sessionId: string,
): Promise<{ role: string; status: string; content: string }> {
  for (let i = 0; i < 200; i++) {
    const edges = dataOf(await client.http(MessagesDocument, { sessionId })).messages.edges;
    const reply = edges.map((e) => e.node).find((m) => m.role === 'ASSISTANT');
    if (reply) return reply;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the turn did not finish within 20 s');
}

it('uses the secrets in successful, refused and failing requests', async () => {
  const owner = t.client(t.ownerToken);
  const ownerId = dataOf(await owner.http(MeDocument)).me.id;
  dataOf(await owner.wsRun(MeDocument));
  dataOf(await owner.http(UsersDocument, {}));
  freshToken = dataOf(await owner.http(CreateApiTokenDocument, { userId: ownerId, name: 'fresh' }))
    .createApiToken.token;

  const fresh = t.client(freshToken);
  dataOf(await fresh.http(CreateMemoryDocument, { input: { content: 'plain note' } }));
  dataOf(await fresh.wsRun(MemoriesDocument, {}));

  // A chat turn: the model call goes out with the API key and fails (nothing listens on port 9).
  const sent = dataOf(
    await fresh.http<SendResult, unknown>(SEND_MESSAGE, { input: { text: 'hello, model' } }),
  ).sendMessage;
  const reply = await waitForReply(fresh, sent.sessionId);
  expect(reply.status).toBe('FAILED');
  expect(reply.content).not.toContain(MODEL_API_KEY);

  // Refused: an invalid token, over both transports, and a malformed header.
  const invalid = t.client(INVALID_TOKEN);
  expect((await invalid.http(MeDocument)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  expect((await invalid.wsRun(MeDocument)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  const malformed = await t.client().http(MeDocument, {}, { authorization: `Token ${INVALID_TOKEN}` });
  expect(malformed.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');

  // Failing inside the server, with the secrets in the input: the logged error carries the SQL parameters.
  await t.app.dataSource.query('DROP TABLE memories');
  for (const secret of [BOT_TOKEN, MODEL_API_KEY, t.ownerToken, freshToken, INVALID_TOKEN]) {
    const failed = await fresh.http(CreateMemoryDocument, { input: { content: `remember ${secret}` } });
    expect(failed.errors?.[0]?.extensions?.code).toBe('INTERNAL_SERVER_ERROR');
  }
  await Promise.all([owner.close(), fresh.close(), invalid.close()]);
});

it('wrote debug logs of that run', () => {
  const entries = t.logs.entries();
  expect(entries.some((e) => e.level === 20 && e.msg === 'graphql operation' && e.transport === 'http')).toBe(
    true,
  );
  expect(entries.some((e) => e.level === 20 && e.msg === 'graphql operation' && e.transport === 'ws')).toBe(
    true,
  );
  expect(entries.filter((e) => e.msg === 'unexpected error in GraphQL operation')).toHaveLength(5);
  // The failures were logged with their details, but not with what the user wrote (the SQL parameters).
  expect(t.logs.text).toMatch(/no such table: memories|relation \\?"memories\\?" does not exist/);
  expect(t.logs.text).not.toContain('remember ');
  expect(t.logs.text).toContain('[content omitted]');
});

it.each([
  ['the owner token', () => t.ownerToken],
  ['a freshly created token', () => freshToken],
  ['an invalid token', () => INVALID_TOKEN],
  ['the Telegram bot token (config)', () => BOT_TOKEN],
  ['the model API key (env MUNINN_MODEL_API_KEY)', () => MODEL_API_KEY],
])('%s does not appear in the logs', (_name, secret) => {
  const value = secret();
  expect(value.length).toBeGreaterThan(20);
  expect(t.logs.text).not.toContain(value);
  // Nor a recognisable part of it (e.g. a token cut in the middle).
  expect(t.logs.text).not.toContain(value.slice(-16));
});
