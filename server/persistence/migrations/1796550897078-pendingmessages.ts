import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `IDX_messages_pending`: an index of only the user messages waiting for an answer (QUEUED, PROCESSING),
 * by update time, so the periodic sweep for sessions nobody drains reads a handful of rows however many
 * messages are stored. Statements from TypeORM's schema builder (the same on both databases).
 */
export class PendingMessages1796550897078 implements MigrationInterface {
  name = 'PendingMessages1796550897078';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX "IDX_messages_pending" ON "messages" ("updatedAt") WHERE "status" IN ('QUEUED', 'PROCESSING')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_messages_pending"`);
  }
}
