/**
 * insertPlain/updatePlain write what TypeORM's save/update write (same stored values, read back the same),
 * run the entity's BeforeInsert listeners, join the context's transaction (rolled back with it), and hand
 * back null where TypeORM must do the work.
 */
import type { ObjectLiteral, Repository } from 'typeorm';
import { TrustLevel } from '../../../server/common/trust';
import {
  Message,
  MessageRole,
  MessageStatus,
  Session,
  SessionStatus,
} from '../../../server/modules/sessions';
import { UsageRecord } from '../../../server/modules/usage';
import type { User } from '../../../server/modules/users';
import { insertPlain, updatePlain } from '../../../server/persistence/plain-write';
import { SqliteWorld } from '../../support/sqlite-world';

let world: SqliteWorld;
let user: User;
let session: Session;
beforeAll(async () => {
  world = await SqliteWorld.open();
  user = await world.user('Ann', TrustLevel.OWNER);
  session = await world.session(user);
});
afterAll(() => world.close());

const repo = <E extends ObjectLiteral>(entity: new () => E): Repository<E> =>
  world.db.repo(world.system(), entity);
/** The stored row as SQLite holds it (column by column), without its id and times. */
const stored = async (table: string, id: string) => {
  const [row] = (await world.db.dataSource.query(`SELECT * FROM "${table}" WHERE "id" = ?`, [id])) as Array<
    Record<string, unknown>
  >;
  const { id: _id, createdAt: _c, updatedAt: _u, dedupeKey: _d, ...rest } = row!;
  return rest;
};

it('stores a message as save does, JSON, booleans and nulls included, and runs BeforeInsert', async () => {
  const fields = () => ({
    sessionId: session.id,
    userId: user.id,
    role: MessageRole.ASSISTANT,
    content: 'héllo "quoted" \u{1F600}',
    status: MessageStatus.DONE,
    toolCalls: [{ id: 'c1', name: 'web_fetch', arguments: { url: 'https://example.org', n: [1, 2] } }],
    toolCallId: null,
    replyToId: null,
    usageEstimated: true,
    inputTokens: 12,
  });
  const viaTypeorm = await repo(Message).save(repo(Message).create({ ...fields(), dedupeKey: 'a' }));
  const row = repo(Message).create({ ...fields(), dedupeKey: 'b' });
  expect(await insertPlain(repo(Message), row)).toEqual({});
  expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
  expect(row.createdAt).toBeInstanceOf(Date);
  expect(await stored('messages', row.id)).toEqual(await stored('messages', viaTypeorm.id));
  const [read, readTypeorm] = [
    await repo(Message).findOneByOrFail({ id: row.id }),
    await repo(Message).findOneByOrFail({ id: viaTypeorm.id }),
  ];
  expect({ ...read, id: 'x', dedupeKey: 'x', createdAt: 0, updatedAt: 0 }).toEqual({
    ...readTypeorm,
    id: 'x',
    dedupeKey: 'x',
    createdAt: 0,
    updatedAt: 0,
  });
  expect(read.createdAt).toEqual(row.createdAt);
  // Columns left undefined get their database defaults (outputTokens 0, voiceSeconds null).
  expect(read.outputTokens).toBe(0);
  expect(read.voiceSeconds).toBeNull();
});

it('returns the row of RETURNING expressions with their own parameters', async () => {
  const row = repo(UsageRecord).create({
    userId: user.id,
    sessionId: session.id,
    messageId: null,
    provider: 'p',
    model: 'm',
    role: 'chat',
    inputTokens: 3,
    outputTokens: 4,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    estimated: false,
    audioSeconds: 0,
    costUsd: 0.25,
  });
  const back = await insertPlain(repo(UsageRecord), row, {
    returning: (p) => `${p(40)} + 2 AS "answer", "costUsd" AS "cost"`,
  });
  expect(back).toEqual({ answer: 42, cost: 0.25 });
  expect(await repo(UsageRecord).findOneByOrFail({ id: row.id })).toMatchObject({
    inputTokens: 3,
    outputTokens: 4,
    costUsd: 0.25,
    estimated: false,
  });
});

it('updates with values and increments as update does, only the rows matched', async () => {
  const other = await world.session(user, 'whatsapp');
  const at = new Date('2026-01-02T03:04:05.678Z');
  expect(
    await updatePlain(
      repo(Session),
      { id: session.id },
      { lastActivityAt: at },
      { messageCount: 3, inputTokens: 100 },
    ),
  ).toBe(true);
  expect(await updatePlain(repo(Session), { id: [session.id, 'nope'] }, {}, { messageCount: 2 })).toBe(true);
  const after = await repo(Session).findOneByOrFail({ id: session.id });
  expect(after).toMatchObject({
    lastActivityAt: at,
    messageCount: session.messageCount + 5,
    inputTokens: session.inputTokens + 100,
  });
  expect(await repo(Session).findOneByOrFail({ id: other.id })).toEqual(other);
  // The same update through TypeORM stores the date the same way.
  await repo(Session).update({ id: other.id }, { lastActivityAt: at });
  const [a, b] = (await world.db.dataSource.query(
    `SELECT "lastActivityAt" FROM "sessions" WHERE "id" IN (?, ?)`,
    [session.id, other.id],
  )) as Array<{ lastActivityAt: string }>;
  expect(a!.lastActivityAt).toBe(b!.lastActivityAt);
});

it('joins the context transaction: a rollback takes the plain writes back', async () => {
  const row = repo(Message).create({
    sessionId: session.id,
    userId: null,
    role: MessageRole.SYSTEM,
    content: 'rolled back',
    status: MessageStatus.DONE,
    dedupeKey: 'rb',
  });
  const before = (await repo(Session).findOneByOrFail({ id: session.id })).messageCount;
  await expect(
    world.db.withTransaction(world.system(), async (tx) => {
      await world.db.insert(tx, Message, row);
      await world.db.update(tx, Session, { id: session.id }, {}, { messageCount: 1 });
      expect(await world.db.repo(tx, Message).countBy({ id: row.id })).toBe(1);
      throw new Error('abort');
    }),
  ).rejects.toThrow('abort');
  expect(await repo(Message).countBy({ id: row.id })).toBe(0);
  expect((await repo(Session).findOneByOrFail({ id: session.id })).messageCount).toBe(before);
});

it('declines unknown properties, undefined values, non-numeric increments and empty updates', async () => {
  expect(await updatePlain(repo(Session), { id: session.id }, { nope: 1 } as never)).toBeNull();
  expect(await updatePlain(repo(Session), { id: session.id }, { status: undefined })).toBeNull();
  expect(await updatePlain(repo(Session), { id: session.id }, {}, { messageCount: Number.NaN })).toBeNull();
  expect(await updatePlain(repo(Session), { id: session.id }, {})).toBeNull();
  expect(await updatePlain(repo(Session), { nope: 'x' }, { messageCount: 1 })).toBeNull();
});

it('Db.update falls back to TypeORM with the same effect when the plain path declines', async () => {
  const before = await repo(Session).findOneByOrFail({ id: session.id });
  // An IN list that is empty is not plain: TypeORM matches no row.
  await world.db.update(world.system(), Session, { id: [] }, { status: SessionStatus.ARCHIVED });
  expect(await repo(Session).findOneByOrFail({ id: session.id })).toEqual(before);
});
