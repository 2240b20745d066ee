import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { createSenderPolicies } from '../../../server/composition/sender-policies';
import { AuditEntry } from '../../../server/modules/audit';
import { PAIRING_CODE_ALPHABET, PairingRequest, PairingStatus } from '../../../server/modules/pairing';
import type { User } from '../../../server/modules/users';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeTransport, fence, groupMessage, handle, inbound, PairingGraphQL, startFakeTransport, until } from './pairing-fixture';

const CODE = new RegExp(`\\b([${PAIRING_CODE_ALPHABET}]{8})\\b`);

/**
 * Trust at the door (issue 4): pairing, DM and group policies, GUEST limits and the admission commands,
 * driven through the real inbound pipeline of a test server with a fake Telegram/WhatsApp transport and
 * a fake model. Telegram runs `dm_policy: pairing`, WhatsApp `dm_policy: open`.
 */
describe('pairing and sender policies', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let telegram: FakeTransport;
  let whatsapp: FakeTransport;
  let gql: PairingGraphQL;
  let sys: Ctx;
  let admin: User;
  let member: User;
  let memberToken: string;
  /** Pairing codes by requester handle. */
  const codes = new Map<string, string>();

  const modelCalls = () => model.chatRequests().length;
  const requestsOf = (handle: string) => t.app.db.repo(sys, PairingRequest).find({ where: { channel: 'telegram', handle }, order: { createdAt: 'ASC' } });
  const userOf = (channel: string, handle: string) => t.app.services.users.findByIdentity(sys, channel, handle);
  /** Waits until the model has seen `count` requests in total and the reply to `chatId` was delivered. */
  const answered = async (transport: FakeTransport, chatId: string, before: number) => {
    await model.waitForRequests(before + 1, { pathSuffix: '/chat/completions', timeoutMs: 10_000 });
    return until(() => transport.textsTo(chatId).find((text) => text.startsWith('Echo:')), `a reply to ${chatId}`);
  };

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 8192, max_concurrency: 2 } } },
        channels: {
          telegram: { dm_policy: 'pairing', group_policy: 'allowlist', groups: ['telegram:-500'], guest_messages_per_minute: 2 },
          whatsapp: { dm_policy: 'open', guest_messages_per_minute: 2 },
        },
      },
    });
    sys = t.app.systemCtx('test');
    telegram = await startFakeTransport(t.app, 'telegram');
    whatsapp = await startFakeTransport(t.app, 'whatsapp');
    gql = await PairingGraphQL.create(t.app);
    const users = t.app.services.users;
    admin = await users.create(sys, { displayName: 'Ada Admin', trust: TrustLevel.ADMIN });
    await users.linkIdentity(sys, admin.id, 'telegram', '9000');
    member = await users.create(sys, { displayName: 'Mo Member', trust: TrustLevel.MEMBER });
    await users.linkIdentity(sys, member.id, 'telegram', '9001');
    memberToken = (await t.app.services.tokens.create(sys, member.id, 'test')).token;
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  it('an unknown DM sender under pairing gets a code (8 characters, no 0/O/1/I) and the message is not processed', async () => {
    const before = modelCalls();
    const result = await handle(t.app, inbound('telegram', '1001', 'hello, who are you?'));
    expect(result.dropped).toBe('unknown sender');
    expect(result.ticket).toBeNull();
    expect(result.replies).toHaveLength(1);
    const code = CODE.exec(result.replies[0]!)![1]!;
    expect(code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
    expect(result.replies[0]).toContain(`/approve ${code}`);
    codes.set('1001', code);

    const [request] = await requestsOf('1001');
    expect(request).toMatchObject({ code, status: PairingStatus.PENDING, displayName: 'Person 1001', userId: null });
    expect(request!.expiresAt.getTime() - request!.createdAt.getTime()).toBe(3_600_000);
    await until(() => telegram.textsTo('1001').some((text) => text.includes(code)), 'the code to reach the sender');
    expect(modelCalls()).toBe(before);
    expect(await userOf('telegram', '1001')).toBeNull();
  });

  it('the same sender writing again within the hour gets no second code and no answer', async () => {
    const sentBefore = telegram.textsTo('1001');
    const result = await handle(t.app, inbound('telegram', '1001', 'hello??'));
    expect(result).toMatchObject({ dropped: 'unknown sender', replies: [] });
    expect(await requestsOf('1001')).toHaveLength(1);
    expect(await fence(t.app, telegram, '1001')).toEqual(sentBefore);
  });

  it('a 4th unknown sender gets no code while 3 are pending, and is told "try later" only once', async () => {
    for (const h of ['1002', '1003']) {
      const result = await handle_(h);
      codes.set(h, CODE.exec(result.replies[0]!)![1]!);
    }
    const fourth = await handle_('1004');
    expect(fourth.replies).toEqual([expect.stringContaining('try again later')]);
    expect(CODE.test(fourth.replies[0]!)).toBe(false);
    expect(await requestsOf('1004')).toHaveLength(0);
    expect((await handle_('1004')).replies).toEqual([]);
    expect(await t.app.db.repo(sys, PairingRequest).countBy({ channel: 'telegram', status: PairingStatus.PENDING })).toBe(3);

    function handle_(h: string) {
      return handle(t.app, inbound('telegram', h, 'hi'));
    }
  });

  it('approvePairing (GraphQL, ADMIN+) makes the sender a MEMBER with the identity, tells them, and lets them talk', async () => {
    const code = codes.get('1001')!;
    const refused = await gql.exec(memberToken, APPROVE, { code });
    expect(refused.code).toBe('FORBIDDEN');

    const res = await gql.exec(t.ownerToken, APPROVE, { code: code.toLowerCase() });
    expect(res.code).toBeUndefined();
    expect(res.data!.approvePairing).toMatchObject({ code, status: 'APPROVED', user: { displayName: 'Person 1001', trust: 'MEMBER' } });

    const user = await userOf('telegram', '1001');
    expect(user).toMatchObject({ trust: TrustLevel.MEMBER, displayName: 'Person 1001' });
    await until(() => telegram.textsTo('1001').some((text) => text.includes('approved your pairing request')), 'the approval notice');
    const audit = await t.app.db.repo(sys, AuditEntry).findOneByOrFail({ action: 'pairing.approve' });
    // The entry names the request (targetId), never its code: the audit log outlives the code.
    expect(audit.details).toMatchObject({ identity: 'telegram:1001', userId: user!.id, createdUser: true });
    expect(JSON.stringify(audit.details)).not.toContain(code);

    // A second decision is a conflict; the member's next message is answered, with tools offered.
    expect((await gql.exec(t.ownerToken, APPROVE, { code })).code).toBe('CONFLICT');
    const before = modelCalls();
    const result = await handle(t.app, inbound('telegram', '1001', 'now can we talk?'));
    expect(result.ticket).not.toBeNull();
    expect(await answered(telegram, '1001', before)).toBe('Echo: now can we talk?');
    expect(model.lastChatRequest()!.body!.tools?.length).toBeGreaterThan(0);
  });

  it('/approve CODE from an ADMIN chat approves; other /approve forms still reach tool approvals', async () => {
    const code = codes.get('1002')!;
    const byMember = await handle(t.app, inbound('telegram', '9001', `/approve ${code}`));
    expect(byMember.replies[0]).toContain('Usage: /approve <approval-id>');
    expect((await requestsOf('1002'))[0]!.status).toBe(PairingStatus.PENDING);

    const result = await handle(t.app, inbound('telegram', '9000', `/approve ${code}`));
    expect(result.replies).toEqual([expect.stringMatching(new RegExp(`^Approved pairing ${code}: Person 1002 \\(telegram:1002\\) is now a MEMBER user`))]);
    expect(await userOf('telegram', '1002')).toMatchObject({ trust: TrustLevel.MEMBER });
    await until(() => telegram.textsTo('1002').some((text) => text.includes('approved your pairing request')), 'the approval notice');
    const request = (await requestsOf('1002'))[0]!;
    expect(request).toMatchObject({ status: PairingStatus.APPROVED, decidedBy: admin.id });

    const tool = await handle(t.app, inbound('telegram', '9000', '/approve 0190aaaa-0000-7000-8000-000000000000 allow_once'));
    expect(tool.replies[0]).toMatch(/ToolApproval 0190aaaa-0000-7000-8000-000000000000 was not found/);
  });

  it('denyPairing turns a request down silently; the sender stays unknown and is not re-paired within the hour', async () => {
    const code = codes.get('1003')!;
    const sentBefore = telegram.textsTo('1003').length;
    const res = await gql.exec(t.ownerToken, DENY, { code });
    expect(res.data!.denyPairing).toMatchObject({ code, status: 'DENIED', user: null });
    expect(await t.app.db.repo(sys, AuditEntry).countBy({ action: 'pairing.deny' })).toBe(1);
    expect((await handle(t.app, inbound('telegram', '1003', 'please?'))).replies).toEqual([]);
    expect(await userOf('telegram', '1003')).toBeNull();
    expect(telegram.textsTo('1003')).toHaveLength(sentBefore);
    const listed = await gql.exec(t.ownerToken, LIST, { status: 'DENIED' });
    expect(listed.data!.pairingRequests).toEqual([expect.objectContaining({ code, channel: 'telegram', handle: '1003' })]);
  });

  it('expired codes are CONFLICT and listed as EXPIRED; unknown codes NOT_FOUND; malformed ones BAD_USER_INPUT', async () => {
    const result = await handle(t.app, inbound('telegram', '1005', 'hi'));
    const code = CODE.exec(result.replies[0]!)![1]!;
    await t.app.db.repo(sys, PairingRequest).update({ code }, { expiresAt: new Date(Date.now() - 1000) });

    const expired = await gql.exec(t.ownerToken, APPROVE, { code });
    expect(expired.code).toBe('CONFLICT');
    expect(expired.message).toMatch(new RegExp(`Pairing code ${code} expired at .*; the sender gets a new code when they write again`));
    const listed = await gql.exec(t.ownerToken, LIST, { status: 'EXPIRED' });
    expect(listed.data!.pairingRequests).toEqual([expect.objectContaining({ code, status: 'EXPIRED' })]);
    expect((await gql.exec(t.ownerToken, LIST, { status: 'PENDING' })).data!.pairingRequests).toEqual([]);

    const unknown = await gql.exec(t.ownerToken, APPROVE, { code: 'ABCDEFGH' });
    expect(unknown).toMatchObject({ code: 'NOT_FOUND', message: 'Pairing request ABCDEFGH was not found.' });
    expect((await gql.exec(t.ownerToken, DENY, { code: 'not-a-code' })).code).toBe('BAD_USER_INPUT');
    expect((await gql.exec(null, LIST, {})).code).toBe('UNAUTHENTICATED');
  });

  it('open: an unknown sender becomes a GUEST, gets replies without tools, and is rate-limited with one notice', async () => {
    const before = modelCalls();
    const first = await handle(t.app, inbound('whatsapp', 'w1@s.whatsapp.net', 'hello guest here'));
    expect(first.ticket).not.toBeNull();
    const guest = await userOf('whatsapp', 'w1@s.whatsapp.net');
    expect(guest).toMatchObject({ trust: TrustLevel.GUEST, displayName: 'Person w1@s.whatsapp.net' });
    expect(await answered(whatsapp, 'w1@s.whatsapp.net', before)).toBe('Echo: hello guest here');
    const request = model.lastChatRequest()!.body!;
    expect(request.tools ?? []).toEqual([]);
    expect(JSON.stringify(request.messages)).toContain('hello guest here');

    // guest_messages_per_minute: 2 — the second passes, the third gets a notice, the fourth nothing.
    expect((await handle(t.app, inbound('whatsapp', 'w1@s.whatsapp.net', 'second'))).ticket).not.toBeNull();
    const third = await handle(t.app, inbound('whatsapp', 'w1@s.whatsapp.net', 'third'));
    expect(third).toMatchObject({ dropped: 'gated', ticket: null });
    expect(third.replies).toEqual([expect.stringContaining('2 a minute')]);
    const fourth = await handle(t.app, inbound('whatsapp', 'w1@s.whatsapp.net', 'fourth'));
    expect(fourth).toMatchObject({ dropped: 'gated', replies: [], ticket: null });
    await model.waitForRequests(before + 2, { pathSuffix: '/chat/completions' });
    // Gated messages are not stored (no ticket), so no model call can follow them; one notice only.
    expect((await fence(t.app, whatsapp, 'w1@s.whatsapp.net')).filter((text) => text.includes('2 a minute'))).toHaveLength(1);
    expect(modelCalls()).toBe(before + 2);
  });

  it('a BLOCKED sender gets nothing at all', async () => {
    const blocked = await t.app.services.users.create(sys, { displayName: 'Blocked Bob', trust: TrustLevel.BLOCKED });
    await t.app.services.users.linkIdentity(sys, blocked.id, 'telegram', '4001');
    const before = modelCalls();
    const result = await handle(t.app, inbound('telegram', '4001', '/help'));
    expect(result).toMatchObject({ dropped: 'blocked', replies: [], ticket: null });
    const group = await handle(t.app, groupMessage('telegram', '-500', '4001', '@bot hi'));
    expect(group).toMatchObject({ dropped: 'blocked', replies: [] });
    expect(await fence(t.app, telegram, '4001')).toEqual([]);
    expect(await fence(t.app, telegram, '-500')).toEqual([]);
    expect(modelCalls()).toBe(before);
  });

  it('groups: only listed chats are served; unknown senders who address the bot there become GUESTs; never paired', async () => {
    const before = modelCalls();
    const chatter = await handle(t.app, groupMessage('telegram', '-500', '5001', 'just chatting', false));
    expect(chatter.dropped).toBe('unknown sender');
    expect(await userOf('telegram', '5001')).toBeNull();

    const asked = await handle(t.app, groupMessage('telegram', '-500', '5001', '@bot what time is it?'));
    expect(asked.ticket).not.toBeNull();
    expect(await userOf('telegram', '5001')).toMatchObject({ trust: TrustLevel.GUEST });
    expect(await answered(telegram, '-500', before)).toBe('Echo: [Person 5001] @bot what time is it?');
    expect(model.lastChatRequest()!.body!.tools ?? []).toEqual([]);

    // A group that is not listed is ignored, for strangers and members alike, without a word.
    const stranger = await handle(t.app, groupMessage('telegram', '-600', '5002', '@bot hello'));
    expect(stranger).toMatchObject({ dropped: 'unknown sender', replies: [] });
    expect(await userOf('telegram', '5002')).toBeNull();
    const known = await handle(t.app, groupMessage('telegram', '-600', '9001', '@bot hello'));
    expect(known).toMatchObject({ dropped: 'gated', replies: [] });
    expect(t.logs.text).toContain('ignoring group -600: it is not in channels.telegram.groups');
    expect(await t.app.db.repo(sys, PairingRequest).countBy({ handle: '5002' })).toBe(0);

    // The group GUEST does not skip pairing in DMs: they get a code, their message is not processed.
    const dm = await handle(t.app, inbound('telegram', '5001', 'hi in private'));
    expect(dm).toMatchObject({ dropped: 'gated', ticket: null });
    const code = CODE.exec(dm.replies[0] ?? '')?.[1];
    expect(code).toBeDefined();
    // Approval raises the existing GUEST to MEMBER instead of creating a second user.
    const approved = await gql.exec(t.ownerToken, APPROVE, { code });
    expect(approved.data!.approvePairing).toMatchObject({ status: 'APPROVED', user: { trust: 'MEMBER', displayName: 'Person 5001' } });
    expect((await userOf('telegram', '5001'))!.trust).toBe(TrustLevel.MEMBER);
  });

  it('allowlist and disabled DM policies (built by createSenderPolicies from config)', async () => {
    const chat = t.app.chat!;
    const policiesFor = (telegramConfig: Record<string, unknown>) =>
      createSenderPolicies({
        config: { ...t.config, channels: { ...t.config.channels, telegram: { ...t.config.channels.telegram, ...telegramConfig } } },
        logger: t.app.logger,
        db: t.app.db,
        users: t.app.services.users,
        redis: t.app.redis!.create('pairing-test'),
        pairing: chat.pairing,
      }).get('telegram')!;
    try {
      chat.setPolicy('telegram', policiesFor({ dm_policy: 'allowlist', allow_from: ['telegram:2001', '2002'] }));
      const before = modelCalls();
      const listed = await handle(t.app, inbound('telegram', '2001', 'let me in'));
      expect(listed.ticket).not.toBeNull();
      expect(await userOf('telegram', '2001')).toMatchObject({ trust: TrustLevel.MEMBER, displayName: 'Person 2001' });
      expect(await answered(telegram, '2001', before)).toBe('Echo: let me in');
      const stranger = await handle(t.app, inbound('telegram', '2003', 'me too?'));
      expect(stranger).toMatchObject({ dropped: 'unknown sender', replies: [] });
      expect(await userOf('telegram', '2003')).toBeNull();

      chat.setPolicy('telegram', policiesFor({ dm_policy: 'disabled' }));
      const disabled = await handle(t.app, inbound('telegram', '3001', 'anyone?'));
      expect(disabled).toMatchObject({ dropped: 'unknown sender', replies: [] });
      expect(await userOf('telegram', '3001')).toBeNull();
      expect(await t.app.db.repo(sys, PairingRequest).countBy({ handle: '3001' })).toBe(0);
      // Known senders are not affected by the DM policy.
      const known = await handle(t.app, inbound('telegram', '9001', '/whoami'));
      expect(known.replies[0]).toContain('Trust: MEMBER');
      expect(await fence(t.app, telegram, '2003')).toEqual([]);
      expect(await fence(t.app, telegram, '3001')).toEqual([]);
    } finally {
      chat.setPolicy('telegram', policiesFor({}));
    }
  });

  it('/trust sets trust within the DESIGN §3 limits (an ADMIN cannot grant ADMIN)', async () => {
    const target = (await userOf('telegram', '1001'))!;
    const ok = await handle(t.app, inbound('telegram', '9000', '/trust telegram:1001 trusted'));
    expect(ok.replies).toEqual([`Person 1001 (${target.id}): MEMBER → TRUSTED.`]);
    const byHandle = await handle(t.app, inbound('telegram', '9000', '/trust 1001 ADMIN'));
    expect(byHandle.replies).toEqual(['⚠️ Only an OWNER may grant ADMIN; you may grant up to TRUSTED.']);
    const byId = await handle(t.app, inbound('telegram', '9000', `/trust ${target.id} GUEST`));
    expect(byId.replies).toEqual([`Person 1001 (${target.id}): TRUSTED → GUEST.`]);
    const onAdmin = await handle(t.app, inbound('telegram', '9000', `/trust ${admin.id} MEMBER`));
    expect(onAdmin.replies[0]).toContain('Only an OWNER may change the trust of a ADMIN');
    expect((await handle(t.app, inbound('telegram', '9000', '/trust 424242 MEMBER'))).replies[0]).toContain('was not found');
    expect((await handle(t.app, inbound('telegram', '9000', '/trust 1001 SUPREME'))).replies[0]).toContain('"SUPREME" is not a trust level');
    expect((await handle(t.app, inbound('telegram', '9001', '/trust 1001 MEMBER'))).replies).toEqual(['/trust needs ADMIN trust.']);
    expect((await userOf('telegram', '1001'))!.trust).toBe(TrustLevel.GUEST);
    const audits = await t.app.db.repo(sys, AuditEntry).find({ where: { action: 'user.trust.set', targetId: target.id }, order: { id: 'ASC' } });
    expect(audits.map((a) => a.details)).toEqual([
      { from: 'MEMBER', to: 'TRUSTED' },
      { from: 'TRUSTED', to: 'GUEST' },
    ]);
  });
});

const FIELDS = 'code channel handle displayName status expiresAt decidedAt decidedBy user { id displayName trust }';
const APPROVE = `mutation Approve($code: String!) { approvePairing(code: $code) { ${FIELDS} } }`;
const DENY = `mutation Deny($code: String!) { denyPairing(code: $code) { ${FIELDS} } }`;
const LIST = `query List($status: PairingStatus) { pairingRequests(status: $status) { ${FIELDS} } }`;
