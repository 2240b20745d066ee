import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { App } from '../../../server/app';
import { Ctx } from '../../../server/common/ctx';
import { AppError } from '../../../server/common/errors';
import { TrustLevel } from '../../../server/common/trust';
import { AuditEntry } from '../../../server/modules/audit';
import { PairingRequest, PairingService, PairingStatus, type PairingNotifier, type PairingOutcome } from '../../../server/modules/pairing';
import { LogCapture } from '../../support/log-capture';
import { testConfig } from '../../support/test-app';

type Notice = { channel: string; chatId: string; key: string; text: string };

/** PairingService on a real SQLite database with a movable clock (no Redis, no HTTP). */
describe('PairingService', () => {
  let dir: string;
  let app: App;
  let sys: Ctx;
  let now: number;
  let notices: Notice[];
  let failNotices: boolean;
  let pairing: PairingService;
  const anonymous = () => new Ctx({ actor: { kind: 'anonymous' }, logger: app.logger });
  const as = (trust: TrustLevel, userId = `u-${trust}`) => new Ctx({ actor: { kind: 'user', userId, trust }, logger: app.logger });
  const request = (handle: string, channel = 'telegram') => pairing.request(anonymous(), { channel, handle, displayName: `Person ${handle}` });
  const codeOf = (outcome: PairingOutcome) => {
    if (outcome.kind !== 'created') throw new Error(`expected a new code, got ${outcome.kind}`);
    return outcome.request.code;
  };
  const codeOfError = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    return err instanceof AppError ? `${err.code}: ${err.message}` : err;
  };

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-pairing-'));
    app = await App.create({ config: testConfig(dir), redis: false, logDestination: new LogCapture() });
    sys = app.systemCtx('test');
    now = Date.parse('2030-01-01T10:00:00Z');
    notices = [];
    failNotices = false;
    const notifier: PairingNotifier = {
      notify: async (_ctx, target, text) => {
        if (failNotices) throw new Error('platform down');
        notices.push({ ...target, text });
      },
    };
    pairing = new PairingService(app.db, app.services.audit, app.services.users, notifier, { now: () => now });
  });
  afterEach(async () => {
    await app.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('issues distinct 8-character codes from the alphabet, valid one hour, and audits the request', async () => {
    const outcomes = [await request('1'), await request('2'), await request('3')];
    const codes = outcomes.map(codeOf);
    expect(new Set(codes).size).toBe(3);
    for (const code of codes) expect(code).toMatch(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{8}$/);
    const first = (outcomes[0] as Extract<PairingOutcome, { kind: 'created' }>).request;
    expect(first).toMatchObject({ channel: 'telegram', handle: '1', displayName: 'Person 1', status: PairingStatus.PENDING });
    expect(first.expiresAt.getTime()).toBe(now + 3_600_000);
    const audit = await app.db.repo(sys, AuditEntry).findBy({ action: 'pairing.request' });
    expect(audit).toHaveLength(3);
    expect(audit[0]).toMatchObject({ actor: 'anonymous', targetType: 'PairingRequest' });
  });

  it('one code per sender per hour; at most 3 PENDING per channel, counted per channel; expiry frees the slots', async () => {
    codeOf(await request('1'));
    expect((await request('1')).kind).toBe('already-requested');
    codeOf(await request('2'));
    codeOf(await request('3'));
    expect(await request('4')).toEqual({ kind: 'full', pending: 3 });
    codeOf(await request('4', 'whatsapp'));

    now += 59 * 60_000;
    expect((await request('1')).kind).toBe('already-requested');
    expect((await request('5')).kind).toBe('full');
    now += 2 * 60_000;
    // An hour later the old codes have expired (marked lazily) and the same sender may get a new one.
    const again = codeOf(await request('1'));
    const rows = await app.db.repo(sys, PairingRequest).find({ where: { channel: 'telegram', handle: '1' }, order: { createdAt: 'ASC' } });
    expect(rows.map((r) => r.status)).toEqual([PairingStatus.EXPIRED, PairingStatus.PENDING]);
    expect(rows[1]!.code).toBe(again);
    codeOf(await request('5'));
  });

  it('a decided request still counts for the hour: a denied sender is not re-paired at once', async () => {
    const code = codeOf(await request('1'));
    await pairing.deny(as(TrustLevel.ADMIN), code);
    now += 30 * 60_000;
    expect((await request('1')).kind).toBe('already-requested');
    now += 31 * 60_000;
    expect((await request('1')).kind).toBe('created');
  });

  it('approve creates a MEMBER with the identity, records who decided, and tells the requester', async () => {
    const code = codeOf(await request('1001'));
    const admin = await app.services.users.create(sys, { displayName: 'Ada', trust: TrustLevel.ADMIN });
    const { request: decided, user, created } = await pairing.approve(as(TrustLevel.ADMIN, admin.id), ` ${code.slice(0, 4).toLowerCase()}-${code.slice(4)} `);
    expect(created).toBe(true);
    expect(user).toMatchObject({ displayName: 'Person 1001', trust: TrustLevel.MEMBER });
    expect(decided).toMatchObject({ code, status: PairingStatus.APPROVED, decidedBy: admin.id, userId: user.id });
    expect(decided.decidedAt!.getTime()).toBe(now);
    const [identities] = await app.services.users.identitiesOf(sys, [user.id]);
    expect(identities!.map((i) => [i.key, i.displayName])).toEqual([['telegram:1001', 'Person 1001']]);
    expect(notices).toEqual([{ channel: 'telegram', chatId: '1001', key: `pairing:${code}:approved`, text: expect.stringContaining('approved your pairing request') }]);
    const audit = await app.db.repo(sys, AuditEntry).findOneByOrFail({ action: 'pairing.approve' });
    expect(audit).toMatchObject({ actorUserId: admin.id, targetId: decided.id });
    expect(await pairing.list(as(TrustLevel.ADMIN), PairingStatus.APPROVED)).toEqual([expect.objectContaining({ code, userId: user.id })]);
  });

  it('approve links an existing identity: a GUEST is raised to MEMBER, a higher level kept, a BLOCKED user refused', async () => {
    const users = app.services.users;
    const guest = await users.create(sys, { displayName: 'Gus', trust: TrustLevel.GUEST });
    await users.linkIdentity(sys, guest.id, 'telegram', 'g');
    const trusted = await users.create(sys, { displayName: 'Tru', trust: TrustLevel.TRUSTED });
    await users.linkIdentity(sys, trusted.id, 'telegram', 't');
    const blocked = await users.create(sys, { displayName: 'Bob', trust: TrustLevel.BLOCKED });
    await users.linkIdentity(sys, blocked.id, 'whatsapp', 'b');
    const [g, tr, b] = [codeOf(await request('g')), codeOf(await request('t')), codeOf(await request('b', 'whatsapp'))];

    expect(await pairing.approve(sys, g)).toMatchObject({ created: false, user: { id: guest.id, trust: TrustLevel.MEMBER } });
    expect(await pairing.approve(sys, tr)).toMatchObject({ created: false, user: { id: trusted.id, trust: TrustLevel.TRUSTED } });
    expect(await codeOfError(pairing.approve(sys, b))).toMatch(/^CONFLICT: whatsapp:b belongs to a BLOCKED user/);
    expect((await app.db.repo(sys, PairingRequest).findOneByOrFail({ code: b })).status).toBe(PairingStatus.PENDING);
    expect(await app.db.repo(sys, AuditEntry).countBy({ action: 'pairing.approve' })).toBe(2);
  });

  it('only ADMIN and above may list, approve or deny; errors say what is wrong', async () => {
    const code = codeOf(await request('1'));
    for (const trust of [TrustLevel.TRUSTED, TrustLevel.MEMBER, TrustLevel.GUEST]) {
      expect(await codeOfError(pairing.approve(as(trust), code))).toMatch(/^FORBIDDEN: ADMIN trust or higher is required/);
      expect(await codeOfError(pairing.deny(as(trust), code))).toMatch(/^FORBIDDEN/);
      expect(await codeOfError(pairing.list(as(trust)))).toMatch(/^FORBIDDEN/);
    }
    expect(await codeOfError(pairing.approve(anonymous(), code))).toMatch(/^FORBIDDEN/);
    expect(await codeOfError(pairing.approve(sys, 'ZZZZZZZZ'))).toBe('NOT_FOUND: Pairing request ZZZZZZZZ was not found.');
    expect(await codeOfError(pairing.approve(sys, 'O0I1O0I1'))).toMatch(/^BAD_USER_INPUT: "O0I1O0I1" is not a pairing code: codes have 8 characters/);
    expect(await pairing.deny(sys, code)).toMatchObject({ status: PairingStatus.DENIED, decidedBy: null });
    expect(await codeOfError(pairing.approve(sys, code))).toBe(`CONFLICT: Pairing code ${code} was already denied.`);
    const expiring = codeOf(await request('2'));
    now += 3_600_001;
    expect(await codeOfError(pairing.deny(sys, expiring))).toMatch(new RegExp(`^CONFLICT: Pairing code ${expiring} expired at 2030-01-01T11:00:00.000Z`));
    expect(notices).toEqual([]);
  });

  it('two concurrent approvals of one code: one wins, the other is CONFLICT, one user is created', async () => {
    const code = codeOf(await request('1'));
    const results = await Promise.allSettled([pairing.approve(sys, code), pairing.approve(sys, code)]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
    expect((rejected.reason as AppError).code).toBe('CONFLICT');
    expect((await app.services.users.listAll(sys)).filter((u) => u.displayName === 'Person 1')).toHaveLength(1);
    expect(notices).toHaveLength(1);
  });

  it('a failing notice does not undo the approval', async () => {
    const code = codeOf(await request('1'));
    failNotices = true;
    const { request: decided } = await pairing.approve(sys, code);
    expect(decided.status).toBe(PairingStatus.APPROVED);
    expect(await app.services.users.findByIdentity(sys, 'telegram', '1')).toMatchObject({ trust: TrustLevel.MEMBER });
  });

  it('list: newest first, filtered by status, expiring stale requests on the way', async () => {
    const a = codeOf(await request('a'));
    now += 1000;
    const b = codeOf(await request('b'));
    expect((await pairing.list(sys)).map((r) => r.code)).toEqual([b, a]);
    now += 3_600_000;
    expect(await pairing.list(sys, PairingStatus.PENDING)).toEqual([]);
    expect((await pairing.list(sys, PairingStatus.EXPIRED)).map((r) => r.code)).toEqual([b, a]);
  });
});
