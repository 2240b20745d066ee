import {
  In,
  type DataSource,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
  type Repository,
} from 'typeorm';
import type { Ctx } from '../common/ctx';
import { ChangeFeed, type ChangeTopic } from '../common/change-feed';
import type { PlainWhere } from './plain-select';
import { insertPlain, updatePlain } from './plain-write';
import { parameterMaker } from './plain-table';
import { SqliteTransactionGate } from './sqlite-transaction-gate';

/**
 * The only door to the database: repositories bound to the context's transaction, and transactions.
 * On SQLite (one connection) a gate isolates transactions from concurrent requests (see
 * SqliteTransactionGate).
 */
export class Db {
  private readonly gate: SqliteTransactionGate | null;
  /** Changes of rows that processes keep copies of (ChangeCache). */
  readonly changes = new ChangeFeed();
  /** What to do after each open transaction commits, by its entity manager. */
  private readonly afterCommits = new WeakMap<EntityManager, Array<() => void>>();

  constructor(readonly dataSource: DataSource) {
    this.gate = dataSource.options.type === 'postgres' ? null : new SqliteTransactionGate(dataSource);
  }

  get kind(): 'sqlite' | 'postgres' {
    return this.dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  /** A repository that joins the context's transaction when there is one. */
  repo<E extends ObjectLiteral>(ctx: Ctx, entity: EntityTarget<E>): Repository<E> {
    return this.manager(ctx).getRepository(entity);
  }

  /** Runs `fn` in a transaction; nested calls reuse the outer one. */
  async withTransaction<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
    if (ctx.manager?.queryRunner?.isTransactionActive && (!this.gate || this.gate.insideTransaction()))
      return fn(ctx);
    const committed: Array<() => void> = [];
    const run = () =>
      this.dataSource.transaction((manager) => {
        this.afterCommits.set(manager, committed);
        return fn(ctx.withManager(manager));
      });
    const result = await (this.gate ? this.gate.run(run) : run());
    for (const then of committed) then();
    return result;
  }

  /** Announces that rows of `topic` changed, once the context's transaction (if any) has committed. */
  changed(ctx: Ctx, topic: ChangeTopic): void {
    this.afterCommit(ctx, () => this.changes.changed(topic));
  }

  /** Runs `then` once the context's transaction has committed (never if it rolls back); at once outside one. */
  afterCommit(ctx: Ctx, then: () => void): void {
    const pending = ctx.manager ? this.afterCommits.get(ctx.manager) : undefined;
    if (pending) pending.push(then);
    else then();
  }

  /**
   * Serialises transactions that work on the same `name` until the calling transaction ends (for
   * "find, else create" on rows without a unique key). PostgreSQL takes a transaction-scoped advisory
   * lock; SQLite's gate already runs one transaction at a time. Call it inside `withTransaction`.
   */
  async lockName(tx: Ctx, name: string): Promise<void> {
    if (this.kind !== 'postgres') return;
    await this.manager(tx).query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
  }

  /**
   * Inserts one entity, as `save` without reading it back: with one prepared statement where the entity
   * allows (see insertPlain), else through TypeORM.
   */
  async insert<E extends ObjectLiteral>(ctx: Ctx, entity: EntityTarget<E>, row: E): Promise<void> {
    const repo = this.repo(ctx, entity);
    if (!(await insertPlain(repo, row))) await repo.save(row, { reload: false, transaction: false });
  }

  /**
   * `update(where, set)` for plain conditions, and `add`: numeric columns increased in the same statement.
   * Like TypeORM's `update`, no listeners run.
   */
  async update<E extends ObjectLiteral>(
    ctx: Ctx,
    entity: EntityTarget<E>,
    where: PlainWhere,
    set: Partial<Record<keyof E & string, unknown>>,
    add: Partial<Record<keyof E & string, number>> = {},
  ): Promise<void> {
    const repo = this.repo(ctx, entity);
    if (await updatePlain(repo, where, set, add)) return;
    const qb = repo.createQueryBuilder().update();
    const values: Record<string, () => string> = {};
    for (const [property, amount] of Object.entries(add)) {
      const column = repo.metadata.findColumnWithPropertyName(property);
      if (!column || typeof amount !== 'number' || !Number.isFinite(amount))
        throw new Error(`cannot add to ${property}`);
      const name = qb.escape(column.databaseName);
      values[property] = () => `${name} + ${Number(amount)}`;
    }
    const where_ = Object.fromEntries(
      Object.entries(where).map(([k, v]) => [k, Array.isArray(v) ? In(v as unknown[]) : v]),
    );
    await qb
      .set({ ...set, ...values } as never)
      .where(where_)
      .execute();
  }

  /**
   * Inserts one entity (every column set by the application) and returns one row of SQL expressions
   * evaluated with it, in the same statement (`INSERT … RETURNING`, which TypeORM builds only on
   * PostgreSQL). `returning` gets a placeholder maker for its own parameters.
   */
  async insertReturning<E extends ObjectLiteral, R>(
    ctx: Ctx,
    entity: EntityTarget<E>,
    row: E,
    returning: (param: (value: unknown) => string) => string,
  ): Promise<R> {
    const plain = await insertPlain(this.repo(ctx, entity), row, { returning });
    if (plain) return plain as R;
    const manager = this.manager(ctx);
    const [sql, params] = manager
      .createQueryBuilder()
      .insert()
      .into(entity)
      .values(row)
      .updateEntity(false)
      .getQueryAndParameters();
    const all = [...params];
    const rows = (await manager.query(`${sql} RETURNING ${returning(parameterMaker(manager.connection, all, 'r'))}`, all)) as R[];
    return rows[0]!;
  }

  private manager(ctx: Ctx) {
    return ctx.manager ?? this.dataSource.manager;
  }

  /** Cheap liveness query for /readyz and doctor. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }
}
