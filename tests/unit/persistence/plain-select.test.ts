/**
 * selectPlain/countPlain read what TypeORM's find/count read (same entities, same values, same types),
 * and hand back null where TypeORM must do the work, so findPage and the user loader may use them.
 */
import { In, IsNull, type ObjectLiteral, type Repository } from 'typeorm';
import { TrustLevel } from '../../../server/common/trust';
import { ENTITIES } from '../../../server/entities';
import { AuditEntry } from '../../../server/modules/audit';
import { ChatKind, Session, SessionStatus } from '../../../server/modules/sessions';
import { User } from '../../../server/modules/users';
import { findPage } from '../../../server/persistence/paginate';
import { countPlain, selectPlain } from '../../../server/persistence/plain-select';
import { SqliteWorld } from '../../support/sqlite-world';

let world: SqliteWorld;
let users: User[];
beforeAll(async () => {
  world = await SqliteWorld.open();
  users = [await world.user('Ann', TrustLevel.OWNER), await world.user('Bob', TrustLevel.MEMBER), await world.user('Cy', TrustLevel.GUEST)];
  for (const u of users) {
    await world.session(u);
    await world.session(u, 'whatsapp');
  }
});
afterAll(() => world.close());

const repo = <E extends ObjectLiteral>(entity: new () => E): Repository<E> => world.db.repo(world.system(), entity);

it('reads every entity as find does (values, types and class), or declines', async () => {
  const read: string[] = [];
  for (const entity of ENTITIES as unknown as Array<new () => ObjectLiteral>) {
    const r = repo(entity);
    if (!r.metadata.columns.some((c) => c.propertyName === 'id')) continue;
    const plain = await selectPlain(r, [{}], { order: 'ASC' });
    if (plain === null) continue;
    const found = await r.find({ order: { id: 'ASC' } as never });
    if (found.length) read.push(r.metadata.name);
    expect(plain).toEqual(found);
    plain.forEach((row, i) => expect(Object.getPrototypeOf(row)).toBe(Object.getPrototypeOf(found[i])));
  }
  expect(read).toEqual(expect.arrayContaining(['User', 'Session', 'AuditEntry']));
});

it('applies equalities, IN lists, alternatives, the id cursor and the limit as find does', async () => {
  const sessions = repo(Session);
  const [ann, bob] = users as [User, User];
  const byUser = await selectPlain(sessions, [{ userId: ann.id }, { userId: bob.id, channel: 'whatsapp' }], { order: 'DESC' });
  expect(byUser).toEqual(await sessions.find({ where: [{ userId: ann.id }, { userId: bob.id, channel: 'whatsapp' }], order: { id: 'DESC' } }));
  expect(byUser).toHaveLength(3);
  const all = await sessions.find({ order: { id: 'DESC' } });
  const after = await selectPlain(sessions, [{ status: SessionStatus.ACTIVE }], { idAfter: { id: all[1]!.id, direction: 'DESC' }, order: 'DESC', limit: 2 });
  expect(after).toEqual(all.filter((s) => s.status === SessionStatus.ACTIVE && s.id < all[1]!.id).slice(0, 2));
  const ids = [users[2]!.id, ann.id, 'no-such-id'];
  expect(await selectPlain(repo(User), [{ id: ids }])).toEqual(expect.arrayContaining(await repo(User).findBy({ id: In(ids) })));
  expect(await countPlain(sessions as never, [{ userId: ann.id }])).toBe(await sessions.count({ where: { userId: ann.id } }));
  expect(await countPlain(sessions as never, [{}])).toBe(6);
});

it('declines conditions that are not plain values and unknown properties', async () => {
  expect(await selectPlain(repo(Session), [{ userId: IsNull() } as never])).toBeNull();
  expect(await selectPlain(repo(Session), [{ nope: 'x' }])).toBeNull();
  expect(await countPlain(repo(Session) as never, [{ userId: [] }])).toBeNull();
});

it('findPage gives the same pages on the plain path and through TypeORM', async () => {
  const viaPlain = await findPage(repo(AuditEntry), {}, { first: 2, afterId: null }, 'DESC');
  const viaTypeorm = await findPage(repo(AuditEntry), { id: In((await repo(AuditEntry).find()).map((a) => a.id)) }, { first: 2, afterId: null }, 'DESC');
  expect(viaPlain).toEqual(viaTypeorm);
  const next = await findPage(repo(AuditEntry), {}, { first: 2, afterId: viaPlain.nodes[1]!.id }, 'DESC');
  const nextTypeorm = await findPage(repo(AuditEntry), { id: In((await repo(AuditEntry).find()).map((a) => a.id)) }, { first: 2, afterId: viaPlain.nodes[1]!.id }, 'DESC');
  expect(next).toEqual(nextTypeorm);
});

it('loads a many-to-one relation with each row as find with relations does, null without one', async () => {
  const sessions = repo(Session);
  const group = await sessions.save(sessions.create({ key: 'telegram:group:g1', userId: null, channel: 'telegram', chatId: 'g1', chatKind: ChatKind.GROUP, status: SessionStatus.ACTIVE, startedAt: new Date(), lastActivityAt: new Date() }));
  try {
    const joined = await selectPlain(sessions, [{}], { order: 'DESC', limit: 4, join: 'user' });
    const found = await sessions.find({ order: { id: 'DESC' }, take: 4, relations: { user: true } });
    expect(joined).toEqual(found.map((s) => ({ ...s, user: s.user ?? null })));
    expect(joined!.map((s) => s.user?.displayName ?? null)).toEqual(found.map((s) => s.user?.displayName ?? null));
    expect(joined![0]!.user).toBeNull();
    expect(Object.getPrototypeOf(joined![1]!.user)).toBe(User.prototype);
    const page = await findPage(sessions, { status: SessionStatus.ACTIVE }, { first: 2, afterId: group.id }, 'DESC', { join: 'user' });
    expect(page.nodes.map((s) => s.user?.id)).toEqual(found.slice(1, 3).map((s) => s.user?.id));
    expect(await selectPlain(sessions, [{}], { join: 'nope' })).toBeNull();
  } finally {
    await sessions.delete({ id: group.id });
  }
});

it('reads only the properties asked for (with the id and the foreign key), all of them for a name that is no column', async () => {
  const sessions = repo(Session);
  const found = await sessions.find({ order: { id: 'DESC' }, take: 3, relations: { user: true } });
  const narrow = await selectPlain(sessions, [{}], { order: 'DESC', limit: 3, join: 'user', columns: ['key', 'lastActivityAt'], joinColumns: ['trust'] });
  expect(narrow).toEqual(found.map((s) => ({ id: s.id, key: s.key, lastActivityAt: s.lastActivityAt, userId: s.userId, user: { id: s.user!.id, trust: s.user!.trust } })));
  expect(Object.keys(narrow![0]!).sort()).toEqual(['id', 'key', 'lastActivityAt', 'user', 'userId']);
  const whole = await selectPlain(sessions, [{}], { order: 'DESC', limit: 3, join: 'user', columns: ['key', 'title'], joinColumns: ['identities'] });
  expect(whole).toEqual(found);
});
