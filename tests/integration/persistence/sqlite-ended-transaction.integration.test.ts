/**
 * SQLite ends a transaction by itself on some errors (SQLITE_FULL at COMMIT when the disk is full, I/O
 * errors, RAISE(ROLLBACK) in a trigger), so TypeORM's ROLLBACK after it fails. The transaction gate must
 * not leave TypeORM believing a transaction is still open: later writes have to be committed (visible to
 * another connection), not collected in a transaction that is never committed. A trigger that raises
 * ROLLBACK ends the transaction here the way a full disk does (the disk-full fault suite does it for real);
 * before the fix, the next failing transaction was rolled back to a savepoint only and left SQLite's
 * transaction open for good, so every later write was acknowledged and never committed.
 */
import path from 'node:path';
import { loadSqliteDriver } from '../../../server/persistence/sqlite-driver';

/** better-sqlite3 12 or 13, as the server loads it on this Node. */
const Database = loadSqliteDriver();
import { SqliteWorld } from '../../support/sqlite-world';
import { TrustLevel } from '../../../server/common/trust';

let world: SqliteWorld;
beforeAll(async () => {
  world = await SqliteWorld.open();
});
afterAll(() => world.close());

it('after a transaction SQLite rolled back itself, the next transaction is committed', async () => {
  const db = world.db;
  await db.dataSource.query('CREATE TABLE doomed (x TEXT)');
  await db.dataSource.query(`CREATE TRIGGER doomed_insert BEFORE INSERT ON doomed BEGIN SELECT RAISE(ROLLBACK, 'ended by SQLite'); END`);
  await db.dataSource.query('CREATE TABLE refused (x TEXT)');
  await db.dataSource.query(`CREATE TRIGGER refused_insert BEFORE INSERT ON refused BEGIN SELECT RAISE(ABORT, 'statement refused'); END`);
  const ended = db.withTransaction(world.system(), (tx) => tx.manager!.query(`INSERT INTO doomed VALUES ('x')`));
  await expect(ended).rejects.toThrow(/ended by SQLite/);
  // An ordinary failure afterwards (one statement refused, the transaction still open until rolled back).
  const refused = db.withTransaction(world.system(), (tx) => tx.manager!.query(`INSERT INTO refused VALUES ('x')`));
  await expect(refused).rejects.toThrow(/statement refused/);

  const user = await db.withTransaction(world.system(), (tx) => world.users.create(tx, { displayName: 'after the ended transaction', trust: TrustLevel.MEMBER }));
  const other = new Database(path.join(world.dir, 'muninn.sqlite'), { readonly: true });
  try {
    expect(other.prepare('SELECT displayName FROM users WHERE id = ?').get(user.id)).toEqual({ displayName: 'after the ended transaction' });
  } finally {
    other.close();
  }
});
