import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * MCP: `mcp_servers` (servers added at run time, definition sealed) and `mcp_credentials` (each user's
 * sealed headers or OAuth tokens per server, cascade on user delete). Statements from TypeORM's schema builder.
 */
export class McpServers1796498868515 implements MigrationInterface {
  name = 'McpServers1796498868515';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("CREATE TABLE \"mcp_credentials\" (\"id\" character varying(36) NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, \"updatedAt\" TIMESTAMP NOT NULL, \"serverName\" character varying(32) NOT NULL, \"userId\" character varying(36) NOT NULL, \"kind\" character varying(16) NOT NULL, \"sealed\" text NOT NULL, CONSTRAINT \"PK_8e8e0e38a1df263efa1b22a81a5\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE INDEX \"IDX_131d67e8ffd3a296583d3f3f5d\" ON \"mcp_credentials\"  (\"userId\") ");
      await q.query("CREATE UNIQUE INDEX \"IDX_91a619c6a05476744888bba1ff\" ON \"mcp_credentials\"  (\"serverName\", \"userId\") ");
      await q.query("CREATE TABLE \"mcp_servers\" (\"id\" character varying(36) NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, \"updatedAt\" TIMESTAMP NOT NULL, \"name\" character varying(32) NOT NULL, \"sealedDefinition\" text NOT NULL, \"updatedById\" character varying(36), CONSTRAINT \"PK_c781b3dc7cb2a5d19460b71914d\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE UNIQUE INDEX \"IDX_2ee0138f3dd9575eedd37f2405\" ON \"mcp_servers\"  (\"name\") ");
      await q.query("ALTER TABLE \"mcp_credentials\" ADD CONSTRAINT \"FK_131d67e8ffd3a296583d3f3f5d8\" FOREIGN KEY (\"userId\") REFERENCES \"users\"(\"id\") ON DELETE CASCADE ON UPDATE NO ACTION");
    } else {
      await q.query("CREATE TABLE \"mcp_credentials\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"serverName\" varchar(32) NOT NULL, \"userId\" varchar(36) NOT NULL, \"kind\" varchar(16) NOT NULL, \"sealed\" text NOT NULL, CONSTRAINT \"FK_131d67e8ffd3a296583d3f3f5d8\" FOREIGN KEY (\"userId\") REFERENCES \"users\" (\"id\") ON DELETE CASCADE ON UPDATE NO ACTION)");
      await q.query("CREATE INDEX \"IDX_131d67e8ffd3a296583d3f3f5d\" ON \"mcp_credentials\" (\"userId\") ");
      await q.query("CREATE UNIQUE INDEX \"IDX_91a619c6a05476744888bba1ff\" ON \"mcp_credentials\" (\"serverName\", \"userId\") ");
      await q.query("CREATE TABLE \"mcp_servers\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"name\" varchar(32) NOT NULL, \"sealedDefinition\" text NOT NULL, \"updatedById\" varchar(36))");
      await q.query("CREATE UNIQUE INDEX \"IDX_2ee0138f3dd9575eedd37f2405\" ON \"mcp_servers\" (\"name\") ");
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("ALTER TABLE \"mcp_credentials\" DROP CONSTRAINT \"FK_131d67e8ffd3a296583d3f3f5d8\"");
    }
    await q.query("DROP INDEX \"IDX_2ee0138f3dd9575eedd37f2405\"");
    await q.query("DROP TABLE \"mcp_servers\"");
    await q.query("DROP INDEX \"IDX_91a619c6a05476744888bba1ff\"");
    await q.query("DROP INDEX \"IDX_131d67e8ffd3a296583d3f3f5d\"");
    await q.query("DROP TABLE \"mcp_credentials\"");
  }
}
