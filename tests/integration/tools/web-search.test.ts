import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ctx } from '../../../server/common/ctx';
import { createLogger } from '../../../server/common/logger';
import { SecretRedactor } from '../../../server/common/secret-redactor';
import { TrustLevel } from '../../../server/common/trust';
import { createWebSearchTool, type ToolContext } from '../../../server/modules/tools';
import { LogCapture } from '../../support/log-capture';

const logger = createLogger({ level: 'silent', destination: new LogCapture(), redactor: new SecretRedactor() });
const tc: ToolContext = {
  ctx: new Ctx({ actor: { kind: 'user', userId: 'u', trust: TrustLevel.TRUSTED }, logger }),
  sessionId: 's',
  channel: 'web',
  chatId: null,
  signal: new AbortController().signal,
};

describe('web_search against a local SearXNG-compatible server', () => {
  const requests: string[] = [];
  let mode: 'ok' | 'error' | 'html' = 'ok';
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    if (mode === 'error') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
      return;
    }
    if (mode === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>format not enabled</html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        query: 'x',
        results: [
          { title: 'One', url: 'https://one.example/', content: 'first result', engine: 'x' },
          { title: 'No url' },
          { title: 'Two', url: 'https://two.example/', content: 'y'.repeat(1000) },
          { title: 'Three', url: 'https://three.example/', content: 'third' },
        ],
      }),
    );
  });
  let base = '';

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('queries /search with format=json (the configured URL is ours, so loopback is fine) and returns the top results', async () => {
    mode = 'ok';
    const tool = createWebSearchTool({ searxngUrl: base });
    const out = (await tool.run(tc, tool.schema.parse({ query: 'muninn ravens', max_results: 2 }))) as { results: unknown[] };
    expect(requests.at(-1)).toBe('/search?q=muninn+ravens&format=json');
    expect(out.results).toEqual([
      { title: 'One', url: 'https://one.example/', snippet: 'first result' },
      { title: 'Two', url: 'https://two.example/', snippet: `${'y'.repeat(399)}…` },
    ]);
  });

  it('reports service errors and non-JSON answers', async () => {
    const tool = createWebSearchTool({ searxngUrl: base });
    mode = 'error';
    await expect(tool.run(tc, tool.schema.parse({ query: 'q' }))).rejects.toThrow('the search service answered 503');
    mode = 'html';
    await expect(tool.run(tc, tool.schema.parse({ query: 'q' }))).rejects.toThrow('did not answer JSON');
  });

  it('validates the query', () => {
    const tool = createWebSearchTool({ searxngUrl: base });
    expect(tool.schema.safeParse({ query: '  ' }).success).toBe(false);
    expect(tool.schema.safeParse({ query: 'x', max_results: 50 }).success).toBe(false);
  });
});
