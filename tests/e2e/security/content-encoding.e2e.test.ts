/**
 * Bodies labelled with a Content-Encoding they do not have get a 4xx at once on every route (GraphQL,
 * webhooks, the OpenAI-compatible API, uploads), instead of a request that never gets an answer: a body
 * that is not what its encoding says is a 400, an unknown encoding a 415, a compressed body too large once
 * decoded a 413. Real compressed bodies still work.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { dataOf } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';

interface Answer {
  status: number;
  body: string;
  ms: number;
}

/** A raw HTTP POST (fetch would refuse or rewrite some of these headers). */
function post(url: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: Date.now() - started }));
    });
    req.setTimeout(5_000, () => req.destroy(new Error(`no answer from ${url} within 5 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

describe('request bodies that do not match their Content-Encoding', () => {
  let t: TestApp;
  let hookPath: string;
  let hookSecret: string;

  beforeAll(async () => {
    t = await startTestApp();
    const created = dataOf(
      await t.client(t.ownerToken).http<{ createWebhook: { secret: string; path: string } }, unknown>(
        'mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { secret path } }',
        { input: { name: 'encodings' } },
      ),
    ).createWebhook;
    hookPath = created.path;
    hookSecret = created.secret;
  });

  afterAll(async () => {
    await t.close();
  });

  const plain = Buffer.from(JSON.stringify({ query: '{ __typename }' }));

  it.each(['gzip', 'deflate', 'br'])('a plain body labelled %s gets 400 at once on every route', async (encoding) => {
    const routes: Array<[string, Record<string, string>]> = [
      ['/graphql', {}],
      ['/graphql', { authorization: `Bearer ${t.ownerToken}` }],
      [hookPath, { authorization: `Bearer ${hookSecret}` }],
      ['/v1/chat/completions', { authorization: `Bearer ${t.ownerToken}` }],
      ['/uploads', { authorization: `Bearer ${t.ownerToken}` }],
    ];
    for (const [route, auth] of routes) {
      const answer = await post(`${t.url}${route}`, { 'content-type': 'application/json', 'content-encoding': encoding, ...auth }, plain);
      expect({ route, status: answer.status }).toEqual({ route, status: 400 });
      expect(answer.body).toContain(`not valid ${encoding} data`);
      expect(answer.ms).toBeLessThan(1_000);
    }
  });

  it('an unknown encoding is a 415 and a compressed body too large once decoded a 413', async () => {
    const unknown = await post(`${t.url}/graphql`, { 'content-type': 'application/json', 'content-encoding': 'compress' }, plain);
    expect(unknown.status).toBe(415);
    expect(JSON.parse(unknown.body).errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const bomb = zlib.gzipSync(Buffer.alloc(t.config.server.body_limit_kb * 1024 + 1, 0x20));
    const tooLarge = await post(`${t.url}${hookPath}`, { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${hookSecret}` }, bomb);
    expect(tooLarge.status).toBe(413);
    // A truncated gzip stream is not valid either.
    const truncated = zlib.gzipSync(plain).subarray(0, 12);
    expect((await post(`${t.url}/graphql`, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, truncated)).status).toBe(400);
  });

  it('real gzip, deflate and br bodies are decoded and served', async () => {
    const bodies: Record<string, Buffer> = { gzip: zlib.gzipSync(plain), deflate: zlib.deflateSync(plain), br: zlib.brotliCompressSync(plain) };
    for (const [encoding, body] of Object.entries(bodies)) {
      const answer = await post(`${t.url}/graphql`, { 'content-type': 'application/json', 'content-encoding': encoding, authorization: `Bearer ${t.ownerToken}` }, body);
      expect({ encoding, status: answer.status, body: JSON.parse(answer.body) }).toEqual({ encoding, status: 200, body: { data: { __typename: 'Query' } } });
    }
    const hook = await post(
      `${t.url}${hookPath}`,
      { 'content-type': 'application/json', 'content-encoding': 'gzip', authorization: `Bearer ${hookSecret}` },
      zlib.gzipSync(Buffer.from(JSON.stringify({ event: 'deploy finished' }))),
    );
    expect(hook.status).toBe(202);
  });
});
