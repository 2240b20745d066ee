/**
 * Compatibility: the request shapes Open WebUI and LibreChat send (recorded as JSON fixtures: the model
 * list, streaming with stream_options, multimodal content parts, max_tokens and max_completion_tokens,
 * extra sampling fields) are accepted and answered in the shape those clients parse.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken } from '../../support/chat-helpers';

interface FixtureRequest {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
  expect?: { stream: boolean; usage?: boolean; maxTokens?: number; lastUser?: string; historyContains?: string; image?: string };
}

const fixtures = ['open-webui', 'librechat'].map((name) => JSON.parse(readFileSync(path.join(__dirname, 'fixtures', `${name}.json`), 'utf8')) as { client: string; requests: FixtureRequest[] });

function lastUserParts(req: RecordedRequest): { text: string; images: string[] } {
  const user = [...(req.body?.messages ?? [])].reverse().find((m) => m.role === 'user');
  if (!user) return { text: '', images: [] };
  if (typeof user.content === 'string') return { text: user.content, images: [] };
  const parts = user.content as Array<{ type: string; text?: string; image_url?: { url: string } }>;
  return { text: parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n'), images: parts.filter((p) => p.type === 'image_url').map((p) => p.image_url!.url) };
}

/** The `data:` payloads of an SSE body, in order. */
function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .map((block) => block.trim())
    .filter(Boolean)
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice(6);
    });
}

describe('compatibility fixtures: Open WebUI and LibreChat request shapes', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let token: string;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ chunks: 3 });
    model.setDefault(() => ({ text: 'A fixture answer.', usage: { prompt_tokens: 30, completion_tokens: 4 } }));
    t = await startTestApp({ config: { ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4, supports_vision: true } } } } });
    const owner = t.client(t.ownerToken);
    token = (await createUserWithToken(owner, 'Fixture User', 'MEMBER')).token;
    await owner.close();
  }, 60_000);

  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('a gzip-compressed body (clients behind compressing proxies) is decoded and answered', async () => {
    const body = gzipSync(JSON.stringify({ model: 'muninn', messages: [{ role: 'user', content: 'compressed hello' }] }));
    const res = await fetch(`${t.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('A fixture answer.');
    expect(lastUserParts(model.lastChatRequest()!).text).toBe('compressed hello');
  });

  for (const fixture of fixtures) {
    for (const r of fixture.requests) {
      it(`${fixture.client}: ${r.name}`, async () => {
        const before = model.chatRequests().length;
        const res = await fetch(`${t.url}${r.path}`, {
          method: r.method,
          headers: { authorization: `Bearer ${token}`, ...(r.body ? { 'content-type': 'application/json' } : {}), ...r.headers },
          body: r.body ? JSON.stringify(r.body) : undefined,
        });
        const text = await res.text();
        expect(res.status).toBe(200);
        if (r.method === 'GET') {
          const list = JSON.parse(text) as { object: string; data: Array<{ id: string; object: string; owned_by: string; created: number }> };
          expect(list.object).toBe('list');
          expect(list.data[0]).toMatchObject({ id: 'muninn', object: 'model', owned_by: 'muninn' });
          expect(typeof list.data[0]!.created).toBe('number');
          return;
        }
        const e = r.expect!;
        let answer = '';
        if (e.stream) {
          expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
          const data = sseData(text);
          expect(data[data.length - 1]).toBe('[DONE]');
          const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { object: string; choices: Array<{ delta: { content?: string }; finish_reason: string | null }>; usage?: unknown });
          for (const c of chunks) expect(c.object).toBe('chat.completion.chunk');
          answer = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
          expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
          const last = chunks[chunks.length - 1]!;
          if (e.usage) expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } });
          else expect(last.usage).toBeUndefined();
        } else {
          const body = JSON.parse(text) as { object: string; choices: Array<{ message: { role: string; content: string }; finish_reason: string }>; usage: unknown };
          expect(body.object).toBe('chat.completion');
          expect(body.choices[0]!.message.role).toBe('assistant');
          expect(body.choices[0]!.finish_reason).toBe('stop');
          expect(body.usage).toEqual({ prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 });
          answer = body.choices[0]!.message.content;
        }
        expect(answer).toBe('A fixture answer.');
        // What the model was asked: the client's last message (and image), max tokens passed on.
        const seen = model.chatRequests().slice(before);
        expect(seen).toHaveLength(1);
        const sent = seen[0]!;
        const { text: userText, images } = lastUserParts(sent);
        if (e.lastUser) expect(userText).toBe(e.lastUser);
        if (e.historyContains) expect(JSON.stringify(sent.body!.messages)).toContain(e.historyContains);
        if (e.image) {
          expect(images).toHaveLength(1);
          expect(images[0]!.startsWith(`data:${e.image};base64,`)).toBe(true);
        }
        if (e.maxTokens) expect(sent.body!.max_tokens).toBe(e.maxTokens);
        else expect(sent.body!.max_tokens).toBeUndefined();
      });
    }
  }
});
