import type { DataSource, EntityTarget, ObjectLiteral, Repository } from 'typeorm';
import type { Ctx } from '../common/ctx';

/**
 * The only door to the database: repositories bound to the context's transaction, and transactions.
 * On SQLite (one connection) transactions are serialized in-process so that concurrent requests never
 * nest BEGINs on the same connection.
 */
export class Db {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly dataSource: DataSource) {}

  get kind(): 'sqlite' | 'postgres' {
    return this.dataSource.options.type === 'postgres' ? 'postgres' : 'sqlite';
  }

  /** A repository that joins the context's transaction when there is one. */
  repo<E extends ObjectLiteral>(ctx: Ctx, entity: EntityTarget<E>): Repository<E> {
    return (ctx.manager ?? this.dataSource.manager).getRepository(entity);
  }

  /** Runs `fn` in a transaction; nested calls reuse the outer one. */
  async withTransaction<T>(ctx: Ctx, fn: (ctx: Ctx) => Promise<T>): Promise<T> {
    if (ctx.manager?.queryRunner?.isTransactionActive) return fn(ctx);
    const run = () => this.dataSource.transaction((manager) => fn(ctx.withManager(manager)));
    if (this.kind === 'postgres') return run();
    const result = this.tail.then(run, run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Cheap liveness query for /readyz and doctor. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }
}
