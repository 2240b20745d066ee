/**
 * Security suite, SSRF matrix: `http_request` (as an OWNER, so trust is not what stops it) to loopback,
 * private, link-local, CGNAT and metadata addresses, IPv6 and every IPv4-embedding IPv6 form, decimal /
 * octal / hex IPv4, 0.0.0.0, DNS names that resolve inward (answered by a DNS server the test runs),
 * redirects inward and non-HTTP schemes: every one refused before any connection, and audited as
 * `tool.refused` with the reason.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TrustLevel } from '../../../server/common/trust';
import { createHttpRequestTool, isPublicAddress, type HostLookup } from '../../../server/modules/tools';
import { FakeDnsServer } from '../../support/fakes/fake-dns-server';
import { call, ToolsFixture } from '../../integration/tools/tools-fixture';
import { reportFigures } from '../fault/fault-kit';

const DNS: Record<string, string[]> = {
  'inward.ssrf.test': ['127.0.0.1'],
  'private.ssrf.test': ['10.1.2.3'],
  'rfc1918.ssrf.test': ['192.168.1.1'],
  'metadata.ssrf.test': ['169.254.169.254'],
  'cgnat.ssrf.test': ['100.64.1.1'],
  'zero.ssrf.test': ['0.0.0.0'],
  'mixed.ssrf.test': ['93.184.216.34', '10.0.0.1'],
  'v6-loopback.ssrf.test': ['::1'],
  'v6-mapped.ssrf.test': ['::ffff:127.0.0.1'],
  'v6-compat.ssrf.test': ['::7f00:1'],
  'v6-nat64.ssrf.test': ['64:ff9b::a00:1'],
  'v6-ula.ssrf.test': ['fd00::1'],
  'v6-linklocal.ssrf.test': ['fe80::1'],
  'public.ssrf.test': ['127.0.0.1'], // the test's "public" server; only its own port is let through
};

/** Targets on loopback that must never be reached. */
const INWARD_LITERALS = [
  'http://127.0.0.1:{inner}/',
  'http://127.1:{inner}/',
  'http://2130706433:{inner}/',
  'http://0x7f000001:{inner}/',
  'http://0x7f.0.0.1:{inner}/',
  'http://0177.0.0.1:{inner}/',
  'http://017700000001:{inner}/',
  'http://0.0.0.0:{inner}/',
  'http://0:{inner}/',
  'http://[::1]:{inner}/',
  'http://[::]:{inner}/',
  'http://[::ffff:127.0.0.1]:{inner}/',
  'http://[::ffff:7f00:1]:{inner}/',
  'http://[0:0:0:0:0:ffff:127.0.0.1]:{inner}/',
  'http://[::127.0.0.1]:{inner}/',
  'http://[::7f00:1]:{inner}/',
  'http://[::ffff:0:127.0.0.1]:{inner}/',
  'http://[64:ff9b::127.0.0.1]:{inner}/',
  'http://[2002:7f00:1::1]:{inner}/',
  'http://localhost:{inner}/',
  'http://LOCALHOST.:{inner}/',
  'http://api.localhost:{inner}/',
  'http://inward.ssrf.test:{inner}/',
  'http://v6-loopback.ssrf.test:{inner}/',
  'http://v6-mapped.ssrf.test:{inner}/',
  'http://v6-compat.ssrf.test:{inner}/',
  'http://zero.ssrf.test:{inner}/',
];

/** Other inward targets (nothing listens there; a connection attempt would still be the failure). */
const OTHER_INWARD = [
  'http://10.0.0.1/',
  'http://10.255.255.255/',
  'http://172.16.0.1/',
  'http://172.31.255.254/',
  'http://192.168.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.170.2/v2/credentials',
  'http://100.64.0.1/',
  'http://100.100.100.200/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://[ff02::1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::a9fe:a9fe]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[2002:a9fe:a9fe::]/',
  'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata/computeMetadata/v1/',
  'http://private.ssrf.test/',
  'http://rfc1918.ssrf.test/',
  'http://metadata.ssrf.test/latest/meta-data/',
  'http://cgnat.ssrf.test/',
  'http://mixed.ssrf.test/',
  'http://v6-nat64.ssrf.test/',
  'http://v6-ula.ssrf.test/',
  'http://v6-linklocal.ssrf.test/',
];

const SCHEMES = ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_FLUSHALL', 'ftp://127.0.0.1/', 'dict://127.0.0.1:11211/stats', 'ldap://127.0.0.1/', 'data:text/plain,hello', 'javascript:alert(1)', 'ws://127.0.0.1/'];

describe('SSRF matrix', () => {
  let f: ToolsFixture;
  let dns: FakeDnsServer;
  let inner: http.Server;
  let outer: http.Server;
  let innerHits = 0;
  let outerPort = 0;
  let innerPort = 0;

  beforeAll(async () => {
    dns = await FakeDnsServer.start(DNS);
    inner = http.createServer((_req, res) => {
      innerHits++;
      res.end('internal secret');
    });
    // The "public" site: redirects to wherever its path says.
    outer = http.createServer((req, res) => {
      const to = decodeURIComponent((req.url ?? '/').replace(/^\/go\//, ''));
      res.writeHead(302, { location: to }).end();
    });
    await new Promise<void>((r) => inner.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => outer.listen(0, '127.0.0.1', r));
    innerPort = (inner.address() as AddressInfo).port;
    outerPort = (outer.address() as AddressInfo).port;
    const resolver = dns.resolver();
    const lookup: HostLookup = async (host) => {
      const [v4, v6] = await Promise.all([resolver.resolve4(host).catch(() => [] as string[]), resolver.resolve6(host).catch(() => [] as string[])]);
      const all = [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
      if (!all.length) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return all;
    };
    f = await ToolsFixture.create();
    // The real tool and the real address policy, with DNS from the test's server; the one exception is the
    // test's own "public" redirecting site (127.0.0.1 on its port), which stands in for a site on the internet.
    f.register(
      createHttpRequestTool({
        allowDomains: [],
        maxBytes: 100_000,
        timeoutMs: 3000,
        lookup,
        isAllowedAddress: (address, port) => (address === '127.0.0.1' && port === outerPort) || isPublicAddress(address, port),
      }),
    );
  });

  afterAll(async () => {
    await f.close();
    await dns.close();
    inner.close();
    outer.close();
  });

  it('refuses every inward target, redirect and non-HTTP scheme, before connecting, and audits each refusal', async () => {
    const direct = [...INWARD_LITERALS.map((u) => u.replace('{inner}', String(innerPort))), ...OTHER_INWARD];
    const redirects = [
      ...INWARD_LITERALS.slice(0, 12).map((u) => u.replace('{inner}', String(innerPort))),
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.ssrf.test/',
      'http://private.ssrf.test/',
      'file:///etc/passwd',
    ].map((target) => `http://public.ssrf.test:${outerPort}/go/${encodeURIComponent(target)}`);
    const cases = [...direct, ...redirects, ...SCHEMES];
    const outputs: Array<{ url: string; output: string; status: string }> = [];
    const tc = f.toolContext(TrustLevel.OWNER);
    for (const [i, url] of cases.entries()) {
      const outcome = await f.pipeline.runOne(tc, call('http_request', { url }, `ssrf-${i}`));
      outputs.push({ url, output: outcome.output, status: outcome.status });
    }
    const notRefused = outputs.filter((o) => o.status !== 'refused');
    const refusedAudits = await f.audit('tool.refused');
    reportFigures('security-suite', 'ssrf', {
      cases: cases.length,
      direct: direct.length,
      redirects: redirects.length,
      schemes: SCHEMES.length,
      refused: outputs.length - notRefused.length,
      audited: refusedAudits.length,
      innerHits,
      dnsQueries: dns.queries.length,
    });
    expect(notRefused).toEqual([]);
    expect(innerHits).toBe(0);
    expect(refusedAudits).toHaveLength(cases.length);
    for (const [i, entry] of refusedAudits.entries()) {
      expect(entry.details).toMatchObject({ tool: 'http_request', userId: f.user(TrustLevel.OWNER).id, trust: 'OWNER', reason: expect.any(String) });
      expect(outputs[i]!.output).toBe(`Refused: ${(entry.details as { reason: string }).reason}`);
    }
    // Redirect refusals name the redirect; DNS names name what they resolved to.
    expect(outputs.filter((o) => o.url.includes('/go/')).every((o) => /redirect to .* refused/.test(o.output))).toBe(true);
    expect(outputs.find((o) => o.url.startsWith('http://v6-compat'))!.output).toMatch(/resolves to ::(7f00:1|127\.0\.0\.1), which is not a public address/);
    expect(dns.queries.some((q) => q.startsWith('inward.ssrf.test'))).toBe(true);
  });

  it('the test\'s public site itself is reachable, so the refusals above are the policy, not a broken setup', async () => {
    const outcome = await f.pipeline.runOne(f.toolContext(TrustLevel.OWNER), call('http_request', { url: `http://public.ssrf.test:${outerPort}/go/${encodeURIComponent('https://example.invalid/')}`, method: 'HEAD' }, 'ok-1'));
    // The site answers (its redirect to a name that does not resolve is then an error, not a refusal).
    expect(outcome.status).toBe('error');
    expect(outcome.output).toMatch(/could not resolve example\.invalid/);
  });
});
