import { Ctx } from '../../../server/common/ctx';
import { createLogger } from '../../../server/common/logger';
import { SecretRedactor } from '../../../server/common/secret-redactor';
import { TrustLevel } from '../../../server/common/trust';
import {
  createHttpRequestTool,
  isPublicAddress,
  ToolRefusedError,
  type AddressPolicy,
  type HostLookup,
  type HttpRequestToolOptions,
  type ToolContext,
} from '../../../server/modules/tools';
import { LogCapture } from '../../support/log-capture';
import { LocalHttpServer } from './http-server-fixture';

const logger = createLogger({ level: 'silent', destination: new LogCapture(), redactor: new SecretRedactor() });
const tc: ToolContext = {
  ctx: new Ctx({ actor: { kind: 'user', userId: 'u1', trust: TrustLevel.TRUSTED }, logger }),
  sessionId: 's1',
  channel: 'web',
  chatId: null,
  signal: new AbortController().signal,
};

/** Fake DNS: names of the tests; anything else fails like NXDOMAIN. */
const fakeDns: Record<string, string[]> = {
  'public.example.test': ['127.0.0.1'],
  'muninn.invalid': ['127.0.0.1'],
  'intranet.example.com': ['10.0.0.1'],
  'mixed.example.com': ['93.184.216.34', '10.0.0.1'],
  'v6private.example.com': ['fd12:3456::1'],
  'metadata.example.com': ['169.254.169.254'],
  'mapped.example.com': ['::ffff:192.168.1.10'],
};

describe('http_request', () => {
  const server = new LocalHttpServer();
  const lookups: string[] = [];
  const lookup: HostLookup = async (host) => {
    lookups.push(host);
    const addrs = fakeDns[host];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addrs.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  /** The real policy, plus exactly our test server's 127.0.0.1:<port>. */
  let allowTestServer: AddressPolicy;

  beforeAll(async () => {
    await server.start();
    allowTestServer = (address, port) => (address === '127.0.0.1' && port === server.port) || isPublicAddress(address, port);
  });
  afterAll(() => server.close());

  function tool(overrides: Partial<HttpRequestToolOptions> = {}) {
    return createHttpRequestTool({ allowDomains: [], maxBytes: 100_000, timeoutMs: 2000, lookup, isAllowedAddress: allowTestServer, ...overrides });
  }

  async function run(t: ReturnType<typeof tool>, args: Record<string, unknown>) {
    return t.run(tc, t.schema.parse(args)) as Promise<Record<string, unknown>>;
  }

  async function refusal(t: ReturnType<typeof tool>, url: string): Promise<string> {
    const err = await run(t, { url }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ToolRefusedError);
    return (err as Error).message;
  }

  describe('with the default address policy and the system resolver', () => {
    const real = () => createHttpRequestTool({ allowDomains: [], maxBytes: 100_000, timeoutMs: 2000 });
    it.each([
      'http://127.0.0.1/',
      'http://127.0.0.1:1/',
      'http://10.0.0.1/',
      'http://172.16.5.4/',
      'http://192.168.1.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://[::1]/',
      'http://[::]/',
      'http://[fe80::1]/',
      'http://[fd00:ec2::254]/',
      'http://[fc00::1]/',
      'http://[ff02::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://2130706433/',
      'http://0x7f.0.0.1/',
      'http://017700000001/',
      'https://metadata.google.internal/computeMetadata/v1/',
      'http://localhost/',
      'http://api.localhost/',
    ])('refuses %s', async (url) => {
      const message = await refusal(real(), url);
      expect(message).toMatch(/not a public address|local or metadata host name/);
      expect(server.hits).toHaveLength(0);
    });
  });

  it('refuses every IPv6 form of loopback, the IPv4-compatible one included, without connecting', async () => {
    const real = createHttpRequestTool({ allowDomains: [], maxBytes: 100_000, timeoutMs: 2000 });
    const forms = ['[::127.0.0.1]', '[::7f00:1]', '[0:0:0:0:0:0:127.0.0.1]', '[::ffff:7f00:1]', '[::ffff:0:127.0.0.1]', '[64:ff9b::127.0.0.1]', '[2002:7f00:1::1]'];
    for (const host of forms) {
      expect(await refusal(real, `http://${host}:${server.port}/ok`)).toMatch(/is not a public address$/);
    }
    expect(server.hits).toHaveLength(0);
  });

  it('refuses names that resolve to a private address, checking every address', async () => {
    const t = tool();
    expect(await refusal(t, 'http://intranet.example.com/')).toBe('intranet.example.com resolves to 10.0.0.1, which is not a public address');
    expect(await refusal(t, 'http://mixed.example.com/')).toContain('resolves to 10.0.0.1');
    expect(await refusal(t, 'http://v6private.example.com/')).toContain('resolves to fd12:3456::1');
    expect(await refusal(t, 'http://metadata.example.com/')).toContain('resolves to 169.254.169.254');
    expect(await refusal(t, 'http://mapped.example.com/')).toContain('resolves to ::ffff:192.168.1.10');
  });

  it('fetches through a checked name and connects to the checked address (no second DNS lookup)', async () => {
    lookups.length = 0;
    // .invalid never resolves in real DNS: this only works because the connection uses the checked address.
    const out = await run(tool(), { url: `http://muninn.invalid:${server.port}/ok` });
    expect(out).toEqual({
      status: 200,
      statusText: 'OK',
      url: `http://muninn.invalid:${server.port}/ok`,
      redirects: 0,
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'hello from local',
    });
    expect((out.headers as Record<string, string>)['x-internal']).toBeUndefined();
    expect(lookups).toEqual(['muninn.invalid']);
  });

  it('the test policy allows exactly the test server, not other loopback ports', async () => {
    expect(await refusal(tool(), `http://127.0.0.1:${server.port + 1}/`)).toContain('not a public address');
    expect(await refusal(tool(), `http://[::1]:${server.port}/`)).toContain('not a public address');
  });

  describe('redirects', () => {
    const base = () => `http://public.example.test:${server.port}`;
    it.each([
      ['http://10.0.0.1/', 'redirect to http://10.0.0.1/ refused: 10.0.0.1 is not a public address'],
      ['http://169.254.169.254/latest/meta-data/', 'redirect to http://169.254.169.254/latest/meta-data/ refused'],
      ['http://[fd00:ec2::254]/', 'redirect to http://[fd00:ec2::254]/ refused'],
      ['http://intranet.example.com/admin', 'redirect to http://intranet.example.com/admin refused: intranet.example.com resolves to 10.0.0.1'],
      ['http://metadata.google.internal/', 'refused: metadata.google.internal is a local or metadata host name'],
      ['file:///etc/passwd', 'refused: only http and https URLs may be fetched'],
    ])('refuses a redirect to %s', async (to, expected) => {
      const message = await refusal(tool(), `${base()}/redirect?to=${encodeURIComponent(to)}`);
      expect(message).toContain(expected);
    });

    it('refuses a redirect to another local port and never contacts it', async () => {
      const other = await new LocalHttpServer().start();
      try {
        const message = await refusal(tool(), `${base()}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${other.port}/ok`)}`);
        expect(message).toContain(`redirect to http://127.0.0.1:${other.port}/ok refused`);
        expect(other.hits).toEqual([]);
      } finally {
        await other.close();
      }
    });

    it('follows up to 5 redirects, re-checking each hop, and stops after that', async () => {
      lookups.length = 0;
      const five = await run(tool(), { url: `${base()}/chain/5` });
      expect(five).toMatchObject({ status: 200, redirects: 5, body: 'end of chain', url: `${base()}/chain/0` });
      expect(lookups).toHaveLength(6);
      await expect(run(tool(), { url: `${base()}/chain/6` })).rejects.toThrow('too many redirects (more than 5)');
    });

    it('turns POST into GET on 303 and drops credentials when the origin changes', async () => {
      const to = `http://127.0.0.1:${server.port}/echo`;
      const out = await run(tool(), {
        url: `${base()}/redirect?status=303&to=${encodeURIComponent(to)}`,
        method: 'POST',
        body: 'payload',
        headers: { Authorization: 'Bearer abcdefgh12345678', Host: 'evil.example' },
      });
      expect(JSON.parse(out.body as string)).toEqual({ method: 'GET', host: `127.0.0.1:${server.port}`, authorization: null, body: '' });
    });

    it('keeps method, body and credentials on a same-origin 307', async () => {
      const out = await run(tool(), {
        url: `${base()}/redirect?status=307&to=/echo`,
        method: 'POST',
        body: 'payload',
        headers: { authorization: 'Bearer same-origin-token' },
      });
      expect(JSON.parse(out.body as string)).toEqual({
        method: 'POST',
        host: `public.example.test:${server.port}`,
        authorization: 'Bearer same-origin-token',
        body: 'payload',
      });
    });
  });

  it('caps the body at max_bytes', async () => {
    const out = await run(tool({ maxBytes: 1024 }), { url: `http://public.example.test:${server.port}/big` });
    expect(out.body).toBe('x'.repeat(1024));
    expect(out.truncated).toBe('body cut at 1024 bytes');
  });

  it('times out', async () => {
    const started = Date.now();
    await expect(run(tool({ timeoutMs: 200 }), { url: `http://public.example.test:${server.port}/slow` })).rejects.toThrow('the request timed out after 200 ms');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('describes binary bodies instead of returning them', async () => {
    const out = await run(tool(), { url: `http://public.example.test:${server.port}/binary` });
    expect(out.body).toBe('[binary image/png, 8 bytes]');
  });

  it('applies the domain allowlist, subdomains included', async () => {
    const t = tool({ allowDomains: ['example.test'] });
    expect((await run(t, { url: `http://public.example.test:${server.port}/ok` })).status).toBe(200);
    expect(await refusal(t, 'http://example.test.evil.com/')).toBe('example.test.evil.com is not in tools.http_request.allow_domains');
    expect(await refusal(t, 'http://notexample.test/')).toContain('not in tools.http_request.allow_domains');
    expect(await refusal(t, 'http://93.184.216.34/')).toContain('not in tools.http_request.allow_domains');
    // An allowed domain still has to resolve to a public address.
    expect(await refusal(tool({ allowDomains: ['example.com'] }), 'http://intranet.example.com/')).toContain('resolves to 10.0.0.1');
  });

  it('refuses non-http URLs where it runs; rejects non-URLs and unknown methods at validation', async () => {
    const t = tool();
    for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO', 'ftp://example.com/', 'data:text/plain,hi', 'javascript:alert(1)']) {
      expect(await refusal(t, url)).toMatch(/^only http and https URLs may be fetched, not [a-z]+:$/);
    }
    expect(t.schema.safeParse({ url: 'not a url' }).success).toBe(false);
    expect(t.schema.safeParse({ url: 'https://example.com/', method: 'CONNECT' }).success).toBe(false);
  });

  it('reports resolution failures as errors, not refusals', async () => {
    await expect(run(tool(), { url: 'http://nowhere.example.test/' })).rejects.toThrow('could not resolve nowhere.example.test: ENOTFOUND');
  });

  it('summarizes arguments without the query string', () => {
    const t = tool();
    expect(t.summarizeArgs!(t.schema.parse({ url: 'https://api.example.com/v1/x?key=SECRET', method: 'POST' }))).toBe('POST https://api.example.com/v1/x?…');
  });
});
