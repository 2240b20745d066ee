/**
 * The SDK's fetch over node's http answers as the global fetch does against a real server: status,
 * headers and body, compressed bodies, redirects, uploads, aborts and a connection dropped mid-body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import {
  nodeHttpFetch,
  type NodeHttpFetch,
} from '../../../server/modules/models/openai-compatible/node-http-fetch';

let server: http.Server;
let base: string;
let client: NodeHttpFetch;
const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (req.url === '/json') {
        res.writeHead(201, 'Made', { 'content-type': 'application/json', 'x-a': '1' });
        res.end(JSON.stringify({ got: Buffer.concat(chunks).toString('utf8') }));
      } else if (req.url === '/gzip') {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(zlib.gzipSync('squeezed text'.repeat(100)));
      } else if (req.url === '/redirect') {
        res.writeHead(307, { location: '/json' });
        res.end();
      } else if (req.url === '/drop') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"a":1}\n\n');
        setTimeout(() => res.socket?.destroy(), 20);
      } else if (req.url === '/slow') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: first\n\n');
      } else if (req.url === '/empty') {
        res.writeHead(204);
        res.end();
      } else {
        res.writeHead(404);
        res.end('nope');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = nodeHttpFetch();
});
afterAll(async () => {
  client.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('sends the method, headers and body and hands back status, headers and body as fetch does', async () => {
  const init = {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: '{"x":"é"}',
  };
  const [mine, theirs] = [await client.fetch(`${base}/json`, init), await fetch(`${base}/json`, init)];
  expect(mine.status).toBe(201);
  expect(mine.statusText).toBe(theirs.statusText);
  expect(mine.headers.get('x-a')).toBe('1');
  expect(await mine.json()).toEqual(await theirs.json());
  const [a, b] = seen.slice(-2);
  expect(a!.body).toBe(b!.body);
  expect(a!.headers.authorization).toBe('Bearer k');
  expect(a!.headers['content-length']).toBe(b!.headers['content-length']);
});

it('decompresses a gzip body, and leaves empty answers without a body', async () => {
  const res = await client.fetch(`${base}/gzip`);
  expect(await res.text()).toBe('squeezed text'.repeat(100));
  expect(res.headers.get('content-encoding')).toBeNull();
  const empty = await client.fetch(`${base}/empty`, { method: 'DELETE' });
  expect(empty.status).toBe(204);
  expect(empty.body).toBeNull();
});

it('follows a redirect and takes an upload through the global fetch', async () => {
  const res = await client.fetch(`${base}/redirect`, { method: 'POST', body: 'again' });
  expect(res.status).toBe(201);
  expect(await res.json()).toEqual({ got: 'again' });
  const form = new FormData();
  form.append('file', new Blob(['abc']), 'a.txt');
  const up = await client.fetch(`${base}/json`, { method: 'POST', body: form });
  expect(((await up.json()) as { got: string }).got).toContain('abc');
});

it('errors the body with "terminated" (a socket error as cause) when the connection drops mid-body', async () => {
  const res = await client.fetch(`${base}/drop`);
  const reader = res.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toContain('"a":1');
  const err = (await reader.read().then(
    () => null,
    (e: unknown) => e,
  )) as Error & { cause?: { code?: string } };
  expect(err).toBeInstanceOf(TypeError);
  expect(err.message).toBe('terminated');
  expect(err.cause?.code).toMatch(/^(E[A-Z]+|UND_ERR_[A-Z_]+)$/);
});

it('rejects with an AbortError when aborted before the answer, and errors the body when aborted during it', async () => {
  const early = new AbortController();
  early.abort();
  await expect(client.fetch(`${base}/json`, { signal: early.signal })).rejects.toMatchObject({
    name: 'AbortError',
  });
  const late = new AbortController();
  const res = await client.fetch(`${base}/slow`, { signal: late.signal });
  const reader = res.body!.getReader();
  await reader.read();
  late.abort();
  await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
});

it('rejects like fetch ("fetch failed", the socket error as cause) when nothing listens', async () => {
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  await expect(client.fetch(`http://127.0.0.1:${port}/x`)).rejects.toMatchObject({
    message: 'fetch failed',
    cause: { code: 'ECONNREFUSED' },
  });
});
