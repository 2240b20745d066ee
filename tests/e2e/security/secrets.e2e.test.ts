/**
 * Security suite, secrets: one server at debug level with every kind of secret in use (owner and user API
 * tokens, a revoked token, pairing codes, the Telegram bot token against a fake Bot API, a webhook secret,
 * a model API key that the provider echoes in its error, the metrics token) and marked message content
 * (web chat, Telegram, webhook body, the model's replies). None of them appears in the log, in GraphQL
 * error messages or extensions, in answers to users who must not see them, in /metrics, in /readyz or in
 * the audit log. (tests/e2e/no-secrets-in-logs.e2e.test.ts covers tokens in logs of failing SQL.)
 */
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { FakeTelegramServer } from '../../support/fakes/fake-telegram-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { CreateApiTokenDocument, LinkIdentityDocument, MessagesDocument, RevokeApiTokenDocument } from '../../support/graphql/generated';
import { newBotToken } from '../telegram/telegram-kit';
import { lastUserText } from '../pipeline/pipeline-helpers';
import { reportFigures } from '../fault/fault-kit';
import { Message, MessageRole, Session } from '../../../server/modules/sessions';

const MODEL_KEY_ENV = 'MUNINN_SECRETS_SUITE_MODEL_KEY';
const MODEL_KEY = `sk-proj-${randomBytes(24).toString('hex')}`;
const METRICS_TOKEN = `metrics-${randomBytes(20).toString('base64url')}`;
const BOT_TOKEN = newBotToken();
const mark = (what: string) => `${what}-${randomBytes(6).toString('hex').toUpperCase()}`;
/** Message content: what users wrote and what the model answered. */
const CONTENT = {
  web: mark('WEBDIARY'),
  reply: mark('MODELREPLY'),
  telegram: mark('TGDIARY'),
  hook: mark('HOOKBODY'),
  failing: mark('FAILDIARY'),
};

const q = {
  pairing: '{ pairingRequests { code handle status } }',
  approve: 'mutation A($code: String!) { approvePairing(code: $code) { code status } }',
  webhooks: '{ webhooks { name ownerId } }',
  createWebhook: 'mutation W($input: CreateWebhookInput!) { createWebhook(input: $input) { secret } }',
  channels: '{ channels { name state lastError qr } }',
  queues: '{ queues { name jobs(state: FAILED, first: 50) { failedReason } } }',
  plugins: '{ pluginSettings { plugin channel enabled } }',
  audit: '{ auditLog(first: 200) { edges { node { action actor targetId details } } } }',
  tokens: '{ me { apiTokens { name prefix } } users { edges { node { apiTokens { name prefix } } } } }',
};

describe('secrets never leak', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let tg: FakeTelegramServer;
  let owner: GraphQLTestClient;
  let admin: GraphQLTestClient;
  let member: GraphQLTestClient;
  const secrets = new Map<string, string>();
  const answers: Array<{ what: string; text: string }> = [];
  const savedKey = process.env[MODEL_KEY_ENV];

  /** Keeps what an outside party got back, for the leak check at the end. */
  const keep = (what: string, body: unknown) => {
    answers.push({ what, text: typeof body === 'string' ? body : JSON.stringify(body) });
    return body;
  };
  const codeSentTo = async (chatId: number) => {
    const sent = await tg.waitForSent(chatId);
    return /\b([A-HJ-NP-Z2-9]{8})\b/.exec(sent.map((m) => m.text).join('\n'))![1]!;
  };

  beforeAll(async () => {
    // The model key comes from the environment, like in production.
    process.env[MODEL_KEY_ENV] = MODEL_KEY;
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => {
      const text = lastUserText(req);
      // A provider that rejects the key and echoes it, as some do ("Incorrect API key provided: sk-…").
      if (text.includes(CONTENT.failing)) return { error: { status: 401, message: `Incorrect API key provided: ${MODEL_KEY}. You can find your API key at https://platform.example/keys.`, code: 'invalid_api_key', type: 'invalid_request_error' } };
      return FakeReplies.text(`${CONTENT.reply} (you said ${text.length} characters)`);
    });
    tg = await FakeTelegramServer.start({ token: BOT_TOKEN });
    t = await startTestApp({
      config: {
        log: { level: 'debug' },
        metrics: { token: METRICS_TOKEN },
        ai: { max_retries: 0, providers: { fake: { base_url: model.baseUrl, model: 'fake-model', api_key_env: MODEL_KEY_ENV, max_concurrency: 4 } } },
        channels: { telegram: { enabled: true, bot_token: BOT_TOKEN, api_root: tg.url, dm_policy: 'pairing' } },
      },
    });
    owner = t.client(t.ownerToken);
    const adminUser = await createUserWithToken(owner, 'an admin', 'ADMIN');
    const memberUser = await createUserWithToken(owner, 'a member', 'MEMBER');
    admin = t.client(adminUser.token);
    member = t.client(memberUser.token);
    secrets.set('owner token', t.ownerToken);
    secrets.set('ADMIN token', adminUser.token);
    secrets.set('MEMBER token', memberUser.token);
    secrets.set('Telegram bot token', BOT_TOKEN);
    secrets.set('model API key', MODEL_KEY);
    secrets.set('metrics token', METRICS_TOKEN);
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: adminUser.id, channel: 'telegram', handle: '700' } }));
  }, 60_000);

  afterAll(async () => {
    await Promise.all([owner?.close(), admin?.close(), member?.close()]);
    await t?.close();
    await model?.close();
    await tg?.close();
    if (savedKey === undefined) delete process.env[MODEL_KEY_ENV];
    else process.env[MODEL_KEY_ENV] = savedKey;
  });

  it('uses every secret: chat, Telegram pairing, a revoked token, a webhook, a failing model call, /metrics, /readyz', async () => {
    // Web chat with marked content, answered by the model.
    const sent = await send(member, `my diary: ${CONTENT.web}`);
    await eventually(async () => dataOf(await member.http(MessagesDocument, { sessionId: sent.sessionId })).messages.edges.some((e) => e.node.content.includes(CONTENT.reply)), 20_000, 'the web reply');

    // Two strangers on Telegram get pairing codes; one is approved by GraphQL, one stays pending.
    tg.pushMessage({ chatId: 901, from: 901, text: `hello, ${CONTENT.telegram}` });
    const approved = await codeSentTo(901);
    tg.pushMessage({ chatId: 902, from: 902, text: 'let me in' });
    const pending = await codeSentTo(902);
    secrets.set('approved pairing code', approved);
    secrets.set('pending pairing code', pending);
    expect(dataOf(await admin.http<{ approvePairing: { status: string } }, unknown>(q.approve, { code: approved })).approvePairing.status).toBe('APPROVED');
    await tg.waitForSent(901, 2);
    tg.pushMessage({ chatId: 901, from: 901, text: `now: ${CONTENT.telegram}` });
    await eventually(() => tg.sentTo(901).some((m) => m.text.includes(CONTENT.reply)), 20_000, 'the Telegram reply');
    // The Bot API (or a proxy in front of it) fails polling with the token in its description: the
    // channel's lastError, which ADMINs read, must not carry it.
    tg.failNext('getUpdates', 2, { error_code: 401, description: `Unauthorized: bot${BOT_TOKEN} was rejected (token ${BOT_TOKEN})` });
    const errored = await eventually(async () => {
      const list = dataOf(await admin.http<{ channels: Array<{ name: string; lastError: string | null }> }, unknown>(q.channels)).channels;
      return list.find((c) => c.name === 'telegram' && c.lastError) ? list : undefined;
    }, 20_000, 'the Telegram polling error in channels');
    keep('ADMIN channels with a polling error', errored);
    expect(JSON.stringify(errored)).toContain('Unauthorized');

    // A token made, used and revoked; its later use is refused.
    const made = dataOf(await member.http(CreateApiTokenDocument, { userId: (await member.http<{ me: { id: string } }, unknown>('{ me { id } }')).data!.me.id, name: 'short-lived' })).createApiToken;
    secrets.set('revoked token', made.token);
    const shortLived = t.client(made.token);
    expect((await shortLived.http('{ me { id } }')).errors).toBeUndefined();
    dataOf(await member.http(RevokeApiTokenDocument, { id: made.apiToken.id }));
    const revokedAnswer = keep('revoked token, HTTP', await shortLived.http('{ me { id } }')) as { errors?: Array<{ extensions?: { code?: string } }> };
    expect(revokedAnswer.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    keep('revoked token, WebSocket', await shortLived.wsRun('{ me { id } }'));
    await shortLived.close();

    // A webhook: its secret shown once; right, wrong and truncated secrets.
    const hookSecret = dataOf(await owner.http<{ createWebhook: { secret: string } }, unknown>(q.createWebhook, { input: { name: 'deploys' } })).createWebhook.secret;
    secrets.set('webhook secret', hookSecret);
    const post = (authorization: string) => fetch(`${t.url}/hooks/deploys`, { method: 'POST', headers: { 'content-type': 'application/json', authorization }, body: JSON.stringify({ deploy: CONTENT.hook }) });
    expect((await post(`Bearer ${hookSecret}`)).status).toBe(202);
    for (const wrong of [`Bearer ${hookSecret.slice(0, -1)}x`, `Bearer ${t.ownerToken}`, hookSecret]) {
      const res = await post(wrong);
      expect(res.status).toBe(401);
      keep('webhook 401', await res.text());
    }
    await eventually(async () => (await hookReplies()).length > 0, 20_000, 'the webhook turn');

    // A model call refused by the provider, which echoes the key in its error.
    const failing = await send(member, `please keep ${CONTENT.failing}`);
    const failed = await eventually(async () => dataOf(await member.http(MessagesDocument, { sessionId: failing.sessionId })).messages.edges.map((e) => e.node).find((m) => m.role === 'ASSISTANT' && m.status === 'FAILED'), 20_000, 'the failed reply');
    keep('failed reply, to its user', failed);
    // The key really was in use: every model call carried it, and the provider echoed it back.
    expect(model.chatRequests().map((r) => r.headers.authorization)).toEqual(model.chatRequests().map(() => `Bearer ${MODEL_KEY}`));
    expect(model.chatRequests().some((r) => r.status === 401)).toBe(true);

    // /metrics with the right, a wrong and no token; /readyz.
    const scrape = await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(scrape.status).toBe(200);
    keep('/metrics', await scrape.text());
    for (const headers of [{ authorization: `Bearer ${METRICS_TOKEN.slice(0, -2)}zz` }, { authorization: `Bearer ${t.ownerToken}` }, {} as Record<string, string>]) {
      const res = await fetch(`${t.url}/metrics`, { headers });
      expect(res.status).toBeGreaterThanOrEqual(401);
      keep('/metrics refused', await res.text());
    }
    const ready = await fetch(`${t.url}/readyz`);
    keep('/readyz', await ready.text());
  }, 120_000);

  async function hookReplies() {
    const ctx = t.app.systemCtx('test');
    const sessions = await t.app.db.repo(ctx, Session).findBy({ key: 'hook:deploys' });
    return sessions.length ? t.app.db.repo(ctx, Message).findBy({ sessionId: sessions[0]!.id, role: MessageRole.ASSISTANT }) : [];
  }

  it('GraphQL: what a MEMBER may not read is FORBIDDEN, and no answer or error carries a secret', async () => {
    for (const [name, query] of Object.entries({ pairing: q.pairing, webhooks: q.webhooks, channels: q.channels, queues: q.queues, plugins: q.plugins, audit: q.audit })) {
      const res = (await member.http<unknown, unknown>(query)) as { data?: unknown; errors?: Array<{ extensions?: { code?: string } }> };
      keep(`MEMBER ${name}`, res);
      expect([name, res.errors?.[0]?.extensions?.code]).toEqual([name, 'FORBIDDEN']);
    }
    // Errors with secrets in the input: the code of a pairing request, a token as an id.
    keep('MEMBER approvePairing', await member.http(q.approve, { code: secrets.get('pending pairing code') }));
    keep('ADMIN approvePairing of a token', await admin.http(q.approve, { code: t.ownerToken }));
    keep('ADMIN revokeApiToken of a token', await admin.http(RevokeApiTokenDocument, { id: secrets.get('webhook secret')! }));
    // What the ADMIN and the OWNER may read never holds a secret either (pairing codes are theirs to see).
    for (const [name, query] of Object.entries({ webhooks: q.webhooks, channels: q.channels, queues: q.queues, tokens: q.tokens })) {
      keep(`ADMIN ${name}`, dataOf(await admin.http<unknown, unknown>(query)));
      keep(`OWNER ${name}`, dataOf(await owner.http<unknown, unknown>(query)));
    }
    keep('MEMBER tokens', await member.http('{ me { apiTokens { name prefix } } }'));
    const pairing = dataOf(await admin.http<{ pairingRequests: Array<{ code: string }> }, unknown>(q.pairing)).pairingRequests;
    expect(pairing.map((p) => p.code)).toEqual(expect.arrayContaining([secrets.get('pending pairing code')]));
  });

  it('the audit log holds no secret and no message content', async () => {
    const edges = dataOf(await owner.http<{ auditLog: { edges: Array<{ node: { action: string } }> } }, unknown>(q.audit)).auditLog.edges;
    // The run did audit the token, pairing and webhook steps.
    const actions = edges.map((e) => e.node.action);
    for (const action of ['token.create', 'token.revoke', 'webhook.create']) expect(actions).toContain(action);
    expect(actions.some((a) => a.startsWith('pairing.'))).toBe(true);
    keep('audit log (OWNER)', edges);
    const rows = await t.app.dataSource.query('SELECT * FROM audit_log');
    keep('audit_log table', rows);
  });

  it('the log (debug level) was written and holds no secret and no message content', () => {
    const entries = t.logs.entries();
    expect(entries.some((e) => e.level === 20)).toBe(true);
    expect(entries.length).toBeGreaterThan(50);
    keep('log', t.logs.text);
  });

  it('no secret and no message content anywhere an outsider or a log reader looks', () => {
    const leaks: string[] = [];
    const outsiders = answers.filter((a) => !a.what.startsWith('failed reply'));
    for (const [name, value] of secrets) {
      expect(value.length).toBeGreaterThanOrEqual(8);
      // The value and any recognisable part of it (a token cut in the middle, its tail).
      const parts = value.length > 20 ? [value, value.slice(-12)] : [value];
      for (const a of answers) {
        if (name.includes('pairing code') && (a.what.startsWith('ADMIN') || a.what.startsWith('OWNER'))) continue;
        if (parts.some((p) => a.text.includes(p))) leaks.push(`${name} in ${a.what}`);
      }
    }
    for (const [name, value] of Object.entries(CONTENT)) {
      for (const a of outsiders) if (a.text.includes(value) && !(name === 'failing' && a.what.startsWith('failed reply'))) leaks.push(`message content (${name}) in ${a.what}`);
    }
    reportFigures('security-suite', 'secrets', { secrets: secrets.size, contentMarkers: Object.keys(CONTENT).length, placesChecked: answers.length, logLines: t.logs.lines.length, leaks: leaks.length });
    expect(leaks).toEqual([]);
  });
});
