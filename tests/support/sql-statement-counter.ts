import { sqliteDriverModule } from '../../server/persistence/sqlite-driver';

/** Statements run, by text with numbers folded to N. */
export interface SqlStatementCounter {
  counts: Map<string, number>;
  total(): number;
  reset(): void;
  /** Puts the driver back as it was. */
  stop(): void;
}

/**
 * Counts every SQLite statement this process runs (prepared statements' run/all/get/iterate and
 * `exec`), by patching the driver's prototypes: what a turn costs the database, counted rather than
 * timed. Only for a test app on SQLite in the test's own process.
 */
export function countSqlStatements(): SqlStatementCounter {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const Database = require(sqliteDriverModule()) as typeof import('better-sqlite3');
  const counts = new Map<string, number>();
  const count = (sql: unknown) => {
    const key = String(sql).replace(/\s+/g, ' ').replace(/\d+/g, 'N').slice(0, 200);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const probe = new Database(':memory:');
  const Statement = probe.prepare('SELECT 1').constructor as { prototype: Record<string, (...args: unknown[]) => unknown> };
  probe.close();
  const restore: Array<() => void> = [];
  for (const method of ['run', 'all', 'get', 'iterate']) {
    const original = Statement.prototype[method]!;
    Statement.prototype[method] = function counted(this: { source: string }, ...args: unknown[]) {
      count(this.source);
      return original.apply(this, args);
    };
    restore.push(() => (Statement.prototype[method] = original));
  }
  const proto = Database.prototype as unknown as Record<string, (sql: string) => unknown>;
  const exec = proto.exec!;
  proto.exec = function counted(this: unknown, sql: string) {
    count(sql);
    return exec.call(this, sql);
  };
  restore.push(() => (proto.exec = exec));
  return {
    counts,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    reset: () => counts.clear(),
    stop: () => restore.splice(0).forEach((fn) => fn()),
  };
}
