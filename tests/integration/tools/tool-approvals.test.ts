import { z } from 'zod';
import { AppError } from '../../../server/common/errors';
import { TrustLevel } from '../../../server/common/trust';
import {
  createBuiltinTools,
  defineTool,
  parseToolApprovalDecision,
  ToolApprovalDecision,
  ToolApprovalService,
  ToolApprovalStatus,
  ToolPipeline,
  type ToolApproval,
  type ToolPipelineHooks,
} from '../../../server/modules/tools';
import { call, ToolsFixture } from './tools-fixture';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('tool approvals', () => {
  let f: ToolsFixture;
  let guardedRuns = 0;

  beforeAll(async () => {
    f = await ToolsFixture.create({ config: { tools: { shell: { enabled: true, allow: ['echo'] } } } });
    f.register(
      ...createBuiltinTools({ tools: f.app.config.tools, users: f.app.services.users, messageSender: f.sender }),
      defineTool({
        name: 'guarded',
        description: 'A TRUSTED tool that needs approval.',
        schema: z.object({ note: z.string() }),
        minTrust: TrustLevel.TRUSTED,
        requiresApproval: true,
        run: async (_tc, a) => {
          guardedRuns += 1;
          return `guarded ran: ${a.note}`;
        },
      }),
    );
  });
  afterAll(() => f.close());

  /** Hooks that decide each approval `delayMs` after it is requested, as `decider`. */
  function decideWith(decider: TrustLevel, decision: ToolApprovalDecision, delayMs = 100, service = f.approvals) {
    const requested: ToolApproval[] = [];
    const decisions: Array<Promise<ToolApproval>> = [];
    const hooks: ToolPipelineHooks = {
      onApprovalRequested: (approval) => {
        requested.push(approval);
        decisions.push(sleep(delayMs).then(() => service.decide(f.ctx(decider), approval.id, decision)));
      },
    };
    return { hooks, requested, decisions };
  }

  it('pauses the call until an ADMIN allows it once; the next call asks again', async () => {
    const runsBefore = guardedRuns;
    const d = decideWith(TrustLevel.ADMIN, ToolApprovalDecision.ALLOW_ONCE);
    const started = Date.now();
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.TRUSTED), [call('guarded', { note: 'one' })], d.hooks);
    const waited = Date.now() - started;
    expect(out).toMatchObject({ status: 'ok', output: 'guarded ran: one' });
    expect(d.requested).toHaveLength(1);
    const approval = d.requested[0]!;
    expect(approval).toMatchObject({ status: ToolApprovalStatus.PENDING, tool: 'guarded', userId: f.user(TrustLevel.TRUSTED).id, sessionId: 'session-1', turnId: 'turn-1', args: { note: 'one' } });
    expect(approval.expiresAt.getTime() - approval.createdAt.getTime()).toBeGreaterThanOrEqual(59_000);
    // The in-process decision wakes the waiting call at once, long before the fixture's 5 s poll.
    expect(waited).toBeGreaterThanOrEqual(90);
    expect(waited).toBeLessThan(2000);
    const decided = await d.decisions[0]!;
    expect(decided).toMatchObject({ status: ToolApprovalStatus.ALLOWED_ONCE, decidedBy: f.user(TrustLevel.ADMIN).id });
    expect(guardedRuns).toBe(runsBefore + 1);

    const again = decideWith(TrustLevel.ADMIN, ToolApprovalDecision.ALLOW_ONCE);
    const [second] = await f.pipeline.runAll(f.toolContext(TrustLevel.TRUSTED), [call('guarded', { note: 'two' })], again.hooks);
    expect(second!.status).toBe('ok');
    expect(again.requested).toHaveLength(1);

    const audit = await f.audit('tool.approval.decide');
    expect(audit.find((e) => e.targetId === approval.id)).toMatchObject({
      actorUserId: f.user(TrustLevel.ADMIN).id,
      details: expect.objectContaining({ tool: 'guarded', decision: 'ALLOW_ONCE', requestedBy: f.user(TrustLevel.TRUSTED).id }),
    });
  });

  it('denies: the tool does not run and the model is told', async () => {
    const runsBefore = guardedRuns;
    const d = decideWith(TrustLevel.OWNER, ToolApprovalDecision.DENY);
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.TRUSTED), [call('guarded', { note: 'no' })], d.hooks);
    expect(out).toMatchObject({ status: 'denied', ok: false });
    expect(out!.output).toContain('was denied');
    expect(guardedRuns).toBe(runsBefore);
    expect((await d.decisions[0]!).status).toBe(ToolApprovalStatus.DENIED);
  });

  it('allow always: the OWNER approves shell once, later calls by the same user run without asking', async () => {
    const d = decideWith(TrustLevel.OWNER, ToolApprovalDecision.ALLOW_ALWAYS);
    const tc = f.toolContext(TrustLevel.OWNER);
    const [first] = await f.pipeline.runAll(tc, [call('shell', { argv: ['echo', 'hello'] })], d.hooks);
    expect(first!.status).toBe('ok');
    expect(JSON.parse(first!.output)).toMatchObject({ exitCode: 0, stdout: 'hello\n' });
    expect(d.requested).toHaveLength(1);

    const autoBefore = (await f.audit('tool.approval.auto')).length;
    const none = decideWith(TrustLevel.OWNER, ToolApprovalDecision.DENY);
    const [second] = await f.pipeline.runAll(tc, [call('shell', { argv: ['echo', 'again'] })], none.hooks);
    expect(second!.status).toBe('ok');
    expect(JSON.parse(second!.output).stdout).toBe('again\n');
    expect(none.requested).toHaveLength(0);
    const auto = await f.audit('tool.approval.auto');
    expect(auto).toHaveLength(autoBefore + 1);
    expect(auto.at(-1)).toMatchObject({ targetId: d.requested[0]!.id, details: expect.objectContaining({ tool: 'shell', args: 'echo again' }) });
  });

  // The only ALLOW_ALWAYS grant of "guarded" in this file (TRUSTED); other tests ask as other users.
  it('an ALLOW_ALWAYS grant is per user and per tool', async () => {
    const grant = decideWith(TrustLevel.ADMIN, ToolApprovalDecision.ALLOW_ALWAYS);
    await f.pipeline.runAll(f.toolContext(TrustLevel.TRUSTED), [call('guarded', { note: 'grant' })], grant.hooks);
    expect(grant.requested).toHaveLength(1);
    const other = decideWith(TrustLevel.OWNER, ToolApprovalDecision.ALLOW_ONCE);
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.ADMIN), [call('guarded', { note: 'admin' })], other.hooks);
    expect(out!.status).toBe('ok');
    expect(other.requested).toHaveLength(1);
  });

  it('only an OWNER may decide on an OWNER-level tool; ADMIN gets FORBIDDEN, below ADMIN too', async () => {
    // The OWNER holds an ALLOW_ALWAYS grant for shell from the test above, so the pending request is made by the system.
    expect((await f.approvals.request(f.ctx(TrustLevel.OWNER), { sessionId: 's', tool: 'shell', args: {} })).autoApproved).toBe(true);
    const pending = (await f.approvals.request(f.systemCtx(), { sessionId: 's', tool: 'shell', args: { argv: ['echo', 'x'] } })).approval;
    expect(pending.status).toBe(ToolApprovalStatus.PENDING);
    await expect(f.approvals.decide(f.ctx(TrustLevel.ADMIN), pending.id, ToolApprovalDecision.ALLOW_ONCE)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    await expect(f.approvals.decide(f.ctx(TrustLevel.TRUSTED), pending.id, ToolApprovalDecision.DENY)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await f.approvals.get(f.systemCtx(), pending.id)).status).toBe(ToolApprovalStatus.PENDING);
    const ok = await f.approvals.decide(f.ctx(TrustLevel.OWNER), pending.id, ToolApprovalDecision.DENY);
    expect(ok.status).toBe(ToolApprovalStatus.DENIED);

    const guarded = (await f.approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: {} })).approval;
    await expect(f.approvals.decide(f.ctx(TrustLevel.TRUSTED), guarded.id, ToolApprovalDecision.ALLOW_ONCE)).rejects.toMatchObject({ code: 'FORBIDDEN' });
    expect((await f.approvals.decide(f.ctx(TrustLevel.ADMIN), guarded.id, ToolApprovalDecision.ALLOW_ONCE)).status).toBe(ToolApprovalStatus.ALLOWED_ONCE);
  });

  it('deciding twice is a CONFLICT; an unknown id is NOT_FOUND', async () => {
    const { approval } = await f.approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: {} });
    await f.approvals.decide(f.ctx(TrustLevel.ADMIN), approval.id, ToolApprovalDecision.ALLOW_ONCE);
    const err = await f.approvals.decide(f.ctx(TrustLevel.OWNER), approval.id, ToolApprovalDecision.DENY).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('already decided: ALLOWED_ONCE') });
    await expect(f.approvals.decide(f.ctx(TrustLevel.OWNER), 'no-such-id', ToolApprovalDecision.DENY)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('accepts chat spellings of a decision and rejects unknown ones', async () => {
    const { approval } = await f.approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: {} });
    await expect(f.approvals.decide(f.ctx(TrustLevel.ADMIN), approval.id, 'maybe' as ToolApprovalDecision)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((await f.approvals.get(f.systemCtx(), approval.id)).status).toBe(ToolApprovalStatus.PENDING);
    const decided = await f.approvals.decide(f.ctx(TrustLevel.ADMIN), approval.id, 'allow_once' as ToolApprovalDecision);
    expect(decided.status).toBe(ToolApprovalStatus.ALLOWED_ONCE);
  });

  it('two concurrent deciders: exactly one wins, the other gets CONFLICT', async () => {
    const other = new ToolApprovalService(f.app.db, f.app.services.audit, f.registry, { timeoutMs: 60_000 });
    const { approval } = await f.approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: {} });
    const results = await Promise.allSettled([
      f.approvals.decide(f.ctx(TrustLevel.ADMIN), approval.id, ToolApprovalDecision.ALLOW_ONCE),
      other.decide(f.ctx(TrustLevel.OWNER), approval.id, ToolApprovalDecision.DENY),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'CONFLICT' } });
  });

  it('timeout-deny: an undecided request expires, the call is denied and the row is EXPIRED', async () => {
    const approvals = new ToolApprovalService(f.app.db, f.app.services.audit, f.registry, { timeoutMs: 300, pollIntervalMs: 50 });
    const pipeline = new ToolPipeline({ registry: f.registry, approvals, audit: f.app.services.audit }, { timeoutMs: 5000, maxOutputChars: 1000, maxParallel: 2 });
    const requested: ToolApproval[] = [];
    const runsBefore = guardedRuns;
    const started = Date.now();
    const [out] = await pipeline.runAll(f.toolContext(TrustLevel.MEMBER, { ctx: f.ctx(TrustLevel.OWNER) }), [call('guarded', { note: 'late' })], {
      onApprovalRequested: (a) => void requested.push(a),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(out).toMatchObject({ status: 'denied' });
    expect(out!.output).toContain('not approved in time');
    expect(guardedRuns).toBe(runsBefore);
    const row = await approvals.get(f.systemCtx(), requested[0]!.id);
    expect(row.status).toBe(ToolApprovalStatus.EXPIRED);
    expect((await f.audit('tool.approval.expire')).some((e) => e.targetId === row.id)).toBe(true);
    await expect(approvals.decide(f.ctx(TrustLevel.OWNER), row.id, ToolApprovalDecision.ALLOW_ONCE)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('a decision made by another process (another service instance) is seen by polling', async () => {
    const elsewhere = new ToolApprovalService(f.app.db, f.app.services.audit, f.registry, { timeoutMs: 60_000 });
    const approvals = new ToolApprovalService(f.app.db, f.app.services.audit, f.registry, { timeoutMs: 60_000, pollIntervalMs: 100 });
    const { approval } = await approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: {} });
    const waiting = approvals.waitForDecision(f.ctx(TrustLevel.MEMBER), approval.id);
    await sleep(150);
    await elsewhere.decide(f.ctx(TrustLevel.ADMIN), approval.id, ToolApprovalDecision.ALLOW_ONCE);
    await expect(waiting).resolves.toBe(ToolApprovalStatus.ALLOWED_ONCE);
  });

  it('a stopped turn withdraws its pending request', async () => {
    const controller = new AbortController();
    const requested: ToolApproval[] = [];
    const running = f.pipeline.runAll(f.toolContext(TrustLevel.ADMIN, { signal: controller.signal }), [call('guarded', { note: 'stop' })], {
      onApprovalRequested: (a) => {
        requested.push(a);
        setTimeout(() => controller.abort(new Error('stop')), 50);
      },
    });
    const [out] = await running;
    expect(out!.status).toBe('error');
    expect(out!.output).toContain('stopped while the call waited for approval');
    expect((await f.approvals.get(f.systemCtx(), requested[0]!.id)).status).toBe(ToolApprovalStatus.EXPIRED);
  });

  it('lists approvals for ADMIN and above, filtered by status', async () => {
    const { approval } = await f.approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: { note: 'list' } });
    const pending = await f.approvals.list(f.ctx(TrustLevel.ADMIN), ToolApprovalStatus.PENDING);
    expect(pending.map((a) => a.id)).toContain(approval.id);
    expect(pending.every((a) => a.status === ToolApprovalStatus.PENDING)).toBe(true);
    const all = await f.approvals.list(f.ctx(TrustLevel.OWNER));
    expect(all.length).toBeGreaterThan(pending.length);
    await expect(f.approvals.list(f.ctx(TrustLevel.TRUSTED), null)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('expireOverdue marks overdue pending requests EXPIRED', async () => {
    let now = Date.now();
    const approvals = new ToolApprovalService(f.app.db, f.app.services.audit, f.registry, { timeoutMs: 1000, now: () => now });
    const a = (await approvals.request(f.ctx(TrustLevel.MEMBER), { sessionId: 's', tool: 'guarded', args: {} })).approval;
    expect(await approvals.expireOverdue(f.systemCtx())).toBe(0);
    now += 1001;
    expect(await approvals.expireOverdue(f.systemCtx())).toBeGreaterThanOrEqual(1);
    expect((await approvals.get(f.systemCtx(), a.id)).status).toBe(ToolApprovalStatus.EXPIRED);
    await expect(approvals.waitForDecision(f.systemCtx(), a.id)).resolves.toBe(ToolApprovalStatus.EXPIRED);
  });

  it('parses chat decisions', () => {
    expect(parseToolApprovalDecision('allow_once')).toBe(ToolApprovalDecision.ALLOW_ONCE);
    expect(parseToolApprovalDecision('Allow-Always')).toBe(ToolApprovalDecision.ALLOW_ALWAYS);
    expect(parseToolApprovalDecision('deny')).toBe(ToolApprovalDecision.DENY);
    expect(parseToolApprovalDecision('yes')).toBeNull();
  });
});
