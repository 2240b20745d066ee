import type BetterSqlite3 from 'better-sqlite3';

/** The `better-sqlite3` module's Database constructor (the same API in both versions below). */
export type SqliteDriver = typeof BetterSqlite3;

/**
 * The package that holds this Node's SQLite driver. Node 20 takes better-sqlite3 12 (13 crashes there).
 * Node 22 and later take better-sqlite3 13 (installed as `better-sqlite3-napi`), built on Node-API: with
 * 12, every statement or database object that is collected when no JavaScript runs — as when a worker
 * thread (the memory search threads, the backup) ends — aborts Node 24 (`Assertion failed: (env) != nullptr`
 * in `node::RemoveEnvironmentCleanupHook`, from `Statement::~Statement`).
 */
export function sqliteDriverModule(
  nodeVersion = process.versions.node,
): 'better-sqlite3' | 'better-sqlite3-napi' {
  return Number(nodeVersion.split('.')[0]) >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3';
}

/** Loads the SQLite driver for this Node (see sqliteDriverModule). */
export function loadSqliteDriver(): SqliteDriver {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(sqliteDriverModule()) as SqliteDriver;
}
