import type { DataSource, EntityMetadata } from 'typeorm';

// === Which rows belong to a user, found from the data model rather than listed by hand
// A table belongs to a user through an owner column (`userId`, `…UserId`, or a relation to the users
// table) or through a column that points at a row that belongs to them (`sessionId` → sessions,
// `beatId` → beats, `documentId` → documents, or any declared foreign key). Tables added later follow
// the same conventions and are covered without touching this file.

/** How one table reaches a user. */
export interface UserTable {
  table: string;
  /** Primary key column (single-column keys only; a table without one is reached but not paged by key). */
  pk: string | null;
  /** Columns that hold the user id itself. */
  ownerColumns: string[];
  /** Columns that hold the id of a row of another user table. */
  parents: Array<{ column: string; table: string }>;
  /** `channel` + `handle` columns (pairing requests and the like): rows of the user's identities. */
  handleColumns: boolean;
  /** String columns, for the mention scrub after an erasure. */
  stringColumns: Array<{ column: string; nullable: boolean; length: number | null }>;
}

/** The users table; its own row is reached by `id`. */
export const USERS_TABLE = 'users';
/** Kept, anonymised, when a user is erased: the record of what happened stays, without who. */
export const ANONYMISED_TABLES = new Set(['audit_log']);

const OWNER_COLUMN = /^(userId|user_id|[a-zA-Z]+UserId)$/;

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** Builds the map of every table of the data source that can hold a user's rows. */
export function buildUserDataMap(dataSource: DataSource): Map<string, UserTable> {
  const metas = dataSource.entityMetadatas;
  const byIdColumn = new Map<string, EntityMetadata>();
  for (const meta of metas) {
    if (meta.primaryColumns.length !== 1) continue;
    byIdColumn.set(`${lowerFirst(meta.targetName)}Id`, meta);
  }
  const tables = new Map<string, UserTable>();
  for (const meta of metas) {
    const pk = meta.primaryColumns.length === 1 ? meta.primaryColumns[0]!.databaseName : null;
    const entry: UserTable = { table: meta.tableName, pk, ownerColumns: [], parents: [], handleColumns: false, stringColumns: [] };
    if (meta.tableName === USERS_TABLE) entry.ownerColumns.push(pk ?? 'id');
    const names = new Set(meta.columns.map((c) => c.databaseName));
    entry.handleColumns = names.has('channel') && names.has('handle') && meta.tableName !== 'identities';
    for (const col of meta.columns) {
      const name = col.databaseName;
      if (col.isPrimary) continue;
      const fk = meta.foreignKeys.find((f) => f.columnNames.length === 1 && f.columnNames[0] === name);
      const target = fk?.referencedEntityMetadata ?? col.relationMetadata?.inverseEntityMetadata ?? byIdColumn.get(name);
      if (OWNER_COLUMN.test(name) || target?.tableName === USERS_TABLE) {
        entry.ownerColumns.push(name);
      } else if (target && target.tableName !== meta.tableName) {
        entry.parents.push({ column: name, table: target.tableName });
      }
      const type = typeof col.type === 'string' ? col.type : '';
      if (/char|text|string|uuid|json/i.test(type) || col.type === String) {
        entry.stringColumns.push({ column: name, nullable: col.isNullable, length: col.length ? Number(col.length) : null });
      }
    }
    tables.set(meta.tableName, entry);
  }
  // Keep only tables that reach a user, directly or through a parent that does.
  const reaches = new Map<string, boolean>();
  const visit = (name: string, path: Set<string>): boolean => {
    if (reaches.has(name)) return reaches.get(name)!;
    const t = tables.get(name);
    if (!t || path.has(name)) return false;
    path.add(name);
    const ok = t.ownerColumns.length > 0 || t.handleColumns || t.parents.some((p) => visit(p.table, path));
    path.delete(name);
    reaches.set(name, ok);
    return ok;
  };
  for (const name of tables.keys()) visit(name, new Set());
  for (const [name, t] of tables) {
    t.parents = t.parents.filter((p) => reaches.get(p.table));
    if (!reaches.get(name)) t.parents = [];
  }
  return tables;
}

/**
 * Tables that hold rows of the user, children before their parents (the order an erasure deletes in).
 * Every table of the map is included, also those that only have string columns to scrub.
 */
export function deletionOrder(map: Map<string, UserTable>): UserTable[] {
  const order: UserTable[] = [];
  const done = new Set<string>();
  const childrenOf = (name: string) => [...map.values()].filter((t) => t.parents.some((p) => p.table === name));
  const visit = (t: UserTable, path: Set<string>) => {
    if (done.has(t.table) || path.has(t.table)) return;
    path.add(t.table);
    for (const child of childrenOf(t.table)) visit(child, path);
    path.delete(t.table);
    done.add(t.table);
    order.push(t);
  };
  for (const t of map.values()) visit(t, new Set());
  return order;
}

/** Whether a table holds rows of a user (directly, by handle, or through a parent). */
export function isUserTable(t: UserTable): boolean {
  return t.ownerColumns.length > 0 || t.handleColumns || t.parents.length > 0;
}
