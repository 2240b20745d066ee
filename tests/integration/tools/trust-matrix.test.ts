import { TrustLevel, TRUST_ORDER, trustAtLeast } from '../../../server/common/trust';
import {
  createBuiltinTools,
  isPublicAddress,
  ToolApprovalDecision,
  ToolApprovalStatus,
  ToolApproval,
  type HostLookup,
  type ToolCallOutcome,
} from '../../../server/modules/tools';
import { LocalHttpServer } from './http-server-fixture';
import { call, ToolsFixture } from './tools-fixture';

/**
 * Issue 3, acceptance 5 at the tool layer: senders of every trust level ask for shell, send_message to
 * another user and http_request to private targets. Only what DESIGN §3 allows runs; every refusal is
 * audited; outcomes come back (nothing throws).
 */
describe('trust matrix (DESIGN §3)', () => {
  let f: ToolsFixture;
  const server = new LocalHttpServer();
  const lookup: HostLookup = async (host) => {
    const table: Record<string, string> = { 'public.example.test': '127.0.0.1', 'intranet.example.com': '10.0.0.1' };
    if (!table[host]) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
    return [{ address: table[host]!, family: 4 }];
  };

  beforeAll(async () => {
    await server.start();
    f = await ToolsFixture.create({ config: { tools: { shell: { enabled: true, allow: ['echo'] } } } });
    f.register(
      ...createBuiltinTools({
        tools: f.app.config.tools,
        users: f.app.services.users,
        messageSender: f.sender,
        lookup,
        // The real policy, plus exactly the test server (reached as public.example.test), so redirects can be tested.
        isAllowedAddress: (address, port) => (address === '127.0.0.1' && port === server.port) || isPublicAddress(address, port),
      }),
    );
  });
  afterAll(async () => {
    await f.close();
    await server.close();
  });

  const other = (level: TrustLevel) => (level === TrustLevel.MEMBER ? TrustLevel.TRUSTED : TrustLevel.MEMBER);
  const base = () => `http://public.example.test:${server.port}`;

  function calls(level: TrustLevel) {
    return [
      call('current_time', { timezone: 'Europe/Berlin' }, 'time'),
      call('shell', { argv: ['echo', `hi from ${level}`] }, 'shell'),
      call('send_message', { channel: 'telegram', handle: `tg-${other(level).toLowerCase()}`, text: `hello from ${level}` }, 'send-other-handle'),
      call('send_message', { user_id: f.user(other(level)).id, text: `hello again from ${level}` }, 'send-other-user'),
      call('send_message', { channel: 'telegram', handle: `tg-${level.toLowerCase()}`, text: `note to self from ${level}` }, 'send-self'),
      call('http_request', { url: 'http://127.0.0.1/' }, 'http-loopback'),
      call('http_request', { url: 'http://10.0.0.1/' }, 'http-private'),
      call('http_request', { url: 'http://169.254.169.254/latest/meta-data/' }, 'http-metadata'),
      call('http_request', { url: 'http://[::1]/' }, 'http-ipv6-loopback'),
      call('http_request', { url: 'http://intranet.example.com/' }, 'http-name-private'),
      call('http_request', { url: `${base()}/redirect?to=${encodeURIComponent('http://10.0.0.1/')}` }, 'http-redirect-private'),
      call('http_request', { url: `${base()}/redirect?to=${encodeURIComponent('http://169.254.169.254/')}` }, 'http-redirect-metadata'),
      call('http_request', { url: `${base()}/ok` }, 'http-public'),
    ];
  }

  /** What DESIGN §3 lets each call do for `level`. */
  function allowed(level: TrustLevel, id: string): boolean {
    switch (id) {
      case 'time':
        return trustAtLeast(level, TrustLevel.MEMBER);
      case 'shell':
        return level === TrustLevel.OWNER;
      case 'send-other-handle':
      case 'send-other-user':
        return trustAtLeast(level, TrustLevel.ADMIN);
      case 'send-self':
      case 'http-public':
        return trustAtLeast(level, TrustLevel.TRUSTED);
      default:
        return false; // private, loopback, metadata, resolved-private and redirected-private targets: nobody
    }
  }

  const results = new Map<TrustLevel, ToolCallOutcome[]>();

  beforeAll(async () => {
    for (const level of TRUST_ORDER) {
      const outcomes = await f.pipeline.runAll(f.toolContext(level), calls(level), {
        // The OWNER approves shell calls (only an OWNER's call ever gets this far).
        onApprovalRequested: (approval) => void f.approvals.decide(f.ctx(TrustLevel.OWNER), approval.id, ToolApprovalDecision.ALLOW_ONCE),
      });
      results.set(level, outcomes);
    }
  });

  it.each(TRUST_ORDER.map((l) => [l]))('%s: only what DESIGN §3 allows runs', (level) => {
    const outcomes = results.get(level)!;
    const summary = Object.fromEntries(outcomes.map((o) => [o.id, o.status]));
    const expected = Object.fromEntries(calls(level).map((c) => [c.id, allowed(level, c.id) ? 'ok' : 'refused']));
    expect(summary).toEqual(expected);
  });

  it.each(TRUST_ORDER.map((l) => [l]))('%s: every refusal is in the audit log as tool.refused', async (level) => {
    const refusedIds = results.get(level)!.filter((o) => o.status === 'refused');
    const entries = (await f.audit('tool.refused')).filter((e) => e.actorUserId === f.user(level).id);
    expect(entries).toHaveLength(refusedIds.length);
    for (const e of entries) {
      expect(e.details).toMatchObject({ userId: f.user(level).id, trust: level, channel: 'telegram', reason: expect.any(String) });
      expect(typeof e.details!.args).toBe('string');
    }
    const calls = (await f.audit('tool.call')).filter((e) => e.actorUserId === f.user(level).id);
    expect(calls).toHaveLength(results.get(level)!.length);
  });

  it('refusals tell the model why', () => {
    const byId = (level: TrustLevel, id: string) => results.get(level)!.find((o) => o.id === id)!.output;
    expect(byId(TrustLevel.GUEST, 'time')).toContain('needs MEMBER trust; the sender is GUEST');
    expect(byId(TrustLevel.ADMIN, 'shell')).toContain('needs OWNER trust; the sender is ADMIN');
    expect(byId(TrustLevel.MEMBER, 'http-public')).toContain('needs TRUSTED trust');
    expect(byId(TrustLevel.TRUSTED, 'send-other-handle')).toContain('needs ADMIN trust: it is not one of your own identities');
    expect(byId(TrustLevel.TRUSTED, 'send-other-user')).toContain('sending to another user needs ADMIN trust');
    expect(byId(TrustLevel.OWNER, 'http-loopback')).toContain('127.0.0.1 is not a public address');
    expect(byId(TrustLevel.OWNER, 'http-ipv6-loopback')).toContain('::1 is not a public address');
    expect(byId(TrustLevel.OWNER, 'http-name-private')).toContain('intranet.example.com resolves to 10.0.0.1');
    expect(byId(TrustLevel.OWNER, 'http-redirect-private')).toContain('redirect to http://10.0.0.1/ refused');
    expect(byId(TrustLevel.OWNER, 'http-redirect-metadata')).toContain('redirect to http://169.254.169.254/ refused');
  });

  it('only the allowed messages were delivered', () => {
    const delivered = f.sender.sent.map((s) => `${s.from === f.user(TrustLevel.ADMIN).id ? 'ADMIN' : s.from === f.user(TrustLevel.OWNER).id ? 'OWNER' : s.from === f.user(TrustLevel.TRUSTED).id ? 'TRUSTED' : '?'} → ${s.target.channel}:${s.target.chatId}`);
    expect(delivered.sort()).toEqual(
      [
        'TRUSTED → telegram:tg-trusted',
        'ADMIN → telegram:tg-member',
        'ADMIN → telegram:tg-member',
        'ADMIN → telegram:tg-admin',
        'OWNER → telegram:tg-member',
        'OWNER → telegram:tg-member',
        'OWNER → telegram:tg-owner',
      ].sort(),
    );
  });

  it('shell ran only for the OWNER, after approval; nobody else even got an approval request', async () => {
    const owner = results.get(TrustLevel.OWNER)!.find((o) => o.id === 'shell')!;
    expect(JSON.parse(owner.output)).toMatchObject({ exitCode: 0, stdout: 'hi from OWNER\n' });
    const approvals = await f.app.db.repo(f.systemCtx(), ToolApproval).find();
    expect(approvals).toHaveLength(1);
    expect(approvals[0]).toMatchObject({ tool: 'shell', userId: f.user(TrustLevel.OWNER).id, status: ToolApprovalStatus.ALLOWED_ONCE });
  });

  it('the test server saw only the allowed public fetches and the redirect hops, never a private target', () => {
    const okHits = server.hits.filter((h) => h === '/ok').length;
    expect(okHits).toBe(3); // TRUSTED, ADMIN, OWNER
    expect(server.hits.filter((h) => h === '/redirect')).toHaveLength(6); // two per TRUSTED+ sender, then refused
  });

  it('the model is shown only the tools each level may use', async () => {
    const names = async (level: TrustLevel) => (await f.registry.specsFor(f.ctx(level), 'telegram')).map((s) => s.name).sort();
    expect(await names(TrustLevel.BLOCKED)).toEqual([]);
    expect(await names(TrustLevel.GUEST)).toEqual([]);
    expect(await names(TrustLevel.MEMBER)).toEqual(['current_time']);
    expect(await names(TrustLevel.TRUSTED)).toEqual(['current_time', 'http_request', 'send_message']);
    expect(await names(TrustLevel.ADMIN)).toEqual(['current_time', 'http_request', 'send_message']);
    expect(await names(TrustLevel.OWNER)).toEqual(['current_time', 'http_request', 'send_message', 'shell']);
  });
});
