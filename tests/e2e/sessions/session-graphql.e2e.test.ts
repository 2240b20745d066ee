import { startTestApp, type TestApp } from '../../support/test-app';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, send } from '../../support/chat-helpers';
import { EventCollector } from '../../support/session-events';
import {
  ArchiveSessionDocument,
  CompactSessionDocument,
  DeleteSessionDocument,
  ExportSessionDocument,
  MessagesDocument,
  SessionDocument,
} from '../../support/graphql/generated';
import { Image } from '../../../server/modules/sessions';
import type { ExportedMessage } from '../../../server/modules/sessions';
import { hasAllSections } from '../../../server/modules/summarizer';
import { callKind, lastUserText, scriptModel } from '../memory-lifecycle/summarizer-model';

/** A 1×1 transparent PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const SEND_WITH_IMAGES = /* GraphQL */ `
  mutation SendWithImages($input: SendMessageInput!) {
    sendMessage(input: $input) { sessionId messageId status }
  }
`;

type Node = { id: string; role: string; content: string; status: string };

async function messagesOf(client: GraphQLTestClient, sessionId: string): Promise<Node[]> {
  return dataOf(await client.http(MessagesDocument, { sessionId, first: 200 })).messages.edges.map((e) => e.node as Node);
}

async function exportOf(client: GraphQLTestClient, id: string): Promise<{ raw: string; lines: ExportedMessage[] }> {
  const raw = dataOf(await client.http(ExportSessionDocument, { id })).exportSession;
  return { raw, lines: raw.split('\n').filter(Boolean).map((l) => JSON.parse(l) as ExportedMessage) };
}

/** Waits until the turn answering `messageId` finished in `sessionId`. */
async function turnDone(client: GraphQLTestClient, sessionId: string, messageId: string): Promise<void> {
  const events = new EventCollector(client.wsClient(), sessionId);
  await events.waitFor((es) => {
    const started = es.find((e) => e.__typename === 'TurnStarted' && (e.messageIds as string[]).includes(messageId));
    return !!started && es.some((e) => e.__typename === 'TurnFinished' && e.turnId === started.turnId);
  });
  events.stop();
}

async function exchange(client: GraphQLTestClient, text: string): Promise<string> {
  const sent = await send(client, text);
  await turnDone(client, sent.sessionId, sent.messageId!);
  return sent.sessionId;
}

const errorCode = (res: { errors?: Array<{ extensions?: { code?: string } }> }) => res.errors?.[0]?.extensions?.code;

/** Issue 5, acceptance 6 (export) and the session mutations of DESIGN §7: compactSession, archiveSession, deleteSession, exportSession. */
describe('session mutations', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    scriptModel(model, {
      main: (req) => {
        const last = req.body?.messages?.at(-1);
        if (lastUserText(req).includes('what time is it') && last?.role !== 'tool') return FakeReplies.toolCalls([{ id: 'call_time_1', name: 'current_time', arguments: {} }]);
        return { text: last?.role === 'tool' ? 'It is now.' : `Echo: ${lastUserText(req)}` };
      },
    });
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2, supports_vision: true } } },
        session: { summarizer_mode: 'manual', compact_keep_turns: 1 },
        log: { level: 'warn' },
      },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
  });

  it('exportSession gives one JSON line per message that round-trips: same messages, in order, tool calls and image metadata without data', async () => {
    const user = await createUserWithToken(owner, 'Kai', 'MEMBER');
    const client = t.client(user.token);
    const sessionId = await exchange(client, 'hello "quoted" and\nmultiline ✓ text');
    const withImage = dataOf(await client.http<{ sendMessage: { sessionId: string; messageId: string } }, unknown>(SEND_WITH_IMAGES, {
      input: { text: 'look at this', images: [{ mimeType: 'image/png', dataBase64: PNG }] },
    })).sendMessage;
    await turnDone(client, sessionId, withImage.messageId);
    await exchange(client, 'what time is it?');

    const { raw, lines } = await exportOf(client, sessionId);
    expect(raw.endsWith('\n')).toBe(true);
    expect(raw).not.toContain(PNG);
    const messages = await messagesOf(client, sessionId);
    expect(lines.map((l) => [l.id, l.role, l.content, l.status])).toEqual(messages.map((m) => [m.id, m.role, m.content, m.status]));
    expect(lines.map((l) => l.role)).toEqual(['USER', 'ASSISTANT', 'USER', 'ASSISTANT', 'USER', 'ASSISTANT', 'TOOL', 'ASSISTANT']);
    expect(lines.every((l) => l.sessionId === sessionId && !Number.isNaN(Date.parse(l.createdAt)))).toBe(true);
    expect(lines[0]!.content).toBe('hello "quoted" and\nmultiline ✓ text');
    expect(lines[0]!.userId).toBe(user.id);
    // Image metadata only.
    const imageLine = lines.find((l) => l.id === withImage.messageId)!;
    expect(imageLine.images).toEqual([{ id: expect.any(String), mimeType: 'image/png', bytes: Buffer.from(PNG, 'base64').length }]);
    expect(lines.filter((l) => l.images.length)).toHaveLength(1);
    // Tool calls and results.
    const call = lines[5]!;
    expect(call.toolCalls).toEqual([expect.objectContaining({ id: 'call_time_1', name: 'current_time' })]);
    expect(lines[6]).toMatchObject({ role: 'TOOL', toolCallId: 'call_time_1' });
    expect(lines[7]).toMatchObject({ role: 'ASSISTANT', content: 'It is now.', replyToId: lines[4]!.id });
    await client.close();
  });

  it('compactSession archives the session and returns the seeded new one; images stay with the archived transcript', async () => {
    const user = await createUserWithToken(owner, 'Lea', 'MEMBER');
    const client = t.client(user.token);
    const old = await exchange(client, 'we agreed on plan B');
    const withImage = dataOf(await client.http<{ sendMessage: { sessionId: string; messageId: string } }, unknown>(SEND_WITH_IMAGES, {
      input: { text: 'here is the diagram', images: [{ mimeType: 'image/png', dataBase64: PNG }] },
    })).sendMessage;
    await turnDone(client, old, withImage.messageId);
    const events = new EventCollector(client.wsClient(), old);

    const next = dataOf(await client.http(CompactSessionDocument, { sessionId: old, instructions: 'mention the diagram' })).compactSession;
    expect(next).toMatchObject({ status: 'ACTIVE', previousSessionId: old });
    expect(next.id).not.toBe(old);
    await events.waitFor((es) => es.some((e) => e.__typename === 'SessionRotated'));
    expect(events.events.find((e) => e.__typename === 'SessionRotated')).toMatchObject({ newSessionId: next.id, reason: 'compact' });
    expect(events.events.some((e) => e.__typename === 'Notice' && /compacted on request/.test(String(e.text)))).toBe(true);
    events.stop();
    expect(model.chatRequests().map(callKind).slice(-2)).toEqual(['extract', 'compact']);

    expect(dataOf(await client.http(SessionDocument, { id: old })).session.status).toBe('ARCHIVED');
    const seeded = await exportOf(client, next.id);
    expect(seeded.lines.map((l) => l.role)).toEqual(['SYSTEM', 'USER', 'ASSISTANT']);
    expect(hasAllSections(seeded.lines[0]!.content)).toBe(true);
    // The copy of the image message carries no image rows; the archived original keeps its image.
    expect(seeded.lines[1]).toMatchObject({ content: 'here is the diagram', images: [] });
    const archived = await exportOf(client, old);
    expect(archived.lines.find((l) => l.id === withImage.messageId)!.images).toHaveLength(1);
    expect(await t.app.db.repo(t.app.systemCtx('test'), Image).countBy({ messageId: withImage.messageId })).toBe(1);

    // Conflicts and isolation.
    expect(errorCode(await client.http(CompactSessionDocument, { sessionId: old }))).toBe('CONFLICT');
    const other = t.client((await createUserWithToken(owner, 'Mo', 'MEMBER')).token);
    expect(errorCode(await other.http(CompactSessionDocument, { sessionId: next.id }))).toBe('FORBIDDEN');
    expect(errorCode(await other.http(ExportSessionDocument, { id: old }))).toBe('FORBIDDEN');
    expect(errorCode(await client.http(CompactSessionDocument, { sessionId: next.id, instructions: 'x'.repeat(2001) }))).toBe('BAD_USER_INPUT');
    await other.close();
    await client.close();
  });

  it('archiveSession keeps the transcript readable and exportable; the next message starts a new session', async () => {
    const user = await createUserWithToken(owner, 'Nia', 'MEMBER');
    const client = t.client(user.token);
    const first = await exchange(client, 'something worth keeping');
    const archived = dataOf(await client.http(ArchiveSessionDocument, { id: first })).archiveSession;
    expect(archived).toMatchObject({ id: first, status: 'ARCHIVED', endedAt: expect.any(String) });
    expect((await messagesOf(client, first)).map((m) => m.content)).toEqual(['something worth keeping', 'Echo: something worth keeping']);
    expect((await exportOf(client, first)).lines).toHaveLength(2);
    const second = await exchange(client, 'a new start');
    expect(second).not.toBe(first);
    expect((await messagesOf(client, second)).map((m) => m.content)).toEqual(['a new start', 'Echo: a new start']);
    await client.close();
  });

  it('deleteSession removes a session with its messages; only its owner or an ADMIN may', async () => {
    const user = await createUserWithToken(owner, 'Oli', 'MEMBER');
    const client = t.client(user.token);
    const sessionId = await exchange(client, 'to be deleted');
    const other = t.client((await createUserWithToken(owner, 'Pia', 'MEMBER')).token);
    expect(errorCode(await other.http(DeleteSessionDocument, { id: sessionId }))).toBe('FORBIDDEN');
    expect(dataOf(await client.http(DeleteSessionDocument, { id: sessionId })).deleteSession).toBe(true);
    expect(errorCode(await client.http(SessionDocument, { id: sessionId }))).toBe('NOT_FOUND');
    expect(errorCode(await client.http(ExportSessionDocument, { id: sessionId }))).toBe('NOT_FOUND');
    // An ADMIN may delete anyone's session.
    const again = await exchange(client, 'once more');
    expect(dataOf(await owner.http(DeleteSessionDocument, { id: again })).deleteSession).toBe(true);
    await other.close();
    await client.close();
  });
});
