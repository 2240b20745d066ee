import type { EntityMetadata, ObjectLiteral, Repository } from 'typeorm';
import { escapedTable, isPlainTable, parameterMaker } from './plain-table';
import { sqliteGateOf } from './sqlite-transaction-gate';

type Plain = string | number | boolean;

/** Column equalities by property name; an array means "one of" (SQL IN). */
export type PlainWhere = Record<string, Plain | readonly Plain[]>;

interface ColumnLike {
  databaseName: string;
  propertyName: string;
  isSelect: boolean;
  isVirtual: boolean;
  type: unknown;
  transformer?: unknown;
  setEntityValue(entity: ObjectLiteral, value: unknown): void;
}

type Hydrate = (value: unknown) => unknown;

interface Reader {
  table: string;
  select: string;
  columns: ColumnLike[];
  /** Property name → escaped column name. */
  where: Map<string, string>;
  /** On SQLite: per column, the value TypeORM's driver would hydrate from the stored one. */
  hydrate: Hydrate[] | null;
}

/** Column types whose stored value TypeORM's SQLite driver changes on the way in (prepareHydratedValue). */
const CONVERTED = new Set<unknown>([
  Boolean,
  'boolean',
  'datetime',
  Date,
  'date',
  'time',
  'json',
  'jsonb',
  'simple-json',
  'simple-array',
  'simple-enum',
  Number,
]);

/** The form TypeORM writes dates in on SQLite (UTC, milliseconds). */
const SQLITE_DATE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/;

/**
 * How TypeORM's SQLite driver hydrates a column, without its checks per value where they are known in
 * advance: the value itself for columns it keeps as stored, and for dates in the form it writes the same
 * Date it would make ('T' between date and time, 'Z' after); anything else goes to the driver.
 */
function sqliteHydrator(
  column: ColumnLike,
  driver: { prepareHydratedValue(value: unknown, column: never): unknown },
): Hydrate {
  const generic: Hydrate = (value) => driver.prepareHydratedValue(value, column as never);
  if (column.transformer) return generic;
  if (!CONVERTED.has(column.type)) return (value) => value;
  if (column.type !== Date && column.type !== 'datetime') return generic;
  return (value) =>
    typeof value === 'string' && SQLITE_DATE.test(value)
      ? new Date(`${value.slice(0, 10)}T${value.slice(11)}Z`)
      : generic(value);
}

const readers = new WeakMap<EntityMetadata, Reader | null>();

/**
 * How rows of this entity are read with one hand-built statement, or null when `find` would do more
 * than select its columns (eager relations, relation ids, embedded columns, soft deletion, inheritance,
 * `@AfterLoad` listeners, subscribers): those keep going through TypeORM.
 */
function readerOf(repo: Repository<ObjectLiteral>): Reader | null {
  const meta = repo.metadata;
  const known = readers.get(meta);
  if (known !== undefined) return known;
  const ds = repo.manager.connection;
  const plain =
    isPlainTable(meta, ds) && !meta.eagerRelations.length && !meta.relationIds.length && !meta.afterLoadListeners.length;
  let reader: Reader | null = null;
  if (plain) {
    const esc = (name: string) => ds.driver.escape(name);
    const columns = (meta.columns as unknown as ColumnLike[]).filter((c) => c.isSelect && !c.isVirtual);
    reader = {
      table: escapedTable(meta, ds),
      select: columns.map((c) => esc(c.databaseName)).join(', '),
      columns,
      where: new Map(columns.map((c) => [c.propertyName, esc(c.databaseName)])),
      hydrate: sqliteGateOf(ds) ? columns.map((c) => sqliteHydrator(c, ds.driver as never)) : null,
    };
  }
  readers.set(meta, reader);
  return reader;
}

const narrowedReaders = new WeakMap<Reader, Map<string, Reader>>();

/**
 * A reader of some of the columns (by property name) plus `keep`, for a caller that uses no others; the
 * whole reader when no list is given or a name is not a column.
 */
function narrowed(
  reader: Reader,
  properties: readonly string[] | undefined,
  keep: readonly string[],
): Reader {
  if (!properties) return reader;
  const wanted = new Set([...keep, ...properties]);
  const key = [...wanted].sort().join(',');
  let known = narrowedReaders.get(reader);
  const hit = known?.get(key);
  if (hit) return hit;
  if ([...wanted].some((p) => !reader.where.has(p))) return reader;
  const picked = reader.columns.map((c, i) => [c, i] as const).filter(([c]) => wanted.has(c.propertyName));
  const result: Reader = {
    table: reader.table,
    select: picked.map(([c]) => reader.where.get(c.propertyName)!).join(', '),
    columns: picked.map(([c]) => c),
    where: reader.where,
    hydrate: reader.hydrate ? picked.map(([, i]) => reader.hydrate![i]!) : null,
  };
  if (!known) narrowedReaders.set(reader, (known = new Map()));
  if (known.size < 50) known.set(key, result);
  return result;
}

/** The WHERE clause of alternatives (OR of ANDs), or null when a condition is not a plain value. */
function whereSql(
  repo: Repository<ObjectLiteral>,
  reader: Reader,
  alternatives: readonly PlainWhere[],
  params: unknown[],
): string | null {
  const param = parameterMaker(repo.manager.connection, params);
  const ors: string[] = [];
  for (const alt of alternatives) {
    const ands: string[] = [];
    for (const [key, value] of Object.entries(alt)) {
      const column = reader.where.get(key);
      if (!column) return null;
      if (Array.isArray(value)) {
        if (!value.length || !value.every(isPlain)) return null;
        ands.push(`${column} IN (${value.map(param).join(', ')})`);
      } else if (isPlain(value)) {
        ands.push(`${column} = ${param(value)}`);
      } else {
        return null;
      }
    }
    ors.push(ands.length ? `(${ands.join(' AND ')})` : '1 = 1');
  }
  return ors.length ? ors.join(' OR ') : '1 = 1';
}

/** The WHERE clause of plain conditions for any statement on this entity's table; null when they are not plain. */
export function plainWhereSql(
  repo: Repository<ObjectLiteral>,
  alternatives: readonly PlainWhere[],
  params: unknown[],
): string | null {
  const reader = readerOf(repo);
  return reader ? whereSql(repo, reader, alternatives, params) : null;
}

function isPlain(value: unknown): value is Plain {
  return (
    typeof value === 'string' ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    typeof value === 'boolean'
  );
}

/** True when `where` holds only plain values (what selectPlain and countPlain take). */
export function isPlainWhere(where: unknown): where is PlainWhere {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return false;
  return Object.values(where).every(
    (v) => isPlain(v) || (Array.isArray(v) && v.length > 0 && v.every(isPlain)),
  );
}

export interface SelectOptions {
  idAfter?: { id: string; direction: 'ASC' | 'DESC' };
  order?: 'ASC' | 'DESC';
  limit?: number;
  /** A many-to-one relation to load with each row. */
  join?: string;
  /** Only these properties (and the id, and the foreign key of `join`). */
  columns?: readonly string[];
  /** Only these properties of the related entity (and its key). */
  joinColumns?: readonly string[];
}

/** The relation `join` names: a many-to-one (or owning one-to-one) on one column, with a plain reader. */
interface Joined {
  property: string;
  repo: Repository<ObjectLiteral>;
  reader: Reader;
  /** Property of the foreign key on the entity, and of the key it refers to on the related one. */
  foreignKey: string;
  referenced: string;
  /** Escaped column names of both. */
  foreignColumn: string;
  referencedColumn: string;
}

function joinedOf(
  repo: Repository<ObjectLiteral>,
  property: string,
  columns: readonly string[] | undefined,
): Joined | null {
  const relation = repo.metadata.relations.find((r) => r.propertyName === property);
  if (
    !relation ||
    !(relation.isManyToOne || relation.isOneToOneOwner) ||
    relation.joinColumns.length !== 1 ||
    relation.isLazy
  )
    return null;
  const join = relation.joinColumns[0]!;
  const referenced = join.referencedColumn;
  if (!referenced) return null;
  const related = repo.manager.getRepository(
    relation.inverseEntityMetadata.target,
  ) as Repository<ObjectLiteral>;
  const full = readerOf(related);
  const own = readerOf(repo);
  if (!full || !own) return null;
  const reader = narrowed(full, columns, [referenced.propertyName]);
  const foreignColumn = own.where.get(join.propertyName);
  const referencedColumn = reader.where.get(referenced.propertyName);
  if (!foreignColumn || !referencedColumn) return null;
  return {
    property,
    repo: related,
    reader,
    foreignKey: join.propertyName,
    referenced: referenced.propertyName,
    foreignColumn,
    referencedColumn,
  };
}

/**
 * The rows `repo.find({ where, order: { id }, take })` returns, with a statement of a few string joins,
 * hydrated column by column by the driver as TypeORM does, without TypeORM's query building and
 * result transformation (which cost more than the statement on a page of rows). With `join` (a
 * many-to-one relation) each row also carries its related entity (null without one), as `relations`
 * would load it: on SQLite in the same statement. `columns` and `joinColumns` (property names) limit what
 * is read to what the caller uses (always with the ids and the foreign key); the other properties are
 * left unset. Null when the entity, the relation or the conditions need TypeORM (see readerOf); the
 * caller then uses `find`.
 */
export async function selectPlain<E extends ObjectLiteral>(
  repo: Repository<E>,
  alternatives: readonly PlainWhere[],
  options: SelectOptions = {},
): Promise<E[] | null> {
  const full = readerOf(repo as unknown as Repository<ObjectLiteral>);
  if (!full || !full.where.has('id')) return null;
  const joined = options.join
    ? joinedOf(repo as unknown as Repository<ObjectLiteral>, options.join, options.joinColumns)
    : null;
  if (options.join && !joined) return null;
  const reader = narrowed(full, options.columns, joined ? ['id', joined.foreignKey] : ['id']);
  const params: unknown[] = [];
  let where = whereSql(repo as unknown as Repository<ObjectLiteral>, reader, alternatives, params);
  if (where === null) return null;
  const id = reader.where.get('id')!;
  if (options.idAfter) {
    const p = parameterMaker(repo.manager.connection, params)(options.idAfter.id);
    where = `(${where}) AND ${id} ${options.idAfter.direction === 'DESC' ? '<' : '>'} ${p}`;
  }
  let sql = `SELECT ${reader.select} FROM ${reader.table} WHERE ${where}`;
  if (options.order) sql += ` ORDER BY ${id} ${options.order}`;
  if (options.limit !== undefined) sql += ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
  const meta = repo.metadata;
  const gate = sqliteGateOf(repo.manager.connection);
  if (gate && reader.hydrate && (!joined || joined.reader.hydrate)) {
    const hydrate = reader.hydrate;
    const columns = reader.columns;
    if (joined) {
      // The page first, then each row's related entity: the statement's ORDER BY and LIMIT stay the page's.
      const j = joined.reader;
      sql =
        `SELECT "p".*, ${j.columns.map((c) => `"j".${j.where.get(c.propertyName)!}`).join(', ')} FROM (${sql}) AS "p" ` +
        `LEFT JOIN ${j.table} AS "j" ON "j".${joined.referencedColumn} = "p".${joined.foreignColumn}` +
        (options.order ? ` ORDER BY "p".${id} ${options.order}` : '');
    }
    return (await gate.rows(sql, params)).map((row) => {
      const entity = meta.create(undefined, { fromDeserializer: true }) as Record<string, unknown>;
      for (let i = 0; i < columns.length; i++) entity[columns[i]!.propertyName] = hydrate[i]!(row[i]);
      if (joined) entity[joined.property] = hydrateJoined(joined, row, columns.length);
      return entity as E;
    });
  }
  const rows = (await repo.query(sql, params)) as Array<Record<string, unknown>>;
  const driver = repo.manager.connection.driver;
  const entities = rows.map((row) => {
    const entity = meta.create(undefined, { fromDeserializer: true }) as E;
    for (const column of reader.columns) {
      const value = row[column.databaseName];
      if (value !== undefined)
        column.setEntityValue(entity, driver.prepareHydratedValue(value, column as never));
    }
    return entity;
  });
  if (!joined) return entities;
  const keys = [...new Set(entities.map((e) => e[joined.foreignKey] as unknown).filter(isPlain))];
  const related = keys.length
    ? await selectPlain(joined.repo, [{ [joined.referenced]: keys }], {
        columns: joined.reader.columns.map((c) => c.propertyName),
      })
    : [];
  if (!related) return null;
  const byKey = new Map(related.map((r) => [r[joined.referenced] as unknown, r]));
  for (const entity of entities)
    (entity as Record<string, unknown>)[joined.property] = byKey.get(entity[joined.foreignKey]) ?? null;
  return entities;
}

export interface PlainQuery {
  /** The entity's columns, each as `alias.column`, for the select list. */
  columns: string;
  /** The entity's table, escaped. */
  table: string;
  /** The escaped column of a property. */
  column(property: string): string;
  /** A placeholder for a parameter. */
  param(value: unknown): string;
}

/**
 * Entities read by a statement the caller writes around the entity's columns (`q.columns` first in the
 * select list, then `extras` more expressions named "x0", "x1", …), hydrated as `selectPlain` does; each
 * row's extra values come with it. Null when the entity needs TypeORM (see readerOf).
 */
export async function selectPlainWith<E extends ObjectLiteral>(
  repo: Repository<E>,
  alias: string,
  extras: number,
  build: (q: PlainQuery) => string,
): Promise<Array<{ entity: E; extras: unknown[] }> | null> {
  const reader = readerOf(repo as unknown as Repository<ObjectLiteral>);
  if (!reader) return null;
  const driver = repo.manager.connection.driver;
  const params: unknown[] = [];
  const q: PlainQuery = {
    columns: reader.columns
      .map((c) => `${driver.escape(alias)}.${reader.where.get(c.propertyName)!}`)
      .join(', '),
    table: reader.table,
    column: (property) => {
      const column = reader.where.get(property);
      if (!column) throw new Error(`${repo.metadata.name} has no column ${property}`);
      return column;
    },
    param: parameterMaker(repo.manager.connection, params),
  };
  const sql = build(q);
  const meta = repo.metadata;
  const { columns, hydrate } = reader;
  const gate = sqliteGateOf(repo.manager.connection);
  if (gate && hydrate) {
    return (await gate.rows(sql, params)).map((row) => {
      const entity = meta.create(undefined, { fromDeserializer: true }) as Record<string, unknown>;
      for (let i = 0; i < columns.length; i++) entity[columns[i]!.propertyName] = hydrate[i]!(row[i]);
      return { entity: entity as E, extras: row.slice(columns.length) };
    });
  }
  const rows = (await repo.query(sql, params)) as Array<Record<string, unknown>>;
  return rows.map((row) => {
    const entity = meta.create(undefined, { fromDeserializer: true }) as E;
    for (const column of columns) {
      const value = row[column.databaseName];
      if (value !== undefined)
        column.setEntityValue(entity, driver.prepareHydratedValue(value, column as never));
    }
    return { entity, extras: Array.from({ length: extras }, (_, i) => row[`x${i}`]) };
  });
}

/** The related entity in a joined row's columns from `offset` on; null when the row has none. */
function hydrateJoined(joined: Joined, row: unknown[], offset: number): ObjectLiteral | null {
  const { columns, hydrate } = joined.reader;
  const key = columns.findIndex((c) => c.propertyName === joined.referenced);
  if (row[offset + key] === null || row[offset + key] === undefined) return null;
  const entity = joined.repo.metadata.create(undefined, { fromDeserializer: true }) as Record<
    string,
    unknown
  >;
  for (let i = 0; i < columns.length; i++) entity[columns[i]!.propertyName] = hydrate![i]!(row[offset + i]);
  return entity;
}

/** `repo.count({ where })` for plain conditions with one prebuilt statement; null when TypeORM must do it. */
export async function countPlain(
  repo: Repository<ObjectLiteral>,
  alternatives: readonly PlainWhere[],
): Promise<number | null> {
  const reader = readerOf(repo);
  if (!reader) return null;
  const params: unknown[] = [];
  const where = whereSql(repo, reader, alternatives, params);
  if (where === null) return null;
  const sql = `SELECT COUNT(1) AS "cnt" FROM ${reader.table} WHERE ${where}`;
  const gate = sqliteGateOf(repo.manager.connection);
  if (gate) return Number((await gate.rows(sql, params))[0]?.[0] ?? 0);
  const [row] = (await repo.query(sql, params)) as Array<{ cnt: number | string }>;
  return Number(row?.cnt ?? 0);
}
