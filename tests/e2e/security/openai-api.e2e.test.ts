/**
 * Security suite, the OpenAI-compatible API (`/v1`): missing, malformed, unknown and revoked tokens, a
 * blocked user, unknown models, malformed and oversize bodies, empty and oversized message lists, wrong
 * roles, hostile content parts and image URLs (local targets never fetched), bad session keys, a burst past
 * the per-token rate limit and a fuzz of random bodies: each is its documented 4xx in OpenAI's error shape,
 * no 5xx, and nothing refused reaches the model.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { createUserWithToken } from '../../support/chat-helpers';
import { CreateApiTokenDocument, RevokeApiTokenDocument } from '../../support/graphql/generated';
import { dataOf } from '../../support/graphql-client';
import { reportFigures } from '../fault/fault-kit';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const RATE = 300;

interface Case {
  name: string;
  status: number;
  code?: string;
  param?: string;
  method?: string;
  path?: string;
  /** Raw body text, or a value sent as JSON. */
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  token?: 'member' | 'none' | 'bogus' | 'basic' | 'revoked' | 'blocked';
}

const user = (content: unknown) => ({ model: 'muninn', messages: [{ role: 'user', content }] });

describe('security: the OpenAI-compatible API refuses hostile requests in OpenAI\'s error shape', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let tokens: Record<string, string>;
  let local: http.Server;
  let localHits = 0;
  let localUrl = '';

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ chunks: 1 });
    model.setDefault(() => ({ text: 'fine' }));
    local = http.createServer((_req, res) => {
      localHits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from(PNG, 'base64'));
    });
    await new Promise<void>((r) => local.listen(0, '127.0.0.1', r));
    localUrl = `http://127.0.0.1:${(local.address() as AddressInfo).port}/cat.png`;
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4, supports_vision: true } } },
        channels: { api: { max_body_kb: 64, max_image_kb: 16, max_messages: 50, max_message_chars: 1000, max_images: 2, rate_per_minute: RATE } },
      },
    });
    const owner = t.client(t.ownerToken);
    const member = await createUserWithToken(owner, 'Hostile Member', 'MEMBER');
    const blocked = await createUserWithToken(owner, 'Blocked One', 'BLOCKED').catch(async () => null);
    const spare = dataOf(await owner.http(CreateApiTokenDocument, { userId: member.id, name: 'to revoke' })).createApiToken;
    dataOf(await owner.http(RevokeApiTokenDocument, { id: spare.apiToken.id }));
    const fuzz = dataOf(await owner.http(CreateApiTokenDocument, { userId: member.id, name: 'fuzz' })).createApiToken.token;
    const burst = dataOf(await owner.http(CreateApiTokenDocument, { userId: member.id, name: 'burst' })).createApiToken.token;
    tokens = { member: member.token, revoked: spare.token, fuzz, burst, blocked: blocked?.token ?? '' };
    await owner.close();
  }, 60_000);

  afterAll(async () => {
    await t.close();
    await model.close();
    await new Promise((r) => local.close(r));
  });

  async function call(c: Case): Promise<{ status: number; body: { error?: { message: string; type: string; param: string | null; code: string | null } }; headers: Headers }> {
    const auth: Record<string, string> =
      c.token === 'none'
        ? {}
        : c.token === 'bogus'
          ? { authorization: 'Bearer mu_not_a_real_token' }
          : c.token === 'basic'
            ? { authorization: 'Basic dXNlcjpwYXNz' }
            : { authorization: `Bearer ${tokens[c.token ?? 'member']}` };
    const hasBody = c.raw !== undefined || c.body !== undefined;
    const payload = c.raw === 'BOMB' ? gzipSync(JSON.stringify(user('z'.repeat(200 * 1024)))) : (c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body)));
    const res = await fetch(`${t.url}${c.path ?? '/v1/chat/completions'}`, {
      method: c.method ?? 'POST',
      headers: { ...auth, ...(hasBody ? { 'content-type': 'application/json' } : {}), ...c.headers },
      body: payload,
    });
    const text = await res.text();
    let body = {};
    try {
      body = JSON.parse(text) as object;
    } catch {
      body = { unparsed: text.slice(0, 200) };
    }
    return { status: res.status, body, headers: res.headers };
  }

  const cases: Case[] = [
    { name: 'no Authorization header', token: 'none', status: 401, code: 'invalid_api_key', body: user('hi') },
    { name: 'unknown token', token: 'bogus', status: 401, code: 'invalid_api_key', body: user('hi') },
    { name: 'Basic instead of Bearer', token: 'basic', status: 401, code: 'invalid_api_key', body: user('hi') },
    { name: 'revoked token', token: 'revoked', status: 401, code: 'invalid_api_key', body: user('hi') },
    { name: 'models without a token', token: 'none', method: 'GET', path: '/v1/models', status: 401, code: 'invalid_api_key' },
    { name: 'unknown model', status: 404, code: 'model_not_found', param: 'model', body: { ...user('hi'), model: 'gpt-4o' } },
    { name: 'unknown model by id', method: 'GET', path: '/v1/models/gpt-4o', status: 404, code: 'model_not_found' },
    { name: 'unknown endpoint', path: '/v1/completions', status: 404, code: 'unknown_url', body: { model: 'muninn', prompt: 'hi' } },
    { name: 'GET on chat completions', method: 'GET', status: 404, code: 'unknown_url' },
    { name: 'malformed JSON', raw: '{"model": "muninn", "messages": [', status: 400, code: 'invalid_json' },
    { name: 'JSON string body', raw: '"hello"', status: 400, code: 'invalid_json' },
    { name: 'JSON array body', body: [user('hi')], status: 400 },
    { name: 'not JSON at all (text/plain)', raw: 'hello', headers: { 'content-type': 'text/plain' }, status: 400 },
    { name: 'oversize body', body: user('x'.repeat(70 * 1024)), status: 413, code: 'request_too_large' },
    { name: 'missing model', body: { messages: [{ role: 'user', content: 'hi' }] }, status: 400, param: 'model' },
    { name: 'missing messages', body: { model: 'muninn' }, status: 400, param: 'messages' },
    { name: 'empty messages', body: { model: 'muninn', messages: [] }, status: 400, code: 'empty_array', param: 'messages' },
    { name: 'too many messages', body: { model: 'muninn', messages: Array.from({ length: 51 }, () => ({ role: 'user', content: 'hi' })) }, status: 400, code: 'array_above_max_length' },
    { name: 'message too long', body: user('y'.repeat(1001)), status: 400, code: 'string_above_max_length' },
    { name: 'unknown role', body: { model: 'muninn', messages: [{ role: 'wizard', content: 'abracadabra' }] }, status: 400, param: 'messages[0].role' },
    { name: 'legacy function role', body: { model: 'muninn', messages: [{ role: 'function', name: 'f', content: 'x' }] }, status: 400, param: 'messages[0].role' },
    { name: 'last message from the assistant', body: { model: 'muninn', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] }, status: 400, param: 'messages[1].role' },
    { name: 'only a system message', body: { model: 'muninn', messages: [{ role: 'system', content: 'You are root.' }] }, status: 400 },
    { name: 'tool message without tool_call_id', body: { model: 'muninn', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', content: '42' }] }, status: 400, param: 'messages[1].tool_call_id' },
    { name: 'content is a number', body: user(42), status: 400, param: 'messages[0].content' },
    { name: 'message is a string', body: { model: 'muninn', messages: ['hi'] }, status: 400, param: 'messages[0]' },
    { name: 'audio content part', body: user([{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }]), status: 400, code: 'unsupported_content_type' },
    { name: 'image of a non-image type', body: user([{ type: 'image_url', image_url: { url: 'data:text/html;base64,PGgxPmhpPC9oMT4=' } }]), status: 400, code: 'invalid_image_format' },
    { name: 'image that is no data URL', body: user([{ type: 'image_url', image_url: { url: 'data:image/png,raw' } }]), status: 400, code: 'invalid_image_url' },
    { name: 'image from a file URL', body: user([{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }]), status: 400, code: 'invalid_image_url' },
    { name: 'image from the metadata service', body: user([{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data/' } }]), status: 400, code: 'invalid_image_url' },
    { name: 'image from localhost by name', body: user([{ type: 'image_url', image_url: { url: 'http://localhost:9/x.png' } }]), status: 400, code: 'invalid_image_url' },
    { name: 'image larger than max_image_kb', body: user([{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(24 * 1024)}` } }]), status: 413, code: 'request_too_large' },
    {
      name: 'too many images',
      body: user([1, 2, 3].map(() => ({ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }))),
      status: 400,
      code: 'too_many_images',
    },
    { name: 'image in a system message', body: { model: 'muninn', messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }, { role: 'user', content: 'hi' }] }, status: 400 },
    { name: 'n = 3', body: { ...user('hi'), n: 3 }, status: 400, param: 'n' },
    { name: 'stream is a string', body: { ...user('hi'), stream: 'yes' }, status: 400, param: 'stream' },
    { name: 'max_tokens negative', body: { ...user('hi'), max_tokens: -5 }, status: 400, param: 'max_tokens' },
    { name: 'max_completion_tokens a string', body: { ...user('hi'), max_completion_tokens: 'lots' }, status: 400, param: 'max_completion_tokens' },
    { name: 'tool with a bad name', body: { ...user('hi'), tools: [{ type: 'function', function: { name: 'rm -rf /' } }] }, status: 400, param: 'tools[0].function.name' },
    { name: 'tool named like a server tool', body: { ...user('hi'), tools: [{ type: 'function', function: { name: 'memory_search' } }] }, status: 400, code: 'tool_name_conflict' },
    { name: 'tool_choice naming no tool', body: { ...user('hi'), tools: [{ type: 'function', function: { name: 'a' } }], tool_choice: { type: 'function', function: { name: 'b' } } }, status: 400, param: 'tool_choice' },
    { name: 'unknown Content-Encoding', raw: '{}', headers: { 'content-encoding': 'zstd-bogus' }, status: 415, code: 'unsupported_media_type' },
    { name: 'body that is not the gzip it claims', raw: JSON.stringify(user('hi')), headers: { 'content-encoding': 'gzip' }, status: 400, code: 'bad_request' },
    { name: 'gzip bomb past max_body_kb once decoded', raw: 'BOMB', headers: { 'content-encoding': 'gzip' }, status: 413, code: 'payload_too_large' },
    { name: 'session key with a colon', body: user('hi'), headers: { 'x-muninn-session': 'other-user:notes' }, status: 400, code: 'invalid_session_key' },
    { name: 'session key too long', body: user('hi'), headers: { 'x-muninn-session': 'k'.repeat(101) }, status: 400, code: 'invalid_session_key' },
  ];

  it('every hostile request is its documented 4xx in OpenAI\'s error shape, and none reaches the model', async () => {
    const before = model.chatRequests().length;
    const results: string[] = [];
    for (const c of cases) {
      const res = await call(c);
      const e = res.body.error;
      const problem =
        res.status !== c.status
          ? `status ${res.status} (${JSON.stringify(res.body).slice(0, 160)})`
          : !e || typeof e.message !== 'string' || typeof e.type !== 'string' || !('param' in e) || !('code' in e)
            ? `body not in OpenAI's shape: ${JSON.stringify(res.body).slice(0, 160)}`
            : c.code && e.code !== c.code
              ? `code ${e.code}, expected ${c.code}`
              : c.param && e.param !== c.param
                ? `param ${e.param}, expected ${c.param}`
                : c.status === 401 && res.headers.get('www-authenticate') !== 'Bearer'
                  ? 'no WWW-Authenticate'
                  : null;
      if (problem) results.push(`${c.name}: ${problem}`);
    }
    expect(results).toEqual([]);
    expect(model.chatRequests().length).toBe(before);
    reportFigures('security-suite', 'openai-api', { cases: cases.length });
  });

  it('a blocked user\'s token is 403', async () => {
    if (!tokens.blocked) return expect(tokens.blocked).not.toBe('');
    const res = await call({ name: 'blocked', token: 'blocked', status: 403, body: user('hi') });
    expect(res.status).toBe(403);
    expect(res.body.error?.type).toBe('permission_error');
  });

  it('an image URL pointing at a local server is refused by the SSRF guard without being fetched', async () => {
    const res = await call({ name: 'local image', status: 400, body: user([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: localUrl } }]) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_image_url', param: 'messages[0].content[1].image_url.url' });
    expect(res.body.error!.message).toMatch(/not a public address/);
    expect(localHits).toBe(0);
  });

  it('a burst past the per-token rate limit gets 429 with Retry-After; other tokens go on', async () => {
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | null = null;
    for (let i = 0; i < RATE + 5; i++) {
      const res = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${tokens.burst}` } });
      statuses.push(res.status);
      if (res.status === 429 && !limited) limited = { status: 429, body: (await res.json()) as never, headers: res.headers };
      else await res.arrayBuffer();
    }
    expect(statuses.slice(0, RATE).every((s) => s === 200)).toBe(true);
    expect(statuses.slice(RATE)).toEqual([429, 429, 429, 429, 429]);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited!.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    const other = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${tokens.member}` } });
    expect(other.status).toBe(200);
  });

  it('fuzz: random request bodies never get a 5xx', async () => {
    const statuses = new Map<number, number>();
    const part = fc.oneof(
      fc.record({ type: fc.constantFrom('text', 'image_url', 'input_audio', 'file'), text: fc.anything(), image_url: fc.oneof(fc.string(), fc.record({ url: fc.oneof(fc.string(), fc.constant('data:image/png;base64,@@')) })) }, { requiredKeys: ['type'] }),
      fc.anything(),
    );
    const message = fc.record(
      {
        role: fc.oneof({ arbitrary: fc.constant('user'), weight: 6 }, fc.constantFrom('system', 'assistant', 'tool', 'developer', 'function', '', 'USER')),
        content: fc.oneof({ arbitrary: fc.string({ minLength: 1 }), weight: 4 }, fc.array(part, { maxLength: 3 }), fc.anything()),
        tool_calls: fc.anything(),
        tool_call_id: fc.anything(),
      },
      { requiredKeys: ['role', 'content'] },
    );
    const body = fc.record(
      {
        model: fc.oneof({ arbitrary: fc.constant('muninn'), weight: 6 }, fc.string(), fc.anything()),
        messages: fc.oneof({ arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }), weight: 6 }, fc.anything()),
        stream: fc.oneof(fc.boolean(), fc.anything()),
        max_tokens: fc.anything(),
        tools: fc.anything(),
        tool_choice: fc.anything(),
        n: fc.anything(),
      },
      { requiredKeys: ['model', 'messages'] },
    );
    // About one body in four is a plausible request with hostile text, so the fuzz reaches turns too.
    const plausible = fc.record({
      model: fc.constant('muninn'),
      messages: fc.array(fc.record({ role: fc.constant('user'), content: fc.string({ minLength: 1 }).map((x) => `q ${x}`) }), { minLength: 1, maxLength: 3 }),
      stream: fc.boolean(),
    });
    const anyBody = fc.oneof({ arbitrary: plausible, weight: 1 }, { arbitrary: body, weight: 3 });
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(anyBody, async (b) => {
        const res = await fetch(`${t.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens.fuzz}`, 'content-type': 'application/json' },
          body: JSON.stringify(b),
        });
        await res.arrayBuffer();
        if (res.status === 200) answered++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        return res.status < 500;
      }),
      { numRuns: 120 },
    );
    reportFigures('security-suite', 'openai-api-fuzz', { runs: 120, statuses: Object.fromEntries(statuses) });
    expect([...statuses.keys()].every((s) => s < 500)).toBe(true);
    // The fuzz also reaches the turn: some bodies are valid and answered.
    expect(answered).toBeGreaterThan(0);
  }, 60_000);
});
