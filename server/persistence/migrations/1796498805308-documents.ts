import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Documents (issue 27): `documents` (name, type, size, scope like memories with the uploader's userId,
 * status and progress of ingestion, pages, origin chat) and `document_chunks` (passages with page and
 * heading, userId for per-user export; cascade from their document). Their search entries live in the
 * memory index (`memory_index`, FTS and vectors) as items `doc:<chunkId>`. From TypeORM's schema builder.
 */
export class Documents1796498805308 implements MigrationInterface {
  name = 'Documents1796498805308';

  async up(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("CREATE TABLE \"documents\" (\"id\" character varying(36) NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, \"updatedAt\" TIMESTAMP NOT NULL, \"name\" character varying(255) NOT NULL, \"mimeType\" character varying(120) NOT NULL, \"sizeBytes\" integer NOT NULL, \"scope\" character varying(16) NOT NULL, \"userId\" character varying(36) NOT NULL, \"groupId\" character varying(300), \"status\" character varying(16) NOT NULL, \"error\" text, \"progress\" integer NOT NULL DEFAULT '0', \"pages\" integer, \"chunkCount\" integer NOT NULL DEFAULT '0', \"contentHash\" character varying(64) NOT NULL, \"jobId\" character varying(120), \"sourceChannel\" character varying(32), \"sourceChatId\" character varying(200), CONSTRAINT \"PK_ac51aa5181ee2036f5ca482857c\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE INDEX \"IDX_e300b5c2e3fefa9d6f8a3f2597\" ON \"documents\"  (\"userId\") ");
      await q.query("CREATE INDEX \"IDX_a36fab7e07910d051404232864\" ON \"documents\"  (\"scope\", \"groupId\") ");
      await q.query("CREATE TABLE \"document_chunks\" (\"id\" character varying(48) NOT NULL, \"documentId\" character varying(36) NOT NULL, \"userId\" character varying(36) NOT NULL, \"seq\" integer NOT NULL, \"page\" integer, \"heading\" character varying(300), \"content\" text NOT NULL, \"createdAt\" TIMESTAMP NOT NULL, CONSTRAINT \"PK_7f9060084e9b872dbb567193978\" PRIMARY KEY (\"id\"))");
      await q.query("CREATE INDEX \"IDX_5f83d5f7cb243fc77f4865a0b2\" ON \"document_chunks\"  (\"userId\") ");
      await q.query("CREATE UNIQUE INDEX \"IDX_ff70e52f9a425ab567717460bf\" ON \"document_chunks\"  (\"documentId\", \"seq\") ");
      await q.query("ALTER TABLE \"documents\" ADD CONSTRAINT \"FK_e300b5c2e3fefa9d6f8a3f25975\" FOREIGN KEY (\"userId\") REFERENCES \"users\"(\"id\") ON DELETE CASCADE ON UPDATE NO ACTION");
      await q.query("ALTER TABLE \"document_chunks\" ADD CONSTRAINT \"FK_eaf9afaf30fb7e2ac25989db51b\" FOREIGN KEY (\"documentId\") REFERENCES \"documents\"(\"id\") ON DELETE CASCADE ON UPDATE NO ACTION");
    } else {
      await q.query("CREATE TABLE \"documents\" (\"id\" varchar(36) PRIMARY KEY NOT NULL, \"createdAt\" datetime NOT NULL, \"updatedAt\" datetime NOT NULL, \"name\" varchar(255) NOT NULL, \"mimeType\" varchar(120) NOT NULL, \"sizeBytes\" integer NOT NULL, \"scope\" varchar(16) NOT NULL, \"userId\" varchar(36) NOT NULL, \"groupId\" varchar(300), \"status\" varchar(16) NOT NULL, \"error\" text, \"progress\" integer NOT NULL DEFAULT (0), \"pages\" integer, \"chunkCount\" integer NOT NULL DEFAULT (0), \"contentHash\" varchar(64) NOT NULL, \"jobId\" varchar(120), \"sourceChannel\" varchar(32), \"sourceChatId\" varchar(200), CONSTRAINT \"FK_e300b5c2e3fefa9d6f8a3f25975\" FOREIGN KEY (\"userId\") REFERENCES \"users\" (\"id\") ON DELETE CASCADE ON UPDATE NO ACTION)");
      await q.query("CREATE INDEX \"IDX_e300b5c2e3fefa9d6f8a3f2597\" ON \"documents\" (\"userId\") ");
      await q.query("CREATE INDEX \"IDX_a36fab7e07910d051404232864\" ON \"documents\" (\"scope\", \"groupId\") ");
      await q.query("CREATE TABLE \"document_chunks\" (\"id\" varchar(48) PRIMARY KEY NOT NULL, \"documentId\" varchar(36) NOT NULL, \"userId\" varchar(36) NOT NULL, \"seq\" integer NOT NULL, \"page\" integer, \"heading\" varchar(300), \"content\" text NOT NULL, \"createdAt\" datetime NOT NULL, CONSTRAINT \"FK_eaf9afaf30fb7e2ac25989db51b\" FOREIGN KEY (\"documentId\") REFERENCES \"documents\" (\"id\") ON DELETE CASCADE ON UPDATE NO ACTION)");
      await q.query("CREATE INDEX \"IDX_5f83d5f7cb243fc77f4865a0b2\" ON \"document_chunks\" (\"userId\") ");
      await q.query("CREATE UNIQUE INDEX \"IDX_ff70e52f9a425ab567717460bf\" ON \"document_chunks\" (\"documentId\", \"seq\") ");
    }
  }

  async down(q: QueryRunner): Promise<void> {
    if (q.connection.options.type === 'postgres') {
      await q.query("ALTER TABLE \"document_chunks\" DROP CONSTRAINT \"FK_eaf9afaf30fb7e2ac25989db51b\"");
      await q.query("ALTER TABLE \"documents\" DROP CONSTRAINT \"FK_e300b5c2e3fefa9d6f8a3f25975\"");
    }
    await q.query("DROP INDEX \"IDX_ff70e52f9a425ab567717460bf\"");
    await q.query("DROP INDEX \"IDX_5f83d5f7cb243fc77f4865a0b2\"");
    await q.query("DROP TABLE \"document_chunks\"");
    await q.query("DROP INDEX \"IDX_a36fab7e07910d051404232864\"");
    await q.query("DROP INDEX \"IDX_e300b5c2e3fefa9d6f8a3f2597\"");
    await q.query("DROP TABLE \"documents\"");
  }
}
