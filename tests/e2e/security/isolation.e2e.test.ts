/**
 * Security suite, isolation: 20 users chat in their DMs (web, sendMessage) and in 3 Telegram groups. Each
 * has a private memory that recall brings into their own DM prompts, and each message carries its
 * sender's marker. No prompt, stored reply, live subscription or export of one user
 * holds another user's DM marker, and no GraphQL answer lets a user reach another's sessions, messages or
 * events (real ids, guessed ids, `afterSeq` on someone else's session).
 */
import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import type { GraphQLTestClient } from '../../support/graphql-client';
import { EventCollector } from '../../support/session-events';
import { CreateMemoryDocument, LinkIdentityDocument } from '../../support/graphql/generated';
import { Message, MessageRole } from '../../../server/modules/sessions';
import { lastUserText, registerRecorderChannel } from '../pipeline/pipeline-helpers';
import { reportFigures } from '../fault/fault-kit';

const USERS = 20;
const TURNS = Number(process.env.ISOLATION_TURNS ?? 30);
const GROUPS = [0, 1, 2].map((g) => ({ chatId: `iso-group-${g}`, members: [g * 6, g * 6 + 1, g * 6 + 2, g * 6 + 3] }));

describe('isolation: 20 users, DMs and 3 groups', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;
  const users: Array<{ id: string; client: GraphQLTestClient; marker: string; memoryMarker: string; sessionId?: string }> = [];

  beforeAll(async () => {
    // One streamed piece per reply: the checks need every kind of event, not many deltas of each (CPU goes to turns).
    model = await FakeOpenAIServer.start({ chunks: 1 });
    model.setDefault((req) => ({ text: `Noted: ${lastUserText(req).slice(0, 200)}` }));
    recorder = await ChatRecorderServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        channels: { telegram: { group_policy: 'open' } },
        log: { level: 'warn' },
      },
    });
    await registerRecorderChannel(t, 'telegram', recorder);
    const owner = t.client(t.ownerToken);
    for (let u = 0; u < USERS; u++) {
      const created = await createUserWithToken(owner, `iso user ${u}`, 'MEMBER');
      await owner.http(LinkIdentityDocument, { input: { userId: created.id, channel: 'telegram', handle: `iso-tg-${u}` } });
      users.push({ id: created.id, client: t.client(created.token), marker: `SECRET${u}X${randomBytes(3).toString('hex').toUpperCase()}`, memoryMarker: `LOCKER${u}Y${randomBytes(3).toString('hex').toUpperCase()}` });
    }
    // Recall is on: each user has a private memory that their DM turns recall (and nobody else's may).
    await t.app.services.memory.ready;
    for (const [u, user] of users.entries()) {
      const saved = await user.client.http(CreateMemoryDocument, { input: { content: `The locker code of iso user ${u} is ${user.memoryMarker}.` } });
      if (saved.errors?.length) throw new Error(`createMemory failed: ${JSON.stringify(saved.errors)}`);
    }
    await owner.close();
  }, 120_000);

  afterAll(async () => {
    for (const u of users) await u.client.close();
    await t.close();
    await model.close();
    await recorder.close();
  });

  it(`${USERS} users × ${TURNS} turns: no cross-user leak in prompts, replies, subscriptions, exports or GraphQL`, async () => {
    const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
    // First turn opens each DM session; a subscription per user then watches it live.
    for (const u of users) u.sessionId = (await send(u.client, `hello, my code is ${u.marker}`)).sessionId;
    const collectors = users.map((u) => new EventCollector(u.client.wsClient(), u.sessionId!, 0));
    const groupSessions = new Set<string>();
    let groupTurns = 0;
    for (let turn = 1; turn < TURNS; turn++) {
      await Promise.all(users.map((u) => send(u.client, `turn ${turn}: what is my locker code? remember ${u.marker}`)));
      for (const g of GROUPS) {
        const u = g.members[turn % g.members.length]!;
        const handled = await t.app.chat!.pipeline.handle({ channel: 'telegram', chatId: g.chatId, chatKind: 'group', sender: { handle: `iso-tg-${u}` }, text: `@muninn group turn ${turn} from ${g.chatId}`, platformMessageId: `${g.chatId}-${turn}`, mentionsBot: true });
        if (handled.session) groupSessions.add(handled.session.id);
        if (handled.ticket) groupTurns++;
      }
    }
    const expected = USERS * TURNS;
    await eventually(async () => (await repo.countBy({ role: MessageRole.ASSISTANT })) >= expected + groupTurns, 120_000, 'every turn answered');

    const leaks: string[] = [];
    const markerOwner = (text: string) => users.filter((u) => text.includes(u.marker) || text.includes(u.memoryMarker));
    let ownRecalls = 0;
    // Prompts: a request for one user's DM names no other user's marker; a group prompt names none.
    for (const req of model.chatRequests()) {
      const body = JSON.stringify(req.body?.messages ?? []);
      const owners = markerOwner(body);
      if (owners.length > 1) leaks.push(`prompt with ${owners.length} users' markers`);
      if (lastUserText(req).includes('group turn') && owners.length) leaks.push('a DM marker in a group prompt');
      if (owners.length === 1 && body.includes(owners[0]!.memoryMarker)) ownRecalls++;
    }
    // Stored replies and live events.
    for (const [i, u] of users.entries()) {
      const rows = await repo.findBy({ sessionId: u.sessionId! });
      for (const r of rows) if (markerOwner(r.content).some((o) => o !== u)) leaks.push(`user ${i}'s transcript holds another marker`);
      for (const e of collectors[i]!.events) if (markerOwner(JSON.stringify(e)).some((o) => o !== u)) leaks.push(`user ${i}'s subscription got another marker`);
    }
    // GraphQL: someone else's session, messages, export, events; guessed ids.
    let probes = 0;
    let refused = 0;
    const codes = new Set<string>();
    for (const [i, u] of users.entries()) {
      const other = users[(i + 1) % USERS]!;
      const queries: Array<[string, unknown]> = [
        ['query S($id: ID!) { session(id: $id) { id } }', { id: other.sessionId }],
        ['query M($id: ID!) { messages(sessionId: $id) { edges { node { content } } } }', { id: other.sessionId }],
        ['mutation E($id: ID!) { exportSession(id: $id) }', { id: other.sessionId }],
        ['query S($id: ID!) { session(id: $id) { id } }', { id: randomBytes(8).toString('hex') }],
        ['query M($id: ID!) { messages(sessionId: $id) { totalCount } }', { id: String(Number.parseInt(other.sessionId!, 10) + 1 || 'x') }],
        ['query U($id: ID!) { sessions(filter: { userId: $id }) { totalCount } }', { id: other.id }],
      ];
      for (const [q, v] of queries) {
        probes++;
        const res = await u.client.http<unknown, unknown>(q, v);
        const text = JSON.stringify(res);
        if (markerOwner(text).some((o) => o !== u)) leaks.push(`GraphQL answer to user ${i} holds another marker`);
        if (res.errors?.length) {
          refused++;
          codes.add(String(res.errors[0]!.extensions?.code));
        } else if (q.includes('sessions(filter')) leaks.push('sessions of another user listed');
      }
      const own = await u.client.http<{ sessions: { totalCount: number; edges: Array<{ node: { userId: string } }> } }, unknown>('{ sessions { totalCount edges { node { userId } } } }');
      if (own.data?.sessions.edges.some((e) => e.node.userId !== u.id)) leaks.push(`user ${i} lists another user's session`);
      const spy = new EventCollector(u.client.wsClient(), other.sessionId!, 0);
      await eventually(() => spy.errors.length > 0 || spy.events.length > 0, 10_000, 'an answer to a foreign subscription');
      probes++;
      if (spy.events.length) leaks.push(`user ${i} received events of another session`);
      else refused++;
      spy.stop();
    }
    for (const c of collectors) c.stop();
    const exportOwn = await users[0]!.client.http<{ exportSession: string }, unknown>('mutation E($id: ID!) { exportSession(id: $id) }', { id: users[0]!.sessionId });
    if (markerOwner(exportOwn.data?.exportSession ?? '').some((o) => o !== users[0])) leaks.push('export holds another marker');
    reportFigures('security-suite', 'isolation', {
      users: USERS,
      turns: TURNS,
      dmTurns: expected,
      groups: GROUPS.length,
      groupSessions: groupSessions.size,
      groupTurns,
      prompts: model.chatRequests().length,
      graphqlProbes: probes,
      refused,
      refusalCodes: [...codes],
      ownRecalls,
      leaks: leaks.length,
    });
    expect(leaks).toEqual([]);
    // Recall did bring each user's own memory into their prompts (so the leak check above means something).
    expect(ownRecalls).toBeGreaterThan(USERS);
    expect(refused).toBe(probes);
    expect(groupSessions.size).toBe(GROUPS.length);
    expect(exportOwn.data?.exportSession).toContain(users[0]!.marker);
  }, 300_000);
});
