/**
 * The turn runner at its ports: a real TurnService on SQLite, the real TurnControl over in-process
 * jobs, abort bus and locks, and an executor that answers like the agent loop (marks its batch done).
 */
import { In } from 'typeorm';
import type { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { RunningTurns, TurnAbortedError, TurnRunner, TurnService, type QueueMode, type SessionChores, type TurnExecutor } from '../../../server/modules/conversation';
import { Message, MessageRole, MessageStatus, type Session } from '../../../server/modules/sessions';
import type { User } from '../../../server/modules/users';
import { InMemorySessionEvents, inProcessTurnScheduler } from '../../support/ports';
import { SqliteWorld } from '../../support/sqlite-world';

/**
 * Answers each batch by marking it DONE; `hold` keeps the next turn running until released or aborted
 * (then, like the agent loop, a stopped batch is CANCELLED and the drain goes on).
 */
class AnsweringExecutor implements TurnExecutor {
  readonly batches: string[][] = [];
  readonly signals: AbortSignal[] = [];
  private held: { started: () => void; release: Promise<void> } | null = null;
  fail: Error | null = null;

  constructor(
    private readonly world: SqliteWorld,
    private readonly locks: { isHeld(id: string): Promise<boolean> },
  ) {}

  /** The next turn waits (until `release` or its signal aborts); resolves when it started. */
  hold(): { started: Promise<void>; release: () => void } {
    let started!: () => void;
    let release!: () => void;
    const startedP = new Promise<void>((r) => (started = r));
    this.held = { started, release: new Promise<void>((r) => (release = r)) };
    return { started: startedP, release };
  }

  async runTurn(ctx: Ctx, session: Session, batch: Message[], _turnId: string, signal: AbortSignal): Promise<void> {
    if (!(await this.locks.isHeld(session.id))) throw new Error('turn ran without the session lock');
    this.batches.push(batch.map((m) => m.content));
    this.signals.push(signal);
    const held = this.held;
    this.held = null;
    if (held) {
      held.started();
      const aborted = new Promise<'aborted'>((resolve) => signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
      if ((await Promise.race([held.release, aborted])) === 'aborted') {
        // Like the agent loop: a shutdown leaves the batch PROCESSING for the next worker; a stop cancels it.
        const reason = signal.reason instanceof TurnAbortedError ? signal.reason.reason : 'stopped';
        if (reason === TurnAbortedError.SHUTDOWN) throw signal.reason;
        await this.world.db.repo(ctx, Message).update({ id: In(batch.map((m) => m.id)) }, { status: MessageStatus.CANCELLED });
        return;
      }
    }
    if (this.fail) throw this.fail;
    await this.world.db.repo(ctx, Message).update({ id: In(batch.map((m) => m.id)) }, { status: MessageStatus.DONE });
  }
}

let world: SqliteWorld;
let ada: User;

beforeAll(async () => {
  world = await SqliteWorld.open();
  ada = await world.user('Ada', TrustLevel.MEMBER);
});
afterAll(() => world.close());

function setup(mode: QueueMode = 'followup', chores: SessionChores[] = [], turnsPerDrain?: number) {
  const scheduler = inProcessTurnScheduler();
  const events = new InMemorySessionEvents();
  const running = new RunningTurns();
  let queueMode = mode;
  const turns = new TurnService(world.db, scheduler.control, events, running, () => queueMode);
  const executor = new AnsweringExecutor(world, scheduler.locks);
  const runner = new TurnRunner(turns, executor, scheduler.locks, chores, turnsPerDrain);
  return { ...scheduler, events, running, turns, executor, runner, setMode: (m: QueueMode) => (queueMode = m) };
}

function freshSession(): Promise<Session> {
  return world.session(ada);
}

const never = () => new AbortController().signal;

describe('TurnRunner', () => {
  it('answers the oldest pending message per drain, under the lock, and says when more wait', async () => {
    const t = setup();
    const session = await freshSession();
    for (const text of ['one', 'two', 'three']) await t.turns.submit(world.as(ada), session, { text });
    expect(t.jobs.take().map((j) => j.sessionId)).toEqual([session.id, session.id, session.id]);

    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 1, more: true });
    expect(t.executor.batches).toEqual([['one']]);
    expect(t.locks.log).toEqual([`+${session.id}`, `-${session.id}`]);
    expect(await t.locks.isHeld(session.id)).toBe(false);
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 1, more: true });
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 1, more: false });
    expect(t.executor.batches).toEqual([['one'], ['two'], ['three']]);
    expect(await t.turns.pending(world.system(), session.id)).toEqual([]);
  });

  it('with a larger turnsPerDrain, answers that many in one hold of the lock, oldest first', async () => {
    const t = setup('followup', [], 10);
    const session = await freshSession();
    for (const text of ['one', 'two', 'three']) await t.turns.submit(world.as(ada), session, { text });
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 3, more: false });
    expect(t.executor.batches).toEqual([['one'], ['two'], ['three']]);
    expect(t.locks.log).toEqual([`+${session.id}`, `-${session.id}`]);
  });

  it('answers everything waiting as one turn in collect mode', async () => {
    const t = setup('collect');
    const session = await freshSession();
    for (const text of ['a', 'b']) await t.turns.submit(world.as(ada), session, { text });
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 1, more: false });
    expect(t.executor.batches).toEqual([['a', 'b']]);
  });

  it('is busy while another worker holds the session, and runs nothing', async () => {
    const t = setup();
    const session = await freshSession();
    await t.turns.submit(world.as(ada), session, { text: 'waiting' });
    const other = await t.locks.tryAcquire(session.id);
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'busy' });
    expect(t.executor.batches).toEqual([]);
    await other!.release();
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 1, more: false });
  });

  it('releases the lock when a turn throws', async () => {
    const t = setup();
    const session = await freshSession();
    await t.turns.submit(world.as(ada), session, { text: 'boom' });
    t.executor.fail = new Error('executor broke');
    await expect(t.runner.drain(world.system(), session.id, never())).rejects.toThrow('executor broke');
    expect(await t.locks.isHeld(session.id)).toBe(false);
  });

  it('a requested abort reaches the running turn through the bus; the next drain answers the next message', async () => {
    const t = setup();
    const stop = await t.control.listen(t.running);
    const session = await freshSession();
    const first = await t.turns.submit(world.as(ada), session, { text: 'long task' });
    await t.turns.submit(world.as(ada), session, { text: 'after' });
    const held = t.executor.hold();
    const drained = t.runner.drain(world.system(), session.id, never());
    await held.started;
    expect(await t.control.isRunning(session.id)).toBe(true);

    expect(await t.control.requestAbort(session.id, '/stop')).toBe(true);
    expect(await drained).toEqual({ status: 'done', turns: 1, more: true });
    expect(t.executor.signals[0]!.reason).toEqual(new TurnAbortedError('/stop'));
    expect(await t.runner.drain(world.system(), session.id, never())).toEqual({ status: 'done', turns: 1, more: false });
    expect(t.executor.signals[1]!.aborted).toBe(false);
    expect(t.aborts.published).toEqual([{ sessionId: session.id, reason: '/stop', beforeMessageId: undefined }]);
    expect(t.executor.batches).toEqual([['long task'], ['after']]);
    expect((await world.db.repo(world.system(), Message).findOneByOrFail({ id: first.messageId })).status).toBe(MessageStatus.CANCELLED);
    expect(await t.control.isRunning(session.id)).toBe(false);
    expect(await t.control.requestAbort(session.id, '/stop')).toBe(false);
    expect(t.running.size).toBe(0);
    await stop();
  });

  it('in interrupt mode a newer message aborts the older turn, never the turn answering it', async () => {
    const t = setup('interrupt');
    const stop = await t.control.listen(t.running);
    const session = await freshSession();
    await t.turns.submit(world.as(ada), session, { text: 'old question' });
    const held = t.executor.hold();
    const drained = t.runner.drain(world.system(), session.id, never());
    await held.started;
    await t.turns.submit(world.as(ada), session, { text: 'never mind, this' });
    // The newer message was left to the running drain (its lock is marked), which asks for another drain.
    expect(t.jobs.take().map((j) => j.sessionId)).toEqual([session.id]);
    expect(await drained).toEqual({ status: 'done', turns: 1, more: true });
    expect(t.executor.signals[0]!.reason).toEqual(new TurnAbortedError('a newer message arrived'));
    const second = t.executor.hold();
    const next = t.runner.drain(world.system(), session.id, never());
    await second.started;
    const request = t.aborts.published.at(-1)!;
    expect(request.beforeMessageId).toBeDefined();
    // The same request again (e.g. redelivered) does not abort the turn answering that message.
    await t.aborts.publish(request);
    expect(t.executor.signals[1]!.aborted).toBe(false);
    second.release();
    expect(await next).toEqual({ status: 'done', turns: 1, more: false });
    expect(t.executor.batches).toEqual([['old question'], ['never mind, this']]);
    await stop();
  });

  it('stops draining on shutdown, leaving the running and later messages pending', async () => {
    const t = setup();
    const session = await freshSession();
    for (const text of ['first', 'second']) await t.turns.submit(world.as(ada), session, { text });
    const job = new AbortController();
    const held = t.executor.hold();
    const drained = t.runner.drain(world.system(), session.id, job.signal).catch((e: Error) => e);
    await held.started;
    job.abort(new TurnAbortedError(TurnAbortedError.SHUTDOWN));
    expect(((await drained) as Error).message).toBe('Turn aborted: shutdown');
    expect(t.executor.batches).toEqual([['first']]);
    // The stopped turn stays PROCESSING: the next worker answers it again, before the later message.
    expect((await t.turns.pending(world.system(), session.id)).map((m) => [m.content, m.status])).toEqual([
      ['first', MessageStatus.PROCESSING],
      ['second', MessageStatus.QUEUED],
    ]);
  });

  it('runs the chores once the session is drained, still holding the lock; not when the lock was lost', async () => {
    const seen: Array<{ sessionId: string; held: boolean; pending: number }> = [];
    const chores: SessionChores[] = [];
    const t = setup('followup', chores);
    chores.push({
      afterDrain: async (ctx, sessionId) => void seen.push({ sessionId, held: await t.locks.isHeld(sessionId), pending: (await t.turns.pending(ctx, sessionId)).length }),
    });
    const session = await freshSession();
    for (const text of ['hi', 'there']) await t.turns.submit(world.as(ada), session, { text });
    // Not while messages still wait: the chores run once the session is drained.
    expect(await t.runner.drain(world.system(), session.id, never())).toMatchObject({ more: true });
    expect(seen).toEqual([]);
    await t.runner.drain(world.system(), session.id, never());
    expect(seen).toEqual([{ sessionId: session.id, held: true, pending: 0 }]);

    await t.turns.submit(world.as(ada), session, { text: 'again' });
    const held = t.executor.hold();
    const drained = t.runner.drain(world.system(), session.id, never());
    await held.started;
    t.locks.loseLock(session.id);
    held.release();
    expect(await drained).toEqual({ status: 'done', turns: 1, more: false });
    expect(seen).toHaveLength(1);
  });

  it('has nothing to drain for a session that does not exist', async () => {
    const t = setup();
    expect(await t.runner.drain(world.system(), 'no-such-session', never())).toEqual({ status: 'done', turns: 0, more: false });
    expect(t.executor.batches).toEqual([]);
  });
  it("never drains a beat run's own instruction: recovery skips cron sessions and a drain there answers nothing", async () => {
    const t = setup();
    // A beat run stores its instruction PROCESSING and runs it itself (BeatTurns.runAs), no turn job.
    const cron = await world.session(ada, 'cron', 'beat-1');
    await world.db.repo(world.system(), Message).save(
      world.db.repo(world.system(), Message).create({ sessionId: cron.id, userId: ada.id, role: MessageRole.USER, content: 'Write the briefing', status: MessageStatus.PROCESSING, turnId: 'beat-run', dedupeKey: null }),
    );
    // A conversation left pending by a dead worker is recovered as before.
    const chat = await freshSession();
    await t.turns.submit(world.as(ada), chat, { text: 'left over' });
    t.jobs.take();

    expect(await t.turns.recoverPending(world.system().logger)).toBeGreaterThanOrEqual(1);
    const scheduled = t.jobs.take().map((j) => j.sessionId);
    expect(scheduled).toContain(chat.id);
    expect(scheduled).not.toContain(cron.id);
    expect(await t.runner.drain(world.system(), cron.id, never())).toEqual({ status: 'done', turns: 0, more: false });
    expect(t.executor.batches).toEqual([]);
    expect(await t.turns.hasPending(world.system(), cron.id)).toBe(false);
    const stored = await world.db.repo(world.system(), Message).findOneByOrFail({ sessionId: cron.id });
    expect(stored.status).toBe(MessageStatus.PROCESSING);
  });
});
