/**
 * `muninn chat` (issue 4, acceptance 4) driven as a real process through pipes against a test server with
 * a fake model: a streamed reply arrives piece by piece, tool calls get a line each, `/new` starts a new
 * session, Ctrl-C (SIGINT) stops the running turn and a second one exits 0, and a missing, rejected or
 * unusable token or server fails with a clear message and exit code 1.
 */
import net from 'node:net';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { eventually } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { MeDocument, MessagesDocument, SessionsDocument } from '../../support/graphql/generated';
import { ChatProcess, PROMPT } from './chat-process';

const STREAMED = 'Streaming one, two, three, four, five.';
const STREAM_CHUNKS = 5;
const STREAM_DELAY_MS = 300;

function lastMessage(req: RecordedRequest): { role: string; content: string } {
  const m = req.body?.messages?.at(-1);
  return { role: m?.role ?? '', content: typeof m?.content === 'string' ? m.content : '' };
}

function lastUserText(req: RecordedRequest): string {
  const user = [...(req.body?.messages ?? [])].reverse().find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

/** A closed port on 127.0.0.1: listened on, then released. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe('muninn chat (a real process on pipes)', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let ownerId: string;
  const processes: ChatProcess[] = [];

  const chat = (args: string[] = ['--url', t.url, '--token', t.ownerToken], env: NodeJS.ProcessEnv = {}): ChatProcess => {
    const p = ChatProcess.start(args, { env });
    processes.push(p);
    return p;
  };

  /** The owner's ACTIVE and ARCHIVED `tui:` sessions. */
  async function tuiSessions(): Promise<Array<{ id: string; status: string }>> {
    const res = dataOf(await owner.http(SessionsDocument, { first: 50, filter: { key: `tui:${ownerId}` } }));
    return res.sessions.edges.map((e) => ({ id: e.node.id, status: e.node.status }));
  }

  async function activeTuiSession(): Promise<string> {
    return eventually(async () => (await tuiSessions()).find((s) => s.status === 'ACTIVE')?.id, 10_000, 'an ACTIVE tui session');
  }

  async function messagesOf(sessionId: string): Promise<Array<{ role: string; content: string; status: string }>> {
    const res = dataOf(await owner.http(MessagesDocument, { sessionId, first: 100 }));
    return res.messages.edges.map((e) => e.node);
  }

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => {
      const text = lastUserText(req);
      if (lastMessage(req).role === 'tool') return { text: 'The clock says it is time for tea.' };
      if (text.includes('hang')) return { hang: true };
      if (text === 'what time is it?') return { toolCalls: [{ name: 'current_time', arguments: {} }] };
      if (text === 'stream please') return { text: STREAMED, chunks: STREAM_CHUNKS, chunkDelayMs: STREAM_DELAY_MS };
      return { text: `Echo: ${text}` };
    });
    t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model' } } } } });
    owner = t.client(t.ownerToken);
    ownerId = dataOf(await owner.http(MeDocument)).me!.id;
  });

  afterEach(async () => {
    for (const p of processes.splice(0)) await p.dispose();
  });

  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
  });

  it('streams the reply as the model writes it, on the tui:<userId> session', async () => {
    const p = chat();
    await p.waitForPrompt();
    expect(p.stderr).toContain(`Connected to ${t.url} as`);
    const mark = p.stdout.length;
    const firstArrival = p.arrivals.length;
    p.writeLine('stream please');
    await p.waitForText(`muninn> ${STREAMED}\n${PROMPT}`, mark);

    const request = model.chatRequests().find((r) => lastUserText(r) === 'stream please')!;
    expect(request.endedAt).not.toBeNull();
    // Replay the arrivals: when did the first piece show, and what had arrived by then?
    const firstPiece = STREAMED.slice(0, Math.ceil(STREAMED.length / STREAM_CHUNKS));
    let seen = '';
    let firstAt: number | null = null;
    let piecesAfterFirst = 0;
    for (const a of p.arrivals.slice(firstArrival)) {
      seen += a.text;
      if (firstAt === null && seen.includes(`muninn> ${firstPiece}`)) {
        firstAt = a.at;
        expect(seen).not.toContain(STREAMED);
      } else if (firstAt !== null) {
        piecesAfterFirst += 1;
      }
    }
    // The first piece was on the terminal before the model had finished writing …
    expect(firstAt).not.toBeNull();
    expect(firstAt!).toBeLessThan(request.endedAt!);
    // … and the rest came in several writes, not all at once at the end.
    expect(piecesAfterFirst).toBeGreaterThanOrEqual(3);
    // The text is shown once, on one line, and the turn ran in the TUI session.
    expect(p.stdout.split(STREAMED)).toHaveLength(2);
    const sessionId = await activeTuiSession();
    expect((await messagesOf(sessionId)).filter((m) => m.content === 'stream please')).toHaveLength(1);
  }, 60_000);

  it('shows one line per tool call, then the answer', async () => {
    const p = chat();
    const out = await p.say('what time is it?');
    expect(out).toBe('what time is it?\n⚙ current_time … ok\nmuninn> The clock says it is time for tea.\n');
    // Earlier turns of the session (the previous test's) are not replayed.
    expect(p.stdout).not.toContain(STREAMED);
  }, 60_000);

  it('/new prints the answer and the next message goes to a new session; the old one is archived', async () => {
    const p = chat();
    expect(await p.say('before new')).toContain('muninn> Echo: before new');
    const before = await activeTuiSession();

    const out = await p.say('/new');
    expect(out).toBe('/new\nStarted a new session. The old one is archived.\n');
    expect(await p.say('after new')).toContain('muninn> Echo: after new');

    const sessions = await tuiSessions();
    expect(sessions.find((s) => s.id === before)?.status).toBe('ARCHIVED');
    const after = sessions.find((s) => s.status === 'ACTIVE')!;
    expect(after.id).not.toBe(before);
    expect((await messagesOf(after.id)).map((m) => [m.role, m.content])).toEqual([
      ['USER', 'after new'],
      ['ASSISTANT', 'Echo: after new'],
    ]);
    expect((await messagesOf(before)).some((m) => m.content === 'after new')).toBe(false);
  }, 60_000);

  it('Ctrl-C stops the running turn (stopTurn); the client keeps going, and Ctrl-C at the prompt exits 0', async () => {
    const p = chat();
    await p.waitForPrompt();
    const mark = p.stdout.length;
    p.writeLine('please hang');
    const hanging = await eventually(() => model.chatRequests().find((r) => lastUserText(r) === 'please hang' && r.endedAt === null), 15_000, 'the model call');

    p.interrupt();
    await p.waitForText('stopping…\n', mark);
    await p.waitForText(`✖ turn cancelled\n${PROMPT}`, mark);
    expect(p.stdout.slice(mark)).toContain('ℹ Turn stopped (stopTurn).');
    // stopTurn aborted the turn: the model call was cut off and the message is CANCELLED.
    await eventually(() => hanging.aborted, 10_000, 'the model call to be aborted');
    const sessionId = await activeTuiSession();
    const message = (await messagesOf(sessionId)).find((m) => m.content === 'please hang');
    expect(message?.status).toBe('CANCELLED');

    expect(p.alive).toBe(true);
    expect(await p.say('are you there?')).toContain('muninn> Echo: are you there?');

    p.interrupt();
    expect(await p.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('a second Ctrl-C during a turn exits 0', async () => {
    const p = chat();
    await p.waitForPrompt();
    p.writeLine('hang again');
    await eventually(() => model.chatRequests().find((r) => lastUserText(r) === 'hang again'), 15_000, 'the model call');
    p.interrupt();
    await p.waitForText('stopping…\n');
    p.interrupt();
    expect(await p.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('Ctrl-D (end of input) at the prompt exits 0', async () => {
    const p = chat();
    await p.waitForPrompt();
    p.endInput();
    expect(await p.exited).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('without flags: URL from PORT, token from <data_dir>/owner.token; the session is tui:<userId>', async () => {
    const p = chat([], { MUNINN_DATA_DIR: t.dataDir, PORT: new URL(t.url).port });
    const out = await p.say('/whoami');
    expect(out).toContain(`Session: tui:${ownerId}`);
    expect(p.stderr).toContain(`Connected to ${t.url} as`);
  }, 60_000);

  it('takes the token from MUNINN_TOKEN', async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'muninn-chat-data-'));
    try {
      const p = chat(['--url', `${t.url}/graphql`], { MUNINN_TOKEN: t.ownerToken, MUNINN_DATA_DIR: empty });
      expect(await p.say('hi there')).toContain('muninn> Echo: hi there');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);

  describe('fails clearly with exit code 1', () => {
    it('when there is no token', async () => {
      const empty = mkdtempSync(path.join(os.tmpdir(), 'muninn-chat-data-'));
      try {
        const p = chat(['--url', t.url], { MUNINN_DATA_DIR: empty });
        expect(await p.exited).toEqual({ code: 1, signal: null });
        expect(p.stderr).toContain('muninn: No API token: pass --token <token>, set MUNINN_TOKEN');
        expect(p.stderr).toContain(path.join(empty, 'owner.token'));
        expect(p.stdout).toBe('');
      } finally {
        rmSync(empty, { recursive: true, force: true });
      }
    }, 60_000);

    it('when the server rejects the token', async () => {
      const p = chat(['--url', t.url, '--token', 'mun_not_a_real_token']);
      expect(await p.exited).toEqual({ code: 1, signal: null });
      expect(p.stderr).toMatch(/^muninn: The server at http:\/\/127\.0\.0\.1:\d+ rejected the API token from --token: .+/m);
      expect(p.stdout).toBe('');
    }, 60_000);

    it('when nothing listens at the URL', async () => {
      const port = await closedPort();
      const p = chat(['--url', `http://127.0.0.1:${port}`, '--token', t.ownerToken]);
      expect(await p.exited).toEqual({ code: 1, signal: null });
      expect(p.stderr).toContain(`muninn: Cannot reach the Muninn server at http://127.0.0.1:${port} (`);
      expect(p.stderr).toContain('Is it running');
    }, 60_000);
  });
});
