import { randomBytes } from 'node:crypto';
import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { CreateMemoryDocument, LinkIdentityDocument, MemoriesDocument, SearchMemoriesDocument } from '../../support/graphql/generated';
import { registerRecorderChannel } from '../pipeline/pipeline-helpers';
import { callKind, lastUserText, scriptModel } from '../memory-lifecycle/summarizer-model';
import { prng } from './memory-corpus';
import { waitForQueuesIdle } from '../../support/queue-idle';
import { QUEUES } from '../../../jobs/queues';

type Context = { kind: 'dm'; user: number } | { kind: 'group'; group: number };

const USERS = 5;
const GROUPS = [
  { chatId: 'grp-iso-0', members: [0, 1, 2] },
  { chatId: 'grp-iso-1', members: [2, 3, 4] },
];
const TURNS = 40;
const QUESTION = 'what is the secret project codename?';
const marker = (prefix: string) => `${prefix}${randomBytes(4).toString('hex').toUpperCase()}`;

/**
 * Issue 5, acceptance 2: five users (one of them an ADMIN) and two groups chat in random order through the
 * real pipeline (web DMs through sendMessage, group chats through the inbound pipeline), asking what every
 * memory answers; the fake model sometimes searches memory with a tool. No prompt the model is sent — turns,
 * tool rounds, summarizer calls — and no GraphQL answer to a non-ADMIN ever holds a memory the sender may not
 * see: another user's private memory, a group's memory outside that group, any private memory in a group,
 * or a reminder injected by recall. Every memory carries a unique marker word.
 */
describe('memory isolation across users and groups', () => {
  const seed = Number(process.env.ISOLATION_SEED ?? Date.now() % 1_000_000);
  const rand = prng(seed);
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;
  let owner: GraphQLTestClient;
  const users: Array<{ id: string; token: string; client: GraphQLTestClient; name: string; admin: boolean }> = [];
  const privateMarkers: string[] = [];
  const reminderMarkers: string[] = [];
  const groupMarkers: string[] = [];
  const globalMarker = marker('GLOBALCODE');
  const contexts = new Map<string, Context>();

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    recorder = await ChatRecorderServer.start();
    scriptModel(model, {
      extract: () => '{"memories":[]}',
      main: (req) => {
        const text = lastUserText(req);
        const hasResults = (req.body?.messages ?? []).some((m) => m.role === 'tool');
        if (text.includes('[tool]') && !hasResults) return FakeReplies.toolCalls([{ name: 'memory_search', arguments: { query: 'secret project codename reminder' } }]);
        return { text: `${hasResults ? 'Searched' : 'Echo'}: ${text}` };
      },
    });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } }, background_grace_ms: 50 },
        // Exchanges are condensed as soon as the summarizer is free (several of a session in one call).
        session: { summarizer_idle_seconds: 0 },
        channels: { telegram: { group_policy: 'open' } },
        log: { level: 'warn' },
      },
    });
    await t.app.services.memory.ready;
    await registerRecorderChannel(t, 'telegram', recorder);
    owner = t.client(t.ownerToken);
    for (let i = 0; i < USERS; i++) {
      const name = `User${i}`;
      const u = await createUserWithToken(owner, name, i === 4 ? 'ADMIN' : i % 2 ? 'TRUSTED' : 'MEMBER');
      dataOf(await owner.http(LinkIdentityDocument, { input: { userId: u.id, channel: 'telegram', handle: `tg-iso-${i}` } }));
      const client = t.client(u.token);
      users.push({ ...u, client, name, admin: i === 4 });
      privateMarkers.push(marker(`PRIV${i}X`));
      reminderMarkers.push(marker(`REMIND${i}X`));
      dataOf(await client.http(CreateMemoryDocument, { input: { content: `The secret project codename of ${name} is ${privateMarkers[i]}.` } }));
      dataOf(await client.http(CreateMemoryDocument, { input: { content: `Reminder: ask ${name} about the secret project codename ${reminderMarkers[i]}.`, type: 'REMINDER' } }));
    }
    for (let g = 0; g < GROUPS.length; g++) {
      groupMarkers.push(marker(`GROUP${g}X`));
      const groupId = `agent:main:telegram:group:${GROUPS[g]!.chatId}`;
      dataOf(await owner.http(CreateMemoryDocument, { input: { content: `The secret project codename of this group is ${groupMarkers[g]}.`, scope: 'GROUP', groupId } }));
    }
    dataOf(await owner.http(CreateMemoryDocument, { input: { content: `The secret project codename of the company is ${globalMarker}.`, scope: 'GLOBAL' } }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all([owner, ...users.map((u) => u.client)].map((c) => c?.close()));
    await t?.close();
    await model?.close();
    await recorder?.close();
  });

  /** Markers a prompt of this context may hold (recall, tool results, the summarizer's transcript). */
  function allowed(ctx: Context): Set<string> {
    if (ctx.kind === 'dm') return new Set([privateMarkers[ctx.user]!, reminderMarkers[ctx.user]!, globalMarker]);
    return new Set([groupMarkers[ctx.group]!, globalMarker]);
  }
  const allMarkers = () => [...privateMarkers, ...reminderMarkers, ...groupMarkers, globalMarker];
  const describeCtx = (c: Context) => (c.kind === 'dm' ? `DM of User${c.user}` : `group ${c.group}`);

  /** A request is final for a tag when the model answered it with text (no tool call pending). */
  const finished = (tag: string, withTool: boolean) =>
    model.chatRequests().some(
      (r) => callKind(r) === 'main' && lastUserText(r).includes(tag) && r.endedAt !== null && (!withTool || (r.body?.messages ?? []).some((m) => m.role === 'tool')),
    );

  it(`never puts a memory into a prompt or GraphQL answer the sender may not see (seed ${seed})`, async () => {
    for (let n = 0; n < TURNS; n++) {
      const user = Math.floor(rand() * USERS);
      const memberOf = GROUPS.map((g, i) => (g.members.includes(user) ? i : -1)).filter((i) => i >= 0);
      const ctx: Context = rand() < 0.5 || !memberOf.length ? { kind: 'dm', user } : { kind: 'group', group: memberOf[Math.floor(rand() * memberOf.length)]! };
      const tag = `[t${n}]`;
      contexts.set(tag, ctx);
      const withTool = rand() < 0.4;
      const command = !withTool && rand() < 0.1;
      const text = command ? '/memories' : `${tag}${withTool ? ' [tool]' : ''} ${QUESTION}`;
      if (ctx.kind === 'dm') {
        const sent = await send(users[user]!.client, text);
        if (command) {
          for (const m of allMarkers()) if (m !== privateMarkers[user] && m !== reminderMarkers[user]) expect(sent.reply ?? '').not.toContain(m);
          continue;
        }
      } else {
        const before = recorder.chunks.length;
        await t.app.chat!.pipeline.handle({
          channel: 'telegram',
          chatId: GROUPS[ctx.group]!.chatId,
          chatKind: 'group',
          sender: { handle: `tg-iso-${user}`, displayName: users[user]!.name },
          text,
          mentionsBot: true,
          platformMessageId: `iso-${n}`,
        });
        if (command) {
          // An earlier turn's reply to this group (it names its turn tag) may still be on its way.
          const reply = await eventually(() => recorder.chunks.slice(before).find((c) => c.chatId === GROUPS[ctx.group]!.chatId && !/\[t\d+\]/.test(c.text)), 10_000, '/memories reply');
          expect(reply.text).toMatch(/private/);
          for (const m of allMarkers()) expect(reply.text).not.toContain(m);
          continue;
        }
      }
      await eventually(() => finished(tag, withTool), 15_000, `turn ${tag} in ${describeCtx(ctx)}`);
    }
    // Let the last turns and the summarizer calls of their exchanges run too.
    await waitForQueuesIdle(t, [QUEUES.turns, QUEUES.summarizer]);
    await eventually(() => model.chatRequests().every((r) => r.endedAt !== null), 15_000, 'all model calls to end');

    // Every prompt: attribute it to its context by the turn tags it holds, then check every marker in it.
    let ownSeen = 0;
    let groupSeen = 0;
    let toolRounds = 0;
    for (const req of model.chatRequests()) {
      const messages = req.body?.messages ?? [];
      const whole = JSON.stringify(messages);
      const tags = [...new Set(whole.match(/\[t\d+\]/g) ?? [])];
      const ctxs = [...new Set(tags.map((tag) => JSON.stringify(contexts.get(tag))))];
      expect({ kind: callKind(req), contexts: ctxs.length }).toEqual({ kind: callKind(req), contexts: Math.min(1, tags.length) });
      const found = allMarkers().filter((m) => whole.includes(m));
      if (!tags.length) {
        expect({ request: req.seq, markers: found }).toEqual({ request: req.seq, markers: [] });
        continue;
      }
      const ctx = contexts.get(tags[0]!)!;
      const visible = allowed(ctx);
      const toolText = JSON.stringify(messages.filter((m) => m.role === 'tool'));
      const leaked = found.filter((m) => !visible.has(m));
      expect({ seed, request: req.seq, kind: callKind(req), context: describeCtx(ctx), leaked }).toEqual({ seed, request: req.seq, kind: callKind(req), context: describeCtx(ctx), leaked: [] });
      if (callKind(req) === 'main') {
        // Recall goes into the system prompt, and never brings reminders (not even the sender's own).
        const system = JSON.stringify(messages.filter((m) => m.role === 'system'));
        expect({ request: req.seq, reminders: reminderMarkers.filter((m) => system.includes(m)) }).toEqual({ request: req.seq, reminders: [] });
        if (ctx.kind === 'dm' && found.includes(privateMarkers[ctx.user]!)) ownSeen++;
        if (ctx.kind === 'group' && found.includes(groupMarkers[ctx.group]!)) groupSeen++;
        if (toolText !== '[]') toolRounds++;
      }
    }
    // The test means something: recall and memory_search did bring the allowed memories in.
    expect(ownSeen).toBeGreaterThan(0);
    expect(groupSeen + Number(!GROUPS.some((_, g) => [...contexts.values()].some((c) => c.kind === 'group' && c.group === g)))).toBeGreaterThan(0);
    expect(toolRounds).toBeGreaterThan(0);

    // GraphQL: what a non-ADMIN can read holds only their own and global memories.
    for (let i = 0; i < USERS; i++) {
      const u = users[i]!;
      if (u.admin) continue;
      const answers = JSON.stringify([
        dataOf(await u.client.http(SearchMemoriesDocument, { query: `${QUESTION} ${allMarkers().join(' ')}`, limit: 50 })),
        dataOf(await u.client.http(MemoriesDocument, { first: 100 })),
      ]);
      const mine = new Set([privateMarkers[i]!, reminderMarkers[i]!, globalMarker]);
      expect({ user: i, leaked: allMarkers().filter((m) => answers.includes(m) && !mine.has(m)) }).toEqual({ user: i, leaked: [] });
      expect(answers).toContain(privateMarkers[i]);
      const other = users[(i + 1) % USERS]!;
      const forbidden = await u.client.http(MemoriesDocument, { first: 10, filter: { userId: other.id } });
      expect(forbidden.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
  }, 180_000);
});
