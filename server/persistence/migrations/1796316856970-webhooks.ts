import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `webhooks` table (POST /hooks/<name>): name, instructions, owner (cascade on user delete), the
 * secret's SHA-256, target chat, enabled, last call. Statements from TypeORM's schema builder.
 */
export class Webhooks1796316856970 implements MigrationInterface {
  name = 'Webhooks1796316856970';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("CREATE TABLE \"webhooks\" (\"id\" character varying(36) NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, \"updatedAt\" TIMESTAMP NOT NULL, \"name\" character varying(64) NOT NULL, \"instructions\" text, \"ownerId\" character varying(36) NOT NULL, \"secretHash\" character varying(64) NOT NULL, \"targetChannel\" character varying(32), \"targetChatId\" character varying(200), \"enabled\" boolean NOT NULL DEFAULT true, \"lastCalledAt\" TIMESTAMP, CONSTRAINT \"PK_9e8795cfc899ab7bdaa831e8527\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE UNIQUE INDEX \"IDX_1157e3d38475e1ddf7c8c01f8b\" ON \"webhooks\"  (\"name\") ");
      await q.query("CREATE INDEX \"IDX_af05ad777a1c68c35d41b52811\" ON \"webhooks\"  (\"ownerId\") ");
      await q.query("ALTER TABLE \"webhooks\" ADD CONSTRAINT \"FK_af05ad777a1c68c35d41b52811f\" FOREIGN KEY (\"ownerId\") REFERENCES \"users\"(\"id\") ON DELETE CASCADE ON UPDATE NO ACTION");
    } else {
      await q.query("CREATE TABLE \"webhooks\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"name\" varchar(64) NOT NULL, \"instructions\" text, \"ownerId\" varchar(36) NOT NULL, \"secretHash\" varchar(64) NOT NULL, \"targetChannel\" varchar(32), \"targetChatId\" varchar(200), \"enabled\" boolean NOT NULL DEFAULT (1), \"lastCalledAt\" datetime, CONSTRAINT \"FK_af05ad777a1c68c35d41b52811f\" FOREIGN KEY (\"ownerId\") REFERENCES \"users\" (\"id\") ON DELETE CASCADE ON UPDATE NO ACTION)");
      await q.query("CREATE UNIQUE INDEX \"IDX_1157e3d38475e1ddf7c8c01f8b\" ON \"webhooks\" (\"name\") ");
      await q.query("CREATE INDEX \"IDX_af05ad777a1c68c35d41b52811\" ON \"webhooks\" (\"ownerId\") ");
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("ALTER TABLE \"webhooks\" DROP CONSTRAINT \"FK_af05ad777a1c68c35d41b52811f\"");
    }
    await q.query("DROP INDEX \"IDX_af05ad777a1c68c35d41b52811\"");
    await q.query("DROP INDEX \"IDX_1157e3d38475e1ddf7c8c01f8b\"");
    await q.query("DROP TABLE \"webhooks\"");
  }
}
