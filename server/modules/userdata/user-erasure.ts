import type { Ctx } from '../../common/ctx';
import type { Db } from '../../persistence/db';
import { ANONYMISED_TABLES, deletionOrder, isUserTable, USERS_TABLE, type UserTable } from './user-data-map';
import { ownedPredicate, Params, q, type UserKey } from './user-data-query';

/** What replaces the erased user's id where a row that is not theirs mentions it (audit log, decisions). */
export const ERASED_MARK = 'erased-user';

/** Ids of the user's rows per table (tables with a one-column key), read before the erasure. */
export async function ownedIds(ctx: Ctx, db: Db, map: Map<string, UserTable>, key: UserKey): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const manager = ctx.manager ?? db.dataSource.manager;
  for (const t of map.values()) {
    if (!t.pk || !isUserTable(t)) continue;
    const params = new Params(db.kind);
    const rows = (await manager.query(`SELECT ${q(t.pk)} AS id FROM ${q(t.table)} WHERE ${ownedPredicate(map, t.table, key, params)}`, params.values)) as Array<{ id: unknown }>;
    out.set(t.table, rows.map((r) => String(r.id)));
  }
  return out;
}

/**
 * Deletes the user's rows of every table (children first), keeps the rows of ANONYMISED_TABLES without
 * the user, and scrubs the user's id from short string columns of rows that are not theirs (who decided a
 * pairing, the target of an audit entry), except in `keep` (tables an erasure hook clears). Run inside one
 * transaction. Returns the rows deleted per table.
 */
export async function eraseRows(ctx: Ctx, db: Db, map: Map<string, UserTable>, key: UserKey, keep: ReadonlySet<string> = new Set()): Promise<Record<string, number>> {
  const manager = ctx.manager ?? db.dataSource.manager;
  const deleted: Record<string, number> = {};
  const order = deletionOrder(map).filter((t) => isUserTable(t) && !ANONYMISED_TABLES.has(t.table));
  // The users row goes last (its own FK cascades would otherwise remove children before we count them).
  order.sort((a, b) => Number(a.table === USERS_TABLE) - Number(b.table === USERS_TABLE));
  for (const t of order) {
    const params = new Params(db.kind);
    const where = ownedPredicate(map, t.table, key, params);
    const [{ n }] = (await manager.query(`SELECT count(*) AS n FROM ${q(t.table)} WHERE ${where}`, params.values)) as Array<{ n: number | string }>;
    if (Number(n) === 0) continue;
    await manager.query(`DELETE FROM ${q(t.table)} WHERE ${where}`, params.values);
    deleted[t.table] = Number(n);
  }
  for (const t of map.values()) {
    if (keep.has(t.table)) continue;
    const anonymised = ANONYMISED_TABLES.has(t.table);
    for (const col of t.stringColumns) {
      // Short columns hold ids and names; long text (message content) is only scrubbed in anonymised tables.
      if (!anonymised && (col.length === null || col.length > 400)) continue;
      if (t.ownerColumns.includes(col.column) && !anonymised) continue;
      const c = q(col.column);
      if (col.nullable) {
        const p = new Params(db.kind);
        await manager.query(`UPDATE ${q(t.table)} SET ${c} = NULL WHERE ${c} = ${p.add(key.userId)}`, p.values);
      }
      // Placeholders are added in the order they appear in the text (SQLite binds `?` by position).
      const p = new Params(db.kind);
      const id = p.add(key.userId);
      const mark = p.add(ERASED_MARK);
      const like = p.add(`%${key.userId}%`);
      await manager.query(`UPDATE ${q(t.table)} SET ${c} = REPLACE(${c}, ${id}, ${mark}) WHERE ${c} LIKE ${like}`, p.values);
    }
  }
  return deleted;
}
