import type { EntityMetadata, ObjectLiteral, Repository } from 'typeorm';

type Plain = string | number | boolean;

/** Column equalities by property name; an array means "one of" (SQL IN). */
export type PlainWhere = Record<string, Plain | readonly Plain[]>;

interface ColumnLike {
  databaseName: string;
  propertyName: string;
  isSelect: boolean;
  isVirtual: boolean;
  setEntityValue(entity: ObjectLiteral, value: unknown): void;
}

interface Reader {
  table: string;
  select: string;
  columns: ColumnLike[];
  /** Property name → escaped column name. */
  where: Map<string, string>;
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
    meta.tableType === 'regular' &&
    !meta.embeddeds.length &&
    !meta.eagerRelations.length &&
    !meta.relationIds.length &&
    !meta.afterLoadListeners.length &&
    !meta.deleteDateColumn &&
    !meta.discriminatorColumn &&
    !meta.inheritancePattern &&
    !meta.treeType &&
    !ds.subscribers.length;
  let reader: Reader | null = null;
  if (plain) {
    const esc = (name: string) => ds.driver.escape(name);
    const columns = (meta.columns as unknown as ColumnLike[]).filter((c) => c.isSelect && !c.isVirtual);
    reader = {
      table: meta.tablePath.split('.').map(esc).join('.'),
      select: columns.map((c) => esc(c.databaseName)).join(', '),
      columns,
      where: new Map(columns.map((c) => [c.propertyName, esc(c.databaseName)])),
    };
  }
  readers.set(meta, reader);
  return reader;
}

/** The WHERE clause of alternatives (OR of ANDs), or null when a condition is not a plain value. */
function whereSql(repo: Repository<ObjectLiteral>, reader: Reader, alternatives: readonly PlainWhere[], params: unknown[]): string | null {
  const driver = repo.manager.connection.driver;
  const param = (value: unknown) => {
    params.push(value);
    return driver.createParameter(`p${params.length}`, params.length - 1);
  };
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

function isPlain(value: unknown): value is Plain {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean';
}

/** True when `where` holds only plain values (what selectPlain and countPlain take). */
export function isPlainWhere(where: unknown): where is PlainWhere {
  if (where === null || typeof where !== 'object' || Array.isArray(where)) return false;
  return Object.values(where).every((v) => isPlain(v) || (Array.isArray(v) && v.length > 0 && v.every(isPlain)));
}

/**
 * The rows `repo.find({ where, order: { id }, take })` returns, with a statement of a few string joins,
 * hydrated column by column by the driver as TypeORM does, without TypeORM's query building and
 * result transformation (which cost more than the statement on a page of rows). Null when the entity or
 * the conditions need TypeORM (see readerOf); the caller then uses `find`.
 */
export async function selectPlain<E extends ObjectLiteral>(
  repo: Repository<E>,
  alternatives: readonly PlainWhere[],
  options: { idAfter?: { id: string; direction: 'ASC' | 'DESC' }; order?: 'ASC' | 'DESC'; limit?: number } = {},
): Promise<E[] | null> {
  const reader = readerOf(repo as unknown as Repository<ObjectLiteral>);
  if (!reader || !reader.where.has('id')) return null;
  const params: unknown[] = [];
  let where = whereSql(repo as unknown as Repository<ObjectLiteral>, reader, alternatives, params);
  if (where === null) return null;
  const id = reader.where.get('id')!;
  if (options.idAfter) {
    params.push(options.idAfter.id);
    const p = repo.manager.connection.driver.createParameter(`p${params.length}`, params.length - 1);
    where = `(${where}) AND ${id} ${options.idAfter.direction === 'DESC' ? '<' : '>'} ${p}`;
  }
  let sql = `SELECT ${reader.select} FROM ${reader.table} WHERE ${where}`;
  if (options.order) sql += ` ORDER BY ${id} ${options.order}`;
  if (options.limit !== undefined) sql += ` LIMIT ${Math.max(0, Math.floor(options.limit))}`;
  const rows = (await repo.query(sql, params)) as Array<Record<string, unknown>>;
  const driver = repo.manager.connection.driver;
  const meta = repo.metadata;
  return rows.map((row) => {
    const entity = meta.create(undefined, { fromDeserializer: true }) as E;
    for (const column of reader.columns) {
      const value = row[column.databaseName];
      if (value !== undefined) column.setEntityValue(entity, driver.prepareHydratedValue(value, column as never));
    }
    return entity;
  });
}

/** `repo.count({ where })` for plain conditions with one prebuilt statement; null when TypeORM must do it. */
export async function countPlain(repo: Repository<ObjectLiteral>, alternatives: readonly PlainWhere[]): Promise<number | null> {
  const reader = readerOf(repo);
  if (!reader) return null;
  const params: unknown[] = [];
  const where = whereSql(repo, reader, alternatives, params);
  if (where === null) return null;
  const [row] = (await repo.query(`SELECT COUNT(1) AS "cnt" FROM ${reader.table} WHERE ${where}`, params)) as Array<{ cnt: number | string }>;
  return Number(row?.cnt ?? 0);
}
