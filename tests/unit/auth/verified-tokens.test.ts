/**
 * Tokens verified a moment ago are answered from memory, but never past a change made in this process:
 * revocation, trust change, rename and deletion apply to the very next verification. Counted statements,
 * not timings, show that the memory is used.
 */
import { TrustLevel } from '../../../server/common/trust';
import { ApiTokenService } from '../../../server/modules/auth';
import { VerifiedTokens } from '../../../server/modules/auth/verified-tokens';
import { countSqlStatements, type SqlStatementCounter } from '../../support/sql-statement-counter';
import { SqliteWorld } from '../../support/sqlite-world';

let world: SqliteWorld;
let tokens: ApiTokenService;
let sql: SqlStatementCounter;
beforeAll(async () => {
  world = await SqliteWorld.open();
  tokens = new ApiTokenService(world.db, world.users, world.audit);
  sql = countSqlStatements();
});
afterAll(async () => {
  sql.stop();
  await world.close();
});

const tokenReads = () => [...sql.counts.entries()].filter(([k]) => k.startsWith('SELECT t.id AS "tokenId"')).reduce((n, [, c]) => n + c, 0);

async function member(name: string) {
  const user = await world.users.create(world.system(), { displayName: name, trust: TrustLevel.MEMBER });
  const owner = world.system();
  const { token } = await tokens.create(owner, user.id, 'cli');
  return { user, token };
}

it('reads a token once while nothing changes, and gives each caller objects of its own', async () => {
  const { user, token } = await member('Ann');
  sql.reset();
  const first = await tokens.verify(world.system(), token);
  const second = await tokens.verify(world.system(), token);
  expect(tokenReads()).toBe(1);
  expect(second!.user).toEqual(first!.user);
  // The first use stamped lastUsedAt; the second sees the stamp, as a read from the database would.
  expect(second!.apiToken).toEqual({ ...first!.apiToken, lastUsedAt: expect.any(Date) });
  expect(first!.apiToken.lastUsedAt).toBeNull();
  expect(second!.user).not.toBe(first!.user);
  expect(second!.user).toMatchObject({ id: user.id, displayName: 'Ann', trust: TrustLevel.MEMBER });
  expect(await tokens.verify(world.system(), `${token}x`)).toBeNull();
});

it('a revocation, a trust change, a rename or a deletion in this process applies to the next request', async () => {
  const { user, token } = await member('Bob');
  await tokens.verify(world.system(), token);
  await world.users.setTrust(world.system(), user.id, TrustLevel.BLOCKED);
  expect((await tokens.verify(world.system(), token))!.user.trust).toBe(TrustLevel.BLOCKED);
  await world.users.rename(world.system(), user.id, 'Robert');
  expect((await tokens.verify(world.system(), token))!.user.displayName).toBe('Robert');
  const [row] = await tokens.listForUser(world.system(), user.id);
  await tokens.revoke(world.system(), row!.id);
  expect(await tokens.verify(world.system(), token)).toBeNull();

  const other = await member('Cy');
  await tokens.verify(world.system(), other.token);
  await world.users.delete(world.system(), other.user.id);
  expect(await tokens.verify(world.system(), other.token)).toBeNull();
});

it('keeps nothing read before a write transaction ended, and nothing longer than its lifetime', () => {
  let generation = 0;
  let now = 1000;
  const kept = new VerifiedTokens(() => generation, 1000, 2, () => now);
  const value = { tokenId: 't' } as never;
  kept.set('a', value, 0);
  expect(kept.get('a')).toBe(value);
  generation++;
  expect(kept.get('a')).toBeNull();
  kept.set('b', value, 0); // read before the write ended
  expect(kept.get('b')).toBeNull();
  kept.set('c', value, 1);
  now += 1000;
  expect(kept.get('c')).toBeNull();
  kept.set('d', value, 1);
  kept.set('e', value, 1);
  kept.set('f', value, 1);
  expect([kept.get('d'), kept.get('e'), kept.get('f')]).toEqual([null, value, value]);
});
