/**
 * The SQLite transaction gate keeps other requests' statements out of an open transaction: a write from
 * outside, sent while a transaction waits on an `await`, runs after it ends and is not rolled back with
 * it. Between transactions the gate switches its async storage off (no async hooks while nothing is
 * open), so this holds for every transaction after the first, not only the first.
 */
import { SqliteWorld } from '../../support/sqlite-world';

let world: SqliteWorld;
beforeAll(async () => {
  world = await SqliteWorld.open();
  await world.db.dataSource.query('CREATE TABLE gate_rows (x TEXT)');
});
afterAll(() => world.close());

const rows = async () => ((await world.db.dataSource.query('SELECT x FROM gate_rows ORDER BY x')) as Array<{ x: string }>).map((r) => r.x);

it.each([1, 2, 3])('transaction %i: a write from outside waits for it and survives its rollback', async (round) => {
  let inside!: () => void;
  const opened = new Promise<void>((resolve) => (inside = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tx = world.db.withTransaction(world.system(), async (t) => {
    await t.manager!.query(`INSERT INTO gate_rows VALUES ('rolled back ${round}')`);
    inside();
    await held;
    throw new Error('roll back');
  });
  await opened;
  let outsideDone = false;
  const outside = world.db.dataSource.query(`INSERT INTO gate_rows VALUES ('outside ${round}')`).then(() => (outsideDone = true));
  await new Promise((r) => setTimeout(r, 30));
  expect(outsideDone).toBe(false);
  release();
  await expect(tx).rejects.toThrow('roll back');
  await outside;
  expect(await rows()).toEqual(Array.from({ length: round }, (_, i) => `outside ${i + 1}`));
});
