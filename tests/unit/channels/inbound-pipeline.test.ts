/**
 * The inbound pipeline at its ports: real users, sessions, turns and slash commands on SQLite; the
 * deduper, direct replies, turn scheduling and session events in process.
 */
import type { InboundMessage } from '../../../server/channels/channel.types';
import { InboundPipeline, REFUSE_UNKNOWN, type SenderPolicy } from '../../../server/channels/inbound-pipeline';
import { compose, type Middleware } from '../../../server/channels/middleware';
import { TrustLevel } from '../../../server/common/trust';
import { SlashCommandService } from '../../../server/modules/commands';
import { RunningTurns, SessionRotation, TurnService } from '../../../server/modules/conversation';
import { Message, MessageStatus, Session, SessionExpiryService, SessionStatus } from '../../../server/modules/sessions';
import { UsageService } from '../../../server/modules/usage';
import type { User } from '../../../server/modules/users';
import { InMemoryDeduper, InMemorySessionEvents, inProcessTurnScheduler, RecordingReplier, ScriptedModelCaller } from '../../support/ports';
import { SqliteWorld } from '../../support/sqlite-world';

let world: SqliteWorld;
beforeAll(async () => {
  world = await SqliteWorld.open();
});
afterAll(() => world.close());

let seq = 0;
const uniq = (p: string) => `${p}-${++seq}-${Math.random().toString(36).slice(2, 6)}`;

interface Options {
  policy?: SenderPolicy;
  requireMention?: boolean;
  idleMinutes?: number | null;
}

function pipeline(o: Options = {}) {
  const scheduler = inProcessTurnScheduler();
  const events = new InMemorySessionEvents();
  const replier = new RecordingReplier();
  const turns = new TurnService(world.db, scheduler.control, events, new RunningTurns(), () => 'followup');
  const rotation = new SessionRotation({ lifecycle: world.lifecycle, scheduler: scheduler.control, events });
  const commands = new SlashCommandService({
    users: world.users,
    scheduler: scheduler.control,
    rotation,
    events,
    usage: new UsageService(world.db),
    models: new ScriptedModelCaller(),
    tools: { describeFor: async () => [] },
    approvals: { decide: async () => Promise.reject(new Error('no approvals in this test')) },
    pendingMessages: async (ctx, sessionId) => (await turns.pending(ctx, sessionId)).length,
  });
  const admitted: InboundMessage[] = [];
  const policy = o.policy ?? REFUSE_UNKNOWN;
  const counting: SenderPolicy = {
    admit: (ctx, m) => (admitted.push(m), policy.admit(ctx, m)),
    gate: policy.gate ? (ctx, m, u) => policy.gate!(ctx, m, u) : undefined,
  };
  const p = new InboundPipeline({
    dedupe: new InMemoryDeduper(),
    users: world.users,
    lifecycle: world.lifecycle,
    turns,
    commands,
    events,
    policy: () => counting,
    requireMention: () => o.requireMention ?? true,
    dmScope: () => 'per-user',
    replier,
    logger: world.logger,
    expiry: new SessionExpiryService(rotation, () => ({ dailyResetHour: null, idleMinutes: o.idleMinutes ?? null }), world.clock),
  });
  return { p, ...scheduler, events, replier, admitted };
}

async function member(trust = TrustLevel.MEMBER): Promise<{ user: User; handle: string }> {
  const handle = uniq('tg');
  return { user: await world.user(`User ${handle}`, trust, { channel: 'telegram', handle }), handle };
}

function dm(handle: string, text: string, extra: Partial<InboundMessage> = {}): InboundMessage {
  return { channel: 'telegram', chatId: `dm-${handle}`, chatKind: 'dm', sender: { handle, displayName: 'Sender' }, text, ...extra };
}

const stored = (sessionId: string) => world.db.repo(world.system(), Message).find({ where: { sessionId }, order: { id: 'ASC' } });

describe('InboundPipeline', () => {
  it('stores a known sender\'s message as QUEUED, publishes it and schedules its session', async () => {
    const t = pipeline();
    const { user, handle } = await member();
    const c = await t.p.handle(dm(handle, 'hello', { platformMessageId: '1' }));

    expect(c.dropped).toBeUndefined();
    expect(c.user?.id).toBe(user.id);
    expect(c.ticket).toMatchObject({ status: MessageStatus.QUEUED, duplicate: false, sessionId: c.session!.id });
    expect(c.session).toMatchObject({ userId: user.id, channel: 'telegram', chatId: `dm-${handle}`, status: SessionStatus.ACTIVE });
    const rows = await stored(c.session!.id);
    expect(rows.map((m) => [m.content, m.userId, m.status, m.dedupeKey])).toEqual([['hello', user.id, MessageStatus.QUEUED, `telegram:dm-${handle}:1`]]);
    expect(t.jobs.scheduled).toEqual([{ sessionId: c.session!.id, messageId: c.ticket!.messageId }]);
    expect(t.events.of(c.session!.id, 'MessageAdded').map((e) => e.content)).toEqual(['hello']);
    expect(t.replier.replies).toEqual([]);
  });

  it('drops a redelivered platform message first, before asking who sent it', async () => {
    const t = pipeline();
    const handle = uniq('stranger');
    const first = await t.p.handle(dm(handle, 'hi', { platformMessageId: '7' }));
    const again = await t.p.handle(dm(handle, 'hi', { platformMessageId: '7' }));
    expect([first.dropped, again.dropped]).toEqual(['unknown sender', 'duplicate']);
    expect(t.admitted).toHaveLength(1);

    const { handle: known } = await member();
    const a = await t.p.handle(dm(known, 'once', { platformMessageId: '8' }));
    const b = await t.p.handle(dm(known, 'once', { platformMessageId: '8' }));
    expect(b.dropped).toBe('duplicate');
    expect((await stored(a.session!.id)).map((m) => m.content)).toEqual(['once']);
    expect(t.jobs.scheduled).toHaveLength(1);
  });

  it('asks the channel policy about unknown senders: refused, answered, or admitted as a new user', async () => {
    const refused = pipeline();
    const nobody = await refused.p.handle(dm(uniq('x'), 'let me in'));
    expect(nobody).toMatchObject({ dropped: 'unknown sender', user: null, session: null, ticket: null });

    const pairing = pipeline({ policy: { admit: async () => ({ user: null, reply: 'Your pairing code is 1234.' }) } });
    const asked = await pairing.p.handle(dm(uniq('y'), 'hi'));
    expect(asked.dropped).toBe('unknown sender');
    expect(pairing.replier.texts()).toEqual(['Your pairing code is 1234.']);

    const open = pipeline({ policy: { admit: async (_ctx, m) => ({ user: await world.users.createFromSender(world.system('open policy'), m.channel, m.sender, TrustLevel.GUEST) }) } });
    const handle = uniq('z');
    const c = await open.p.handle(dm(handle, 'first words'));
    expect(c.user).toMatchObject({ trust: TrustLevel.GUEST });
    expect((await world.users.findByIdentity(world.system(), 'telegram', handle))?.id).toBe(c.user!.id);
    expect((await stored(c.session!.id)).map((m) => [m.content, m.userId])).toEqual([['first words', c.user!.id]]);
  });

  it('drops messages of BLOCKED users silently', async () => {
    const t = pipeline();
    const { handle } = await member(TrustLevel.BLOCKED);
    const c = await t.p.handle(dm(handle, 'hello?'));
    expect(c).toMatchObject({ dropped: 'blocked', session: null, ticket: null });
    expect(t.replier.replies).toEqual([]);
    expect(t.jobs.scheduled).toEqual([]);
  });

  it('in groups answers only when mentioned (unless the channel says otherwise), in the group\'s session', async () => {
    const t = pipeline();
    const { handle } = await member();
    const group = { chatKind: 'group' as const, chatId: uniq('group') };
    const quiet = await t.p.handle(dm(handle, 'talking among us', group));
    expect(quiet).toMatchObject({ dropped: 'not mentioned', session: null });
    const mentioned = await t.p.handle(dm(handle, 'what do you think?', { ...group, mentionsBot: true }));
    expect(mentioned.dropped).toBeUndefined();
    expect(mentioned.session).toMatchObject({ chatId: group.chatId, userId: null });

    const open = pipeline({ requireMention: false });
    const c = await open.p.handle(dm(handle, 'no mention needed', group));
    expect(c.session?.id).toBe(mentioned.session!.id);
    expect((await stored(c.session!.id)).map((m) => m.content)).toEqual(['what do you think?', 'no mention needed']);
  });

  it('lets the policy gate known senders: with a refusal text, or silently', async () => {
    const { user, handle } = await member();
    const gated = pipeline({ policy: { admit: REFUSE_UNKNOWN.admit, gate: async (_ctx, m, u) => (u.id === user.id ? (m.text === 'quiet' ? '' : 'Slow down.') : null) } });
    const loud = await gated.p.handle(dm(handle, 'again'));
    const quiet = await gated.p.handle(dm(handle, 'quiet'));
    expect([loud.dropped, quiet.dropped]).toEqual(['gated', 'gated']);
    expect(gated.replier.texts()).toEqual(['Slow down.']);
    expect(gated.jobs.scheduled).toEqual([]);
  });

  it('keeps a DM in its session, and starts a new one (telling the sender) after the idle time', async () => {
    const t = pipeline({ idleMinutes: 30 });
    const { handle } = await member();
    const a = await t.p.handle(dm(handle, 'one'));
    const b = await t.p.handle(dm(handle, 'two'));
    expect(b.session!.id).toBe(a.session!.id);
    // Both were answered (still-waiting messages would move along to the new session).
    await world.db.repo(world.system(), Message).update({ sessionId: a.session!.id }, { status: MessageStatus.DONE });

    world.clock.advance(31 * 60_000);
    const c = await t.p.handle(dm(handle, 'three'));
    expect(c.session!.id).not.toBe(a.session!.id);
    expect(t.replier.texts()).toEqual([expect.stringContaining('idle for over 30 minutes')]);
    expect(t.events.of(a.session!.id, 'SessionRotated')).toMatchObject([{ newSessionId: c.session!.id, reason: 'idle' }]);
    expect((await world.db.repo(world.system(), Session).findOneByOrFail({ id: a.session!.id })).status).toBe(SessionStatus.ARCHIVED);
    expect((await stored(c.session!.id)).map((m) => m.content)).toEqual(['three']);
    expect((await stored(a.session!.id)).map((m) => m.content)).toEqual(['one', 'two']);
  });

  it('answers slash commands directly, without storing or scheduling them; /new moves on to the new session', async () => {
    const t = pipeline();
    const { user, handle } = await member();
    const who = await t.p.handle(dm(handle, '/whoami'));
    expect(who.ticket).toBeNull();
    expect(t.replier.texts()[0]).toContain(`You are ${user.displayName}`);
    expect(await stored(who.session!.id)).toEqual([]);

    const fresh = await t.p.handle(dm(handle, '/new'));
    expect(fresh.session!.id).not.toBe(who.session!.id);
    expect(t.replier.texts()[1]).toBe('Started a new session. The old one is archived.');
    const next = await t.p.handle(dm(handle, 'in the new one'));
    expect(next.session!.id).toBe(fresh.session!.id);
    expect(t.jobs.scheduled.map((j) => j.sessionId)).toEqual([fresh.session!.id]);

    const { handle: guest } = await member(TrustLevel.GUEST);
    await t.p.handle(dm(guest, '/status'));
    expect(t.replier.texts()[2]).toBe('Only /help and /whoami are available to you.');
  });

  it('drops empty messages, and answers a failing step with an apology instead of throwing', async () => {
    const t = pipeline();
    const { handle } = await member();
    expect((await t.p.handle(dm(handle, '   '))).dropped).toBe('empty');
    expect(t.jobs.scheduled).toEqual([]);

    const broken = pipeline({ policy: { admit: async () => Promise.reject(new Error('policy store is down')) } });
    const c = await broken.p.handle(dm(uniq('w'), 'hi'));
    expect(broken.replier.texts()).toEqual(['⚠️ Sorry, something went wrong while handling your message.']);
    expect(c.ticket).toBeNull();
    expect(world.logs.text).toContain('policy store is down');
  });
});

describe('compose (the pipeline\'s middleware chain)', () => {
  it('runs steps in order and stops where a step does not call next()', async () => {
    const trail: string[] = [];
    const step = (name: string, goOn = true): Middleware<string[]> => async (c, next) => {
      c.push(name);
      if (goOn) await next();
    };
    await compose([step('a'), step('b', false), step('c')])(trail);
    expect(trail).toEqual(['a', 'b']);
  });

  it('throws when a step calls next() a second time, so nothing is answered twice', async () => {
    const ran: string[] = [];
    const twice: Middleware<string[]> = async (_c, next) => {
      await next();
      await next();
    };
    const last: Middleware<string[]> = async (c) => void c.push('enqueue');
    await expect(compose<string[]>([async (_c, next) => next(), twice, last])(ran)).rejects.toThrow('next() called twice in inbound step 1');
    expect(ran).toEqual(['enqueue']);
  });
});
