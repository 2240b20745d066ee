import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `learned_skills.syncedAt` (when a sync last read the file) and `learned_skills.syncError` (why the
 * file did not parse at that sync; its last good version stays). Both nullable, so existing rows need
 * no backfill; the column types are the ones TypeORM's schema builder expects.
 */
export class SkillSyncState1796498201146 implements MigrationInterface {
  name = 'SkillSyncState1796498201146';

  async up(q: QueryRunner): Promise<void> {
    const date = q.connection.options.type === 'postgres' ? 'TIMESTAMP' : 'datetime';
    await q.query(`ALTER TABLE "learned_skills" ADD COLUMN "syncedAt" ${date}`);
    await q.query('ALTER TABLE "learned_skills" ADD COLUMN "syncError" text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "learned_skills" DROP COLUMN "syncError"');
    await q.query('ALTER TABLE "learned_skills" DROP COLUMN "syncedAt"');
  }
}
