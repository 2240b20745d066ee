import type { UserTable } from './user-data-map';

// === SQL that selects a user's rows of one table (SQLite and PostgreSQL)

/** The user and their identities' channel handles, the parameters of every predicate. */
export interface UserKey {
  userId: string;
  /** `channel` + `handle` of the user's identities (read before they are deleted). */
  handles: Array<{ channel: string; handle: string }>;
}

export function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Collects parameters and writes placeholders for the database kind (`?` or `$n`). */
export class Params {
  readonly values: unknown[] = [];
  constructor(private readonly kind: 'sqlite' | 'postgres') {}
  add(value: unknown): string {
    this.values.push(value);
    return this.kind === 'postgres' ? `$${this.values.length}` : '?';
  }
}

/**
 * A WHERE condition that is true for the rows of `table` belonging to the user: an owner column holds
 * their id, a parent column points at a row of theirs (recursively), or `channel` + `handle` is one of
 * their identities. `FALSE` when the table has no way to reach them.
 */
export function ownedPredicate(map: Map<string, UserTable>, table: string, key: UserKey, params: Params, path: Set<string> = new Set()): string {
  const t = map.get(table);
  if (!t || path.has(table)) return '1 = 0';
  path.add(table);
  const parts: string[] = [];
  for (const col of t.ownerColumns) parts.push(`${q(col)} = ${params.add(key.userId)}`);
  if (t.handleColumns) {
    for (const h of key.handles) parts.push(`(${q('channel')} = ${params.add(h.channel)} AND ${q('handle')} = ${params.add(h.handle)})`);
  }
  for (const p of t.parents) {
    const parent = map.get(p.table);
    if (!parent?.pk) continue;
    const inner = ownedPredicate(map, p.table, key, params, path);
    if (inner !== '1 = 0') parts.push(`${q(p.column)} IN (SELECT ${q(parent.pk)} FROM ${q(p.table)} WHERE ${inner})`);
  }
  path.delete(table);
  return parts.length ? `(${parts.join(' OR ')})` : '1 = 0';
}
