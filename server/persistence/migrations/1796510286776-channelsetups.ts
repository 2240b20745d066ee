import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `channel_setups`: Telegram and WhatsApp set up from the console, settings sealed with the SecretBox.
 * Statements from TypeORM's schema builder.
 */
export class ChannelSetups1796510286776 implements MigrationInterface {
  name = 'ChannelSetups1796510286776';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("CREATE TABLE \"channel_setups\" (\"id\" character varying(36) NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, \"updatedAt\" TIMESTAMP NOT NULL, \"channel\" character varying(32) NOT NULL, \"sealed\" text NOT NULL, \"revision\" integer NOT NULL DEFAULT '1', \"label\" character varying(100), \"updatedById\" character varying(36), CONSTRAINT \"PK_569012c14ae87a1ba7efe93a6c1\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE UNIQUE INDEX \"IDX_55e2e76f7886d3a88b9a591893\" ON \"channel_setups\"  (\"channel\") ");
    } else {
      await q.query("CREATE TABLE \"channel_setups\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"channel\" varchar(32) NOT NULL, \"sealed\" text NOT NULL, \"revision\" integer NOT NULL DEFAULT (1), \"label\" varchar(100), \"updatedById\" varchar(36))");
      await q.query("CREATE UNIQUE INDEX \"IDX_55e2e76f7886d3a88b9a591893\" ON \"channel_setups\" (\"channel\") ");
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"IDX_55e2e76f7886d3a88b9a591893\"");
    await q.query("DROP TABLE \"channel_setups\"");
  }
}
