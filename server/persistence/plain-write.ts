import type { EntityMetadata, ObjectLiteral, Repository } from 'typeorm';
import { plainWhereSql, type PlainWhere } from './plain-select';
import { escapedTable, isPlainTable, parameterMaker } from './plain-table';
import { sqliteGateOf } from './sqlite-transaction-gate';

interface WritableColumn {
  databaseName: string;
  propertyName: string;
  getEntityValue(entity: ObjectLiteral): unknown;
}

interface Writer {
  meta: EntityMetadata;
  table: string;
  columns: WritableColumn[];
  /** Property name → column. */
  byProperty: Map<string, WritableColumn>;
  escape(name: string): string;
  /** INSERT statements by the columns set (a mask of `columns`). */
  inserts: Map<string, string>;
}

const writers = new WeakMap<EntityMetadata, Writer | null>();

/**
 * How rows of this entity are written with hand-built statements, or null when `save`/`update` would do
 * more than write the columns given (subscribers, generated or versioned columns, TypeORM-managed dates,
 * embedded or inherited columns, tree or view entities): those keep going through TypeORM.
 */
function writerOf(repo: Repository<ObjectLiteral>): Writer | null {
  const meta = repo.metadata;
  const known = writers.get(meta);
  if (known !== undefined) return known;
  const ds = repo.manager.connection;
  const plain =
    isPlainTable(meta, ds) &&
    !meta.createDateColumn &&
    !meta.updateDateColumn &&
    !meta.versionColumn &&
    !meta.afterInsertListeners.length &&
    !meta.columns.some((c) => c.isGenerated || c.isVirtual || c.isVirtualProperty || !c.isInsert);
  let writer: Writer | null = null;
  if (plain) {
    const escape = (name: string) => ds.driver.escape(name);
    const columns = meta.columns as unknown as WritableColumn[];
    writer = {
      meta,
      table: escapedTable(meta, ds),
      columns,
      byProperty: new Map(columns.map((c) => [c.propertyName, c])),
      escape,
      inserts: new Map(),
    };
  }
  writers.set(meta, writer);
  return writer;
}

/** The value the driver stores for a column (transformers, dates, JSON, booleans as TypeORM writes them). */
function persistent(repo: Repository<ObjectLiteral>, column: WritableColumn, value: unknown): unknown {
  return repo.manager.connection.driver.preparePersistentValue(value, column as never);
}

/** Runs a statement in the repository's transaction (SQLite through the gate's prepared statements); its rows when `returning`. */
async function execute(repo: Repository<ObjectLiteral>, sql: string, params: unknown[], returning: boolean): Promise<Array<Record<string, unknown>>> {
  const gate = sqliteGateOf(repo.manager.connection);
  if (!gate) {
    const rows = (await repo.query(sql, params)) as unknown;
    return returning ? (rows as Array<Record<string, unknown>>) : [];
  }
  if (returning) return gate.objects(sql, params);
  await gate.write(sql, params);
  return [];
}

export interface InsertPlainOptions {
  /** SQL expressions (with their own parameters) the same statement returns: `INSERT … RETURNING`. */
  returning?: (param: (value: unknown) => string) => string;
}

/**
 * Inserts one entity as `save` would (its BeforeInsert listeners run first; columns left undefined get
 * their database default) with one statement built once per entity and set of columns, instead of
 * TypeORM's persistence machinery. Null when the entity needs TypeORM (see writerOf); else the row of
 * `returning` (an empty object without it).
 */
export async function insertPlain<E extends ObjectLiteral>(
  repo: Repository<E>,
  entity: E,
  options: InsertPlainOptions = {},
): Promise<Record<string, unknown> | null> {
  const r = repo as unknown as Repository<ObjectLiteral>;
  const writer = writerOf(r);
  if (!writer) return null;
  for (const listener of writer.meta.beforeInsertListeners)
    if (listener.isAllowed(entity)) listener.execute(entity);
  const values: unknown[] = [];
  let mask = '';
  for (const column of writer.columns) {
    const value = column.getEntityValue(entity);
    if (value === undefined) {
      mask += '0';
      continue;
    }
    mask += '1';
    values.push(persistent(r, column, value));
  }
  const driver = r.manager.connection.driver;
  let sql = writer.inserts.get(mask);
  if (!sql) {
    const set = writer.columns.filter((_, i) => mask[i] === '1');
    sql = set.length
      ? `INSERT INTO ${writer.table}(${set.map((c) => writer.escape(c.databaseName)).join(', ')}) VALUES (${set.map((_, i) => driver.createParameter(`v${i}`, i)).join(', ')})`
      : `INSERT INTO ${writer.table} DEFAULT VALUES`;
    writer.inserts.set(mask, sql);
  }
  if (!options.returning) {
    await execute(r, sql, values, false);
    return {};
  }
  const rows = await execute(r, `${sql} RETURNING ${options.returning(parameterMaker(r.manager.connection, values, 'r'))}`, values, true);
  return rows[0] ?? {};
}

/**
 * `repo.update(where, set)` for plain conditions with one statement, plus `add`: columns increased by a
 * number in the same statement (`"n" = "n" + ?`). Like `update`, runs no listeners. Null when the
 * entity or a column needs TypeORM.
 */
export async function updatePlain<E extends ObjectLiteral>(
  repo: Repository<E>,
  where: PlainWhere,
  set: Partial<Record<keyof E & string, unknown>>,
  add: Partial<Record<keyof E & string, number>> = {},
): Promise<boolean | null> {
  const r = repo as unknown as Repository<ObjectLiteral>;
  const writer = writerOf(r);
  if (!writer) return null;
  const params: unknown[] = [];
  const param = parameterMaker(r.manager.connection, params);
  const assignments: string[] = [];
  for (const [property, value] of Object.entries(set)) {
    const column = writer.byProperty.get(property);
    if (!column || value === undefined) return null;
    assignments.push(`${writer.escape(column.databaseName)} = ${param(persistent(r, column, value))}`);
  }
  for (const [property, amount] of Object.entries(add)) {
    const column = writer.byProperty.get(property);
    if (!column || typeof amount !== 'number' || !Number.isFinite(amount)) return null;
    const name = writer.escape(column.databaseName);
    assignments.push(`${name} = ${name} + ${param(amount)}`);
  }
  if (!assignments.length) return null;
  const condition = plainWhereSql(r, [where], params);
  if (condition === null) return null;
  await execute(r, `UPDATE ${writer.table} SET ${assignments.join(', ')} WHERE ${condition}`, params, false);
  return true;
}
