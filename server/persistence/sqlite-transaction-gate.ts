import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, QueryRunner } from 'typeorm';

type QueryFn = (...args: unknown[]) => Promise<unknown>;

interface Statement {
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
  raw(on: boolean): Statement;
}
interface Connection {
  prepare(sql: string): Statement;
}

/** How a kept statement returns rows: as arrays (`rows`), as objects (`objects`), or none (`write`). */
type Mode = 'raw' | 'objects' | 'run';

/** How many statements `rows` keeps prepared (most recently used first out last). */
const STATEMENTS_KEPT = 200;

const gates = new WeakMap<DataSource, SqliteTransactionGate>();

/** The gate of a SQLite data source (made by Db), or null on PostgreSQL. */
export function sqliteGateOf(dataSource: DataSource): SqliteTransactionGate | null {
  return gates.get(dataSource) ?? null;
}

/**
 * Isolation for SQLite. TypeORM's better-sqlite3 driver runs everything on ONE connection, so while one
 * request's transaction waits on an `await`, another request's queries would run inside it (and be
 * rolled back with it), and TypeORM's implicit `save()` transactions would nest as savepoints of a
 * foreign transaction. The gate fixes that:
 * - explicit transactions (`run`) are serialized and marked as owned by their async context;
 * - while one is open, queries from any other async context wait until it ends;
 * - TypeORM's implicit per-`save()` transactions outside an explicit one are skipped (each statement is
 *   atomic by itself in SQLite; multi-row work that must be atomic uses `Db.withTransaction`).
 */
export class SqliteTransactionGate {
  private readonly als = new AsyncLocalStorage<object>();
  private owner: object | null = null;
  private ownerDone: Promise<void> = Promise.resolve();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly statements = new Map<string, Statement>();
  /** The connection the kept statements belong to (a re-initialised data source opens another). */
  private connection: Connection | null = null;

  constructor(private readonly dataSource: DataSource) {
    gates.set(dataSource, this);
    const runner: QueryRunner = dataSource.driver.createQueryRunner('master');
    const query = (runner.query as QueryFn).bind(runner);
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
    const inOwner = () => this.owner !== null && this.als.getStore() === this.owner;
    const gated: QueryFn = async (...args) => {
      while (this.owner !== null && this.als.getStore() !== this.owner) await this.ownerDone;
      // Take the write lock at BEGIN: a deferred transaction that reads, then writes while another
      // process (a worker sharing the file) writes fails with SQLITE_BUSY at once, busy_timeout or not.
      if (args[0] === 'BEGIN TRANSACTION') args[0] = 'BEGIN IMMEDIATE TRANSACTION';
      return query(...args);
    };
    (runner as unknown as { query: QueryFn }).query = gated;
    runner.startTransaction = (level) => (inOwner() ? start(level) : Promise.resolve());
    runner.commitTransaction = () => (inOwner() ? commit() : Promise.resolve());
    runner.rollbackTransaction = async () => {
      if (!inOwner()) return;
      try {
        await rollback();
      } catch (err) {
        // SQLite ends a transaction itself on some errors (SQLITE_FULL at COMMIT, SQLITE_IOERR, …); its
        // ROLLBACK then fails and TypeORM would keep believing one is open: later transactions ran as
        // savepoints, and the next one that failed was rolled back to its savepoint only, leaving SQLite's
        // transaction open for good (every later write acknowledged, never committed). Nothing is open.
        if (!/no transaction is active/i.test((err as Error).message)) throw err;
        const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
        state.isTransactionActive = false;
        state.transactionDepth = 0;
      }
    };
  }

  /**
   * The rows of a read as arrays (columns in select order), straight from a prepared statement of the
   * driver: none of TypeORM's per-query work (logging, subscribers' broadcast, result wrapping), and no
   * object per row. Waits, like every statement, while another context's transaction is open.
   */
  async rows(sql: string, params: readonly unknown[]): Promise<unknown[][]> {
    return (await this.statement(sql, 'raw')).all(...bindable(params)) as unknown[][];
  }

  /** The rows of a statement as objects by column name (an `INSERT … RETURNING`), as `rows` runs it. */
  async objects(sql: string, params: readonly unknown[]): Promise<Array<Record<string, unknown>>> {
    return (await this.statement(sql, 'objects')).all(...bindable(params)) as Array<Record<string, unknown>>;
  }

  /** Runs a statement that returns no rows (INSERT, UPDATE, DELETE), as `rows` runs a read. */
  async write(sql: string, params: readonly unknown[]): Promise<void> {
    (await this.statement(sql, 'run')).run(...bindable(params));
  }

  /** The kept prepared statement of `sql` (prepared now when it is not), once this context may run it. */
  private async statement(sql: string, mode: Mode): Promise<Statement> {
    while (this.owner !== null && this.als.getStore() !== this.owner) await this.ownerDone;
    const connection = (this.dataSource.driver as unknown as { databaseConnection: Connection })
      .databaseConnection;
    if (connection !== this.connection) {
      this.statements.clear();
      this.connection = connection;
    }
    const key = mode === 'raw' ? sql : `${mode}\u0000${sql}`;
    let statement = this.statements.get(key);
    if (statement) {
      this.statements.delete(key);
    } else {
      statement = connection.prepare(sql);
      if (mode === 'raw') statement.raw(true);
      if (this.statements.size >= STATEMENTS_KEPT)
        this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(key, statement);
    return statement;
  }

  /** True when the caller runs inside the open transaction. */
  insideTransaction(): boolean {
    return this.owner !== null && this.als.getStore() === this.owner;
  }

  /** Runs `fn` as the only transaction; other contexts' queries wait until it ends. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(async () => {
      const token = {};
      let done!: () => void;
      this.ownerDone = new Promise<void>((resolve) => (done = resolve));
      this.owner = token;
      try {
        return await this.als.run(token, fn);
      } finally {
        this.owner = null;
        // With no transaction open nothing needs the store: switched off, it takes Node's async hooks off
        // (on Node 20 a cost on every promise and socket of every request) until the next run() turns it on.
        this.als.disable();
        done();
      }
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }
}

/** better-sqlite3 binds no booleans (TypeORM's runner turns them into 0/1 too). */
function bindable(params: readonly unknown[]): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}
