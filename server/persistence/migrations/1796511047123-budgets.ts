import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Budgets: `usage.costUsd` (what each model call cost, null without a price) and the `user_budgets` table
 * (a user's own daily and monthly limits, cascade on user delete). Statements from TypeORM's schema builder.
 */
export class Budgets1796511047123 implements MigrationInterface {
  name = 'Budgets1796511047123';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("ALTER TABLE \"usage\" ADD \"costUsd\" double precision");
      await q.query("CREATE TABLE \"user_budgets\" (\"id\" character varying(36) NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, \"updatedAt\" TIMESTAMP NOT NULL, \"userId\" character varying(36) NOT NULL, \"dailyUsd\" double precision, \"monthlyUsd\" double precision, CONSTRAINT \"PK_53465a651f50830022c4719e98e\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE UNIQUE INDEX \"IDX_92a901bf351c3d80679b786bff\" ON \"user_budgets\"  (\"userId\") ");
      await q.query("ALTER TABLE \"user_budgets\" ADD CONSTRAINT \"FK_92a901bf351c3d80679b786bffb\" FOREIGN KEY (\"userId\") REFERENCES \"users\"(\"id\") ON DELETE CASCADE ON UPDATE NO ACTION");
    } else {
      await q.query("CREATE TABLE \"user_budgets\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"userId\" varchar(36) NOT NULL, \"dailyUsd\" float, \"monthlyUsd\" float)");
      await q.query("CREATE UNIQUE INDEX \"IDX_92a901bf351c3d80679b786bff\" ON \"user_budgets\" (\"userId\") ");
      await q.query("DROP INDEX \"IDX_3b5f7176c00a59a347ac3d0eb5\"");
      await q.query("DROP INDEX \"IDX_2b569db2df3647910eab03d4b1\"");
      await q.query("CREATE TABLE \"temporary_usage\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"userId\" varchar(36), \"sessionId\" varchar(36), \"messageId\" varchar(36), \"provider\" varchar(100) NOT NULL, \"model\" varchar(200) NOT NULL, \"role\" varchar(32) NOT NULL, \"inputTokens\" integer NOT NULL DEFAULT (0), \"outputTokens\" integer NOT NULL DEFAULT (0), \"cacheReadTokens\" integer NOT NULL DEFAULT (0), \"cacheWriteTokens\" integer NOT NULL DEFAULT (0), \"estimated\" boolean NOT NULL DEFAULT (0), \"audioSeconds\" integer NOT NULL DEFAULT (0), \"costUsd\" float)");
      await q.query("INSERT INTO \"temporary_usage\"(\"id\", \"createdAt\", \"updatedAt\", \"userId\", \"sessionId\", \"messageId\", \"provider\", \"model\", \"role\", \"inputTokens\", \"outputTokens\", \"cacheReadTokens\", \"cacheWriteTokens\", \"estimated\", \"audioSeconds\") SELECT \"id\", \"createdAt\", \"updatedAt\", \"userId\", \"sessionId\", \"messageId\", \"provider\", \"model\", \"role\", \"inputTokens\", \"outputTokens\", \"cacheReadTokens\", \"cacheWriteTokens\", \"estimated\", \"audioSeconds\" FROM \"usage\"");
      await q.query("DROP TABLE \"usage\"");
      await q.query("ALTER TABLE \"temporary_usage\" RENAME TO \"usage\"");
      await q.query("CREATE INDEX \"IDX_3b5f7176c00a59a347ac3d0eb5\" ON \"usage\" (\"userId\", \"createdAt\") ");
      await q.query("CREATE INDEX \"IDX_2b569db2df3647910eab03d4b1\" ON \"usage\" (\"sessionId\") ");
      await q.query("DROP INDEX \"IDX_92a901bf351c3d80679b786bff\"");
      await q.query("CREATE TABLE \"temporary_user_budgets\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"userId\" varchar(36) NOT NULL, \"dailyUsd\" float, \"monthlyUsd\" float, CONSTRAINT \"FK_92a901bf351c3d80679b786bffb\" FOREIGN KEY (\"userId\") REFERENCES \"users\" (\"id\") ON DELETE CASCADE ON UPDATE NO ACTION)");
      await q.query("INSERT INTO \"temporary_user_budgets\"(\"id\", \"createdAt\", \"updatedAt\", \"userId\", \"dailyUsd\", \"monthlyUsd\") SELECT \"id\", \"createdAt\", \"updatedAt\", \"userId\", \"dailyUsd\", \"monthlyUsd\" FROM \"user_budgets\"");
      await q.query("DROP TABLE \"user_budgets\"");
      await q.query("ALTER TABLE \"temporary_user_budgets\" RENAME TO \"user_budgets\"");
      await q.query("CREATE UNIQUE INDEX \"IDX_92a901bf351c3d80679b786bff\" ON \"user_budgets\" (\"userId\") ");
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("ALTER TABLE \"user_budgets\" DROP CONSTRAINT \"FK_92a901bf351c3d80679b786bffb\"");
      await q.query("DROP INDEX \"IDX_92a901bf351c3d80679b786bff\"");
      await q.query("DROP TABLE \"user_budgets\"");
      await q.query("ALTER TABLE \"usage\" DROP COLUMN \"costUsd\"");
    } else {
      await q.query("DROP INDEX \"IDX_92a901bf351c3d80679b786bff\"");
      await q.query("ALTER TABLE \"user_budgets\" RENAME TO \"temporary_user_budgets\"");
      await q.query("CREATE TABLE \"user_budgets\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"userId\" varchar(36) NOT NULL, \"dailyUsd\" float, \"monthlyUsd\" float)");
      await q.query("INSERT INTO \"user_budgets\"(\"id\", \"createdAt\", \"updatedAt\", \"userId\", \"dailyUsd\", \"monthlyUsd\") SELECT \"id\", \"createdAt\", \"updatedAt\", \"userId\", \"dailyUsd\", \"monthlyUsd\" FROM \"temporary_user_budgets\"");
      await q.query("DROP TABLE \"temporary_user_budgets\"");
      await q.query("CREATE UNIQUE INDEX \"IDX_92a901bf351c3d80679b786bff\" ON \"user_budgets\" (\"userId\") ");
      await q.query("DROP INDEX \"IDX_2b569db2df3647910eab03d4b1\"");
      await q.query("DROP INDEX \"IDX_3b5f7176c00a59a347ac3d0eb5\"");
      await q.query("ALTER TABLE \"usage\" RENAME TO \"temporary_usage\"");
      await q.query("CREATE TABLE \"usage\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"userId\" varchar(36), \"sessionId\" varchar(36), \"messageId\" varchar(36), \"provider\" varchar(100) NOT NULL, \"model\" varchar(200) NOT NULL, \"role\" varchar(32) NOT NULL, \"inputTokens\" integer NOT NULL DEFAULT (0), \"outputTokens\" integer NOT NULL DEFAULT (0), \"cacheReadTokens\" integer NOT NULL DEFAULT (0), \"cacheWriteTokens\" integer NOT NULL DEFAULT (0), \"estimated\" boolean NOT NULL DEFAULT (0), \"audioSeconds\" integer NOT NULL DEFAULT (0))");
      await q.query("INSERT INTO \"usage\"(\"id\", \"createdAt\", \"updatedAt\", \"userId\", \"sessionId\", \"messageId\", \"provider\", \"model\", \"role\", \"inputTokens\", \"outputTokens\", \"cacheReadTokens\", \"cacheWriteTokens\", \"estimated\", \"audioSeconds\") SELECT \"id\", \"createdAt\", \"updatedAt\", \"userId\", \"sessionId\", \"messageId\", \"provider\", \"model\", \"role\", \"inputTokens\", \"outputTokens\", \"cacheReadTokens\", \"cacheWriteTokens\", \"estimated\", \"audioSeconds\" FROM \"temporary_usage\"");
      await q.query("DROP TABLE \"temporary_usage\"");
      await q.query("CREATE INDEX \"IDX_2b569db2df3647910eab03d4b1\" ON \"usage\" (\"sessionId\") ");
      await q.query("CREATE INDEX \"IDX_3b5f7176c00a59a347ac3d0eb5\" ON \"usage\" (\"userId\", \"createdAt\") ");
      await q.query("DROP INDEX \"IDX_92a901bf351c3d80679b786bff\"");
      await q.query("DROP TABLE \"user_budgets\"");
    }
  }
}
